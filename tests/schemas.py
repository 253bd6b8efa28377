"""Validate a command's JSON output against the schema shipped for its kind."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from oomwizard.envelope import kind_of, schema_text


def validate_output(doc: Any) -> str:
    """Validate ``doc`` against its own ``schema``; returns the kind. Raises on any mismatch."""
    found = kind_of(doc)
    assert found is not None, f"not an oomwizard envelope: {str(doc)[:200]}"
    kind, version = found
    schema = json.loads(schema_text(kind, version))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)
    return kind
