"""``json.loads`` for text from logs, argv and saved reports: nesting too deep is bad JSON too.

The C decoder raises ``RecursionError`` (not ``ValueError``) on input nested about a thousand
levels deep. Callers already treat ``ValueError`` as "not JSON, use the text as it is"; this makes a
hostile line take the same path instead of ending the whole run.
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """Like :func:`json.loads`; raises ``ValueError`` for anything that is not usable JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
