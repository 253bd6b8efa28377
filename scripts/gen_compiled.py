"""Compile the knowledge base's YAML to ``oomwizard/data/compiled/<bundle>.json``.

The program reads a file's compiled copy only when the file has exactly the bytes it was made from
(its sha256 is in the copy), and parses the YAML otherwise; the YAML is what people edit. ``oomwizard
lint`` reports a copy that no longer matches its file. Run ``python scripts/gen_compiled.py`` after
editing anything under ``decision_trees/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from oomwizard.kb.compiled import BUNDLES, DATA, compile_bundle  # noqa: E402


def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    for name in BUNDLES:
        text = compile_bundle(ROOT, name)
        out = DATA / f"{name}.json"
        out.write_text(text, encoding="utf-8")
        print(f"{out.relative_to(ROOT)}: {text.count(chr(10)) - 2} files, {len(text.encode()) // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
