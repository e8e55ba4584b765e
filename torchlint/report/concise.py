"""One line per finding: ``path:row:col: CODE [*] message``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchlint.report.diagnostic import Diagnostic
from torchlint.report.paths import display_path

if TYPE_CHECKING:
    from torchlint.report import ReportContext


def header_line(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    path = display_path(diagnostic.path, ctx.cwd)
    start = diagnostic.location
    code = f"{diagnostic.code} [*]" if diagnostic.fix_applies(ctx.unsafe_fixes) else diagnostic.code
    return f"{path}:{start.row}:{start.column}: {code} {diagnostic.message}"


def render(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return "".join(header_line(diagnostic, ctx) + "\n" for diagnostic in diagnostics)
