"""A fast walk over libcst trees.

libcst's own visitor rebuilds every node it passes and costs about as much as the parse
itself; reading the dataclass fields that can hold code (and skipping whitespace, commas
and parentheses) is more than ten times cheaper. Everything in torchlint that needs to
look at all nodes of a subtree goes through here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import libcst as cst

# Fields that only ever hold whitespace, comments or punctuation.
_SKIPPED_PREFIXES = (
    "whitespace",
    "lpar",
    "rpar",
    "lbracket",
    "rbracket",
    "lbrace",
    "rbrace",
    "comma",
    "semicolon",
    "leading_lines",
    "lines_after_decorators",
    "header",
    "footer",
    "newline",
    "trailing_whitespace",
    "equal",
    "colon",
    "first_line",
    "empty_lines",
    "indent",
    "arrow",
    "dot",
    "star_tok",
    "asynchronous",
    "default_indent",
    "default_newline",
    "encoding",
    "has_trailing_newline",
)
# Leaf nodes whose `value` is a plain string.
_LEAVES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.FormattedStringText)

_child_fields: dict[type, tuple[str, ...]] = {}


def _fields_of(cls: type) -> tuple[str, ...]:
    names = _child_fields.get(cls)
    if names is None:
        if issubclass(cls, _LEAVES) or not dataclasses.is_dataclass(cls):
            names = ()
        else:
            names = tuple(
                f.name
                for f in dataclasses.fields(cls)
                if not f.name.startswith(_SKIPPED_PREFIXES) and f.name not in ("star", "operator")
            )
        _child_fields[cls] = names
    return names


# type -> whether it is a libcst node. libcst's classes are ABCs, and an `isinstance`
# against an ABC costs several times a dict lookup: this runs for every field of every node.
_node_types: dict[type, bool] = {}


def is_node(value: object) -> bool:
    kind = type(value)
    found = _node_types.get(kind)
    if found is None:
        found = _node_types[kind] = issubclass(kind, cst.CSTNode)
    return found


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The direct children of ``node`` that can hold code, in source order."""
    for name in _fields_of(type(node)):
        value = getattr(node, name)
        if is_node(value):
            yield value
        elif type(value) in (list, tuple):
            for item in value:
                if is_node(item):
                    yield item


def walk(
    root: cst.CSTNode,
    visit: Callable[[cst.CSTNode], bool | None],
) -> None:
    """Call ``visit`` on ``root`` and its descendants in source order.

    ``visit`` returns True to skip the children of the node it was given.
    """
    stack = [root]
    pop, extend = stack.pop, stack.extend
    node_types = _node_types
    while stack:
        node = pop()
        if visit(node):
            continue
        pending = []
        for name in _fields_of(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple:
                for item in value:
                    known = node_types.get(type(item))
                    if known is None:
                        known = is_node(item)
                    if known:
                        pending.append(item)
            else:
                known = node_types.get(kind)
                if known is None:
                    known = is_node(value)
                if known:
                    pending.append(value)
        pending.reverse()
        extend(pending)


def holds(root: cst.CSTNode, wanted: set[int]) -> bool:
    """Whether ``root`` is, or has below it, a node whose id is in ``wanted``."""
    found = False

    def visit(node: cst.CSTNode) -> bool:
        nonlocal found
        found = found or id(node) in wanted
        return found

    walk(root, visit)
    return found


def single_index(subscript: cst.Subscript) -> cst.BaseExpression | None:
    """The index of `x[i]`; None for a slice, or for several indices (`x[i, j]`)."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    return subscript.slice[0].slice.value


def nested_blocks(statement: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks a compound statement holds: body, handlers, `else`/`elif`, `finally`, cases."""
    while True:
        body = getattr(statement, "body", None)
        if isinstance(body, cst.BaseSuite):
            yield body
        for handler in getattr(statement, "handlers", ()):
            yield handler.body
        orelse = getattr(statement, "orelse", None)
        if isinstance(orelse, cst.If):
            # An `elif` holds nothing after its own blocks; a loop rather than a nested
            # generator per `elif` keeps a long chain linear.
            statement = orelse
            continue
        if orelse is not None:
            yield orelse.body
        final = getattr(statement, "finalbody", None)
        if final is not None:
            yield final.body
        for case in getattr(statement, "cases", ()):
            yield case.body
        return


def compound_headers(statement: cst.CSTNode) -> list[cst.CSTNode]:
    """The expressions a `while`, `for`, `with` or `match` evaluates outside its blocks."""
    if isinstance(statement, cst.While):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.target, statement.iter]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    if isinstance(statement, cst.Match):
        return [statement.subject]
    return []


def parent_map(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """Each node's parent under ``root``, by id; iterative, for deep code."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)
    return parents


def comparison_operands(node: cst.Comparison) -> list[cst.BaseExpression]:
    """`a < b <= c` -> `[a, b, c]`."""
    return [node.left, *(target.comparator for target in node.comparisons)]


def conjuncts(test: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """`a and b and c` -> a, b, c (every `and` flattened); any other test is its own."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from conjuncts(test.left)
        yield from conjuncts(test.right)
    else:
        yield test
