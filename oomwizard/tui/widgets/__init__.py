"""Widgets the screens share: command blocks that wrap, fix cards, breadcrumbs, checklist items."""
