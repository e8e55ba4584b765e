"""Fixes for values read out of tensors (TL3xx) and for ops whose output size the data
decides (TL4xx): keep a number a 0-d tensor where every use of it is tensor arithmetic,
index with a one-element tensor, and give `repeat_interleave`, `one_hot` and masked
reductions the size or fill they need, where the code shows it; a skeleton to fill in
(display-only) where it does not."""

from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import single_index, walk
from torchlint.report.diagnostic import Applicability
from torchlint.rules._tensor_methods import integer_valued, keyword, positional
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, NodeEdit, as_content, binds_torch, replace_node
from torchlint.analysis.kind_vocabulary import Kind

SAFE, UNSAFE, DISPLAY_ONLY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY
# What a display-only fix leaves for the author to fill in.
BLANK = "..."

# -- the function around a node -------------------------------------------------------------


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
    parents = ctx.parents()
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


# Reductions that give a boolean of a boolean tensor, and those that give one of any tensor.
_BOOLEAN_REDUCTIONS = frozenset({"max", "min", "amax", "amin", "median"})
_TRUTH_REDUCTIONS = frozenset({"any", "all"})


def _boolean(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A boolean tensor (`x > 0`, `t.any()`, `mask.max()`): kept as a tensor it does not
    compute as Python's bools do (`1 - flag` fails, `flag + flag` is `or`); as an index it
    adds a dimension instead of picking an element."""
    if isinstance(node, cst.Name):
        node = ctx.assigned_value(node) or node
    if ctx.kinds is None or ctx.kinds.is_mask(node):
        return True
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if ctx.qualified_name(func) in ("torch.any", "torch.all"):
        return True
    return isinstance(func, cst.Attribute) and (
        func.attr.value in _TRUTH_REDUCTIONS
        or (func.attr.value in _BOOLEAN_REDUCTIONS and ctx.kinds.is_mask(func.value))
    )


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
    if call.args or not isinstance(func, cst.Attribute) or not ctx.is_tensor(func.value) or _boolean(func.value, ctx):
        return None
    if not only_tensor_arithmetic(call, func.value, ctx):
        return None
    return replace_node(func.attr, "detach", f"{KEPT_MESSAGE}: `.detach()` instead of `.item()`", UNSAFE)


def scalar_kept(call: cst.Call, builtin: str, ctx: RuleContext) -> FixPlan | None:
    """`int(t)` -> `t` for an integer tensor, else `t.long()` (which truncates as `int` does);
    `float(t)` -> `t.detach()`, or `t.float()` for an integer or boolean tensor; where every
    use of the value is tensor arithmetic. Unsafe: see the TL303 page."""
    if builtin not in ("int", "float") or len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    module = ctx.summary.module
    tensor = call.args[0].value
    if "#" in module.code_for_node(call) or not only_tensor_arithmetic(call, tensor, ctx):
        return None
    code = _atom(tensor, module)
    integers, boolean = integer_valued(tensor, ctx, follow_names=False), _boolean(tensor, ctx)
    if builtin == "int":
        kept = code if integers and not boolean else f"{code}.long()"
    else:
        kept = f"{code}.float()" if integers or boolean else f"{code}.detach()"
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




def one_element_index(node: cst.Subscript, ctx: RuleContext) -> FixPlan | None:
    """`t[i]` with a 0-d tensor `i` the graph computes -> `t[i.reshape(1)].squeeze(0)`, the
    rewrite the TL305 page measured. Safe: both index with a tensor (a copy, not a view),
    and give the same values, dtype and gradient."""
    parents = ctx.parents()
    index = single_index(node)
    if parents is None or index is None:
        return None
    module = ctx.summary.module
    if _binding(node, parents) is not None or _boolean(index, ctx) or "#" in module.code_for_node(node):
        return None
    return replace_node(node, one_element_read(node, index, module), "Index with a one-element tensor and drop its dim", SAFE)


def one_element_read(node: cst.Subscript, index: cst.BaseExpression, module: cst.Module) -> str:
    """`t[i]` read through a one-element index: `t[i.reshape(1)].squeeze(0)`, which keeps a
    0-d `i` a tensor where `t[i]` would make it an int."""
    return f"{_atom(node.value, module)}[{_atom(index, module)}.reshape(1)].squeeze(0)"


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
    parents = ctx.parents()
    index = single_index(node)
    if parents is None or index is None:
        return None
    container = node.value
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


# -- TL401: the rows of nonzero() counted instead ------------------------------------------------

_INDEX_OPS = {"torch.nonzero": "nonzero", "torch.argwhere": "argwhere"}


def _zero(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Integer and node.value == "0"


def _row_count(node: cst.CSTNode, parents: dict[int, cst.CSTNode], ctx: RuleContext) -> cst.BaseExpression | None:
    """The expression around ``node`` that takes its number of rows (`node.shape[0]`,
    `node.size(0)`, `len(node)`); None where ``node`` is used otherwise."""
    parent = parents.get(id(node))
    outer = parents.get(id(parent))
    if type(parent) is cst.Attribute and parent.value is node:
        if (
            parent.attr.value == "shape" and type(outer) is cst.Subscript and outer.value is parent
            and len(outer.slice) == 1 and type(outer.slice[0].slice) is cst.Index and _zero(outer.slice[0].slice.value)
        ):
            return outer
        if (
            parent.attr.value == "size" and type(outer) is cst.Call and outer.func is parent
            and len(outer.args) == 1 and outer.args[0].keyword is None and _zero(outer.args[0].value)
        ):
            return outer
    if (
        type(parent) is cst.Arg and not parent.star and parent.keyword is None and type(outer) is cst.Call
        and len(outer.args) == 1 and ctx.qualified_name(outer.func) == "builtins.len"
    ):
        return outer
    return None


def _counted(call: cst.Call, ctx: RuleContext) -> tuple[str, str] | None:
    """The op's name and `t.count_nonzero()` (or `torch.count_nonzero(t)`, as the call is
    spelled) for `t.nonzero()` or `torch.nonzero(t)` with no other argument."""
    func, module = call.func, ctx.summary.module
    if type(func) is not cst.Attribute:
        return None
    op = _INDEX_OPS.get(ctx.qualified_name(func) or "")
    if op is not None and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
        return op, f"{module.code_for_node(func.value)}.count_nonzero({module.code_for_node(call.args[0].value)})"
    if func.attr.value in _INDEX_OPS.values() and not call.args and ctx.is_tensor(func.value):
        return func.attr.value, f"{_atom(func.value, module)}.count_nonzero()"
    return None


def rows_counted(call: cst.Call, ctx: RuleContext) -> FixPlan | None:
    """`t.nonzero().shape[0]` (`.size(0)`, `len(...)`; `argwhere` too) -> `t.count_nonzero()`,
    where every use of the count is tensor arithmetic; also through a name that holds the
    indices only to count them (`idx = torch.nonzero(t)`, then `x / idx.shape[0]`). Unsafe,
    as TL301's fix is: the count is a 0-d tensor. See the TL401 page."""
    parents = ctx.parents()
    counted = _counted(call, ctx)
    if parents is None or counted is None:
        return None
    op, code = counted
    count = _row_count(call, parents, ctx)
    if count is not None:
        # The count becomes the counting call.
        counts, first, kept = [count], (), code
    else:
        # The name holds the count, and each count of its rows becomes the name.
        assign = parents.get(id(call))
        if not (
            type(assign) is cst.Assign and assign.value is call and len(assign.targets) == 1
            and type(assign.targets[0].target) is cst.Name
        ):
            return None
        target = assign.targets[0].target
        uses = [name for name in _references(ctx.function.node, target.value, parents) if name is not target]
        # Any other use, or binding, of the name keeps the indices.
        counts = [_row_count(use, parents, ctx) for use in uses]
        first, kept = (NodeEdit(call, as_content(code)),), target.value
    module = ctx.summary.module
    if not counts or any(
        found is None or "#" in module.code_for_node(found) or not only_tensor_arithmetic(found, None, ctx)
        for found in counts
    ):
        return None
    edits = (*first, *(NodeEdit(found, as_content(kept)) for found in counts))
    message = f"Count with `count_nonzero()` instead of taking the rows of `{op}()`"
    return FixPlan(message, UNSAFE, edits)


