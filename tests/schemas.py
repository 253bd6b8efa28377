"""Validate a command's JSON output against the schema shipped for its kind."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema

from oomwizard.envelope import kind_of, schema_text


@functools.cache
def _validator(kind: str, version: int) -> jsonschema.Draft202012Validator:
    """The schema of ``kind``, itself checked against the 2020-12 meta-schema, once per kind: the
    check costs several times the validation of a document, and the shipped files do not change
    while the tests run."""
    schema = json.loads(schema_text(kind, version))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def validate_output(doc: Any) -> str:
    """Validate ``doc`` against its own ``schema``; returns the kind. Raises on any mismatch."""
    found = kind_of(doc)
    assert found is not None, f"not an oomwizard envelope: {str(doc)[:200]}"
    kind, version = found
    _validator(kind, version).validate(doc)
    return kind
