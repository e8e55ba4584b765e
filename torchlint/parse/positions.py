"""Parsing, and line and column numbers for the few nodes that are reported.

libcst's PositionProvider records a range for every node of the module and costs about
twice the parse. Findings are rare, so positions are computed once per file that has
any, by regenerating the code while counting characters and recording only the
requested nodes.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import libcst as cst
from libcst._nodes.internal import CodegenState

from torchlint.parse.cst_walk import holds
from torchlint.report.diagnostic import Location
from torchlint.parse.parsing import parse_module
from torchlint.files.source import LINE_END


@dataclass
class _OffsetTrackingState(CodegenState):
    offset: int = 0
    # id() of the nodes whose spans are recorded
    targets: set[int] = field(default_factory=set)
    # id(node) -> (start offset, end offset), whitespace excluded where libcst says so.
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    # id(node) -> [start offset, end offset], whitespace included, the end set once it is generated.
    _inclusive: dict[int, list[int]] = field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self._inclusive[id(node)] = [self.offset, self.offset]

    def after_codegen(self, node: cst.CSTNode) -> None:
        span = self._inclusive.get(id(node))
        if span is not None:
            span[1] = self.offset
            self.spans.setdefault(id(node), (span[0], span[1]))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        if id(node) not in self.targets:
            yield
            return
        for hoisted in (start_node, end_node):
            if hoisted is not None:
                self.targets.add(id(hoisted))
        start = self.offset
        yield
        end = self.offset
        if start_node is not None:
            start = self.spans[id(start_node)][0]
        if end_node is not None:
            end = self.spans[id(end_node)][1]
        self.spans[id(node)] = (start, end)


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts."""
    return [0] + [match.end() for match in LINE_END.finditer(text)]


class LineIndex:
    """Turns character offsets into 1-based rows and columns.

    ``shifts``: row -> characters removed from the start of that row in the text indexed,
    added back to its columns.
    """

    def __init__(self, text: str, shifts: Mapping[int, int] = {}) -> None:
        self._starts = line_starts(text)
        self._shifts = shifts

    def row_index(self, offset: int) -> int:
        """The 0-based row of ``offset``."""
        return bisect.bisect_right(self._starts, offset) - 1

    def line_start(self, row: int) -> int:
        """The offset where 0-based row ``row`` starts."""
        return self._starts[row]

    def location(self, offset: int) -> Location:
        row = self.row_index(offset)
        return Location(row + 1, offset - self._starts[row] + 1 + self._shifts.get(row + 1, 0))


class Regenerations:
    """The regenerated code of statements, kept for the next parse that shares them.

    A statement an edit left alone is the very tree of the last parse (see
    `parse.incremental`), so its code and the places of its nodes in it are those of last
    time. A statement is regenerated once with every node's place recorded; later parses
    take it from here. Only statements the last `locate` placed are kept."""

    def __init__(self) -> None:
        # id(statement) -> (the statement, its indentation, its code, each node's span in it)
        self._kept: dict[int, tuple[cst.CSTNode, tuple[str, ...], str, dict[int, tuple[int, int]]]] = {}
        self._used: set[int] = set()

    def get(self, module: cst.Module, statement: cst.CSTNode, indent: Sequence[str]) -> tuple[str, dict[int, tuple[int, int]]]:
        key = id(statement)
        found = self._kept.get(key)
        if found is None or found[0] is not statement or found[1] != tuple(indent):
            state = _regenerated(module, statement, _EVERY_NODE, indent)
            found = self._kept[key] = (statement, tuple(indent), "".join(state.tokens), state.spans)
        self._used.add(key)
        return found[2], found[3]

    def holds(self, statement: cst.CSTNode, wanted: set[int]) -> bool | None:
        """Whether ``statement`` holds a node of ``wanted``, where it is kept; None where not."""
        found = self._kept.get(id(statement))
        if found is None or found[0] is not statement:
            return None
        spans = found[3]
        return any(key in spans for key in wanted)

    def keep_used(self) -> None:
        self._kept = {key: value for key, value in self._kept.items() if key in self._used}
        self._used = set()


class _EveryNode(set[int]):
    """The targets of a regeneration that records every node."""

    def __contains__(self, item: object) -> bool:
        return True

    def add(self, item: int) -> None:
        pass


_EVERY_NODE = _EveryNode()


class Parsed(NamedTuple):
    module: cst.Module
    lines: LineIndex  # places the module's code in the text it was parsed from
    code: str  # the text the module was parsed from: its code
    # statements' code kept from the parse this one shares them with (an editor's last)
    regenerations: Regenerations | None = None


