"""Starting an interactive session: gather the inputs, pick the frontend.

The frontends share this so that ``--log``, ``--demo``, ``--machine`` and ``--set`` mean the same
in the full-screen interface and in plain mode. Machine detection is *not* run here: the TUI runs
it in a worker so its first screen never waits, plain mode runs it before the first question.
"""

from __future__ import annotations

from .frontend.options import LaunchOptions


def launch(opts: LaunchOptions) -> int:
    sources = None
    if opts.resume:
        import sys

        from .bundle.resume import resume_options

        for note in resume_options(opts)[1]:
            print(f"oomwizard: {note}", file=sys.stderr)
    if opts.replay:
        from .bundle.frontend import replay_sources

        sources = replay_sources(opts)
        if isinstance(sources, int):
            return sources
    if "-" in opts.logs:
        # The wizard reads keys from the terminal; a log read from it too would never end.
        import sys

        from .exitcodes import Exit
        from .logs.inputs import InputError, check_stdin

        try:
            check_stdin(wizard=True)
        except InputError as e:
            from .i18n import said

            print(f"oomwizard: {said(e, opts.lang)}", file=sys.stderr)
            return Exit.INPUT
    if opts.plain:
        from .plain import run_plain

        return run_plain(opts, sources=sources)
    if sources is None and opts.effective_logs():
        # Before Textual is imported: the child reads the log while the wizard draws its first frame.
        from .frontend.apart import start, with_child

        apart = start(opts)
        if apart is not None:
            from .frontend.inputs import default_sources

            sources = with_child(default_sources(), apart)
    from .tui.app import run_tui

    return run_tui(opts, sources=sources)