# -- TL406: repeat_interleave's output size -----------------------------------------------------


def _with_keyword(call: cst.Call, name: str, value: str, message: str, applicability: Applicability, module: cst.Module) -> FixPlan | None:
    """``call`` with `name=value` after its last argument."""
    if not call.args:
        return None
    last = call.args[-1]
    bare = last.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
    return replace_node(last, f"{module.code_for_node(bare)}, {name}={value}", message, applicability)


def _literal_total(node: cst.BaseExpression, ctx: RuleContext) -> int | None:
    """The sum of `torch.tensor([1, 3, 2])` or `torch.full((k,), r)` written with integer
    literals, at least two repeats (a single one is broadcast along the dim)."""
    if not isinstance(node, cst.Call) or len(positional(node)) < 1:
        return None
    name = ctx.qualified_name(node.func)
    args = positional(node)
    if name == "torch.tensor" and len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
        values = [element.value for element in args[0].value.elements]
        if len(values) >= 2 and all(isinstance(v, cst.Integer) and isinstance(e, cst.Element) for v, e in zip(values, args[0].value.elements)):
            return sum(v.evaluated_value for v in values)
    if name == "torch.full" and len(args) == 2 and isinstance(args[0].value, (cst.List, cst.Tuple)):
        sizes, fill = args[0].value.elements, args[1].value
        if len(sizes) == 1 and isinstance(sizes[0].value, cst.Integer) and isinstance(fill, cst.Integer):
            count = sizes[0].value.evaluated_value
            return count * fill.evaluated_value if count >= 2 else None
    return None


