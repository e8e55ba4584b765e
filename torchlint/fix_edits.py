"""A rule's fix plan made into a finding's edits: rows and columns of the file's text, with
the statement's own indentation and the file's own line ending."""

from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst

from torchlint.diagnostic import Edit, Fix, Location
from torchlint.rules.fixes import FixPlan

_LINE_ENDING = re.compile(r"\r\n|\r|\n")


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
        self.starts = [0] + [match.end() for match in _LINE_ENDING.finditer(text)]
        found = _LINE_ENDING.search(text)
        self.newline = found.group() if found else "\n"

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
        edits.append(Edit(content, start, start if edit.before else end))
    anchor = plan.import_torch_before
    if anchor is not None:
        if id(anchor) not in spans:
            return None
        row = spans[id(anchor)][0].row
        edits.append(Edit(f"import torch{lines.newline}", Location(row, 1), Location(row, 1)))
    edits.sort(key=lambda edit: (edit.location, edit.end_location))
    return Fix(plan.message, plan.applicability, tuple(edits))
