"""TL201's fixes: a branch on a tensor made into `torch.where` (both sides computed), or,
where the branches are too large for that, a `torch.cond` skeleton to start from."""

from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import single_index
from torchlint.report.diagnostic import Applicability
from torchlint.rules._data_dependent import constant_message
from torchlint.rules.fixes import FixPlan, NodeEdit, as_content, binds_torch, enclosing_block, replace_node
from torchlint.rules.value_fixes import one_element_read


def _sole_statement(block: cst.BaseSuite | cst.BaseStatement) -> cst.BaseSmallStatement | None:
    """The one simple statement of an indented block (or a statement line) that holds nothing else."""
    if isinstance(block, cst.IndentedBlock):
        if len(block.body) != 1:
            return None
        block = block.body[0]
    if not isinstance(block, cst.SimpleStatementLine) or len(block.body) != 1:
        return None
    return block.body[0]


def _assigned(block: cst.BaseSuite) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) of an indented block that is one `name = value` and nothing else."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    assign = _sole_statement(block)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return None
    return assign.targets[0].target.value, assign.value


def where_for_if(statement: cst.If, module: cst.Module, bound: set[str], takes, side_code=None) -> FixPlan | None:
    """`if c: y = a` (`else: y = b`) -> `y = torch.where(c, a, b)`, the else side being `y`'s
    value before the `if` where there is none. Unsafe: both sides are computed (a NaN or an
    error on the side not taken now happens, and reaches the gradient), and the result takes
    the broadcast shape and promoted dtype of both. None unless each branch is one assignment
    to the same name of a value ``takes`` accepts (a tensor that only computes), the name is
    bound before (``bound``), nothing but the branches' code is lost (no comments), and
    `torch` is imported. ``side_code`` writes a side (its code as it stands by default)."""
    code_of = side_code or module.code_for_node
    taken = _assigned(statement.body)
    if taken is None:
        return None
    name, value = taken
    orelse = statement.orelse
    if orelse is None:
        if name not in bound or not takes(cst.Name(name)):
            return None
        other: str = name
    elif isinstance(orelse, cst.Else) and (other_side := _assigned(orelse.body)) is not None and other_side[0] == name:
        if not takes(other_side[1]) or _numbers(value, other_side[1]):
            return None
        other = code_of(other_side[1])
    else:
        return None
    # Comments above the `if` stay where they are; one inside it would be lost.
    code = module.code_for_node(statement.with_changes(leading_lines=()))
    if not takes(value) or "#" in code or not binds_torch(module):
        return None
    test = module.code_for_node(statement.test)
    rewritten = f"{name} = torch.where({test}, {code_of(value)}, {other})"
    return replace_node(statement, rewritten, "Pick with `torch.where`", Applicability.UNSAFE)


def _returned(block: cst.BaseSuite | cst.BaseStatement) -> cst.BaseExpression | None:
    """The value of a block (or a statement) that is one `return value` and nothing else."""
    statement = _sole_statement(block)
    return statement.value if isinstance(statement, cst.Return) else None


def where_for_return(statement: cst.If, module: cst.Module, within: cst.CSTNode, takes, side_code=None) -> FixPlan | None:
    """`if c: return a` with `else: return b`, or followed by `return b`, -> `return
    torch.where(c, a, b)`; unsafe for the reasons `where_for_if` gives."""
    code_of = side_code or module.code_for_node
    taken = _returned(statement.body)
    if taken is None or not binds_torch(module):
        return None
    orelse = statement.orelse
    removed: tuple[NodeEdit, ...] = ()
    if isinstance(orelse, cst.Else):
        other = _returned(orelse.body)
    elif orelse is None:
        block = enclosing_block(statement, within)
        following = _after(block, statement) if block is not None else None
        other = _returned(following) if following is not None else None
        if other is not None:
            if following.trailing_whitespace.comment is not None or following.leading_lines:
                return None
            removed = (NodeEdit(following, "", whole_lines=True),)
    else:
        return None
    if other is None or not (takes(taken) and takes(other)) or _numbers(taken, other):
        return None
    parts = [module.code_for_node(statement.test), code_of(taken), code_of(other)]
    if "#" in module.code_for_node(statement.with_changes(leading_lines=())) or any("#" in part for part in parts):
        return None
    rewritten = as_content(f"return torch.where({', '.join(parts)})")
    return FixPlan("Pick with `torch.where`", Applicability.UNSAFE, (NodeEdit(statement, rewritten), *removed))


