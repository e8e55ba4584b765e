"""Fixes for values read out of tensors (TL3xx): keep a number a 0-d tensor where every use
of it is tensor arithmetic, and index with a one-element tensor."""

from __future__ import annotations

import libcst as cst

from torchlint.cst_walk import children, walk
from torchlint.diagnostic import Applicability
from torchlint.rules._tensor_methods import integer_valued, keyword
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, binds_torch, replace_node
from torchlint.semantic.kind_vocabulary import Kind

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE

# -- the function around a node -------------------------------------------------------------

_memo: list = [None, {}]


def _parents(ctx: RuleContext) -> dict[int, cst.CSTNode] | None:
    """id(node) -> its parent, for the nodes of the compiled function being walked (the last
    function's map is kept: a rule asks about many nodes of one function)."""
    function = ctx.function
    if function is None:
        return None
    root = function.node
    if _memo[0] is not root:
        parents: dict[int, cst.CSTNode] = {}
        stack = [root]
        while stack:
            node = stack.pop()
            for child in children(node):
                parents[id(child)] = node
                stack.append(child)
        _memo[0], _memo[1] = root, parents
    return _memo[1]


def _references(root: cst.CSTNode, name: str, parents: dict[int, cst.CSTNode]) -> list[cst.Name]:
    """Every `name` in ``root`` that stands for a variable (not an attribute's or a keyword's name)."""
    found: list[cst.Name] = []

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name) and node.value == name:
            parent = parents.get(id(node))
            if not (isinstance(parent, cst.Attribute) and parent.attr is node) and not (
                isinstance(parent, cst.Arg) and parent.keyword is node
            ):
                found.append(node)

    walk(root, visit)
    return found


def _root_name(node: cst.BaseExpression) -> str | None:
    """`y` for `y.abs()[0].add_`: the variable an expression starts from."""
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def _names_read(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> set[str]:
    found: set[str] = set()

    def visit(child: cst.CSTNode) -> None:
        if isinstance(child, cst.Name):
            parent = parents.get(id(child))
            if not (isinstance(parent, cst.Attribute) and parent.attr is child):
                found.add(child.value)

    walk(node, visit)
    return found


def _mutates(root: cst.CSTNode, names: set[str]) -> bool:
    """Whether ``root`` changes in place a tensor reached from one of ``names``: `t.add_(1)`,
    `t += 1`, `t[0] = 1`, `out=`."""
    found = False

    def visit(node: cst.CSTNode) -> bool | None:
        nonlocal found
        if isinstance(node, cst.Call):
            func = node.func
            method = func.attr.value if isinstance(func, cst.Attribute) else ""
            if method.endswith("_") and not method.startswith("__") and _root_name(func.value) in names:
                found = True
            elif keyword(node, "out") is not None:
                found = True
        elif isinstance(node, cst.AugAssign):
            found = _root_name(node.target) in names
        elif isinstance(node, cst.Assign):
            found = any(
                isinstance(t.target, (cst.Subscript, cst.Attribute)) and _root_name(t.target) in names
                for t in node.targets
            )
        return True if found else None

    walk(root, visit)
    return found


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)


def _plain_number(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A number that is not a tensor: a literal, a size, or a Python-valued name."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    kind = ctx.kind_of(node)
    return kind is Kind.SIZE or (kind is Kind.PYTHON and isinstance(node, (cst.Name, cst.Attribute)))


def _meets_a_tensor(node: cst.CSTNode, parents: dict[int, cst.CSTNode], ctx: RuleContext) -> bool:
    """``node``'s value goes through `+ - * /` with plain numbers until it meets a tensor:
    from there on the result is a tensor whether ``node`` is a number or a 0-d tensor."""
    current = node
    while True:
        parent = parents.get(id(current))
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus)):
            current = parent
            continue
        if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC)):
            return False
        other = parent.right if parent.left is current else parent.left
        if ctx.is_tensor(other):
            return True
        if not _plain_number(other, ctx):
            return False
        current = parent


