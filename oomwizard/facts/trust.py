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


def _folder_problem(path: str, holds_file: bool) -> str | None:
    try:
        st = os.stat(path)
    except OSError as e:
        return f"{path} cannot be read: {e.strerror or e}"
    if not _owner_ok(st):
        return f"folder {path} belongs to {_who(st.st_uid)}, not to you or root"
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and (holds_file or not st.st_mode & stat.S_ISVTX):
        who = "other users" if st.st_mode & stat.S_IWOTH else "its group"
        return f"folder {path} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
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


def unsafe_reason(interpreter: str) -> str | None:
    """Why starting ``interpreter`` could run a program someone else chose, or None when safe."""
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
            return f"{cur} cannot be read: {e.strerror or e}"
        if stat.S_ISLNK(st.st_mode):
            cur = os.path.normpath(os.path.join(folder, os.readlink(cur)))
            continue
        if not stat.S_ISREG(st.st_mode):
            return f"{cur} is not a regular file"
        if not _owner_ok(st):
            return f"{cur} belongs to {_who(st.st_uid)}, not to you or root"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            who = "other users" if st.st_mode & stat.S_IWOTH else "its group"
            return f"{cur} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
        if not os.access(cur, os.X_OK):
            return f"{cur} is not executable"
        return None
    return f"{interpreter}: too many symbolic links"


def check_python(raw: str) -> tuple[str | None, str | None]:
    """``--python`` as typed (an interpreter, a venv folder or a script) -> ``(interpreter, None)``
    when it may be started, else ``(None, one-line reason)``."""
    path, err = interpreter_for(raw)
    if err or path is None:
        return None, f"--python {raw}: {err}"
    problem = unsafe_reason(path)
    if problem:
        shown = raw if os.path.abspath(raw) == os.path.abspath(path) else f"{raw} ({path})"
        return None, f"--python {shown}: refusing to run it: {problem}"
    return path, None