class _OneElementReads(cst.CSTTransformer):
    """`table[t]` -> `table[t.reshape(1)].squeeze(0)` for each index named in ``names``."""

    def __init__(self, names: set[str], module: cst.Module) -> None:
        super().__init__()
        self.names = names
        self.module = module

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        index = single_index(updated)
        if not (isinstance(index, cst.Name) and index.value in self.names):
            return updated
        return cst.parse_expression(one_element_read(updated, index, self.module))


def where_side_code(value: cst.BaseExpression, module: cst.Module, test: cst.BaseExpression, is_tensor) -> str:
    """A `torch.where` side's code, each read of one item by a tensor ``test`` reads written
    `table[t.reshape(1)].squeeze(0)`. Python asks that tensor's truth, so it holds one
    element. Read as `table[t]`, a 0-d index is made an int, which breaks the graph (under
    the AOT backends, on the GPU, and wherever the graph computes it); read through a
    one-element index it stays in the graph."""
    tested = {name for name in _names_read(test) if is_tensor(cst.Name(name))}
    return module.code_for_node(value.visit(_OneElementReads(tested, module)) if tested else value)


def _raised_message(raised: cst.Raise, module: cst.Module) -> str | None:
    """The code of a `raise`'s message as a constant string: `"negative"` for `raise
    ValueError("negative")`, `"ValueError"` for `raise ValueError` or `ValueError()`; None
    for any other message, or an exception it does not make itself."""
    exc = raised.exc
    if type(exc) in (cst.Name, cst.Attribute):
        return f'"{module.code_for_node(exc)}"'
    if not (type(exc) is cst.Call and type(exc.func) in (cst.Name, cst.Attribute)):
        return None
    if not exc.args:
        return f'"{module.code_for_node(exc.func)}"'
    if len(exc.args) != 1 or exc.args[0].keyword is not None or exc.args[0].star:
        return None
    message = exc.args[0].value
    # `_assert_async` takes a str: not a number or bytes, which an assert's message may be.
    if not constant_message(message):
        return None
    if type(message) is cst.SimpleString and "b" not in message.prefix.lower():
        return module.code_for_node(message)
    if type(message) is cst.FormattedString:
        # The same text as a plain string: no `f`, and `{{` and `}}` single braces there.
        text = "".join(part.value for part in message.parts).replace("{{", "{").replace("}}", "}")
        return message.start.replace("f", "").replace("F", "") + text + message.end
    return None


def assert_for_raise(statement: cst.If, module: cst.Module) -> FixPlan | None:
    """`if c: raise E("message")` -> `torch._assert_async(torch.logical_not(c), "message")`,
    for a boolean tensor `c`: the check stays in the graph and runs on the device. Unsafe: a
    failed check raises a `RuntimeError` instead of `E` (on a GPU, when the device gets to
    it). None unless the `if` has no `else` and its body is that one `raise` of a constant
    message, nothing but the statement's code is lost (no comments), and `torch` is imported."""
    raised = _sole_statement(statement.body)
    if statement.orelse is not None or not isinstance(raised, cst.Raise) or raised.cause is not None:
        return None
    message = _raised_message(raised, module)
    if message is None or "#" in module.code_for_node(statement) or not binds_torch(module):
        return None
    test = module.code_for_node(statement.test)
    rewritten = f"torch._assert_async(torch.logical_not({test}), {message})"
    return replace_node(statement, rewritten, "Check on the device with `torch._assert_async`", Applicability.UNSAFE)


def _after(block: cst.IndentedBlock, statement: cst.CSTNode) -> cst.BaseStatement | None:
    body = list(block.body)
    at = next(index for index, line in enumerate(body) if line is statement)
    return body[at + 1] if at + 1 < len(body) else None


def number_literal(value: cst.BaseExpression) -> bool:
    """A number written in the code, with or without a sign."""
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Float))


def _numbers(*sides: cst.BaseExpression) -> bool:
    """Every side a number written in the code: `torch.where` would turn what was a Python
    number into a tensor, and the condition may be one only in some callers (numpy in others)."""
    return all(number_literal(side) for side in sides)


