"""Which functions count as compiled, and why."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import check, findings, indexed_regions, write
from torchlint.cli import cli
from torchlint.settings.config import Settings
from torchlint.project.resolve import describe_text


def describe_regions(text: str, path: str, settings: Settings):
    return describe_text(text, path, settings)


def compiled(source: str, entry_points: tuple[str, ...] = (), module_name: str = "pkg.model") -> dict[str, str]:
    root = Path("/project")
    path = root / (module_name.replace(".", "/") + ".py")
    rows = describe_text(textwrap.dedent(source), str(path), Settings(root=root, entry_points=entry_points))
    return {line.qualname: line.reason for line in rows if line.status != "disabled"}


def test_forward_of_modules_through_aliases_and_local_bases() -> None:
    found = compiled(
        """
        from torch import nn
        from torch.nn import Module
        import torch.nn as tnn

        class A(nn.Module):
            def forward(self, x): return x
        class B(Module):
            def forward(self, x): return x
        class Base(tnn.Module):
            pass
        class C(Base):
            def forward(self, x): return x
        class D(nn.Linear):
            def forward(self, x): return x
        class NotAModule:
            def forward(self, x): return x
        """
    )
    assert set(found) == {"A.forward", "B.forward", "C.forward", "D.forward"}
    assert "Base" in found["C.forward"]


def test_unresolved_base_with_forward_is_taken_for_a_module() -> None:
    found = compiled(
        """
        from .modeling_utils import PreTrainedModel
        class Llama(PreTrainedModel):
            def forward(self, x): return x
        class Config(PreTrainedModel):
            def to_dict(self): return {}
        """
    )
    assert set(found) == {"Llama.forward"}
    assert "PreTrainedModel" in found["Llama.forward"]


def test_compile_decorators_and_call_sites() -> None:
    found = compiled(
        """
        import torch
        from torch import compile as tc

        @torch.compile
        def a(x): return x
        @torch.compile(fullgraph=True)
        def b(x): return x
        @torch._dynamo.optimize("eager")
        def c(x): return x
        def d(x): return x
        def e(x): return x
        def never(x): return x
        fast_d = torch.compile(d)
        fast_e = tc(e, mode="max-autotune")
        """
    )
    assert set(found) == {"a", "b", "c", "d", "e"}


def test_reachability_follows_static_calls() -> None:
    found = compiled(
        """
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint

        def helper(x): return inner(x)
        def inner(x): return x
        def unused(x): return x

        class Block(nn.Module):
            def forward(self, x): return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
            def _attend(self, x): return x
            def _ckpt(self, x): return x
            def forward(self, x):
                x = helper(x)
                x = self._attend(x)
                x = checkpoint(self._ckpt, x)
                def local(y): return y
                return self.block(local(x))
        """
    )
    assert {"helper", "inner", "Net._attend", "Net._ckpt", "Net.forward.local", "Block.forward"} <= set(found)
    assert "unused" not in found and "Net.__init__" not in found
    assert found["inner"] == "called from pkg.model.helper"


def test_super_and_inherited_methods() -> None:
    found = compiled(
        """
        from torch import nn
        class Base(nn.Module):
            def shared(self, x): return x
            def forward(self, x): return x
        class Child(Base):
            def forward(self, x):
                return super().forward(self.shared(x))
        """
    )
    assert {"Base.shared", "Base.forward", "Child.forward"} <= set(found)


def test_disabled_functions_are_not_traced_even_when_called() -> None:
    found = compiled(
        """
        import torch
        from torch import nn
        @torch.compiler.disable
        def log_stats(x): return x
        @torch._dynamo.disable(recursive=False)
        def other(x): return x
        class Net(nn.Module):
            def forward(self, x):
                log_stats(x)
                return other(x)
        """
    )
    assert set(found) == {"Net.forward"}


def test_configured_entry_points() -> None:
    source = """
    class Sampler:
        def step(self, x): return x
        def other(self, x): return x
    def generate(x): return x
    """
    assert set(compiled(source, ("Sampler.step", "pkg.model.generate"))) == {"Sampler.step", "generate"}
    assert set(compiled(source, ("other.module.generate",))) == set()


def test_reachable_presumes_no_forward_compiled() -> None:
    """`compiled = "reachable"`: a module's forward is compiled where a compile site or an
    entry point reaches it, and what it calls with it; another module's is not."""
    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        class Block(nn.Module):
            def forward(self, x): return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
            def forward(self, x): return self.block(x)

        class Unused(nn.Module):
            def forward(self, x): return x

        model = torch.compile(Net())
        """
    )
    path = "/project/pkg/model.py"

    def rows(compiled: str) -> dict[str, str]:
        settings = Settings(root=Path("/project"), compiled=compiled)
        found = describe_text(source, path, settings)
        assert isinstance(found, list)
        return {line.qualname: line.reason for line in found}

    assert rows("reachable") == {
        "Net.forward": "entry: passed to torch.compile()",
        "Block.forward": "called from pkg.model.Net.forward",
    }
    assert set(rows("forward")) == {"Block.forward", "Net.forward", "Unused.forward"}


def test_what_a_non_recursive_disabled_function_calls_is_compiled():
    from helpers import findings

    source = """
