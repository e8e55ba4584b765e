from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import keyword
from torchlint.rules._untraceable_calls import method_receiver, report_call
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

GENERATOR_CLASSES = frozenset({"torch.Generator", "torch._C.Generator"})
_DEFAULT_GENERATORS = frozenset({"torch.default_generator", "torch.random.default_generator"})
# Generator methods that return the generator, so `torch.Generator().manual_seed(0)` is one.
_CHAINING_METHODS = frozenset({"manual_seed", "set_state"})
_REMEDY = "use the global RNG seeded outside the compiled function, or draw the values in `__init__`"


def _creation(node: cst.BaseExpression | None, ctx: RuleContext) -> bool:
    """`torch.Generator(...)`, or `torch.Generator(...).manual_seed(...)` and the like."""
    if not isinstance(node, cst.Call):
        return False
    if ctx.qualified_name(node.func) in GENERATOR_CLASSES:
        return True
    func = node.func
    return isinstance(func, cst.Attribute) and func.attr.value in _CHAINING_METHODS and _creation(func.value, ctx)


def bound_generator(node: cst.BaseExpression | None, ctx: RuleContext, _choices: int = 0) -> bool:
    """A name or `self.<attr>` the file binds to a new generator, or torch's default one.

    A generator made in the same expression is reported where it is made, not again.
    """
    if node is None or isinstance(node, cst.Call):
        return False
    assigned = ctx.assigned_value(node)
    choice = assigned if isinstance(node, cst.Name) else node
    if isinstance(choice, cst.IfExp):  # `self.rng_cuda if on_gpu else self.rng`
        # bounded: `y = y if c else -y` names itself
        return _choices < 4 and all(
            bound_generator(side, ctx, _choices + 1) for side in (choice.body, choice.orelse)
        )
    return (
        ctx.qualified_name(node) in _DEFAULT_GENERATORS
        or _creation(assigned, ctx)
        or _generator_attribute(node, ctx)
    )


def _generator_attribute(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """`self.rng` where any method of the class makes it a new generator.

    A setter that stores a generator it was given (`self.rng = seed` under
    `isinstance(seed, torch.Generator)`) is the attribute's last assignment, not its kind.
    """
    method = ctx.function.method if ctx.function is not None else None
    if method is None or not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
        return False
    if node.value.value != method.self_name:
        return False
    history = method.owner_class.attribute_history.get(node.attr.value, ())
    return any(_creation(value, ctx) for value, _scope in history)


def _torch_call(node: cst.Call, ctx: RuleContext) -> bool:
    """A torch function or a method (`t.normal_(...)`).

    A function of this file that takes `generator=` is checked where it uses it.
    """
    name = ctx.qualified_name(node.func)
    if name is not None:
        return name.startswith("torch.")
    return isinstance(node.func, cst.Attribute)


class TorchGenerator(Rule):
    code = "TL507"
    name = "torch-generator"
    message = "a `torch.Generator` in compiled code breaks the graph (Dynamo cannot trace one); " + _REMEDY
    suggestion = (
        "seed the global RNG before calling the compiled function (`torch.manual_seed(seed)`) and "
        "drop `generator=`; values that must be the same on every call belong in a buffer made in "
        "`__init__` with the generator"
    )
    gb_ids = ("GB0363", "GB7650", "GB0055")
    gb_types = (
        "An opaque object was created in the middle of the program.",
        "torch.Generator method",
        "Failed to convert args/kwargs to proxy",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        passed = keyword(node, "generator")
        if ctx.qualified_name(node.func) in GENERATOR_CLASSES:
            problem = "creating a `torch.Generator` in compiled code breaks the graph"
        elif bound_generator(method_receiver(node), ctx):
            problem = f"calling `.{node.func.attr.value}()` on a `torch.Generator` in compiled code breaks the graph"
        elif passed is not None and bound_generator(passed.value, ctx) and _torch_call(node, ctx):
            problem = (
                "passing `generator=` to a torch RNG function in compiled code breaks the graph, "
                "even for a generator made outside it"
            )
        else:
            return
        report_call(type(self), node, ctx, f"{problem} (Dynamo cannot trace a `torch.Generator`)", _REMEDY)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                generator = torch.Generator().manual_seed(1234)
                noise = torch.randn(8, generator=generator).to(x.device)
                return self.proj(x) + 0.1 * noise
        """,
        """
        import torch

        _GENERATOR = torch.Generator().manual_seed(0)


        @torch.compile
        def step(x: torch.Tensor):
            return x + torch.randn(8, generator=_GENERATOR)
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                generator = torch.Generator().manual_seed(1234)
                self.register_buffer("noise", torch.randn(8, generator=generator))

            def forward(self, x):
                return self.proj(x) + 0.1 * self.noise
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x + torch.randn(8, generator=None)
        """,
    )