def where_for_ternary(node: cst.IfExp, module: cst.Module, takes, side_code=None) -> FixPlan | None:
    """`a if c else b` -> `torch.where(c, a, b)`; unsafe for the reasons `where_for_if` gives."""
    code_of = side_code or module.code_for_node
    if not (takes(node.body) and takes(node.orelse)) or _numbers(node.body, node.orelse) or not binds_torch(module):
        return None
    parts = [module.code_for_node(node.test), code_of(node.body), code_of(node.orelse)]
    if any("#" in part for part in parts):
        return None
    return replace_node(node, f"torch.where({', '.join(parts)})", "Pick with `torch.where`", Applicability.UNSAFE)


def cond_skeleton(statement: cst.If, module: cst.Module, is_tensor, computes) -> FixPlan | None:
    """`if c:` whose branches only assign tensors computed without side effects (``computes``)
    -> the two branches as functions of the tensors they read and `torch.cond` picking one.
    Display-only: `torch.cond` asks more than the code shows (outputs of the same shape, dtype
    and structure on both sides, no input mutated), so it is a start, never applied."""
    if not isinstance(statement.orelse, (cst.Else, type(None))):
        return None
    branches = [statement.body] + ([statement.orelse.body] if statement.orelse is not None else [])
    assigned = [_assignments(branch, computes, is_tensor) for branch in branches]
    if any(found is None for found in assigned):
        return None
    outputs = list(dict.fromkeys(name for found in assigned for name, _ in found[0]))
    in_both = set.intersection(*({name for name, _ in found[0]} for found in assigned)) if len(assigned) == 2 else set()
    read = list(dict.fromkeys(name for found in assigned for name in found[1]))
    # An output one side leaves alone comes in as an operand and goes back out unchanged.
    if not outputs or any(name not in in_both and not is_tensor(cst.Name(name)) for name in outputs):
        return None
    operands = [name for name in dict.fromkeys([*read, *(n for n in outputs if n not in in_both)]) if is_tensor(cst.Name(name))]
    step = module.default_indent
    parameters = ", ".join(operands)
    lines: list[str] = []
    for function, found in zip(("true_fn", "false_fn"), [*assigned, ([], [], [])]):
        changed = {name for name, _ in found[0]}
        # An operand handed back as it came is an alias, which `torch.cond` refuses: a copy goes back.
        returned = ", ".join(name if name in changed else f"{name}.clone()" for name in outputs)
        lines.append(f"def {function}({parameters}):")
        lines += [f"{step}{module.code_for_node(small)}" for small in found[2]]
        lines += [f"{step}return {returned}", ""]
    test = module.code_for_node(statement.test)
    lines.append(f"{', '.join(outputs)} = torch.cond({test}, true_fn, false_fn, ({parameters}{',' if len(operands) == 1 else ''}))")
    escaped = [as_content(line) for line in lines]
    content = escaped[0] + "".join("{newline}" + ("{indent}" + line if line else "") for line in escaped[1:])
    message = (
        "Run the branches with `torch.cond` (a start: both must return tensors of the same shape, dtype "
        "and structure, and neither may change an input in place)"
    )
    return FixPlan(message, Applicability.DISPLAY_ONLY, (NodeEdit(statement, content),))


def _assignments(block: cst.BaseSuite, computes, is_tensor) -> tuple[list[tuple[str, cst.BaseExpression]], list[str], list[cst.BaseSmallStatement]] | None:
    """((name, value) of each assignment, names read before the block binds them, the
    statements), for a block of assignments of tensors to names only; None for any other."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    assigned: list[tuple[str, cst.BaseExpression]] = []
    read: list[str] = []
    statements: list[cst.BaseSmallStatement] = []
    for line in block.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return None
        for small in line.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                name, value, reads_target = small.targets[0].target.value, small.value, False
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                name, value, reads_target = small.target.value, small.value, True
            else:
                return None
            if not (computes(value) and is_tensor(value) or reads_target and computes(value)):
                return None
            bound = {n for n, _ in assigned}
            read += [n for n in ([name] if reads_target else []) + _names_read(value) if n not in bound]
            assigned.append((name, value))
            statements.append(small)
    return assigned, read, statements


def _names_read(value: cst.BaseExpression) -> list[str]:
    """The variables an expression reads (not attribute names or keywords)."""
    found: list[str] = []

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            found.append(node.value)
        elif isinstance(node, cst.Attribute):
            visit(node.value)
        elif isinstance(node, cst.Arg):
            visit(node.value)
        else:
            for child in node.children:
                visit(child)

    visit(value)
    return found
