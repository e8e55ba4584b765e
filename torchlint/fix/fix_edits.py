"""A rule's fix plan made into a finding's edits: rows and columns of the file's text, with
the statement's own indentation and the file's own line ending."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable, Mapping

import libcst as cst

from torchlint.report.diagnostic import Edit, Fix, Location
from torchlint.parse.positions import line_starts
from torchlint.rules.fixes import FixPlan
from torchlint.files.source import LINE_END


def plan_nodes(plan: FixPlan | None) -> list[cst.CSTNode]:
    """The nodes whose places the edits need."""
    if plan is None:
        return []
    nodes = [edit.node for edit in plan.edits]
    return nodes + ([plan.import_torch_before] if plan.import_torch_before is not None else [])


class TextLines:
    """The rows of a text as Python counts them (`\\n`, `\\r\\n` or `\\r` ends a row)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)
        found = LINE_END.search(text)
        self.newline = found.group() if found else "\n"

    def offset(self, location: Location) -> int:
        return self.starts[location.row - 1] + location.column - 1

    def row(self, number: int) -> str:
        start = self.starts[number - 1]
        end = self.starts[number] if number < len(self.starts) else len(self.text)
        return self.text[start:end]


def fix_of(plan: FixPlan | None, spans: Mapping[int, tuple[Location, Location]], lines: TextLines) -> Fix | None:
    """None where an edit's place is not known."""
    if plan is None:
        return None
    edits = []
    for edit in plan.edits:
        if id(edit.node) not in spans:
            return None
        start, end = spans[id(edit.node)]
        indent = lines.row(start.row)[: start.column - 1]
        if "{indent}" in edit.content and indent.strip():
            return None  # a statement to indent that does not start its line
        content = edit.content.format(newline=lines.newline, indent=indent)
        if edit.whole_lines:
            if indent.strip() or lines.row(end.row)[end.column - 1:].strip():
                return None  # the node shares a row with other code
            start, end = Location(start.row, 1), _next_row(lines, end.row)
        if edit.indent_more and end.row > start.row:
            # One edit over the whole node, so that a fix inside it overlaps this one rather
            # than being made on rows this one moves.
            edits.append(Edit(content + _indented(lines, start, end, edit.indent_more), start, end))
        else:
            edits.append(Edit(content, start, start if edit.before else end))
    anchor = plan.import_torch_before
    if anchor is not None:
        if id(anchor) not in spans:
            return None
        row = spans[id(anchor)][0].row
        edits.append(Edit(f"import torch{lines.newline}", Location(row, 1), Location(row, 1)))
    edits.sort(key=lambda edit: (edit.location, edit.end_location))
    return Fix(plan.message, plan.applicability, tuple(edits))


def splice(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits``, which must not overlap, made."""
    lines = TextLines(text)
    return splice_at(text, [(lines.offset(edit.location), lines.offset(edit.end_location), edit.content) for edit in edits])


def splice_at(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, content) span, which must not overlap, put in place."""
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


def _next_row(lines: TextLines, row: int) -> Location:
    """Where the row after ``row`` starts (the end of the text after the last row)."""
    if row < len(lines.starts):
        return Location(row + 1, 1)
    return Location(row, len(lines.row(row)) + 1)


def _indented(lines: TextLines, start: Location, end: Location, step: str) -> str:
    """The text from ``start`` to ``end`` with ``step`` put in front of each of its further
    rows that holds code (`_code_rows`)."""
    rows = set(_code_rows(lines, start, end))
    parts = []
    for row in range(start.row, end.row + 1):
        text = lines.row(row)
        begin = start.column - 1 if row == start.row else 0
        stop = end.column - 1 if row == end.row else len(text)
        parts.append((step if row in rows else "") + text[begin:stop])
    return "".join(parts)


def _code_rows(lines: TextLines, start: Location, end: Location) -> list[int]:
    """The rows after ``start``'s, up to ``end``'s, that do not begin inside a string (whose
    text an added indentation would change); none when the code does not tokenize."""
    rows = range(start.row + 1, end.row + 1)
    code = "".join(lines.row(row) for row in range(start.row, end.row + 1))
    in_strings: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", None):
                in_strings.update(range(start.row + token.start[0], start.row + token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [row for row in rows if row not in in_strings and lines.row(row).strip()]
