"""Line and column numbers for the few nodes that are reported.

libcst's PositionProvider records a range for every node of the module and costs about
twice the parse. Findings are rare, so positions are computed once per file that has
any, by regenerating the code while counting characters and recording only the
requested nodes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from torchlint.diagnostic import Location
from torchlint.source import LINE_END


@dataclass
class _OffsetTrackingState(CodegenState):
    offset: int = 0
    targets: set = field(default_factory=set)
    # id(node) -> (start offset, end offset), whitespace excluded where libcst says so.
    spans: dict = field(default_factory=dict)
    _inclusive: dict = field(default_factory=dict)

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


class LineIndex:
    """Turns character offsets into 1-based rows and columns."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [match.end() for match in LINE_END.finditer(text)]

    def location(self, offset: int) -> Location:
        row = bisect.bisect_right(self._starts, offset) - 1
        return Location(row + 1, offset - self._starts[row] + 1)


def locate(
    module: cst.Module, nodes: Iterable[cst.CSTNode], text: str
) -> dict[int, tuple[Location, Location]]:
    """Start and end of each node in ``nodes``, keyed by ``id(node)``."""
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    state = _OffsetTrackingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        targets=set(wanted),
    )
    module._codegen(state)
    index = LineIndex(text)
    return {
        key: (index.location(start), index.location(end))
        for key, (start, end) in state.spans.items()
        if key in wanted
    }


def header_end(statement: cst.CSTNode) -> cst.CSTNode | None:
    """The last node of a compound statement's header, where there is one to end on."""
    if isinstance(statement, cst.For):
        return statement.iter
    if isinstance(statement, cst.While):
        return statement.test
    if isinstance(statement, cst.With) and statement.items:
        return statement.items[-1]
    return None
