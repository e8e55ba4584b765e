"""One line per finding: ``path:row:col: CODE [*] message``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchlint.report.diagnostic import Diagnostic
from torchlint.report.paths import display_path
from torchlint.report.style import Style

if TYPE_CHECKING:
    from torchlint.report import ReportContext


def header_line(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    style = Style(ctx.colour)
    path = style.path(display_path(diagnostic.path, ctx.cwd))
    start = diagnostic.location
    position = style.position(f"{start.row}:{start.column}")
    code = style.code(diagnostic.code)
    if diagnostic.fix_applies(ctx.unsafe_fixes):
        code += " " + style.fixable("[*]")
    return f"{path}:{position}: {code} {diagnostic.message}"


def render(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return "".join(header_line(diagnostic, ctx) + "\n" for diagnostic in diagnostics)
