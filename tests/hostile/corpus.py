"""Every case of the hostile-input corpus as data, and one runner that judges a case as an operator
would see it: the exit code, a traceback, a hang, a planted secret or a raw control character in
anything printed or written, and whether a program planted by another user was started.

``tests/hostile/test_corpus.py`` runs each case as a test; ``benchmarks/hostile_cases.py`` runs
them all against an installed ``oomwizard`` and prints the totals.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "machine"))

import corpus_inputs as ci  # noqa: E402
from plant import FORBIDDEN, PAYLOAD, leaks, set_command, shell_env  # noqa: E402

OK, ERROR, USAGE, INPUT, KB, NO_MATCH, FAILED, NOT_PROVEN, OUTPUT = 0, 1, 2, 4, 5, 6, 8, 9, 10
Setup = Callable[[], Callable[[], None]]


@dataclass
class Case:
    id: str
    group: str
    args: list[str] = field(default_factory=list)
    """oomwizard's arguments; or ``shell``, a bash script where ``$OW`` runs oomwizard."""
    expect: frozenset[int] = frozenset({OK})
    shell: str | None = None
    stdin: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    slow: bool = False
    signal_when_ready: int | None = None
    """Send this signal once the command catches SIGTERM, with stdin a pipe that stays open."""
    written: Path | None = None
    """A file or folder the command writes, searched like its output."""
    setup: Setup | None = None
    marker: Path | None = None
    """Created by a planted program if anything runs it."""


@dataclass
class Result:
    case: Case
    rc: int | None
    wall: float
    traceback: bool
    hang: bool
    leaked: dict[str, int]
    raw: list[str]
    executed: bool
    stderr: str = ""

    @property
    def wrong_code(self) -> bool:
        return not self.hang and self.rc not in self.case.expect

    @property
    def ok(self) -> bool:
        return not (self.traceback or self.hang or self.leaked or self.raw or self.executed or self.wrong_code)


def _fifo_writer(path: Path, data: bytes, *, close: bool = True) -> Setup:
    """A writer thread for a named pipe: it sends ``data`` and closes, or keeps its end open."""
    def start() -> Callable[[], None]:
        held: list[int] = []

        def write() -> None:
            fd = os.open(path, os.O_WRONLY)  # waits for the command to open its end
            held.append(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view[: 1 << 16]):]
            if close:
                os.close(held.pop())

        t = threading.Thread(target=write, daemon=True)
        t.start()

        def stop() -> None:
            t.join(5)
            while held:
                os.close(held.pop())
        return stop
    return start


