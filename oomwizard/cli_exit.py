"""How a command ends: every way out of a run becomes its named exit code (exitcodes.py), with at
most one line on stderr and never a traceback (``OOMWIZARD_TRACEBACK=1`` shows it, for a bug report).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from . import __version__
from .cli_shared import say
from .exitcodes import Exit


def exit_code(run: Callable[[], int]) -> int:
    """The exit code of ``run()``: its own, or the one for how it stopped (a signal, Ctrl+C, a
    reader gone away, a full disk, a bug)."""
    from .signals import SignalExit, received
    from .stdio import OutputError, silence_stdout

    try:
        try:
            code = run()
        except SystemExit as e:
            code = Exit.OK if e.code is None else int(e.code) if isinstance(e.code, int) else Exit.ERROR
        except Exception:
            signal = received()  # the signal's exception, wrapped or swallowed on its way up
            if signal is None:
                raise
            raise signal from None
        if (signal := received()) is not None:
            raise signal
        sys.stdout.flush()  # a full disk shows here, while there is still a way to say so
        return code
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return Exit.CANCELLED
    except SignalExit as e:  # SIGTERM, SIGHUP, SIGQUIT: what was printed stays, nothing more is
        silence_stdout()
        return e.code
    except BrokenPipeError:
        # `oomwizard show … | head`: the reader went away; not an error worth a traceback.
        silence_stdout()
        return Exit.OK
    except OutputError as e:
        silence_stdout()
        say("cli.error.output", error=e.text)
        return Exit.OUTPUT
    except Exception as e:  # noqa: BLE001 - the last resort: every known failure has its own message above
        return internal_error(e)


def internal_error(e: BaseException) -> int:
    """One line instead of a traceback (``OOMWIZARD_TRACEBACK=1`` shows it, for a bug report)."""
    if os.environ.get("OOMWIZARD_TRACEBACK"):
        import traceback

        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    from .text.safe_text import printable

    text = " ".join(printable(str(e)).split())[:300]
    say("cli.error.internal", error=f"{type(e).__name__}{': ' + text if text else ''}")
    say("cli.error.bug", version=__version__)
    return Exit.BUG