import torch

def _helper(x):
    print("helper")
    return x + 1

@torch.compiler.disable(recursive=False)
def _eager_step(x):
    print("eager")
    return _helper(x) * 2

def _other(x):
    print("other")
    return x

_other = torch._dynamo.disable(_other)

@torch.compile
def step(x):
    return _other(_eager_step(x + 1))
"""
    # Dynamo skips `_eager_step` and `_other` themselves, and compiles `_helper` when the
    # skipped `_eager_step` calls it.
    assert findings(source) == [("TL101", 5), ("TL504", 21), ("TL504", 21)]


def test_class_attributes_bound_to_functions_are_methods() -> None:
    found = compiled(
        """
        from torch import nn

        def _impl(self, x):
            return helper(x)
        def helper(x): return x
        def unused(x): return x

        class ByFunction(nn.Module):
            forward = _impl

        class ByMethod(nn.Module):
            def _forward(self, x):
                return self._inner(x)
            def _inner(self, x): return x
            forward = _forward

        class ByLambda(nn.Module):
            forward = lambda self, x: self._inner(x)
            def _inner(self, x): return x

        class NotCalled(nn.Module):
            def forward(self, x): return x
            alias = unused
        """
    )
    assert set(found) == {
        "_impl",
        "helper",
        "ByMethod._forward",
        "ByMethod._inner",
        "ByLambda.forward",
        "ByLambda._inner",
        "NotCalled.forward",
    }
    assert found["_impl"] == "entry: forward of nn.Module subclass ByFunction (subclass of torch.nn.Module)"
    assert found["ByLambda._inner"] == "called from pkg.model.ByLambda.forward"


LAMBDAS = """
import torch
from torch import nn

def helper(x):
    print("helper")
    return x

fast = torch.compile(lambda x: print("fast") or x)
faster = torch.compile(lambda x: helper(x) + 1, fullgraph=True)
act = lambda x: print("act") or x
key = lambda x: print("key")

def main(x):
    print("eager")
    return torch.compile(lambda y: print("main") or y)(x)

class Net(nn.Module):
    def forward(self, x):
        f = torch.compile(lambda y: print("nested") or y)
        return act(f(x))
