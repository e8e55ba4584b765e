"""A file parsed again after an edit, from its last parse: for the language server.

libcst's trees hold no positions, so a top-level statement whose text an edit left alone
is the same tree wherever it stands. An edit changes a stretch of the text: the top-level
statements it touches are parsed again on their own, the others are taken from the last
parse, and the module is put together from both. A typical keystroke in a model file
touches one class, a tenth of the file. The code of the statements taken over is not
regenerated either to place findings in them (`positions.Regenerations`).

Where the result might differ from a parse of the whole text, the whole text is parsed:
an edit that reaches the module's first two statements, its header or its footer (text
added at the very end is parsed with the last statement); a stretch whose own parse infers
another indentation or newline than the module's, or ends in lines the module would give
to its footer; a form feed anywhere (see `positions.parse`).
`tests/test_incremental_parse.py` holds the result to a whole parse, tree for tree, over
edits of real files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from torchlint.parse.parsing import parse_module
from torchlint.parse.positions import LineIndex, Parsed, Regenerations, parse


@dataclass(frozen=True)
class LastParse:
    """A text, its parse, and where each top-level statement's text starts in it."""

    parsed: Parsed
    # offsets: where the header ends and each statement starts, then where the footer starts
    bounds: tuple[int, ...]


def _bounds(module: cst.Module, text: str) -> tuple[int, ...] | None:
    """Where each statement starts (after the header) and where the footer starts; None where
    the pieces do not add up to ``text``."""
    start = len(_lines_code(module, module.header))
    found = [start, *_running(start, module.body, module)]
    if found[-1] + len(_lines_code(module, module.footer)) != len(text):
        return None
    return tuple(found)


def _lines_code(module: cst.Module, lines: Sequence[cst.EmptyLine]) -> str:
    return "".join(module.code_for_node(line) for line in lines)


def first_parse(text: str) -> LastParse | Parsed:
    """A whole parse, kept with its statements' places where they can be found."""
    parsed = parse(text)
    if "\f" in text:
        return parsed
    bounds = _bounds(parsed.module, text)
    return parsed if bounds is None else LastParse(parsed._replace(regenerations=Regenerations()), bounds)


def reparse(last: LastParse | None, text: str) -> LastParse | Parsed:
    """``text`` parsed, from ``last`` where the edit allows (see the module's docstring);
    ParserSyntaxError as `positions.parse` raises it."""
    if last is None or "\f" in text:
        return first_parse(text)
    old = last.parsed.code
    if old == text:
        return last
    prefix = _common_prefix(old, text)
    suffix = _common_suffix(old, text, limit=min(len(old), len(text)) - prefix)
    bounds = last.bounds
    changed_end = len(old) - suffix  # in the old text
    # The statements the edit touched, and one more on either side: lines at the edge of a
    # statement may belong to its neighbour (a line added at the end of a class's body; blank
    # lines a block keeps as its footer or the next statement takes as its leading lines).
    module = last.parsed.module
    touched = _statement_at(bounds, prefix - 1)
    # text added at the very end (a function appended): the stretch runs to the end of the file
    at_end = changed_end == len(old) == bounds[-1]
    final = len(module.body) - 1 if at_end else _statement_at(bounds, changed_end)
    if touched is None or final is None or touched <= 1:
        return first_parse(text)
    first = touched - 1
    start = bounds[first]
    end = len(text) if at_end else bounds[final + 1] + len(text) - len(old)
    stretch = text[start:end]
    if end <= start or "__future__" in stretch:  # a future import must stay the file's first
        return first_parse(text)
    try:
        part = parse_module(stretch)
    except cst.ParserSyntaxError:
        return first_parse(text)  # which says where, in the whole file
    if (
        part.default_indent != module.default_indent
        or part.default_newline != module.default_newline
        or not part.body
        or not at_end and (part.footer or not part.has_trailing_newline)
    ):
        return first_parse(text)
    body = list(part.body)
    if part.header:
        # Lines before a statement that is not the file's first are its own.
        body[0] = body[0].with_changes(leading_lines=[*part.header, *body[0].leading_lines])
    ending = {"footer": part.footer, "has_trailing_newline": part.has_trailing_newline} if at_end else {}
    new = module.with_changes(body=[*module.body[:first], *body, *module.body[final + 1 :]], **ending)
    shift = len(text) - len(old)
    placed = [*bounds[: first + 1], *_running(start, body, module), *(b + shift for b in bounds[final + 2 :])]
    if placed[-1] + len(_lines_code(new, new.footer)) != len(text):
        return first_parse(text)
    return LastParse(Parsed(new, LineIndex(text, {}), text, last.parsed.regenerations), tuple(placed))


def _running(start: int, body: Sequence[cst.BaseStatement], module: cst.Module) -> list[int]:
    """Where each of ``body``'s statements ends, the first starting at ``start``."""
    found = []
    at = start
    for statement in body:
        at += len(module.code_for_node(statement))
        found.append(at)
    return found


def _statement_at(bounds: tuple[int, ...], offset: int) -> int | None:
    """The index of the statement whose text holds ``offset``; None in the header or footer."""
    if offset < bounds[0] or offset >= bounds[-1]:
        return None
    low, high = 0, len(bounds) - 2
    while low < high:
        middle = (low + high + 1) // 2
        if bounds[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def _common_prefix(one: str, other: str) -> int:
    limit = min(len(one), len(other))
    low, high = 0, limit
    # by halves: comparing slices runs in C
    while low < high:
        middle = (low + high + 1) // 2
        if one[:middle] == other[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(one: str, other: str, limit: int) -> int:
    low, high = 0, max(limit, 0)
    while low < high:
        middle = (low + high + 1) // 2
        if one[len(one) - middle :] == other[len(other) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low
