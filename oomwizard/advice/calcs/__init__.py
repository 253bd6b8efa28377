"""Calculations for command templates, one module per area of the knowledge base.

Each module registers its functions with :func:`oomwizard.advice.numbers.calc` when imported;
:mod:`oomwizard.advice.numbers` imports this package so every name is known before any template
is filled or linted.
"""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
