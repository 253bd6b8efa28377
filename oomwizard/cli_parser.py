"""The command line's parser: every command and option, its help from the string catalogue.

Flag names, metavars and choices are never translated; argparse's own words are set in the
operator's language by ``cli_lang.localize``. ``completion`` reads the same parser.
"""

from __future__ import annotations

import argparse

from . import __version__
from .cli_lang import Parser, localize
from .i18n import LANGS, detect_lang, ui


def _add_common(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument("--lang", choices=LANGS, help=ui("cli.help.common.lang", lang))


def _add_fact_inputs(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FACT=VALUE",
        help=ui("cli.help.common.set", lang),
    )
    p.add_argument(
        "--machine",
        metavar="FILE",
        help=ui("cli.help.common.machine", lang),
    )
    p.add_argument("--python", metavar="PATH", help=ui("cli.help.common.python", lang))


def build_parser(lang: str | None = None) -> argparse.ArgumentParser:
    """The parser, its help in ``lang`` (default: the locale's); flag names are never translated."""
    lang = detect_lang(lang)
    parser = Parser(
        prog="oomwizard",
        description=ui("cli.help.description", lang),
    )
    parser.add_argument("--version", action="version", version=f"oomwizard {__version__}")
    parser.add_argument("--log", action="append", default=[], metavar="FILE", help=ui("cli.help.log", lang))
    parser.add_argument("--demo", action="store_true", help=ui("cli.help.demo", lang))
    parser.add_argument("--plain", action="store_true", help=ui("cli.help.plain", lang))
    parser.add_argument("--inline", action="store_true", help=ui("cli.help.inline", lang))
    parser.add_argument("--follow", action="store_true",
                        help=ui("cli.help.follow", lang))
    parser.add_argument("--resume", action="store_true", help=ui("cli.help.resume", lang))
    parser.add_argument("--replay", metavar="BUNDLE", help=ui("cli.help.replay", lang))
    _add_common(parser, lang)
    _add_fact_inputs(parser, lang)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("diagnose", help=ui("cli.help.diagnose", lang))
    p.add_argument("files", nargs="*", metavar="FILE", help=ui("cli.help.diagnose.files", lang))
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", help=ui("cli.help.format", lang))
    p.add_argument("--detect", action="store_true", help=ui("cli.help.diagnose.detect", lang))
    p.add_argument("--output", metavar="FILE",
                   help=ui("cli.help.diagnose.output", lang))
    p.add_argument("--force", action="store_true", help=ui("cli.help.diagnose.force", lang))
    p.add_argument("--replay", metavar="BUNDLE", help=ui("cli.help.diagnose.replay", lang))
    p.add_argument("--follow", action="store_true",
                   help=ui("cli.help.diagnose.follow", lang))
    _add_common(p, lang)
    _add_fact_inputs(p, lang)

    p = sub.add_parser("detect", help=ui("cli.help.detect", lang))
    p.add_argument("--format", choices=("text", "json"), default="text", help=ui("cli.help.format", lang))
    p.add_argument("--python", metavar="PATH", help=ui("cli.help.common.python", lang))
    _add_common(p, lang)

    p = sub.add_parser("show", help=ui("cli.help.show", lang))
    p.add_argument("id", metavar="LEAF_ID|SCENARIO_ID", help=ui("cli.help.show.id", lang))
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help=ui("cli.help.format", lang))
    _add_common(p, lang)
    _add_fact_inputs(p, lang)

    p = sub.add_parser("verify", help=ui("cli.help.verify", lang))
    p.add_argument("id", metavar="LEAF_ID|SCENARIO_ID", help=ui("cli.help.verify.id", lang))
    p.add_argument("files", nargs="*", metavar="FILE", help=ui("cli.help.verify.files", lang))
    p.add_argument("--format", choices=("text", "json"), default="text", help=ui("cli.help.format", lang))
    _add_common(p, lang)

    p = sub.add_parser("lint", help=ui("cli.help.lint", lang))
    p.add_argument("--format", choices=("text", "json"), default="text", help=ui("cli.help.format", lang))
    _add_common(p, lang)

    p = sub.add_parser("export", help=ui("cli.help.export", lang))
    p.add_argument("--format", choices=("json", "markdown", "html"), required=True, help=ui("cli.help.format", lang))
    p.add_argument("--output", metavar="PATH", help=ui("cli.help.export.output", lang))
    p.add_argument("--force", action="store_true", help=ui("cli.help.export.force", lang))
    _add_common(p, lang)

    p = sub.add_parser("kit", help=ui("cli.help.kit", lang))
    p.add_argument("dir", metavar="DIR", help=ui("cli.help.kit.dir", lang))
    p.add_argument("--python", dest="pythons", nargs="+", metavar="X.Y", help=ui("cli.help.kit.python", lang))
    p.add_argument("--platform", dest="platforms", nargs="+", metavar="TAG",
                   help=ui("cli.help.kit.platform", lang))
    p.add_argument("--pyz", action="store_true", help=ui("cli.help.kit.pyz", lang))
    p.add_argument("--force", action="store_true", help=ui("cli.help.kit.force", lang))
    _add_common(p, lang)
    p = sub.add_parser("completion", help=ui("cli.help.completion", lang))
    p.add_argument("shell", choices=("bash", "zsh", "fish"),
                   help=ui("cli.help.completion.shell", lang))
    _add_common(p, lang)

    p = sub.add_parser("scenarios", help=ui("cli.help.scenarios", lang))
    p.add_argument("--format", choices=("text", "json"), default="text", help=ui("cli.help.format", lang))
    _add_common(p, lang)

    from .onboard.commands import add_parsers as add_onboard_parsers

    add_onboard_parsers(sub, lambda p: _add_common(p, lang), lang)
    from .plan.command import add_parser as _add_plan

    _add_plan(sub, lang)

    p = sub.add_parser("report", help=ui("cli.help.report", lang))
    p.add_argument("--log", action="append", default=[], metavar="FILE", help=ui("cli.help.report.log", lang))
    p.add_argument("--output", metavar="FILE", help=ui("cli.help.report.output", lang))
    p.add_argument("--format", choices=("markdown", "json", "html"), help=ui("cli.help.report.format", lang))
    p.add_argument("--no-redact", action="store_true", help=ui("cli.help.report.no_redact", lang))
    _add_common(p, lang)
    _add_fact_inputs(p, lang)
    localize(parser, lang)
    return parser
