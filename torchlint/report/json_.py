"""A JSON array shaped like ruff's ``--output-format json``, plus torchlint's own keys."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from torchlint.report.diagnostic import Diagnostic, Fix, Location
from torchlint.report.paths import readable

if TYPE_CHECKING:
    from torchlint.report import ReportContext


def render(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return json.dumps([diagnostic_to_json(d) for d in diagnostics], indent=2, sort_keys=True) + "\n"


def diagnostic_to_json(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        # Notebook cells are never read, so there is no cell to name.
        "cell": None,
        "code": diagnostic.code,
        "end_location": location_to_json(diagnostic.end_location),
        "filename": readable(diagnostic.path),
        "fix": _fix_to_json(diagnostic.fix),
        "location": location_to_json(diagnostic.location),
        "message": diagnostic.message,
        "noqa_row": diagnostic.noqa_row,
        "url": diagnostic.url,
        "name": diagnostic.name,
        "severity": diagnostic.severity.value,
        "suggestion": diagnostic.suggestion,
        "gb_ids": list(diagnostic.gb_ids),
        "related": [
            {
                "code": related.code,
                "location": location_to_json(related.location),
                "end_location": location_to_json(related.end_location),
                "message": related.message,
            }
            for related in diagnostic.related
        ],
    }


def location_to_json(location: Location) -> dict[str, int]:
    return {"column": location.column, "row": location.row}


def _fix_to_json(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "edits": [
            {
                "content": edit.content,
                "location": location_to_json(edit.location),
                "end_location": location_to_json(edit.end_location),
            }
            for edit in fix.edits
        ],
        "message": fix.message,
    }