def _catches(pid: int, signum: int, argv: list[str]) -> bool:
    """The child runs ``argv`` (it has exec'd: before, it is a copy of the runner) and catches ``signum``."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        running = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return False
    if running[-len(argv):] != [os.fsencode(a) for a in argv][-len(running):]:
        return False
    line = next((ln for ln in status.splitlines() if ln.startswith("SigCgt:")), "SigCgt: 0")
    if not int(line.split()[1], 16) >> (signum - 1) & 1:
        return False
    try:  # and it is blocked waiting for the input, not still starting up
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return True
    return wchan in ("", "0") or "poll" in wchan or "pipe" in wchan


def _files_text(path: Path | None) -> str:
    if path is None or not path.exists():
        return ""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)


def run(case: Case, tool: list[str], env: dict[str, str] | None = None) -> Result:
    """Run ``case`` with ``tool`` (the command that starts oomwizard) in its own session."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "TMPDIR")}
    base.pop("OOMWIZARD_TRACEBACK", None)
    base.update(env or {})
    base.update(case.env)
    base["OW"] = " ".join(shlex.quote(t) for t in tool)
    argv = ["bash", "-c", case.shell] if case.shell else [*tool, *case.args]
    stop = case.setup() if case.setup else None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin: int | object = subprocess.DEVNULL
        if case.signal_when_ready:
            stdin = subprocess.PIPE
        elif case.stdin is not None:
            stdin = case.stdin.open("rb")
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, env=base, start_new_session=True)  # type: ignore[arg-type]
        hang = threading.Event()

        def kill() -> None:
            hang.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(case.timeout, kill)
        timer.start()
        if case.signal_when_ready and proc.stdin is not None:
            proc.stdin.write(ci.DEMO_LOG.read_bytes()[:4000])
            proc.stdin.flush()
            while not _catches(proc.pid, signal.SIGTERM, argv) and proc.poll() is None and not hang.is_set():
                time.sleep(0.01)
            if proc.poll() is None:
                os.kill(proc.pid, case.signal_when_ready)
        _, status = os.waitpid(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        timer.cancel()
        if proc.stdin is not None:
            proc.stdin.close()
        if hasattr(stdin, "close"):
            stdin.close()  # type: ignore[union-attr]
        if stop:
            stop()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # nothing of the case outlives it
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    text = stdout + "\n" + stderr + "\n" + _files_text(case.written)
    return Result(
        case, None if hang.is_set() else proc.returncode, wall,
        "Traceback (most recent call last)" in text, hang.is_set(), leaks(text),
        sorted({f"U+{ord(c):04X}" for c in FORBIDDEN.findall(text)}),
        bool(case.marker and case.marker.exists()), stderr[-2000:],
    )


# --- the cases ---------------------------------------------------------------------------------


def _content_cases(d: Path, big: bool) -> list[Case]:
    cases = []
    folder = d / "content"
    folder.mkdir()
    for name, (data, has_oom) in ci.content_inputs(big).items():
        p = folder / name
        p.write_bytes(data)
        slow = len(data) > 50 * ci.MIB
        diag = frozenset({OK}) if has_oom else frozenset({NO_MATCH})
        ver = frozenset({FAILED}) if has_oom else frozenset({NOT_PROVEN})
        if name == "badutf8_in_oom":  # the bytes sit inside "CUDA out of memory"
            ver = frozenset({FAILED, NOT_PROVEN})  # other lines of the failure may still show it
        cases += [
            Case(f"content/{name}/diagnose", "content", ["diagnose", str(p)], diag, slow=slow),
            Case(f"content/{name}/json", "content", ["diagnose", str(p), "--format", "json"], diag, slow=slow),
            Case(f"content/{name}/stdin", "content", ["diagnose", "-"], diag, stdin=p, slow=slow),
            Case(f"content/{name}/verify", "content", ["verify", "sampler-warmup", str(p)], ver, slow=slow),
        ]
    return cases


def _special_cases(d: Path) -> list[Case]:
    demo = str(ci.DEMO_LOG)
    q = shlex.quote
    folder = d / "special"
    folder.mkdir()
    fifos = {n: folder / n for n in ("fifo_writer", "fifo_gz", "fifo_nowriter", "fifo_stalled", "fifo_verify")}
    for f in fifos.values():
        os.mkfifo(f)
    data = ci.DEMO_LOG.read_bytes()
    import gzip as _gz
    cases = [
        Case("special/directory", "special", ["diagnose", str(folder)], frozenset({INPUT})),
        Case("special/nonexistent", "special", ["diagnose", str(folder / "nope.log")], frozenset({INPUT})),
        Case("special/fifo_with_writer", "special", ["diagnose", str(fifos["fifo_writer"])],
             setup=ci_setup(fifos["fifo_writer"], data)),
        Case("special/fifo_gzip_with_writer", "special", ["diagnose", str(fifos["fifo_gz"])],
             setup=ci_setup(fifos["fifo_gz"], _gz.compress(data))),
        Case("special/fifo_verify_with_writer", "special", ["verify", "sampler-warmup", str(fifos["fifo_verify"])],
             frozenset({FAILED}), setup=ci_setup(fifos["fifo_verify"], data)),
        Case("special/fifo_no_writer", "special", ["diagnose", str(fifos["fifo_nowriter"])], frozenset({INPUT}), slow=True),
        Case("special/fifo_writer_stalls", "special", ["diagnose", str(fifos["fifo_stalled"])], frozenset({OK}),
             setup=_fifo_writer(fifos["fifo_stalled"], data, close=False), slow=True, timeout=90),
        Case("special/stdin_writer_stalls", "special", shell=f"{{ cat {q(demo)}; sleep 45; }} | $OW diagnose -",
             expect=frozenset({OK}), slow=True, timeout=90),
        Case("special/proc_substitution", "special", shell=f"$OW diagnose <(cat {q(demo)})"),
        Case("special/same_file_twice", "special", ["diagnose", demo, demo]),
        Case("special/good_and_missing", "special", ["diagnose", demo, str(folder / "nope.log")], frozenset({INPUT})),
        Case("special/dash_name", "special", ["diagnose", "--", "-x"], frozenset({INPUT})),
        Case("special/escape_in_missing_name", "special", ["diagnose", str(folder / ("nope" + PAYLOAD + ".log"))],
             frozenset({INPUT})),
        Case("special/stdin_dev_null", "special", ["diagnose"], frozenset({NO_MATCH}), stdin=Path(os.devnull)),
        Case("special/dev_null", "special", ["diagnose", os.devnull], frozenset({NO_MATCH})),
        Case("special/verify_dev_null", "special", ["verify", "sampler-warmup", os.devnull], frozenset({NOT_PROVEN})),
        Case("special/stdout_pipe_closed_early", "special",
             shell="$OW export --format json | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}"),
        Case("special/stdin_closed_no_file", "special", shell="$OW diagnose <&-", expect=frozenset({INPUT})),
        Case("special/stdin_closed_with_file", "special", shell=f"$OW diagnose {q(demo)} <&-"),
        Case("special/verify_stdin_closed_with_file", "special", shell=f"$OW verify sampler-warmup {q(demo)} <&-",
             expect=frozenset({FAILED})),
        Case("special/stdout_closed", "special", shell=f"$OW diagnose {q(demo)} >&-", expect=frozenset({OUTPUT})),
        Case("special/verify_intermixed_json", "special", ["verify", "sampler-warmup", "--format", "json", demo],
             frozenset({FAILED})),
        Case("special/diagnose_intermixed", "special", ["diagnose", demo, "--format", "json", demo]),
    ]
    for dev in ("/dev/zero", "/dev/urandom"):
        cases += [Case(f"special/{dev[5:]}", "special", ["diagnose", dev], frozenset({INPUT})),
                  Case(f"special/verify_{dev[5:]}", "special", ["verify", "sampler-warmup", dev], frozenset({INPUT})),
                  Case(f"special/stdin_{dev[5:]}", "special", ["diagnose", "-"], frozenset({INPUT}), stdin=Path(dev))]
    if Path("/dev/full").exists():
        cases.append(Case("special/stdout_dev_full", "special", shell=f"$OW diagnose {q(demo)} >/dev/full",
                          expect=frozenset({OUTPUT})))
    if os.geteuid() == 0 and Path("/usr/bin/setpriv").exists():
        unread = folder / "unread.log"
        unread.write_bytes(data)
        unread.chmod(0)
        cases.append(Case("special/unreadable_as_nobody", "special", expect=frozenset({INPUT}), shell=(
            "setpriv --reuid=65534 --regid=65534 --clear-groups $OW diagnose " + q(str(unread)))))
    return cases


def ci_setup(path: Path, data: bytes) -> Setup:
    return _fifo_writer(path, data)


def _bomb_cases(d: Path, big: bool) -> list[Case]:
    folder = d / "bombs"
    folder.mkdir()
    size = 1024 if big else 256  # MiB of output per bomb
    member = 64 * ci.MIB
    zeros = ci.gzip_bomb(folder / "zeros.gz", b"\0" * member, size * ci.MIB // member)
    lines = ci.gzip_bomb(folder / "newlines.gz", b"\n" * member, size * ci.MIB // member)
    text = ci.gzip_bomb(folder / "text_then_demo.gz", b"INFO 10-14 09:12:07 [x.py:1] GET /v1/models 200\n" * (member // 48),
                        size * ci.MIB // member, tail=ci.DEMO_LOG.read_bytes())
    return [
        Case("bombs/zeros/diagnose", "bombs", ["diagnose", str(zeros)], frozenset({NO_MATCH}), slow=big),
        Case("bombs/zeros/stdin", "bombs", ["diagnose", "-"], frozenset({NO_MATCH}), stdin=zeros, slow=big),
        Case("bombs/zeros/verify", "bombs", ["verify", "sampler-warmup", str(zeros)], frozenset({NOT_PROVEN}), slow=big),
        Case("bombs/newlines/diagnose", "bombs", ["diagnose", str(lines)], frozenset({NO_MATCH}), slow=big),
        Case("bombs/text_then_demo/diagnose", "bombs", ["diagnose", str(text)], slow=True),
        Case("bombs/text_then_demo/verify_stdin", "bombs", ["verify", "sampler-warmup", "-"], frozenset({FAILED}),
             stdin=text, slow=True, timeout=120),
    ]


def _machine_cases(d: Path) -> list[Case]:
    demo = str(ci.DEMO_LOG)
    good = {"ok.json", "no_keys.json", "gpus_null.json", "escape_name.json", "facts_injected.json", "schema_future.json",
            "gpu_count_1000.json", "mem_zero.json", "vllm_version_bad.json", "vllm_version_huge.json",
            "gpu_index_neg.json", "schema_str.json"}  # an index or a schema tag is no size: ignored or refused
    cases = []
    for name, path in ci.machine_inputs(d / "machine").items():
        expect = frozenset({OK, INPUT}) if name in good else frozenset({INPUT})
        if name == "ok.json":
            expect = frozenset({OK})
        for cmd, args in (("diagnose", ["diagnose", demo, "--machine", str(path)]),
                          ("show", ["show", "sampler-warmup", "--machine", str(path)]),
                          ("json", ["diagnose", demo, "--machine", str(path), "--format", "json"]),
                          ("markdown", ["diagnose", demo, "--machine", str(path), "--format", "markdown"])):
            cases.append(Case(f"machine/{name}/{cmd}", "machine", args, expect))
    for dev in ("/dev/zero", "/dev/urandom", "-"):
        cases.append(Case(f"machine/{dev}/diagnose", "machine", ["diagnose", demo, "--machine", dev], frozenset({INPUT})))
    return cases


def _escape_cases(p: dict[str, Path], d: Path) -> list[Case]:
    log, proc = str(p["hostile_log"]), {"OOMWIZARD_PROC_ROOT": str(p["hostile_proc"])}
    machine = d / "machine" / "escape_name.json"
    out = [
        Case("escapes/log/text", "escapes", ["diagnose", log]),
        Case("escapes/log/markdown", "escapes", ["diagnose", log, "--format", "markdown"]),
        Case("escapes/log/json", "escapes", ["diagnose", log, "--format", "json"]),
        Case("escapes/log/zh", "escapes", ["diagnose", log, "--lang", "zh"]),
        Case("escapes/log/stdin", "escapes", ["diagnose", "-"], stdin=p["hostile_log"]),
        Case("escapes/log/verify", "escapes", ["verify", "sampler-warmup", log], frozenset({FAILED})),
        Case("escapes/log/verify_json", "escapes", ["verify", "sampler-warmup", log, "--format", "json"], frozenset({FAILED})),
        Case("escapes/names/missing_and_empty", "escapes", ["diagnose", log + ".nope", str(p["empty_evil"])], frozenset({INPUT})),
        Case("escapes/names/empty", "escapes", ["diagnose", str(p["empty_evil"])], frozenset({NO_MATCH})),
        Case("escapes/set/text", "escapes", ["show", "sampler-warmup", "--set", "model=m" + PAYLOAD, "--set", "gpu_name=G" + PAYLOAD]),
        Case("escapes/set/markdown", "escapes", ["show", "sampler-warmup", "--set", "model=m" + PAYLOAD, "--format", "markdown"]),
        Case("escapes/set/json", "escapes", ["show", "sampler-warmup", "--set", "model=m" + PAYLOAD, "--format", "json"]),
        Case("escapes/machine/json", "escapes", ["diagnose", log, "--machine", str(machine), "--format", "json"]),
        Case("escapes/proc/detect", "escapes", ["detect"], env=proc),
        Case("escapes/proc/detect_json", "escapes", ["detect", "--format", "json"], env=proc),
        Case("escapes/proc/diagnose_detect", "escapes", ["diagnose", str(p["minimal_log"]), "--detect"], env=proc),
        Case("escapes/proc/diagnose_detect_json", "escapes", ["diagnose", str(p["minimal_log"]), "--detect", "--format", "json"], env=proc),
    ]
    return out


def _secret_cases(p: dict[str, Path]) -> list[Case]:
    log = str(p["secrets_log"])
    env = {**shell_env(), "OOMWIZARD_PROC_ROOT": str(p["secrets_proc"])}
    return [
        Case("secrets/detect", "secrets", ["detect"], env=env),
        Case("secrets/detect_json", "secrets", ["detect", "--format", "json"], env=env),
        Case("secrets/diagnose", "secrets", ["diagnose", log], env=env),
        Case("secrets/diagnose_markdown", "secrets", ["diagnose", log, "--format", "markdown"], env=env),
        Case("secrets/diagnose_json", "secrets", ["diagnose", log, "--format", "json"], env=env),
        Case("secrets/diagnose_stdin", "secrets", ["diagnose", "-"], stdin=p["secrets_log"], env=env),
        Case("secrets/diagnose_detect", "secrets", ["diagnose", log, "--detect"], env=env),
        Case("secrets/diagnose_detect_json", "secrets", ["diagnose", log, "--detect", "--format", "json"], env=env),
        Case("secrets/minimal_detect", "secrets", ["diagnose", str(p["minimal_log"]), "--detect"], env=env),
        Case("secrets/minimal_detect_json", "secrets", ["diagnose", str(p["minimal_log"]), "--detect", "--format", "json"], env=env),
        Case("secrets/verify", "secrets", ["verify", "sampler-warmup", log], frozenset({FAILED}), env=env),
        Case("secrets/verify_json", "secrets", ["verify", "sampler-warmup", log, "--format", "json"], frozenset({FAILED}), env=env),
        Case("secrets/show_set", "secrets", ["show", "sampler-warmup", "--set", set_command()], env=env),
        Case("secrets/show_set_json", "secrets", ["show", "sampler-warmup", "--set", set_command(), "--format", "json"], env=env),
    ]


def _exec_cases(d: Path) -> list[Case]:
    root, marker = ci.exec_trap(d / "trap")
    env = {"OOMWIZARD_PROC_ROOT": str(root)}
    demo = str(ci.DEMO_LOG)
    return [Case(f"exec/{name}", "exec", args, env=env, marker=marker) for name, args in (
        ("detect", ["detect"]), ("detect_json", ["detect", "--format", "json"]),
        ("diagnose_detect", ["diagnose", demo, "--detect"]), ("diagnose_detect_json", ["diagnose", demo, "--detect", "--format", "json"]),
    )]


def _kb_cases(d: Path) -> list[Case]:
    cases = []
    demo = str(ci.DEMO_LOG)
    for name, root in ci.broken_kbs(d / "kb").items():
        env = {"OOMWIZARD_KB": str(root)}
        kb = frozenset({KB})
        html = d / "kb-export" / name
        for cmd, args in (("lint", ["lint"]), ("lint_json", ["lint", "--format", "json"]), ("show", ["show", "alpha-oom"]),
                          ("diagnose", ["diagnose", demo]), ("scenarios", ["scenarios"]),
                          ("export", ["export", "--format", "html", "--output", str(html)])):
            cases.append(Case(f"kb/{name}/{cmd}", "kb", args, kb, env=env, written=html if cmd == "export" else None))
    return cases


def _signal_cases() -> list[Case]:
    cases = []
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131)):
        for name, args in (("diagnose", ["diagnose", "-"]), ("json", ["diagnose", "-", "--format", "json"]),
                           ("verify", ["verify", "sampler-warmup", "-"])):
            cases.append(Case(f"signals/{name}/{sig.name}", "signals", args, frozenset({code}), signal_when_ready=sig))
    return cases


def _more_cases(d: Path, big: bool) -> list[Case]:
    """Concurrent runs, no network, an export that would overwrite, and (``big``) a 1 GiB log."""
    demo = shlex.quote(str(ci.DEMO_LOG))
    out = d / "more"
    out.mkdir()
    kept = out / "kept.json"
    kept.write_text("keep me\n")
    cases = [
        Case("more/concurrent_diagnose_x10", "more", shell=(
            f"cd {shlex.quote(str(out))} && for i in $(seq 10); do $OW diagnose {demo} --format json > c$i.json & done; "
            "wait; for i in $(seq 2 10); do cmp -s c1.json c$i.json || exit 99; done")),
        Case("more/export_refuses_to_overwrite", "more", ["export", "--format", "json", "--output", str(kept)],
             frozenset({ERROR}), written=kept),
        Case("more/export_html_twice", "more", shell=(
            f"$OW export --format html --output {shlex.quote(str(out / 'html'))} && "
            f"$OW export --format html --output {shlex.quote(str(out / 'html'))}"), written=out / "html"),
    ]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        for name, args in (("diagnose", f"diagnose {demo}"), ("detect", "detect --format json"), ("lint", "lint"),
                           ("export", "export --format json"), ("verify", f"verify sampler-warmup {demo}")):
            cases.append(Case(f"more/no_network/{name}", "more", shell=f"unshare -n $OW {args}",
                              expect=frozenset({FAILED}) if name == "verify" else frozenset({OK})))
    if big:
        sys.path.insert(0, str(ci.ROOT / "benchmarks"))
        import gen_log

        log = out / "big1g.log"
        gen_log.write(str(log), 1 << 30)
        cases += [Case("more/big1g/diagnose", "more", ["diagnose", str(log)], slow=True, timeout=300),
                  Case("more/big1g/stdin", "more", ["diagnose", "-"], stdin=log, slow=True, timeout=300),
                  Case("more/big1g/verify_stdin", "more", ["verify", "sampler-warmup", "-"], frozenset({OK, FAILED}),
                       stdin=log, slow=True, timeout=300)]
    return cases


def build(d: Path, *, big: bool = False) -> list[Case]:
    """Generate every input under ``d`` and return the cases; ``big`` adds the 100 MiB-1 GiB inputs."""
    p = ci.planted(d / "planted")
    cases = (_content_cases(d, big) + _special_cases(d) + _bomb_cases(d, big) + _machine_cases(d)
             + _escape_cases(p, d) + _secret_cases(p) + _exec_cases(d) + _kb_cases(d) + _signal_cases()
             + _more_cases(d, big))
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return cases