"""


def row(text: str, marker: str) -> int:
    return text[: text.index(marker)].count("\n") + 1


def test_lambdas_that_are_compiled() -> None:
    from helpers import findings

    # Dynamo breaks at each of these prints, and at no other: `key` is never called, and
    # `main` itself runs eagerly.
    printed = ["helper", "fast", "act", "main", "nested"]
    assert findings(LAMBDAS) == [("TL101", row(LAMBDAS, f'print("{name}")')) for name in printed]
    found = compiled(LAMBDAS)
    # Python names each `<lambda>`; the later ones in a scope are numbered to keep them apart.
    assert found["<lambda>"] == "entry: passed to torch.compile()"
    assert found["<lambda#2>"] == "entry: passed to torch.compile(fullgraph=True)"
    assert found["main.<lambda>"] == "entry: passed to torch.compile()"
    assert found["helper"] == "called from pkg.model.<lambda#2>"
    assert found["act"] == "called from pkg.model.Net.forward"
    assert "main" not in found and "key" not in found
    # `--show-regions` places each lambda on its own line.
    root = Path("/project")
    shown = [(line.row, line.qualname) for line in describe_regions(LAMBDAS, str(root / "pkg" / "model.py"), Settings(root=root))]
    assert shown == [
        (row(LAMBDAS, "def helper"), "helper"),
        (row(LAMBDAS, "fast ="), "<lambda>"),
        (row(LAMBDAS, "faster ="), "<lambda#2>"),
        (row(LAMBDAS, "act ="), "act"),
        (row(LAMBDAS, 'print("main")'), "main.<lambda>"),
        (row(LAMBDAS, "def forward"), "Net.forward"),
        (row(LAMBDAS, 'print("nested")'), "Net.forward.<lambda>"),
    ]


# `report` prints, but Dynamo never calls it: each guard keeps the call out while compiling.
GUARDED_CALLS = {
    "if-not": """
        if not torch.compiler.is_compiling():
            report(x)
    """,
    "imported-guard": """
        if not is_torchdynamo_compiling():
            report(x)
    """,
    "else": """
        if torch._dynamo.is_compiling():
            pass
        else:
            report(x)
    """,
    "elif": """
        if x is None:
            pass
        elif not torch.compiler.is_compiling():
            report(x)
    """,
    "short-circuit": """
        not torch.compiler.is_compiling() and report(x)
    """,
    "conditional": """
        y = x if torch.compiler.is_compiling() else report(x)
    """,
    "library-wrapper": """
        if not is_compiling():
            report(x)
    """,
    "guard-in-a-name": """
        compiling = torch.jit.is_tracing() or is_torchdynamo_compiling()
        if not compiling:
            report(x)
    """,
    "after-return": """
        if torch.compiler.is_compiling():
            return x * 2
        report(x)
    """,
    "nested-def": """
        if not torch.compiler.is_compiling():
            def log():
                report(x)
            log()
    """,
}


def _net_calling_report(body: str) -> str:
    indented = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return f"""
import torch
from torch import nn
from transformers.utils import is_torchdynamo_compiling
from kornia.core.utils import is_compiling

def report(x):
    print(x.shape)

class Net(nn.Module):
    def forward(self, x):
{indented}
        return x * 2
"""


@pytest.mark.parametrize("body", GUARDED_CALLS.values(), ids=GUARDED_CALLS.keys())
def test_a_call_a_guard_rules_out_while_compiling_makes_nothing_compiled(body: str) -> None:
    source = _net_calling_report(body)
    assert set(compiled(source)) == {"Net.forward"}
    assert findings(source) == []


def test_a_helper_also_called_unguarded_is_compiled() -> None:
    source = _net_calling_report(
        """
        if not torch.compiler.is_compiling():
            report(x)
        report(x)
        """
    )
    assert compiled(source)["report"] == "called from pkg.model.Net.forward"
    assert findings(source) == [("TL101", row(source, "print("))]


def test_the_branch_taken_while_compiling_is_the_one_compiled() -> None:
    source = """
import torch
from torch import nn

def fast(x):
    print("fast")
    return x

def slow(x):
    print("slow")
    return x