# Indentation up to its last form feed: CPython's tokenizer starts counting the
# indentation again after a form feed, so this part counts for nothing.
_FORM_FEED_INDENT = re.compile(r"[ \t\f]*\f")


def parse(text: str) -> Parsed:
    """libcst's tree of ``text``.

    libcst mishandles a form feed in indentation: a block nested in one whose first line
    starts with it does not parse, and regenerating the code drops or repeats it, which
    moves every offset after it. It parses a copy without those form feeds (and what
    precedes them on their line) instead; the rows stay, and their columns are shifted back.
    """
    copy, shifts = _without_form_feed_indents(text)
    return Parsed(parse_module(copy), LineIndex(copy, shifts), copy)


def _without_form_feed_indents(text: str) -> tuple[str, dict[int, int]]:
    if "\f" not in text:
        return text, {}
    starts = line_starts(text)
    cuts = {}
    for row, start in enumerate(starts, start=1):
        match = _FORM_FEED_INDENT.match(text, start)
        if match is not None:
            cuts[row] = (start, match.end())
    inside = _rows_inside_tokens(text) if cuts else None
    if inside is None:
        return text, {}  # nothing to cut, or tokenize rejects the text: parse it as it is
    for row in inside:
        cuts.pop(row, None)
    pieces, at = [], 0
    for start, end in cuts.values():
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    return "".join(pieces), {row: end - start for row, (start, end) in cuts.items()}


def _rows_inside_tokens(text: str) -> set[int] | None:
    """Rows that start inside a token (a string over several lines: their form feeds are
    the string's), or None where tokenize rejects the text."""
    rows: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            rows.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return None
    return rows


def locate(
    parsed: Parsed, nodes: Iterable[cst.CSTNode], definitions: Sequence[cst.CSTNode] = ()
) -> dict[int, tuple[Location, Location]]:
    """Start and end of each node in ``nodes``, keyed by ``id(node)``.

    ``definitions``: the module's `def` and `class` statements in source order, where the
    caller knows them: each function that holds a wanted node is then regenerated on its own
    (a method without the rest of its class), so a file whose every class holds a finding
    costs what its flagged functions do, not a regeneration of the whole file."""
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    spans = _spans_in_definitions(parsed, wanted, _occurrences(definitions))
    if parsed.regenerations is not None:
        parsed.regenerations.keep_used()
    if spans is None or not wanted <= spans.keys():
        spans = _regenerated(parsed.module, parsed.module, wanted).spans
    index = parsed.lines
    return {
        key: (index.location(start), index.location(end))
        for key, (start, end) in spans.items()
        if key in wanted
    }


def _regenerated(
    module: cst.Module, node: cst.CSTNode, wanted: set[int], indent: Sequence[str] = ()
) -> _OffsetTrackingState:
    """``node``'s code regenerated (its tokens), with the offsets of the ``wanted`` nodes in it.
    ``indent``: the indentation of the blocks around it, so its lines read as in the file."""
    state = _OffsetTrackingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        # a copy: recording adds the nodes a span is hoisted from (every node: all are recorded)
        targets=wanted if isinstance(wanted, _EveryNode) else set(wanted),
    )
    state.indent_tokens.extend(indent)
    node._codegen(state)
    return state


def _occurrences(definitions: Sequence[cst.CSTNode]) -> dict[int, int]:
    """id of a `def` or `class` -> how many statements with its header come before it, itself
    included: its header is that-manieth line that starts with it."""
    seen: dict[tuple[str, str], int] = {}
    found = {}
    for node in definitions:
        header = _header(node)
        if header is not None:
            seen[header] = found[id(node)] = seen.get(header, 0) + 1
    return found