def _bound_once(name: cst.Name, ctx: RuleContext) -> cst.BaseExpression | None:
    """The value of a local name that the function binds once, as `name = value`, and
    never changes in place."""
    parents = ctx.parents()
    if parents is None:
        return None
    function = ctx.function.node
    references = _references(function, name.value, parents)
    bindings = [(reference, found) for reference in references if (found := _binding(reference, parents)) is not None]
    if len(bindings) != 1 or _mutates(function, {name.value}):
        return None
    reference, target = bindings[0]
    assign = parents.get(id(target))
    if not (isinstance(target, cst.AssignTarget) and target.target is reference and isinstance(assign, cst.Assign)):
        return None
    return assign.value if len(assign.targets) == 1 else None


def _buffer_value(node: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
    """What `self.<name>` was registered or assigned with, where the class does it once."""
    function = ctx.function
    method = function.method if function is not None else None
    if method is None or not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
        return None
    if node.value.value != method.self_name:
        return None
    owner, attribute = method.owner_class, node.attr.value
    values = [value for value, _ in owner.attribute_history.get(attribute, [])]
    for info in owner.methods.values():
        for call in info.calls:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "register_buffer"
                and len(call.args) >= 2
                and isinstance(call.args[0].value, cst.SimpleString)
                and call.args[0].value.evaluated_value == attribute
            ):
                values.append(call.args[1].value)
    return values[0] if len(values) == 1 else None


def repeat_interleave_size(call: cst.Call, repeats: cst.BaseExpression, ctx: RuleContext) -> FixPlan | None:
    """`output_size=` with the sum of the repeats: safe where they are written in the call or
    in a local name the function assigns once (`torch.tensor([1, 3, 2])`,
    `torch.full((4,), 2)`); unsafe where they are a buffer or attribute the constructor
    makes so (it may change later); display-only, with `...` to fill in, otherwise."""
    module = ctx.summary.module
    total = _literal_total(repeats, ctx)
    applicability = SAFE
    if total is None and isinstance(repeats, cst.Name):
        bound = _bound_once(repeats, ctx)
        total = _literal_total(bound, ctx) if bound is not None else None
    if total is None:
        buffer = _buffer_value(repeats, ctx)
        total = _literal_total(buffer, ctx) if buffer is not None else None
        applicability = UNSAFE
    if total is None:
        message = "Pass `output_size=`, the sum of the repeats (fill in the `...`)"
        return _with_keyword(call, "output_size", BLANK, message, DISPLAY_ONLY, module)
    message = f"Pass `output_size={total}`, the sum of the repeats"
    return _with_keyword(call, "output_size", str(total), message, applicability, module)


# -- TL407: one_hot's class count ----------------------------------------------------------------

_LINEAR = frozenset({"torch.nn.Linear", "torch.nn.LazyLinear"})


