"""Each finding with its source excerpt, carets under the range, help and docs, as ruff's
``full`` format shows them."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torchlint.report.diagnostic import Applicability, Diagnostic, Edit, Location
from torchlint.fix.fix_edits import splice
from torchlint.report.concise import header_line
from torchlint.report.links import graph_break_url
from torchlint.report.style import Style
from torchlint.files.source import split_lines

if TYPE_CHECKING:
    from torchlint.report import ReportContext

CONTEXT_LINES = 1
TAB_WIDTH = 4


def render(diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    return "".join(render_one(diagnostic, ctx) + "\n" for diagnostic in diagnostics)


@dataclass(frozen=True)
class _Margin:
    """The gutter every line after the header starts with: as wide as the widest row number
    shown, in the report's style."""

    blank: str
    style: Style

    def source(self, text: str, number: int | None = None) -> str:
        """A line of code (or of a fix's rewrite), beside its row number where it has one."""
        label = self.blank if number is None else f"{number:>{len(self.blank)}}"
        return self.style.gutter(f"{label} |") + f" {text}".rstrip()

    def carets(self, carets: str, code: str) -> str:
        marks = carets.lstrip(" ")
        padding = carets[: len(carets) - len(marks)]
        return self.style.gutter(f"{self.blank} |") + f" {padding}" + self.style.code(f"{marks} {code}")

    def note(self, label: str, text: str) -> str:
        """``= label: text``, as ruff's help and note lines."""
        return f"{self.style.gutter(self.blank + ' =')} {self.style.label(label + ':')} {text}"


def render_one(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    """The block for one finding, ending with a blank line that separates it from the next."""
    source = ctx.sources.get(diagnostic.path)
    lines = split_lines(source) if source is not None else []
    row = diagnostic.location.row
    has_excerpt = 1 <= row <= len(lines)

    last_shown = min(row + CONTEXT_LINES, len(lines)) if has_excerpt else row
    margin = _Margin(" " * len(str(last_shown)), Style(ctx.colour))
    out = [header_line(diagnostic, ctx)]
    if has_excerpt:
        out.extend(_excerpt(diagnostic, lines, margin))
    out.extend(_notes(diagnostic, margin))
    out.extend(_fix_lines(diagnostic, lines, margin))
    out.extend(_links(diagnostic, margin))
    return "\n".join(out) + "\n"


def _excerpt(diagnostic: Diagnostic, lines: list[str], margin: _Margin) -> list[str]:
    row = diagnostic.location.row
    first = max(1, row - CONTEXT_LINES)
    last = min(len(lines), row + CONTEXT_LINES)
    out = [margin.source("")]
    for number in range(first, last + 1):
        shown, _ = _display(lines[number - 1])
        out.append(margin.source(shown, number))
        if number == row:
            out.append(margin.carets(_carets(diagnostic, lines[number - 1]), diagnostic.code))
    out.append(margin.source(""))
    return out


def _notes(diagnostic: Diagnostic, margin: _Margin) -> list[str]:
    notes = [
        margin.note("note", f"line {related.location.row}: {related.code} {related.message}")
        for related in diagnostic.related
    ]
    if diagnostic.suggestion:
        notes.append(margin.note("help", diagnostic.suggestion))
    return notes


def _links(diagnostic: Diagnostic, margin: _Margin) -> list[str]:
    """PyTorch's page for the break (its first id; a rule that predicts several names the
    others, any of which Dynamo may report instead), or the finding's other page; then where
    the rule's own page is."""
    out = []
    if diagnostic.gb_ids:
        first, *others = diagnostic.gb_ids
        alternatives = f" (or {', '.join(others)})" if others else ""
        out.append(margin.note("graph break", f"{first} {graph_break_url(first)}{alternatives}"))
    elif diagnostic.url:
        out.append(margin.note("see also", diagnostic.url))
    out.append(margin.note("docs", f"run `torchlint rule {diagnostic.code}`"))
    return out


def _fix_lines(diagnostic: Diagnostic, lines: list[str], margin: _Margin) -> list[str]:
    """The fix's safety and title; for a display-only fix, which `--fix` and `--diff` never
    show, the lines it touches as they would read too."""
    fix = diagnostic.fix
    if fix is None:
        return []
    title = margin.note(f"fix ({fix.applicability.value})", fix.message)
    if fix.applicability is not Applicability.DISPLAY_ONLY or not fix.edits:
        return [title]
    first = min(edit.location.row for edit in fix.edits)
    last = max(edit.end_location.row for edit in fix.edits)
    if last > len(lines):
        return [title]
    # The rows the fix touches, with its edits moved onto them.
    moved = [
        Edit(edit.content, Location(edit.location.row - first + 1, edit.location.column),
             Location(edit.end_location.row - first + 1, edit.end_location.column))
        for edit in fix.edits
    ]
    text = splice("\n".join(lines[first - 1 : last]), moved)
    return [title] + [margin.source(_display(line)[0]) for line in text.split("\n")]


def _carets(diagnostic: Diagnostic, line: str) -> str:
    """Spaces up to the range's start, then one caret per display column it covers."""
    _, starts = _display(line)
    length = len(line)
    start = min(max(diagnostic.location.column - 1, 0), length)
    if diagnostic.end_location.row == diagnostic.location.row:
        end = min(max(diagnostic.end_location.column - 1, start), length)
    else:
        # A range over several lines is underlined to the end of its first line.
        end = length
    # An empty range (or one starting past the text) still gets a caret to point with.
    caret_count = max(starts[end] - starts[start], 1)
    return " " * starts[start] + "^" * caret_count


def _display(line: str) -> tuple[str, list[int]]:
    """The line as printed, and the display column where each character starts.

    Tabs are expanded to stops of TAB_WIDTH, control characters are replaced by their
    control pictures and East Asian wide characters take two columns, so carets land under
    the right text; the final entry is the total width.
    """
    pieces = []
    starts = []
    column = 0
    for char in line:
        starts.append(column)
        if char == "\t":
            spaces = TAB_WIDTH - column % TAB_WIDTH
            pieces.append(" " * spaces)
            column += spaces
            continue
        if char < " " or char == "\x7f":
            # Shown as its control picture (␀, ␛, ...) so it cannot drive the terminal.
            char = chr(0x2400 + ord(char)) if char < " " else "\u2421"
        pieces.append(char)
        column += _char_width(char)
    starts.append(column)
    return "".join(pieces), starts


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1

