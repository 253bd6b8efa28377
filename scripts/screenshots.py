"""Write SVG screenshots of the wizard's main screens into screenshots/, from the real app.

    python scripts/screenshots.py                 # the bundled demo (log + machine)
    python scripts/screenshots.py --log FILE      # another log, with the demo machine

The app runs headless with Textual's Pilot on the real knowledge base, the real log reader and
the demo's saved machine report, so the pictures are deterministic and show what an operator
sees. Keys are pressed as an operator would: Enter on each suggestion. The checked checklist is
made against a restart log derived from the demo's (the same start, with new process ids, run to
the end), written to a temporary folder under a fixed name.

It drives the app with the same Pilot helpers as the tests (``tests/snapshot_apps/pilot.py``:
wait for events and workers, never for a time), imported from the checkout: like this script,
they are part of a checkout and of the sdist, not of the installed package.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from snapshot_apps.pilot import enter_until_leaf, press, settle, to_questions  # noqa: E402

from oomwizard.engine import Ask  # noqa: E402
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE, LaunchOptions  # noqa: E402
from oomwizard.tui.app import WizardApp  # noqa: E402
from oomwizard.tui.screens.question import QuestionScreen  # noqa: E402

SIZE = (100, 32)
Steps = Callable[[Any], Awaitable[None]]


async def keys(pilot: Any, *names: str) -> None:
    """Press keys as an operator would, then wait for what they started."""
    await press(pilot, *names)
    await settle(pilot)


async def to_suggested_choice(pilot: Any) -> None:
    """The first choice question whose answer is pre-filled from the log."""
    await to_questions(pilot)
    for _ in range(20):
        step = pilot.app.session.current()
        if (
            isinstance(step, Ask)
            and step.question.kind == "choice"
            and step.suggestion is not None
            and any(getattr(step.facts.get(n), "kind", "") == "log" for n in step.suggestion.facts)
            and step.question.id != "symptom"
        ):
            return
        await keys(pilot, "enter")
    raise SystemExit("no question with a suggestion from the log on this path")


async def to_leaf(pilot: Any) -> None:
    await to_questions(pilot)
    await enter_until_leaf(pilot)


async def nothing(pilot: Any) -> None:
    await settle(pilot)


RESTART_NAME = "vllm-restart.log"


def restart_log(log: str, folder: Path) -> str:
    """The demo's start run again after the fix: up to the end of graph capture, then ready.

    Process ids and the clock move on; the sampler warm-up passes and the server starts.
    """
    lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    end = next((i for i, line in enumerate(lines) if "Graph capturing finished" in line), len(lines) - 1)
    pids = sorted(set(re.findall(r"pid=(\d+)", "\n".join(lines[: end + 1]))))
    out = []
    for line in lines[: end + 1]:
        for n, pid in enumerate(pids):
            line = line.replace(f"pid={pid}", f"pid={61000 + 111 * n}")
        out.append(re.sub(r"(\d\d-\d\d) 09:1", r"\1 09:4", line))
    core = next((m.group(0) for m in (re.match(r"\S*\(EngineCore\S* pid=\d+\)\S*", x) for x in out) if m), "")
    api = next((m.group(0) for m in (re.match(r"\S*\(APIServer pid=\d+\)\S*", x) for x in out) if m), "")
    out += [
        f"{core} INFO 10-14 09:44:47 [core.py:210] init engine (profile, create kv cache, warmup model) took 122.40 seconds",
        f"{api} INFO 10-14 09:44:49 [api_server.py:1971] Starting vLLM API server 0 on http://0.0.0.0:8000",
        f"{api} INFO:     Application startup complete.",
    ]
    path = folder / RESTART_NAME
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return str(path)


def shots(log: str, machine: str, restart: str) -> list[tuple[str, LaunchOptions, Steps]]:
    def opts(lang: str = "en", with_log: bool = True) -> LaunchOptions:
        return LaunchOptions(logs=[log] if with_log else [], machine=machine, lang=lang)

    async def question(pilot: Any) -> None:
        await to_suggested_choice(pilot)
        assert isinstance(pilot.app.screen, QuestionScreen)

    async def help_screen(pilot: Any) -> None:
        await to_suggested_choice(pilot)
        await keys(pilot, "question_mark")

    async def checklist(pilot: Any) -> None:
        await to_leaf(pilot)
        await keys(pilot, "2", "space")

    async def facts(pilot: Any) -> None:
        await to_questions(pilot)
        await keys(pilot, "f")

    async def checked(pilot: Any) -> None:
        await to_leaf(pilot)
        await keys(pilot, "v")
        pilot.app.screen.query_one("#verify-path").value = restart
        await keys(pilot, "enter")

    return [
        ("welcome", opts(with_log=False), nothing),
        ("diagnosis", opts(), nothing),
        ("question", opts(), question),
        ("help", opts(), help_screen),
        ("facts", opts(), facts),
        ("leaf", opts(), to_leaf),
        ("checklist", opts(), checklist),
        ("checklist-checked", opts(), checked),
        ("leaf-zh", opts("zh"), to_leaf),
    ]


async def capture(name: str, opts: LaunchOptions, steps: Steps, out: Path, size: tuple[int, int]) -> Path:
    app = WizardApp(opts)
    async with app.run_test(size=size) as pilot:
        await steps(pilot)
        await settle(pilot)
        path = app.save_screenshot(filename=f"{name}.svg", path=str(out))
    return Path(path)


def _relative(path: str) -> str:
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", default=str(DEMO_LOG), help="the log to diagnose (default: the demo's)")
    parser.add_argument("--machine", default=str(DEMO_MACHINE), help="a saved machine report (default: the demo's)")
    parser.add_argument("--out", default=str(ROOT / "screenshots"), help="output folder")
    parser.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}", help="terminal size, COLUMNSxROWS")
    parser.add_argument("--only", action="append", default=[], help="only these screenshots (by name)")
    args = parser.parse_args(argv)
    for path in (args.log, args.machine):
        if not Path(path).is_file():
            print(f"screenshots: {path} not found", file=sys.stderr)
            return 4
    cols, rows = (int(x) for x in args.size.split("x"))
    out = Path(args.out).resolve()
    # Paths appear on screen (evidence file:line): make them relative so the pictures do not
    # depend on where the checkout lives.
    os.chdir(ROOT)
    args.log, args.machine = (_relative(p) for p in (args.log, args.machine))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="oomwizard-shots-") as tmp:
        restart = restart_log(args.log, Path(tmp))
        for name, opts, steps in shots(args.log, args.machine, restart):
            if args.only and name not in args.only:
                continue
            path = asyncio.run(capture(name, opts, steps, out, (cols, rows)))
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
