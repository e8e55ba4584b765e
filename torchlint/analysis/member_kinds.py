"""What `self.<attr>` holds in a class's methods: a registered buffer or parameter is a
tensor; otherwise the class's assignments to it say, joined.

Read from the class alone, with no call followed, so the project outline can tell the
tensor members of a class that another file keeps an object of.
"""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.kind_vocabulary import (
    MODULE,
    PYTHON,
    TENSOR,
    TENSOR_METHOD_KINDS,
    TORCH_NON_TENSOR,
    UNKNOWN,
    Kind,
    arithmetic_kind,
    is_constant,
    join_kinds,
)
from torchlint.analysis.scopes import Scope, dotted_name, qualified_name
from torchlint.analysis.summary import ClassInfo


class MemberKinds:
    """The kinds of the attributes of a file's classes, worked out on demand and remembered."""

    def __init__(self) -> None:
        self._buffers: dict[ClassInfo, set[str]] = {}

    def attribute_kind(self, info: ClassInfo, attribute: str) -> Kind:
        """The kind of `self.<attribute>` in the methods of ``info``."""
        if attribute in self.buffers(info):
            return TENSOR
        if attribute in info.methods:
            return UNKNOWN
        history = info.attribute_history.get(attribute)
        if not history:
            return UNKNOWN
        # `self.x = self.x.to(device)` keeps what `self.x` was; the other assignments say what.
        kinds = [
            _attribute_value_kind(value, scope)
            for value, scope in history
            if not _refers_to_self_attribute(value, attribute)
        ]
        return join_kinds(kinds) if kinds else UNKNOWN

    def tensor_members(self, info: ClassInfo) -> frozenset[str]:
        """The attributes of ``info``'s objects that hold tensors (`self.timesteps = torch.arange(n)`)."""
        names = self.buffers(info) | info.attribute_history.keys()
        return frozenset(name for name in names if self.attribute_kind(info, name) is TENSOR)

    def buffers(self, info: ClassInfo) -> set[str]:
        """Names registered with `self.register_buffer("name", ...)` / `register_parameter`."""
        found = self._buffers.get(info)
        if found is None:
            found = set()
            for method in info.methods.values():
                for call in method.calls:
                    func = call.func
                    if (
                        isinstance(func, cst.Attribute)
                        and func.attr.value in ("register_buffer", "register_parameter")
                        and call.args
                        and isinstance(call.args[0].value, cst.SimpleString)
                    ):
                        name = call.args[0].value.evaluated_value
                        if isinstance(name, str):
                            found.add(name)
            self._buffers[info] = found
        return found


def _refers_to_self_attribute(value: cst.BaseExpression, attribute: str) -> bool:
    """`self.<attribute>.to(...)`, `self.<attribute> * 2`: a value made from the attribute itself."""
    while True:
        if isinstance(value, cst.Call):
            value = value.func
        elif isinstance(value, (cst.Attribute, cst.Subscript)):
            if (
                isinstance(value, cst.Attribute)
                and value.attr.value == attribute
                and isinstance(value.value, cst.Name)
            ):
                return True
            value = value.value
        elif isinstance(value, cst.BinaryOperation):
            return _refers_to_self_attribute(value.left, attribute) or _refers_to_self_attribute(value.right, attribute)
        else:
            return False


def _attribute_value_kind(value: cst.BaseExpression, scope: Scope, depth: int = 0) -> Kind:
    """The kind of `self.<attr>` from what a method assigned to it."""
    if is_constant(value):
        return PYTHON
    if depth > 4:
        return UNKNOWN
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not isinstance(
        value.func.value, (cst.Name, cst.Attribute)
    ):
        # `torch.from_numpy(t).to(device)`: a method of what the inner call made.
        receiver = _attribute_value_kind(value.func.value, scope, depth + 1)
        if receiver is TENSOR:
            return TENSOR_METHOD_KINDS.get(value.func.attr.value, TENSOR)
        return UNKNOWN
    if isinstance(value, cst.BinaryOperation):
        return arithmetic_kind(
            [_attribute_value_kind(value.left, scope, depth + 1), _attribute_value_kind(value.right, scope, depth + 1)]
        )
    if isinstance(value, cst.Call):
        # A class of this file has no qualified name; its spelling still shows it is a class.
        name = qualified_name(value.func, scope) or dotted_name(value.func) or ""
        if name == "torch.nn.Parameter" or name.startswith("torch.") and not name.startswith("torch.nn."):
            return TENSOR if name not in TORCH_NON_TENSOR else TORCH_NON_TENSOR[name]
        if name.startswith("torch.nn."):
            return MODULE
        # A call of a project class or another package's class: most often a submodule.
        if name and name.rsplit(".", 1)[-1][:1].isupper():
            return MODULE
        return UNKNOWN
    if isinstance(value, cst.Name):
        # `self.heads = heads`: configuration handed to `__init__`.
        return PYTHON
    if isinstance(value, cst.Attribute):
        return PYTHON if not (qualified_name(value, scope) or "").startswith("torch.") else UNKNOWN
    if isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
        return PYTHON
    return UNKNOWN
