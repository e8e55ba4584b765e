"""The conditions a piece of code runs under: `self.training`, a dtype test, a config flag.

A finding inside `if self.training:` breaks the graph only while training; one behind
`x.dtype == torch.float16 and ...` only for half-precision inputs. Messages say so, and the
compile profile's `mode` drops what cannot happen in the mode the project compiles.

Only the tests on the way from the function's body down to the node count, and the
operands of an `and` before the one that breaks: `self.training and torch.rand(()) < p`
evaluates the tensor part only while training.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands

# Names a configuration object goes by in attribute chains (`self.config.use_cache`).
_CONFIG_NAMES = frozenset({"config", "cfg", "conf", "configuration", "hparams", "args", "opt", "options"})


@dataclass(frozen=True)
class PathConditions:
    # True: runs only while training; False: only in eval mode; None: either
    training: bool | None = None
    # the other tests it runs only under, as the source spells them (`not ...` when negated)
    others: tuple[str, ...] = ()

    def wording(self, verb: str = "breaks") -> str:
        """` (breaks only while training and when `...`)`, or "" where nothing limits it; a
        finding that does something else where it holds says so in ``verb`` ("recompiles")."""
        parts = []
        if self.training is True:
            parts.append("while training")
        elif self.training is False:
            parts.append("in eval mode")
        parts.extend(f"when `{test}`" for test in self.others)
        return f" ({verb} only {' and '.join(parts)})" if parts else ""


class _Conditions:
    def __init__(self, module: cst.Module, self_name: str | None) -> None:
        self.module = module
        self.self_name = self_name
        self.training: bool | None = None
        self.others: list[str] = []

    def test(self, test: cst.BaseExpression, holds: bool) -> None:
        """Record that ``test`` evaluated to ``holds`` on the way to the code."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            self.test(test.expression, not holds)
            return
        if isinstance(test, cst.BooleanOperation):
            # `a and b` held: both did; `a or b` failed: both did. Otherwise nothing is known.
            if isinstance(test.operator, cst.And) == holds:
                self.test(test.left, holds)
                self.test(test.right, holds)
            return
        if self._is_training(test):
            self.training = holds
        elif _is_dtype_test(test) or _is_config_flag(test):
            code = self.module.code_for_node(test)
            self.others.append(code if holds else f"not {code}")

    def leading(self, test: cst.BaseExpression) -> None:
        """The operands of an `and` chain before the first that is none of the tests above:
        what follows them is evaluated only when they hold."""
        operands = []
        while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            operands.append(test.right)
            test = test.left
        operands.append(test)
        operands.reverse()
        for operand in operands[:-1]:
            if not (self._is_training(_unnegated(operand)) or _is_dtype_test(operand) or _is_config_flag(operand)):
                return
            self.test(operand, True)

    def _is_training(self, test: cst.BaseExpression) -> bool:
        return (
            isinstance(test, cst.Attribute)
            and test.attr.value == "training"
            and isinstance(test.value, cst.Name)
            and test.value.value == self.self_name
        )


def path_conditions(
    body: cst.CSTNode, node: cst.CSTNode, parents: dict[int, cst.CSTNode], module: cst.Module, self_name: str | None
) -> PathConditions:
    """What ``node`` runs under inside ``body`` (``parents``: each node's parent, by id, up to
    ``body`` at least)."""
    found = _Conditions(module, self_name)
    if isinstance(node, (cst.If, cst.While)):
        found.leading(node.test)
    elif isinstance(node, (cst.IfExp, cst.BooleanOperation)):
        found.leading(node.test if isinstance(node, cst.IfExp) else node)
    child = node
    while child is not body:
        parent = parents.get(id(child))
        if parent is None:
            break
        if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
            found.test(parent.test, child is parent.body)
        elif isinstance(parent, cst.While) and child is parent.body:
            found.test(parent.test, True)
        elif isinstance(parent, cst.BooleanOperation) and child is parent.right:
            found.test(parent.left, isinstance(parent.operator, cst.And))
        child = parent
    return PathConditions(found.training, tuple(dict.fromkeys(found.others)))


def _unnegated(test: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    return test


def _is_dtype_test(test: cst.BaseExpression) -> bool:
    """`x.dtype == torch.float16`, `x.dtype in (...)`, `x.is_floating_point()`."""
    test = _unnegated(test)
    if isinstance(test, cst.Comparison):
        return any(isinstance(side, cst.Attribute) and side.attr.value == "dtype" for side in comparison_operands(test))
    return (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Attribute)
        and test.func.attr.value in ("is_floating_point", "is_complex")
    )


def _is_config_flag(test: cst.BaseExpression) -> bool:
    """`self.config.use_cache`, `config.output_attentions`: an attribute read off a config."""
    test = _unnegated(test)
    if not isinstance(test, cst.Attribute):
        return False
    node: cst.BaseExpression = test.value
    while isinstance(node, cst.Attribute):
        if node.attr.value in _CONFIG_NAMES:
            return True
        node = node.value
    return isinstance(node, cst.Name) and node.value in _CONFIG_NAMES