def _spans_in_definitions(
    parsed: Parsed, wanted: set[int], occurrences: Mapping[int, int]
) -> dict[int, tuple[int, int]] | None:
    """The spans from regenerating only the `def`s (and, at the top level, `class`es) that hold
    a wanted node, each placed where its header line stands in the text; None when one cannot
    be placed that way (the whole module is regenerated instead)."""
    module = parsed.module
    spans: dict[int, tuple[int, int]] = {}
    left = set(wanted)
    headers: dict[tuple[str, str], list[int]] | None = None
    top_level: dict[tuple[str, str], int] = {}

    kept = parsed.regenerations

    def place(statement: cst.BaseStatement, occurrence: int | None, indent: Sequence[str]) -> bool:
        nonlocal headers
        header = _header(statement)
        if header is None or occurrence is None:
            return False
        if kept is not None:
            code, found = kept.get(module, statement, indent)
        else:
            state = _regenerated(module, statement, wanted, indent)
            code, found = "".join(state.tokens), state.spans
        if headers is None:
            # Without the definitions' order, only top-level headers can be counted.
            headers = _header_lines(parsed.code, indented=bool(occurrences))
        start = _place(parsed, code, header, headers.get(header, ()), occurrence)
        if start is None:
            return False
        placed = [key for key in left if key in found]
        spans.update((key, (found[key][0] + start, found[key][1] + start)) for key in placed)
        left.difference_update(placed)
        return True

    def holding(statement: cst.CSTNode) -> bool:
        known = kept.holds(statement, left) if kept is not None else None
        return holds(statement, left) if known is None else known

    def methods_alone(cls: cst.ClassDef, indent: Sequence[str]) -> bool:
        """Each method of a class that holds a wanted node, regenerated on its own; False where
        a wanted node lies elsewhere in the class (its header, a class attribute)."""
        body = cls.body
        if not occurrences or not isinstance(body, cst.IndentedBlock) or holds_outside_body(cls):
            return False
        inner = [*indent, body.indent if body.indent is not None else module.default_indent]
        for statement in body.body:
            if not left:
                return True
            if not holding(statement):
                continue
            if isinstance(statement, cst.ClassDef) and methods_alone(statement, inner):
                continue
            if not isinstance(statement, cst.FunctionDef) or not place(statement, occurrences.get(id(statement)), inner):
                return False
        return True

    def holds_outside_body(cls: cst.ClassDef) -> bool:
        return id(cls) in left or any(holds(part, left) for part in (*cls.decorators, *cls.bases, *cls.keywords))

    for statement in module.body:
        header = _header(statement)
        if header is not None:
            # The how-manieth top-level statement with this header: a name defined twice.
            top_level[header] = top_level.get(header, 0) + 1
        if not left:
            break
        if not holding(statement):
            continue
        if isinstance(statement, cst.ClassDef) and methods_alone(statement, ()):
            continue
        occurrence = occurrences.get(id(statement)) if occurrences else top_level.get(header) if header else None
        if not place(statement, occurrence, ()):
            return None
    return spans


def _header(statement: cst.CSTNode) -> tuple[str, str] | None:
    """(keyword, name) of a `def`, `async def` or `class`."""
    if isinstance(statement, cst.FunctionDef):
        return ("def" if statement.asynchronous is None else "async def", statement.name.value)
    if isinstance(statement, cst.ClassDef):
        return ("class", statement.name.value)
    return None


# A header at the start of a line, after its indentation: what no other line of code starts with.
_HEADER_LINE = re.compile(r"^[ \t]*(?:(async)[ \t]+)?(def|class)[ \t]+(\w+)", re.M)
_TOP_LEVEL_HEADER_LINE = re.compile(r"^(?:(async)[ \t]+)?(def|class)[ \t]+(\w+)", re.M)


def _header_lines(code: str, indented: bool) -> dict[tuple[str, str], list[int]]:
    """Where each (keyword, name) header starts a line of ``code`` (``indented``: nested ones
    too), in order: found in one pass, however many statements are then placed."""
    found: dict[tuple[str, str], list[int]] = {}
    for match in (_HEADER_LINE if indented else _TOP_LEVEL_HEADER_LINE).finditer(code):
        found.setdefault(_as_header(match), []).append(match.start())
    return found


def _place(parsed: Parsed, regenerated: str, header: tuple[str, str], starts: Sequence[int], occurrence: int) -> int | None:
    """Where ``regenerated``, a statement's code from the start of its first line, starts in the
    module's code: its header is the ``occurrence``-th line there that starts with ``header``
    (``starts``), and it starts as many lines above that as it has lines before its header
    (comments, decorators)."""
    own = next((m for m in _HEADER_LINE.finditer(regenerated) if _as_header(m) == header), None)
    if own is None or occurrence > len(starts):
        return None
    found = starts[occurrence - 1]
    row = parsed.lines.row_index(found) - len(LINE_END.findall(regenerated, 0, own.start()))
    if row < 0:
        return None
    start = parsed.lines.line_start(row)
    return start if parsed.code.startswith(regenerated, start) else None


def _as_header(match: re.Match[str]) -> tuple[str, str]:
    is_async, keyword, name = match.groups()
    return (f"async {keyword}" if is_async else keyword, name)


def header_end(statement: cst.CSTNode) -> cst.CSTNode | None:
    """The last node of a compound statement's header, where there is one to end on."""
    if isinstance(statement, cst.For):
        return statement.iter
    if isinstance(statement, cst.While):
        return statement.test
    if isinstance(statement, cst.With) and statement.items:
        return statement.items[-1]
    return None
