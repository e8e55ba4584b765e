"""SARIF 2.1.0, the format code-scanning services (GitHub among them) read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from torchlint.pages import page_text
from torchlint.report.diagnostic import Diagnostic, Location, Severity
from torchlint.report.paths import STDIN, relative_to_cwd
from torchlint.rules.base import FAMILIES, Rule

if TYPE_CHECKING:
    from torchlint.report import ReportContext

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_URI = "https://github.com/torchlint/torchlint"
SRCROOT = "%SRCROOT%"


def render(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return json.dumps(sarif_log(diagnostics, ctx), indent=2) + "\n"


def sarif_log(diagnostics: list[Diagnostic], ctx: ReportContext) -> dict[str, Any]:
    rules = [rule_descriptor(rule) for rule in ctx.rules]
    index_by_code = {descriptor["id"]: index for index, descriptor in enumerate(rules)}
    results = []
    for diagnostic in diagnostics:
        if diagnostic.code not in index_by_code:
            # SARIF needs every result's rule in the table, even one outside the selection.
            index_by_code[diagnostic.code] = len(rules)
            rules.append(_descriptor_for_unlisted(diagnostic))
        results.append(result(diagnostic, index_by_code[diagnostic.code], ctx))
    return {
        "$schema": SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchlint",
                        "version": ctx.version,
                        "informationUri": TOOL_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(ctx.cwd)}},
                # Columns count characters (code points), as libcst's positions do.
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def rule_descriptor(rule: type[Rule]) -> dict[str, Any]:
    # The rule's page, as `torchlint rule CODE` prints it: code-scanning services show
    # `help` beside each result, and the page is Markdown that reads as plain text too.
    page = page_text(rule)
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "help": {"text": page, "markdown": page},
        "properties": {
            "family": rule.family(),
            "gb_ids": list(rule.gb_ids),
            "gb_types": list(rule.gb_types),
        },
        "defaultConfiguration": {"level": _level(rule.severity)},
    }
    url = rule.url()
    if url is not None:
        descriptor["helpUri"] = url
    return descriptor


def result(diagnostic: Diagnostic, rule_index: int, ctx: ReportContext) -> dict[str, Any]:
    artifact = artifact_location(diagnostic.path, ctx.cwd)
    found = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": _level(diagnostic.severity),
        "message": {"text": diagnostic.message},
        "locations": [_physical(artifact, diagnostic.location, diagnostic.end_location)],
    }
    if diagnostic.related:
        found["relatedLocations"] = [
            {**_physical(artifact, related.location, related.end_location), "id": number, "message": {"text": f"{related.code} {related.message}"}}
            for number, related in enumerate(diagnostic.related)
        ]
    fix = diagnostic.fix
    if fix is not None and diagnostic.fixable:
        replacements = [
            {"deletedRegion": _physical(artifact, edit.location, edit.end_location)["physicalLocation"]["region"],
             "insertedContent": {"text": edit.content}}
            for edit in fix.edits
        ]
        found["fixes"] = [{
            "description": {"text": f"{fix.message} ({fix.applicability.value})"},
            "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}],
        }]
    return found


def _physical(artifact: dict[str, str], start: Location, end: Location) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": {
                "startLine": start.row,
                "startColumn": start.column,
                "endLine": end.row,
                "endColumn": end.column,
            },
        }
    }


def artifact_location(path: str, cwd: Path) -> dict[str, str]:
    """A URI relative to %SRCROOT% for files under cwd, else an absolute file URI; either
    percent-encodes the name's bytes, UTF-8 or not."""
    relative = relative_to_cwd(path, cwd)
    if relative is not None:
        return {"uri": quote(os.fsencode(relative.as_posix())), "uriBaseId": SRCROOT}
    if path == STDIN:
        return {"uri": STDIN}
    return {"uri": Path(path).absolute().as_uri()}


def _descriptor_for_unlisted(diagnostic: Diagnostic) -> dict[str, Any]:
    from torchlint.rules import rule_by_code

    rule = rule_by_code(diagnostic.code)
    if rule is not None:
        return rule_descriptor(rule)
    # Not a registered rule either: describe it from what the finding carries.
    descriptor: dict[str, Any] = {
        "id": diagnostic.code,
        "name": diagnostic.name,
        "shortDescription": {"text": diagnostic.message},
        "properties": {
            "family": FAMILIES.get(diagnostic.code[:3], "other"),
            "gb_ids": list(diagnostic.gb_ids),
            "gb_types": [],
        },
        "defaultConfiguration": {"level": _level(diagnostic.severity)},
    }
    if diagnostic.url:
        descriptor["helpUri"] = diagnostic.url
    return descriptor


def _directory_uri(directory: Path) -> str:
    uri = directory.absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _level(severity: Severity) -> str:
    return "warning" if severity is Severity.WARNING else "error"
