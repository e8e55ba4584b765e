"""Kinds that cross a call: tensors a compiled call passes into another file's function or
an object's method, tensor members of objects a module keeps, and 0-d tensors as indices.
Real files on disk, linted through the CLI."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import check, findings, write
from torchlint.settings.config import Settings
from torchlint.analysis.engine import analyze_text
from torchlint.analysis.kind_vocabulary import Kind
from torchlint.settings.profile import CompileProfile

SCHEDULER = """
    import torch


    class Scheduler:
        def __init__(self, steps: int = 10):
            self.alphas = torch.linspace(0.1, 0.9, steps)
            self.timesteps = None
            self.names = ["a", "b"]

        def set_timesteps(self, n: int):
            self.timesteps = torch.arange(n).flip(0)

        def step(self, out: torch.Tensor, timestep: int, sample: torch.Tensor, eta: float = 0.0):
            prev = timestep - 1
            alpha = self.alphas[prev] if prev >= 0 else self.alphas[0]
            if eta > 0:
                sample = sample * 2
            return sample - alpha * out
"""

LOOP = """
    from torch import nn

    from pkg.sched import Scheduler


    class Loop(nn.Module):
        def __init__(self, net, scheduler):
            super().__init__()
            self.net, self.scheduler = net, scheduler

        def forward(self, sample):
            for t in self.scheduler.{member}:
                sample = self.scheduler.step(self.net(sample), {argument}, sample)
            return sample


    def build():
        return Loop(nn.Identity(), Scheduler())
"""


def _project(root: Path, member: str = "timesteps", argument: str = "t") -> None:
    write(root, {
        "pkg/__init__.py": "",
        "pkg/sched.py": SCHEDULER,
        "pkg/loop.py": LOOP.format(member=member, argument=argument),
    })


def test_a_tensor_passed_from_another_file_overrides_an_int_annotation(project: Path) -> None:
    _project(project)
    # `t` walks the scheduler's tensor of timesteps: `prev >= 0` asks for a tensor's value;
    # `eta` stays a float. TL601 counts only the breaks of the loop's own file.
    assert check("pkg") == [("sched.py", 15, "TL201")]


def test_members_that_are_not_tensors_pass_nothing(project: Path) -> None:
    _project(project, member="names")
    assert check("pkg") == []


def test_a_python_value_passed_keeps_the_annotation(project: Path) -> None:
    _project(project, argument="3")
    assert check("pkg") == []


def test_the_scheduler_file_alone_trusts_its_annotation(project: Path) -> None:
    _project(project)
    assert check("--no-project", "pkg/sched.py") == []
    # With its project, the loop that passes it a tensor is read too.
    assert check("pkg/sched.py") == [("sched.py", 15, "TL201")]


def test_one_file_follows_the_object_its_module_keeps(project: Path) -> None:
    write(project, {"one.py": SCHEDULER + LOOP.replace("from pkg.sched import Scheduler", "").format(
        member="timesteps", argument="t")})
    assert check("one.py") == [("one.py", 15, "TL201"), ("one.py", 31, "TL601")]


CLIP = """
    def clip(value, limit: float = 1.0):
        if limit < 0:
            return value
        if value > limit:
            return limit
        return value
"""
# A staticmethod's first parameter takes the first argument (`limit` stays a float).
STATIC_CLIP = """
    class Clip:
        @staticmethod
        def clip(value, limit: float = 1.0):
            if limit < 0:
                return value
            if value > limit:
                return limit
            return value