def _followed(node: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression:
    if isinstance(node, cst.Name):
        return _bound_once(node, ctx) or node
    return node


def _last_dim(call: cst.Call) -> bool:
    """An argmax over the last dim (`dim=-1`, or `-1` as its dim argument)."""
    dim = keyword(call, "dim")
    args = positional(call)
    if dim is None:
        dim = args[-1] if args else None
    if dim is None or keyword(call, "keepdim") is not None:
        return False
    value = dim.value
    return isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and (
        isinstance(value.expression, cst.Integer) and value.expression.value == "1"
    )


def _class_count(labels: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """The number of classes ``labels`` may hold, as code: `self.head.out_features` for the
    argmax over the last dim of an `nn.Linear`'s output, `k` for `t % k`."""
    labels = _followed(labels, ctx)
    if isinstance(labels, cst.BinaryOperation) and isinstance(labels.operator, cst.Modulo):
        divisor = labels.right
        if isinstance(divisor, cst.Integer) and divisor.evaluated_value > 0:
            return divisor.value
        return None
    if not (isinstance(labels, cst.Call) and _last_dim(labels)):
        return None
    if isinstance(labels.func, cst.Attribute) and labels.func.attr.value == "argmax" and ctx.qualified_name(labels.func) is None:
        scores = labels.func.value
    elif ctx.qualified_name(labels.func) == "torch.argmax" and positional(labels):
        scores = positional(labels)[0].value
    else:
        return None
    scores = _followed(scores, ctx)
    if not isinstance(scores, cst.Call) or not isinstance(scores.func, (cst.Attribute, cst.Name)):
        return None
    layer = ctx.assigned_value(scores.func)
    if not isinstance(layer, cst.Call) or ctx.qualified_name(layer.func) not in _LINEAR:
        return None
    return f"{ctx.summary.module.code_for_node(scores.func)}.out_features"


def one_hot_classes(call: cst.Call, given: cst.Arg | None, ctx: RuleContext) -> FixPlan | None:
    """`num_classes=` with the class count where the code shows it (unsafe: the width is now
    always the class count, not the largest class in the batch plus one); display-only, with
    `...` to fill in, otherwise. ``given``: a `num_classes` of -1 to replace."""
    module = ctx.summary.module
    labels = positional(call)[0].value if positional(call) else None
    count = _class_count(labels, ctx) if labels is not None else None
    applicability = UNSAFE if count is not None else DISPLAY_ONLY
    message = f"Pass `num_classes={count}`" if count is not None else "Pass `num_classes=`, the number of classes (fill in the `...`)"
    if given is not None and given.keyword is not None:
        return replace_node(given.value, count or BLANK, message, applicability)
    if given is not None:
        return replace_node(given, f"num_classes={count or BLANK}", message, applicability)
    return _with_keyword(call, "num_classes", count or BLANK, message, applicability, module)


# -- TL403, TL405: a masked selection, kept in shape with a fill ---------------------------------

_PREDICATES = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"})
_ORDERINGS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def _mask_of(mask: cst.BaseExpression, values: cst.BaseExpression, ctx: RuleContext) -> bool:
    """``mask`` is a test of each element of ``values`` (`x > 0`, `~torch.isnan(x)`), so the
    two have one shape."""
    module = ctx.summary.module
    if not isinstance(values, (cst.Name, cst.Attribute)):
        return False
    same = module.code_for_node(values)
    mask = _followed(mask, ctx)
    if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
        mask = mask.expression
    if isinstance(mask, cst.Comparison):
        return (
            module.code_for_node(mask.left) == same
            and all(isinstance(c.operator, _ORDERINGS) and _plain_number(c.comparator, ctx) for c in mask.comparisons)
        )
    if isinstance(mask, cst.Call) and isinstance(mask.func, cst.Attribute) and mask.func.attr.value in _PREDICATES:
        if ctx.qualified_name(mask.func) is None:
            return not mask.args and module.code_for_node(mask.func.value) == same
        return len(mask.args) == 1 and module.code_for_node(mask.args[0].value) == same
    return False


def _reduction(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> cst.Call | None:
    """The `node.sum()` or `node.mean()` call, with no arguments, that reads ``node``."""
    attribute = parents.get(id(node))
    if not (isinstance(attribute, cst.Attribute) and attribute.value is node and attribute.attr.value in ("sum", "mean")):
        return None
    call = parents.get(id(attribute))
    return call if isinstance(call, cst.Call) and call.func is attribute and not call.args else None


def where_fill(
    node: cst.CSTNode, values: cst.BaseExpression, mask: cst.BaseExpression, ctx: RuleContext, *, broadcasts: bool
) -> FixPlan | None:
    """A selection (`x[mask]`, `masked_select`) summed -> `torch.where(mask, x, 0).sum()`:
    safe where `torch.where` picks the same elements, because the selection broadcasts
    mask and values as it does (``broadcasts``, `masked_select`) or the mask is a test of
    each element of the values (`x[x > 0]`): the same elements add up to the same sum. Display-only otherwise, and for other uses of the selection: the
    shape-keeping form to fit in (`.mean()` becomes a sum over the mask's count)."""
    parents = ctx.parents()
    module = ctx.summary.module
    if parents is None or not binds_torch(module) or "#" in module.code_for_node(node):
        return None
    kept = f"torch.where({module.code_for_node(mask)}, {module.code_for_node(values)}, 0)"
    reduction = _reduction(node, parents)
    same_shape = broadcasts or _mask_of(mask, values, ctx)
    if reduction is not None and reduction.func.attr.value == "sum" and same_shape:
        return replace_node(node, kept, "Keep the shape: sum with `torch.where(mask, x, 0)`", SAFE)
    message = "Keep the shape with `torch.where(mask, x, 0)`; what reads it must expect the zeros"
    if reduction is not None and reduction.func.attr.value == "mean":
        count = f"{_atom(mask, module)}.sum()"
        return replace_node(reduction, f"{kept}.sum() / {count}", message, DISPLAY_ONLY)
    return replace_node(node, kept, message, DISPLAY_ONLY)
