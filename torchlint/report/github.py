"""GitHub Actions workflow commands, which GitHub turns into annotations on the diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchlint.report.diagnostic import Diagnostic, Severity
from torchlint.report.paths import display_path

if TYPE_CHECKING:
    from torchlint.report import ReportContext


def render(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return "".join(annotation(diagnostic, ctx) + "\n" for diagnostic in diagnostics)


def annotation(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    command = "warning" if diagnostic.severity is Severity.WARNING else "error"
    path = display_path(diagnostic.path, ctx.cwd)
    start, end = diagnostic.location, diagnostic.end_location
    properties = {
        "title": f"torchlint ({diagnostic.code})",
        "file": path,
        "line": start.row,
        "col": start.column,
        "endLine": end.row,
        "endColumn": end.column,
    }
    joined = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    text = f"{path}:{start.row}:{start.column}: {diagnostic.code} {diagnostic.message}"
    return f"::{command} {joined}::{escape_data(text)}"


def escape_data(text: str) -> str:
    # "%" first, so the escapes added after it are not escaped again.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    # ":" ends the properties and "," separates them, so both are escaped inside a value.
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