"""


@pytest.mark.parametrize("util, imported, call, row", [(CLIP, "clip", "clip", 4), (STATIC_CLIP, "Clip", "Clip.clip", 6)])
def test_functions_of_another_file_take_the_tensors_passed(
    project: Path, util: str, imported: str, call: str, row: int
) -> None:
    write(project, {
        "pkg/__init__.py": "",
        "pkg/util.py": util,
        "pkg/model.py": f"""
            import torch
            from torch import nn

            from pkg.util import {imported}


            class Net(nn.Module):
                def forward(self, x: torch.Tensor) -> torch.Tensor:
                    return x * {call}(x.sum()) + {call}(0.5)
        """,
    })
    assert check("pkg") == [("util.py", row, "TL201")]


# Every rule off for the calling file, or only those that ask about value kinds: it still
# tells the called file which of its arguments are tensors.
@pytest.mark.parametrize("ignored", [["ALL"], ["TL2", "TL3", "TL4", "TL5", "TL6"]])
def test_a_caller_with_its_rules_ignored_still_passes_its_tensors(project: Path, ignored: list[str]) -> None:
    codes = ", ".join(f'"{code}"' for code in ignored)
    write(project, {
        "pyproject.toml": f"""
            [tool.torchlint]
            per-file-ignores = {{"a.py" = [{codes}]}}
        """,
        "pkg/__init__.py": "",
        "pkg/a.py": """
            from torch import nn

            from pkg.b import helper


            class Net(nn.Module):
                def forward(self, x):
                    return helper(x.sum())
        """,
        "pkg/b.py": """
            def helper(v):
                if v:
                    return v
                return -v
        """,
    })
    assert check("pkg") == [("b.py", 2, "TL201")]


# A module with a tensor to index; each test's body follows (row 12 is its first line).
TABLE = """
        import torch
        from torch import nn


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("table", torch.randn(10))

            def forward(self, x: torch.Tensor, ts: torch.Tensor, t: torch.Tensor):"""


def test_zero_dim_tensors_computed_in_the_graph_are_python_indices() -> None:
    source = TABLE + """
                a = self.table[x.argmax()]
                idx = (ts == 3).nonzero(as_tuple=True)[0][0]
                b = self.table[idx + 1]
                first = torch.where(ts > 0)[0][0]
                c = self.table[-first]
                for i in torch.arange(3):
                    a = a + self.table[i]
                d = x[torch.sum(ts), :]
                e = self.table[ts.flatten()[1]]
                return a + b + c + d + e
    """
    assert [row for code, row in findings(source) if code == "TL305"] == [12, 14, 16, 18, 19, 20]


def test_indices_that_are_inputs_sizes_or_vectors_stay_silent() -> None:
    source = TABLE + """
                a = self.table[t]
                b = self.table[x.shape[0] - 1]
                c = self.table[ts]
                d = self.table[ts.argmax(dim=0)]
                e = self.table[torch.tensor(3)]
                rows = x.nonzero(as_tuple=True)[0]
                f = self.table[rows]
                return a + b + c + d + e + f
    """
    assert [row for code, row in findings(source) if code == "TL305"] == []


def test_annotations_of_a_tensor_or_none_are_tensors() -> None:
    source = """
        from typing import Optional, Union

        import torch
        from torch import nn


        class M(nn.Module):
            def forward(
                self,
                a: Union[torch.Tensor, None],
                b: "torch.Tensor | None",
                c: torch.Tensor | None,
                d: Optional[torch.Tensor],
                e: Union[torch.Tensor, int],
                f: torch.Tensor | int,
            ):
                return [a if a > 0 else 0, b if b > 0 else 0, c if c > 0 else 0, d if d > 0 else 0,
                        e if e > 0 else 0, f if f > 0 else 0]
    """
    # `e` and `f` may be ints: nothing shows which.
    assert [code for code, row in findings(source)] == ["TL201"] * 4



def test_the_outline_keeps_what_a_call_into_another_file_passes(tmp_path: Path) -> None:
    """What a file's calls pass is found by the walk and kept in its outline, for the project's
    solve to hand to the callee's parameters."""
    text = textwrap.dedent("""
        import torch
        from torch import nn

        from pkg.util import helper


        class Net(nn.Module):
            def forward(self, x: torch.Tensor):
                return helper(x.sum())
    """)
    path = str(tmp_path / "pkg" / "model.py")
    analysis = analyze_text(text, path, Settings(root=tmp_path), CompileProfile(), parse_always=True)
    (call,) = analysis.outline.kinds["Net.forward"].calls
    assert [target.name for target in call.targets] == ["pkg.util.helper"]
    assert call.passed == ((0, Kind.TENSOR),)


NORMS = """
    def rms(x):
        return x.pow(2).mean().sqrt()


    def scale(x):
        return 2.0
"""

SOLVER = """
    from torch import nn

    from . import norms
    from .norms import rms, scale


    class Step(nn.Module):
        def forward(self, x, y):
            d = rms(y)
            if d < 1e-5:
                x = x + 1
            if scale(y) > 1:
                x = x * 2
            ok = norms.rms(y) > 2
            if ok:
                x = x - 1
            return x, rms(x)
"""


def test_what_a_function_of_another_file_returns_reaches_the_tests_on_it(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/__init__.py": "", "pkg/norms.py": NORMS, "pkg/solver.py": SOLVER})
    assert check(str(tmp_path / "pkg")) == [("solver.py", 10, "TL201"), ("solver.py", 15, "TL201")]
    # Alone, the file cannot know what `rms` returns.
    assert check("--no-project", str(tmp_path / "pkg" / "solver.py")) == []


ERRORS = """
    from .norms import rms


    def too_small(y):
        if rms(y) < 1e-5:
            return y + 1
        return y
"""

MODEL = """
    from torch import nn

    from .errors import too_small


    class Net(nn.Module):
        def forward(self, x):
            return too_small(x)
"""


def test_a_function_compiled_only_from_another_file_is_told_what_it_decides_on(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/__init__.py": "", "pkg/norms.py": NORMS, "pkg/errors.py": ERRORS, "pkg/model.py": MODEL})
    assert check(str(tmp_path / "pkg")) == [("errors.py", 5, "TL201")]
