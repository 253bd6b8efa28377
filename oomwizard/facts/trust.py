"""Whether an interpreter may be started: detection starts only the one named with ``--python``,
and only when no one but the operator (or root) could have put something else in its place.

The file itself, every symlink on the way to it and the folders holding them must be owned by
the current user or root. The folder holding the file must not be writable by its group or by
others; a folder further up may be only if it is sticky (like ``/tmp``), where others cannot
rename what is not theirs. The checks follow the path as written and as resolved, so a venv's
``bin/python`` link to a system interpreter is judged on both.
"""

from __future__ import annotations

import os
import stat

from ..i18n import Text, msg
from .packages import interpreter_for

_MAX_LINKS = 40


def _who(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _owner_ok(st: os.stat_result) -> bool:
    return st.st_uid in (0, os.geteuid())


def _writers(st: os.stat_result) -> Text:
    return msg("facts.trust.who_others") if st.st_mode & stat.S_IWOTH else msg("facts.trust.who_group")


def _folder_problem(path: str, holds_file: bool) -> Text | None:
    try:
        st = os.stat(path)
    except OSError as e:
        return msg("facts.trust.unreadable").format(path=path, error=e.strerror or e)
    if not _owner_ok(st):
        return msg("facts.trust.folder_owner").format(path=path, owner=_who(st.st_uid))
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and (holds_file or not st.st_mode & stat.S_ISVTX):
        return msg("facts.trust.folder_writable").format(path=path, who=_writers(st), mode=f"{stat.S_IMODE(st.st_mode):o}")
    return None


def _ancestors(folder: str) -> list[str]:
    out = []
    cur = folder
    while True:
        out.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            return out
        cur = parent


def unsafe_reason(interpreter: str) -> Text | None:
    """Why starting ``interpreter`` could run a program someone else chose (in both languages), or
    None when safe."""
    cur = os.path.abspath(interpreter)
    checked: set[tuple[str, bool]] = set()
    for _ in range(_MAX_LINKS):
        folder = os.path.dirname(cur)
        for d in _ancestors(folder) + _ancestors(os.path.realpath(folder)):
            holds = d in (folder, os.path.realpath(folder))
            if (d, holds) in checked:
                continue
            checked.add((d, holds))
            problem = _folder_problem(d, holds)
            if problem:
                return problem
        try:
            st = os.lstat(cur)
        except OSError as e:
            return msg("facts.trust.unreadable").format(path=cur, error=e.strerror or e)
        if stat.S_ISLNK(st.st_mode):
            cur = os.path.normpath(os.path.join(folder, os.readlink(cur)))
            continue
        if not stat.S_ISREG(st.st_mode):
            return msg("facts.trust.not_regular").format(path=cur)
        if not _owner_ok(st):
            return msg("facts.trust.file_owner").format(path=cur, owner=_who(st.st_uid))
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return msg("facts.trust.file_writable").format(path=cur, who=_writers(st), mode=f"{stat.S_IMODE(st.st_mode):o}")
        if not os.access(cur, os.X_OK):
            return msg("facts.trust.not_executable").format(path=cur)
        return None
    return msg("facts.trust.too_many_links").format(path=interpreter)


def check_python(raw: str) -> tuple[str | None, Text | None]:
    """``--python`` as typed (an interpreter, a venv folder or a script) -> ``(interpreter, None)``
    when it may be started, else ``(None, one-line reason)`` in both languages."""
    path, err = interpreter_for(raw)
    if err or path is None:
        return None, msg("facts.trust.python_bad").format(raw=raw, problem=err or "")
    problem = unsafe_reason(path)
    if problem:
        shown = raw if os.path.abspath(raw) == os.path.abspath(path) else f"{raw} ({path})"
        return None, msg("facts.trust.python_refused").format(shown=shown, problem=problem)
    return path, None
