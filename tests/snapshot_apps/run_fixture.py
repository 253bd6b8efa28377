"""Run the wizard on the fixture knowledge base and stand-in inputs (to look at it in a terminal)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshot_apps.stand_ins import make_app

if __name__ == "__main__":
    args = sys.argv[1:]
    lang = "zh" if "--zh" in args else "en"
    logs = [a for a in args if not a.startswith("--")]
    app = make_app(logs=logs, lang=lang)
    out = app.run(inline="--inline" in args)
    print(out)
