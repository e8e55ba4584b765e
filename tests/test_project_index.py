"""Compiled regions across the linted files: real files on disk, linted through the CLI."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from helpers import SharedLog, check, indexed_regions, write
from torchlint.analysis.checker import Checker
from torchlint.analysis.dynamo_config import dynamo_config_of
from torchlint.cli import cli
from torchlint.settings.config import Settings
from torchlint.analysis.engine import analyze_text
from torchlint.project.index import ProjectIndex
from torchlint.settings.profile import CompileProfile
from torchlint.analysis.outline import outline_of
from torchlint.analysis.regions import FileGraph
from torchlint.analysis.summary import summarize

MODEL = """
import torch
from torch import nn
from .utils import helper


class Net(nn.Module):
    def forward(self, x):
        return helper(x)
"""
# No `torch` and no `forward`: the text test alone would never parse it.
UTILS = """
def helper(x):
    print("helper", x)
    return x


def unused(x):
    print("never compiled", x)
"""


def regions_output(*args: str) -> str:
    result = CliRunner().invoke(cli, ["check", "--show-regions", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_helper_in_another_file_is_checked_when_both_files_are_linted(project: Path) -> None:
    write(project, {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/utils.py": UTILS})
    assert check("pkg") == [("utils.py", 2, "TL101")]
    # Named alone (as pre-commit names a changed file), utils.py is still read with its
    # project: the call into it is in model.py.
    assert check("pkg/utils.py") == [("utils.py", 2, "TL101")]
    assert check("pkg/model.py") == []
    # Without the project, utils.py shows nothing compiled.
    assert check("--no-project", "pkg/utils.py") == []
    assert check("--no-project", "pkg/utils.py", "pkg/__init__.py") == []


def test_absolute_relative_and_aliased_imports(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "from .layers import reexported\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/model.py": """
                import torch
                from torch import nn
                from pkg.layers import absolute
                from ..layers import relative
                from .. import layers
                import pkg.layers as L
                from pkg import reexported

                class Net(nn.Module):
                    def forward(self, x):
                        x = absolute(x)
                        x = relative(x)
                        x = layers.via_module(x)
                        x = L.via_alias(x)
                        return reexported(x)
                """,
            "pkg/layers.py": """
                def absolute(x):
                    print(x)
                def relative(x):
                    print(x)
                def via_module(x):
                    print(x)
                def via_alias(x):
                    print(x)
                def reexported(x):
                    print(x)
                def not_called(x):
                    print(x)
                """,
        },
    )
    assert check("pkg") == [("layers.py", row, "TL101") for row in (2, 4, 6, 8, 10)]


def test_module_base_class_in_another_file(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                from torch import nn
                class Base(nn.Module):
                    pass
                """,
            # Mixin is a module only through Base, which this file cannot see. On its own
            # the file takes Net for one (a forward, and a base that derives from what it
            # cannot see); the project knows, and says why.
            "pkg/model.py": """
                import torch
                from pkg.base import Base
                class Mixin(Base):
                    pass
                class Net(Mixin):
                    def forward(self, x):
                        print(x)
                        return x
                """,
        },
    )
    assert check("--no-project", "pkg/model.py") == [("model.py", 7, "TL101")]
    assert "Net.forward: entry: forward of nn.Module subclass Net (defines forward() and derives from pkg.base.Base)" in regions_output("--no-project", "pkg/model.py")
    assert check("pkg/model.py") == [("model.py", 7, "TL101")]
    assert check("pkg") == [("model.py", 7, "TL101")]
    assert "Net.forward: entry: forward of nn.Module subclass Net (subclass of Mixin, an nn.Module)" in regions_output("pkg")


