"""``python -m oomwizard``; Ctrl+C while the program is still being imported exits 130 as well."""

from .exitcodes import Exit

try:
    from .cli import main
except KeyboardInterrupt:
    exec("")  # clears CPython's "interrupted" mark, as cli._forget_interrupt explains
    raise SystemExit(Exit.CANCELLED) from None

raise SystemExit(main())
