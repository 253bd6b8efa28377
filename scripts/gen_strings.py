"""Compile the string catalogues ``content/<lang>/strings.yaml`` to ``oomwizard/data/strings/<lang>.json``.

The program reads the JSON (one ``json.loads`` of one language, no YAML parser before the first
frame); the YAML is what people edit. ``oomwizard lint`` reports a compiled file that differs from
its catalogue. Run ``python scripts/gen_strings.py`` after editing a catalogue.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from oomwizard.lint.strings import compiled_text, read_catalogue  # noqa: E402


def main() -> int:
    for lang in ("en", "zh"):
        problems: list = []
        entries = read_catalogue(ROOT / "content" / lang / "strings.yaml", f"content/{lang}/strings.yaml", problems)
        if problems:  # never replace the program's catalogue with what a broken file gave
            for p in problems:
                print(f"{p.file}:{p.line}: {p.message}", file=sys.stderr)
            return 1
        out = ROOT / "oomwizard" / "data" / "strings" / f"{lang}.json"
        out.write_text(compiled_text({k: e.text for k, e in entries.items()}), encoding="utf-8")
        print(f"{out.relative_to(ROOT)}: {len(entries)} strings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