def test_project_class_used_as_a_submodule(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/parts.py": """
                class Encoder:
                    def encode(self, x):
                        print("encode")
                        return x
                    def decode(self, x):
                        print("never called")
                        return x
                class Scale:
                    def __call__(self, x):
                        print("scale")
                        return x
                """,
            "pkg/model.py": """
                import torch
                from torch import nn
                from pkg.parts import Encoder, Scale
                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.encoder = Encoder()
                        self.scale = Scale()
                    def forward(self, x):
                        return self.scale(self.encoder.encode(x))
                """,
        },
    )
    assert check("pkg") == [("parts.py", 3, "TL101"), ("parts.py", 10, "TL101")]


def test_compile_of_a_module_instance(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": """
                class Runner:
                    def forward(self, x):
                        print("runner")
                        return x
                class Stepper:
                    def forward(self, x):
                        print("stepper")
                        return x
                class OwnCompile:
                    def compile(self):
                        pass
                    def forward(self, x):
                        print("not compiled")
                        return x
                """,
            "train.py": """
                import torch
                from pkg.runner import Runner, Stepper, OwnCompile

                def main():
                    model = Runner().to("cpu")
                    model.compile(fullgraph=True)
                    fast = torch.compile(Stepper())
                    OwnCompile().compile()
                """,
        },
    )
    assert check(".") == [("runner.py", 3, "TL101"), ("runner.py", 7, "TL101")]
    shown = regions_output(".")
    assert "2: Runner.forward [fullgraph]: entry: .compile(fullgraph=True) of a Runner" in shown
    assert "6: Stepper.forward: entry: passed to torch.compile()" in shown
    assert "OwnCompile" not in shown


def test_compile_sites_in_the_same_file(project: Path) -> None:
    write(
        project,
        {
            "model.py": """
                import torch
                class Plain:
                    def forward(self, x):
                        print(x)
                        return x
                compiled = torch.compile(Plain(), fullgraph=True)
                """,
        },
    )
    assert check("model.py") == [("model.py", 4, "TL101")]
    assert "Plain.forward [fullgraph]: entry: passed to torch.compile(fullgraph=True)" in regions_output("model.py")


def test_disabled_functions_in_other_files_stay_untraced(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/stats.py": """
                import torch
                @torch.compiler.disable
                def log_stats(x):
                    print(x)
                    return helper_of_disabled(x)
                def helper_of_disabled(x):
                    print(x)
                """,
            "pkg/model.py": """
                import torch
                from torch import nn
                from pkg.stats import log_stats
                class Net(nn.Module):
                    def forward(self, x):
                        log_stats(x)
                        return x
                """,
        },
    )
    # The bodies are not traced; the call into the disabled function is a break of its own.
    assert check("pkg") == [("model.py", 6, "TL504")]
    assert "log_stats [disabled]" in regions_output("pkg")


def test_fullgraph_is_recorded_across_files(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/ops.py": """
                def only_fullgraph(x):
                    return x
                def shared(x):
                    return x
                """,
            "pkg/model.py": """
                import torch
                from pkg.ops import only_fullgraph, shared

                @torch.compile(fullgraph=True)
                def strict(x):
                    return shared(only_fullgraph(x))

                @torch.compile
                def lenient(x):
                    return shared(x)
                """,
        },
    )
    shown = regions_output("pkg")
    assert "only_fullgraph [fullgraph]: called from pkg.model.strict, reached from other file pkg/model.py" in shown
    assert "  3: shared: called from pkg.model.strict, reached from other file pkg/model.py" in shown
    assert "strict [fullgraph]: entry: @torch.compile(fullgraph=True)" in shown
    assert "lenient: entry: @torch.compile" in shown


def test_fullgraph_in_one_file() -> None:
    summary = summarize(
        cst.parse_module(
            textwrap.dedent(
                """
                import torch
                from torch import nn
                class Net(nn.Module):
                    def forward(self, x):
                        return inner(x)
                class Free(nn.Module):
                    def forward(self, x):
                        return x
                def inner(x):
                    return x
                @torch.compile(fullgraph=True)
                def decorated(x):
                    return x
                @torch._dynamo.optimize("eager", nopython=True)
                def optimized(x):
                    return x
                model = Net()
                model.compile(fullgraph=True)
                loose = torch.compile(inner)
                """
            )
        ),
        "pkg.model",
    )
    index = ProjectIndex([outline_of(summary, FileGraph(summary), "pkg/model.py", False)])
    index.solve()
    fullgraph = {qualname for _, qualname in index.fullgraph}
    # `inner` is also compiled on its own without fullgraph; Free is only presumed compiled.
    assert fullgraph == {"Net.forward", "decorated", "optimized"}


def test_dynamo_config_assignments(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/model.py": MODEL,
            "pkg/utils.py": UTILS,
            "pkg/setup.py": """
                import torch
                import torch._dynamo as dynamo
                from torch._dynamo import config as dynamo_config

                torch._dynamo.config.capture_scalar_outputs = True
                dynamo.config.cache_size_limit = 64
                dynamo_config.suppress_errors = False

                def main():
                    torch._dynamo.config.recompile_limit = -1
                    torch._dynamo.config.backend_name = "eager"
                    torch._dynamo.config.not_a_constant = compute()
                    torch._dynamo.config.patch(capture_scalar_outputs=False)
                """,
        },
    )
    expected = {
        "capture_scalar_outputs": True,
        "cache_size_limit": 64,
        "suppress_errors": False,
        "recompile_limit": -1,
        "backend_name": "eager",
    }
    setup = (project / "pkg/setup.py").read_text()

    log = SharedLog(tmp_path / "seen.log")
    original = Checker.run

    def spy(self, summary, graph, profile=None):
        log.append([summary.module_name, profile.capture_scalar_outputs])
        return original(self, summary, graph, profile)

    monkeypatch.setattr(Checker, "run", spy)
    check("pkg", "--jobs", "1")
    # Every file is analysed under the whole project's config.
    # (the empty __init__.py is never parsed: nothing in it can be compiled)
    assert dict(log.values()) == dict.fromkeys(["pkg.model", "pkg.utils", "pkg.setup"], True)
    assert dynamo_config_of(setup) == expected


def test_show_regions_lists_each_file_with_reasons(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/model.py": """
                import torch
                from torch import nn
                from .utils import helper

                class Net(nn.Module):
                    def forward(self, x):
                        return self._inner(helper(x))
                    def _inner(self, x):
                        return x

                @torch.compiler.disable
                def skipped(x):
                    return x
                """,
            "pkg/utils.py": UTILS,
            "pyproject.toml": '[tool.torchlint]\nentry-points = ["pkg.utils.unused"]\n',
        },
    )
    result = CliRunner().invoke(cli, ["check", "--show-regions", "pkg"])
    assert result.exit_code == 0
    assert result.stdout == textwrap.dedent(
        """\
        pkg/model.py
          6: Net.forward: entry: forward of nn.Module subclass Net (subclass of torch.nn.Module)
          8: Net._inner: called from pkg.model.Net.forward
          12: skipped [disabled]: not traced: decorated with a Dynamo disable
        pkg/utils.py
          1: helper: called from pkg.model.Net.forward, reached from other file pkg/model.py
          6: unused: entry: config entry-points (`pkg.utils.unused`)
        """
    )


def test_circular_imports_end(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "from .a import ping\nfrom .b import pong\n",
            "pkg/a.py": """
                import torch
                from .b import pong
                from . import ping as self_alias
                @torch.compile
                def ping(x):
                    print("ping")
                    return pong(x)
                """,
            "pkg/b.py": """
                from .a import ping
                from pkg import pong as round_trip
                def pong(x):
                    print("pong")
                    return ping(round_trip(x))
                """,
        },
    )
    assert check("pkg") == [("a.py", 6, "TL101"), ("b.py", 4, "TL101")]


def test_the_same_findings_in_one_process_and_in_several(project: Path) -> None:
    files = {"pkg/__init__.py": ""}
    for number in range(40):
        files[f"pkg/model_{number}.py"] = f"""
            import torch
            from torch import nn
            from pkg.util_{(number + 1) % 40} import helper_{(number + 1) % 40}
            class Net{number}(nn.Module):
                def forward(self, x):
                    return helper_{(number + 1) % 40}(x)
            """
        files[f"pkg/util_{number}.py"] = f"""
            def helper_{number}(x):
                print(x)
                return x
            """
    write(project, files)
    one = check("pkg", "--jobs", "1")
    assert len(one) == 40 and all(code == "TL101" for _, _, code in one)
    assert check("pkg", "--jobs", "2") == one
    assert regions_output("pkg", "--jobs", "2") == regions_output("pkg", "--jobs", "1")


def test_index_and_final_lint_agree(project: Path) -> None:
    """What the index computes for a file is what the file's final lint treats as compiled."""
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                import torch
                from torch import nn
                class Base(nn.Module):
                    def shared(self, x):
                        return x
                    def forward(self, x):
                        return x
                """,
            "pkg/model.py": """
                import torch
                from pkg.base import Base
                from pkg import base as B
                class Local(Base):
                    pass
                class Net(Local):
                    def forward(self, x):
                        x = self.shared(x)
                        return super().forward(B.Base.shared(self, x))
                """,
        },
    )
    assert indexed_regions(sorted((project / "pkg").glob("*.py"))) == {"Net.forward", "Base.shared", "Base.forward"}


def test_outlines_resolve_without_the_cli(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path)
    texts = {
        "pkg/model.py": textwrap.dedent(MODEL),
        "pkg/utils.py": textwrap.dedent(UTILS),
    }
    outlines = []
    for name, text in texts.items():
        analysis = analyze_text(text, str(tmp_path / name), settings, CompileProfile(), parse_always=True)
        outlines.append(analysis.outline)
    index = ProjectIndex(outlines)
    index.solve()
    utils = str(tmp_path / "pkg/utils.py")
    assert {qualname for path, qualname in index.compiled if path == utils} == {"helper"}
    assert "reached from other file" in index.compiled[(utils, "helper")]



def test_a_method_bound_to_a_function_of_its_module(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/ops.py": """
                def _run(self, x):
                    print("run")
                    return x


                class Op:
                    run = _run
                """,
            "pkg/model.py": """
                from torch import nn
                from .ops import Op


                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.op = Op()

                    def forward(self, x):
                        return self.op.run(x)
                """,
        },
    )
    # `Op.run` is `_run`: Dynamo breaks at its print.
    assert check("pkg") == [("ops.py", 2, "TL101")]
    assert indexed_regions(sorted((project / "pkg").glob("*.py"))) == {"Net.forward", "_run"}


def test_star_imports_in_any_module(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            # No torch and no forward here: only the calls into it make it compiled.
            "pkg/layers.py": """
                def helper(x):
                    print("helper")
                    return x


                class Scale:
                    def apply(self, x):
                        print("scale")
                        return x


                class Mixin:
                    def log(self, x):
                        print("mixin")
                        return x
                """,
            "pkg/common.py": "from .layers import *\n",
            "pkg/model.py": """
                from torch import nn
                from .common import *


                class Net(Mixin, nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.scale = Scale()

                    def forward(self, x):
                        return self.log(self.scale.apply(helper(x)))
                """,
        },
    )
    # Dynamo breaks at each of the three prints.
    assert check("pkg") == [("layers.py", 2, "TL101"), ("layers.py", 8, "TL101"), ("layers.py", 14, "TL101")]
    shown = CliRunner().invoke(cli, ["check", "--show-regions", "pkg"]).stdout
    assert shown == textwrap.dedent(
        """\
        pkg/layers.py
          1: helper: called from pkg.model.Net.forward, reached from other file pkg/model.py
          7: Scale.apply: called from pkg.model.Net.forward, reached from other file pkg/model.py
          13: Mixin.log: called from pkg.model.Net.forward, reached from other file pkg/model.py
        pkg/model.py
          10: Net.forward: entry: forward of nn.Module subclass Net (subclass of torch.nn.Module)
        """
    )
    assert indexed_regions(sorted((project / "pkg").glob("*.py"))) == {
        "helper",
        "Scale.apply",
        "Mixin.log",
        "Net.forward",
    }


def test_a_forward_whose_bases_the_project_knows_are_plain_classes_is_not_compiled(project: Path) -> None:
    # Alone, pipeline.py cannot see Mixin and takes Pipeline for a module (it has a forward);
    # the project sees Mixin, a plain class, and the forward is compiled nowhere.
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/hub.py": """
                import abc

                class Mixin(abc.ABC):
                    def push(self):
                        return None
                """,
            "pkg/pipeline.py": """
                import torch
                from .hub import Mixin

                class Pipeline(Mixin):
                    def forward(self, x):
                        print(x)
                        return x
                """,
        },
    )
    assert check("--no-project", "pkg/pipeline.py") == [("pipeline.py", 6, "TL101")]
    assert check("pkg/") == []
    assert check("pkg/pipeline.py") == []
    assert "Pipeline.forward" not in regions_output("pkg/")
