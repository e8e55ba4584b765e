"""Breaks that cost more where another file's function breaks: the project tells a file which
of the functions and classes it uses break the graph, through the CLI on real files."""

from __future__ import annotations

from pathlib import Path

from helpers import check, write

CORE = """
    import torch


    def frequencies(n, top):
        step = torch.linspace(0, 1, n)
        return (step * top).max().item()


    def ramp(n):
        return torch.linspace(0, 1, n)


    class Solver:
        def __init__(self, y0):
            self.y0 = y0

        def integrate(self, t):
            if t.max() > 10:
                raise ValueError("t is too large")
            return self.y0 * torch.exp(-t)

        def scale(self, t):
            return self.y0 * t
"""

BANDS = """
    import torch
    from torch import nn

    from .core import frequencies, ramp


    class Bands(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.top = frequencies(n, 0.5)

        def forward(self, x):
            return x * self.top


    class Smooth(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("ramp", ramp(n))

        def forward(self, x):
            return x * self.ramp


    @torch.compile
    def split(x):
        return Bands(4)(x) + Smooth(4)(x)
"""

ODE = """
    import torch

    from .core import Solver


    @torch.compile
    def odeint(y0, t):
        solver = Solver(y0)
        return solver.integrate(t) + Solver(y0).scale(t)


    @torch.compile
    def odeint_given(solver, t):
        return solver.integrate(t)
"""


def test_a_module_whose_init_calls_a_breaking_function_of_another_file(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/bands.py": BANDS})
    found = check(str(tmp_path / "pkg"))
    assert ("bands.py", 9, "TL524") in found
    assert [f for f in found if f[0] == "bands.py"] == [("bands.py", 9, "TL524")]  # `Smooth` builds cleanly
    # Alone, the file cannot know that `frequencies` breaks.
    assert check("--no-project", str(tmp_path / "pkg" / "bands.py")) == []


def test_a_breaking_method_of_an_imported_class_built_in_compiled_code(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/ode.py": ODE})
    found = check(str(tmp_path / "pkg"))
    # `integrate` breaks; `scale` does not; a solver passed in resumes as an ordinary break.
    assert [f for f in found if f[0] == "ode.py"] == [("ode.py", 9, "TL525")]
    assert check("--no-project", str(tmp_path / "pkg" / "ode.py")) == []


def test_a_name_bound_twice_holds_no_known_object(tmp_path: Path) -> None:
    source = """
        import torch


        class Scaler:
            def apply(self, x):
                print("scaling")
                return x * 2


        @torch.compile
        def scale(x: torch.Tensor, given: Scaler, fresh: bool):
            scaler = given
            if fresh:
                scaler = Scaler()
            once = Scaler()
            y = scaler.apply(x)
            return y + once.apply(x)
    """
    write(tmp_path, {"scale.py": source})
    assert [f for f in check(str(tmp_path / "scale.py")) if f[2] == "TL525"] == [("scale.py", 17, "TL525")]


def test_methods_of_an_object_a_dispatch_table_builds(tmp_path: Path) -> None:
    solvers = """
        import torch

        from .core import Solver


        class Euler:
            def __init__(self, y0):
                self.y0 = y0

            def integrate(self, t):
                return self.y0 + t


        SOLVERS = {"euler": Euler, "checked": Solver}


        @torch.compile
        def odeint(y0, t, method):
            solver = SOLVERS[method](y0)
            return solver.integrate(t)
    """
    write(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/solvers.py": solvers})
    # One of the table's classes breaks in `integrate`: the call may run it.
    assert [f for f in check(str(tmp_path / "pkg")) if f[0] == "solvers.py"] == [("solvers.py", 20, "TL525")]