class Net(nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():
            x = fast(x)
        else:
            x = slow(x)
        return x
"""
    assert set(compiled(source)) == {"Net.forward", "fast"}
    assert findings(source) == [("TL101", row(source, 'print("fast")'))]


def test_configured_guard_functions_rule_calls_out_of_the_regions() -> None:
    source = """
import torch
from mylib import is_exporting

def report(x):
    print(x)

@torch.compile
def step(x):
    if not is_exporting():
        report(x)
    return x
"""
    assert findings(source) == [("TL101", row(source, "print("))]
    assert findings(source, guard_functions=("mylib.is_exporting",)) == []
    root = Path("/project")
    settings = Settings(root=root, guard_functions=("is_exporting",))
    shown = describe_regions(textwrap.dedent(source), str(root / "pkg" / "model.py"), settings)
    assert [line.qualname for line in shown] == ["step"]


def test_a_helper_in_another_file_called_only_under_a_guard_is_not_compiled(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": """
                def report(x):
                    print(x.shape)
                """,
            "pkg/model.py": """
                import torch
                from torch import nn
                from .utils import report

                class Net(nn.Module):
                    def forward(self, x):
                        if not torch.compiler.is_compiling():
                            report(x)
                        return x * 2
                """,
        },
    )
    assert check("pkg/") == []
    assert indexed_regions(sorted((project / "pkg").glob("*.py"))) == {"Net.forward"}
    shown = CliRunner().invoke(cli, ["check", "--show-regions", "pkg/"])
    assert shown.exit_code == 0, shown.output
    assert "report" not in shown.stdout and "Net.forward" in shown.stdout


def test_what_follows_an_elif_that_returns_while_compiling_runs_after_an_earlier_branch() -> None:
    source = """
import torch

def helper(x):
    print("helper")
    return x

@torch.compile
def step(x, flag):
    if flag:
        x = x + 1
    elif torch.compiler.is_compiling():
        return x
    print("after")
    return helper(x)
"""
    # With `flag` true, Dynamo goes past the `elif` that returns.
    assert findings(source) == [
        ("TL101", row(source, 'print("helper")')),
        ("TL101", row(source, 'print("after")')),
    ]
    assert set(compiled(source)) == {"step", "helper"}
    # Where every branch left returns while compiling, nothing after the `if` is traced.
    ruled_out = source.replace("if flag:\n        x = x + 1", "if flag:\n        return x")
    assert findings(ruled_out) == []
    assert set(compiled(ruled_out)) == {"step"}


def test_a_dispatch_table_of_classes_makes_each_method_compiled() -> None:
    found = compiled(
        """
        import torch

        class Euler:
            def __init__(self, step): self.step = step
            def integrate(self, t): return t * self.step

        class Midpoint:
            def __init__(self, step): self.step = step
            def integrate(self, t): return t / self.step

        class Unused:
            def integrate(self, t): return t

        SOLVERS = {"euler": Euler, "midpoint": Midpoint}

        @torch.compile
        def odeint(t, method):
            solver = SOLVERS[method](0.1)
            return solver.integrate(t)
        """
    )
    assert {"Euler.__init__", "Euler.integrate", "Midpoint.__init__", "Midpoint.integrate"} <= set(found)
    assert "Unused.integrate" not in found
    assert found["Midpoint.integrate"] == "called through SOLVERS[...] (Midpoint) from pkg.model.odeint"


def test_getattr_on_self_calls_the_methods_its_name_can_spell() -> None:
    found = compiled(
        """
        import torch

        class Base(torch.nn.Module):
            def _step_heun(self, x): return x * 3

        class Sampler(Base):
            def _step_euler(self, x): return x * 2
            def _other(self, x): return x
            def _fixed(self, x): return x
            def forward(self, x):
                x = getattr(self, "_fixed")(x)
                return getattr(self, f"_step_{self.kind}")(x)

        compiled = torch.compile(Sampler())
        """
    )
    assert {"Sampler._step_euler", "Base._step_heun", "Sampler._fixed"} <= set(found)
    assert "Sampler._other" not in found


def test_getattr_on_another_object_or_with_a_default_is_not_followed() -> None:
    found = compiled(
        """
        import torch

        class Sampler(torch.nn.Module):
            def _step_euler(self, x): return x * 2
            def forward(self, x, other):
                x = getattr(other, "_step_euler")(x)
                return getattr(self, "_step_euler", None)(x)

        compiled = torch.compile(Sampler())
        """
    )
    assert "Sampler._step_euler" not in found


def test_a_dispatch_table_of_imported_classes_reaches_their_files(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/solvers.py": """
                class Base:
                    def integrate(self, t):
                        print(t)
                        return t

                class Euler(Base):
                    pass
                """,
            "pkg/odeint.py": """
                import torch
                from .solvers import Euler

                SOLVERS = [Euler]

                @torch.compile
                def odeint(t, method):
                    solver = SOLVERS[method]()
                    return solver.integrate(t)
                """,
        },
    )
    # The solver is built in the compiled function, so its breaking method costs the frame too.
    assert check("pkg/") == [("odeint.py", 9, "TL525"), ("solvers.py", 3, "TL101")]


def _solvers(count: int) -> dict[str, str]:
    classes = "import torch\n\n" + "\n".join(
        f"class Solver{i}:\n    def integrate(self, t):\n        print(t)\n        return t\n" for i in range(count)
    )
    return {
        "pkg/__init__.py": "",
        "pkg/solvers.py": classes,
        "pkg/api.py": """
            import torch

            def make(name):
                return REGISTRY[name]()

            @torch.compile
            def odeint(t, name):
                solver = make(name)
                return solver.integrate(t)
            """,
    }


def test_a_method_of_an_object_of_unknown_class_runs_each_of_the_few_classes_defining_it(project: Path) -> None:
    write(project, _solvers(2))
    assert check("pkg/") == [("solvers.py", 5, "TL101"), ("solvers.py", 10, "TL101")]
    shown = CliRunner().invoke(cli, ["check", "--show-regions", "pkg/"])
    assert "the project's only classes with .integrate" in shown.stdout


def test_a_method_many_classes_define_tells_nothing(project: Path) -> None:
    write(project, _solvers(6))
    assert check("pkg/") == []


def test_a_method_called_on_self_runs_the_overrides_of_its_subclasses() -> None:
    found = compiled(
        """
        import torch

        class Solver:
            def integrate(self, t):
                self._before(t)
                return self._advance(t)
            def _before(self, t): pass
            def _advance(self, t): raise NotImplementedError

        class Adaptive(Solver):
            def _advance(self, t): return t * 2

        class Dopri5(Adaptive):
            def _before(self, t): self.t0 = t

        class Unrelated:
            def _advance(self, t): return t

        @torch.compile
        def odeint(t):
            return Dopri5().integrate(t)
        """
    )
    assert {"Solver._advance", "Adaptive._advance", "Dopri5._before"} <= set(found)
    assert "Unrelated._advance" not in found
    assert found["Adaptive._advance"] == "called through self._advance of subclass Adaptive from pkg.model.Solver.integrate"


def test_overrides_in_other_files_are_compiled_too(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                class Solver:
                    def integrate(self, t):
                        return self._advance(t)

                    def _advance(self, t):
                        raise NotImplementedError
                """,
            "pkg/rk.py": """
                import torch
                from .base import Solver

                class RK(Solver):
                    def _advance(self, t):
                        if t.sum() > 0:
                            return t
                        return -t

                @torch.compile
                def solve(solver: Solver, t: torch.Tensor):
                    return solver.integrate(t)
                """,
        },
    )
    assert check("pkg/") == [("rk.py", 6, "TL201")]
    shown = CliRunner().invoke(cli, ["check", "--show-regions", "pkg/rk.py"])
    assert "self._advance of subclass RK" in shown.stdout
