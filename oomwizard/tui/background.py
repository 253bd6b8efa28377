"""Work the interface can walk away from: a daemon thread, awaited by an async worker.

A read can block for ever (a pipe whose writer stalls, a slow network file system). Textual's
thread workers are ordinary threads, so one stuck in a read keeps the process alive after the
screen is gone and ``q`` or Ctrl+C seem to do nothing. Here the thread is a daemon and only an
async worker waits for it: quitting cancels the wait at once, and the stuck thread ends with the
process. A result that arrives after its wait was cancelled (the app closed, or a newer job of the
same group replaced it) is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from ..i18n import said


def abandonable(job: Callable[[], Any], done: Callable[[Any], None], failed: Callable[[str], None],
                expected: type[Exception], lang: str = "en") -> Callable[[], Awaitable[None]]:
    """An async worker body: ``done(result)``, or ``failed(message)`` when ``job`` raised.

    ``expected`` is the exception whose message is shown as it is (in ``lang`` when it carries
    both languages); any other is prefixed with its type, since it is not a message written for
    the operator.
    """

    async def wait() -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, error: Exception | None) -> None:
            if future.done():
                return
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)

        def run() -> None:
            try:
                result, error = job(), None
            except Exception as e:  # noqa: BLE001 - reported on the screen; it must never take the wizard down
                result, error = None, e
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
                loop.call_soon_threadsafe(settle, result, error)

        threading.Thread(target=run, name="oomwizard-background", daemon=True).start()
        try:
            result = await future
        except expected as e:
            failed(said(e, lang))
            return
        except Exception as e:  # noqa: BLE001 - shown on the screen; a read must never take the wizard down
            failed(f"{type(e).__name__}: {e}")
            return
        done(result)

    return wait