def only_tensor_arithmetic(value: cst.BaseExpression, shares: cst.CSTNode | None, ctx: RuleContext) -> bool:
    """Every use of ``value`` is tensor arithmetic: it is itself an operand that meets a
    tensor (`y * t.item()`), or it is assigned to a name (`s = t.item()`) that the function
    binds nowhere else and uses only so. ``shares``: the tensor whose storage the kept value
    would share, which the function must then not change in place."""
    parents = _parents(ctx)
    if parents is None:
        return False
    if _meets_a_tensor(value, parents, ctx):
        return True
    assign = parents.get(id(value))
    if not (
        isinstance(assign, cst.Assign)
        and assign.value is value
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return False
    target = assign.targets[0].target
    function = ctx.function.node
    uses = [name for name in _references(function, target.value, parents) if name is not target]
    if not uses or not all(_meets_a_tensor(use, parents, ctx) for use in uses):
        return False
    return shares is None or not _mutates(function, _names_read(shares, parents))


def _atom(node: cst.BaseExpression, module: cst.Module) -> str:
    """``node``'s code, in parentheses where an attribute or a subscript after it would bind
    to a part of it."""
    code = module.code_for_node(node)
    if node.lpar or isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return code
    return f"({code})"


# -- TL301, TL303: a number read from a tensor, kept a 0-d tensor ----------------------------

KEPT_MESSAGE = "Keep the value a 0-d tensor"


def item_kept(call: cst.Call, ctx: RuleContext) -> FixPlan | None:
    """`t.item()` -> `t.detach()`, where every use of the value is tensor arithmetic. Unsafe:
    see the TL301 page."""
    func = call.func
    if call.args or not isinstance(func, cst.Attribute) or not ctx.is_tensor(func.value):
        return None
    if not only_tensor_arithmetic(call, func.value, ctx):
        return None
    return replace_node(func.attr, "detach", f"{KEPT_MESSAGE}: `.detach()` instead of `.item()`", UNSAFE)


def scalar_kept(call: cst.Call, builtin: str, ctx: RuleContext) -> FixPlan | None:
    """`int(t)` -> `t` for an integer tensor, else `t.long()` (which truncates as `int` does);
    `float(t)` -> `t.detach()`, or `t.float()` for an integer tensor; where every use of the
    value is tensor arithmetic. Unsafe: see the TL303 page."""
    if builtin not in ("int", "float") or len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    module = ctx.summary.module
    tensor = call.args[0].value
    if "#" in module.code_for_node(call) or not only_tensor_arithmetic(call, tensor, ctx):
        return None
    code = _atom(tensor, module)
    integers = integer_valued(tensor, ctx, follow_names=False)
    if builtin == "int":
        kept = code if integers else f"{code}.long()"
    else:
        kept = f"{code}.float()" if integers else f"{code}.detach()"
    return replace_node(call, kept, f"{KEPT_MESSAGE} instead of `{builtin}()`", UNSAFE)


# -- TL305: a tensor where Python needs an int ------------------------------------------------

def _binding(reference: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> cst.CSTNode | None:
    """What binds, assigns to or deletes ``reference`` (a name, or a subscript written
    to), if anything does: `x = ...`, `x, y = ...`, `x += 1`, `for x in`, `del x`, a
    parameter, `as x`, `global x`; None where it is only read."""
    node, parent = reference, parents.get(id(reference))
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, (cst.AssignTarget, cst.Del, cst.AsName, cst.Param, cst.NameItem, cst.ImportAlias)):
        return parent
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)) and parent.target is node:
        return parent
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and parent.name is node:
        return parent
    return None


_BOOLEAN_REDUCTIONS = frozenset({"max", "min", "amax", "amin", "median"})


def _boolean(index: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A boolean 0-d tensor (`mask.max()`): as an index it adds a dimension, not a lookup."""
    if isinstance(index, cst.Name):
        index = ctx.assigned_value(index) or index
    if ctx.kinds is not None and ctx.kinds.is_mask(index):
        return True
    func = index.func if isinstance(index, cst.Call) else None
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in _BOOLEAN_REDUCTIONS
        and ctx.kinds is not None
        and ctx.kinds.is_mask(func.value)
    )


def one_element_index(node: cst.Subscript, ctx: RuleContext) -> FixPlan | None:
    """`t[i]` with a 0-d tensor `i` the graph computes -> `t[i.reshape(1)].squeeze(0)`, the
    rewrite the TL305 page measured. Safe: both index with a tensor (a copy, not a view),
    and give the same values, dtype and gradient."""
    parents = _parents(ctx)
    if parents is None or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    module = ctx.summary.module
    if _binding(node, parents) is not None or _boolean(index, ctx) or "#" in module.code_for_node(node):
        return None
    rewritten = f"{_atom(node.value, module)}[{_atom(index, module)}.reshape(1)].squeeze(0)"
    return replace_node(node, rewritten, "Index with a one-element tensor and drop its dim", SAFE)


def _numbers(node: cst.BaseExpression) -> bool:
    """A list or tuple display of number literals."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return False
    for element in node.elements:
        value = element.value
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
        if not isinstance(element, cst.Element) or not isinstance(value, (cst.Integer, cst.Float)):
            return False
    return True


def list_as_tensor(node: cst.Subscript, ctx: RuleContext) -> FixPlan | None:
    """`numbers[i]` for a list of number literals -> `torch.tensor(numbers,
    device=i.device)[i.reshape(1)].squeeze(0)`, where every use of the number is tensor
    arithmetic. Unsafe: see the TL305 page."""
    parents = _parents(ctx)
    if parents is None or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    container, index = node.value, node.slice[0].slice.value
    module = ctx.summary.module
    if not (_numbers(container) or _numbers(ctx.assigned_value(container) or container)):
        return None
    # The index is named twice: only a plain name or attribute is repeated as it is.
    if not isinstance(index, (cst.Name, cst.Attribute)) or not ctx.is_tensor(index) or not binds_torch(module):
        return None
    if "#" in module.code_for_node(node) or not only_tensor_arithmetic(node, None, ctx):
        return None
    index_code = module.code_for_node(index)
    rewritten = (
        f"torch.tensor({module.code_for_node(container)}, device={index_code}.device)"
        f"[{index_code}.reshape(1)].squeeze(0)"
    )
    return replace_node(node, rewritten, "Look the number up in a tensor", UNSAFE)
