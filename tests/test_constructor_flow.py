"""Objects handed to a compiled module's constructor: real files on disk, linted through the CLI."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import check, indexed_regions, write
from torchlint.cli import cli
from torchlint.settings.config import ConfigResolver, Settings
from torchlint.analysis.engine import module_name
from torchlint.run.runner import check_paths

SCHEDULERS = textwrap.dedent(
    """
    class DDPMScheduler:
        def __init__(self, steps=10):
            self.timesteps = list(range(steps))
        def step(self, out, t, x):
            print("ddpm")
            return x
        def unused(self):
            print("never called")


    class DDIMScheduler(DDPMScheduler):
        def step(self, out, t, x):
            print("ddim")
            return x


    class EulerScheduler:
        def step(self, out, t, x):
            print("never given to a loop")
            return x
    """
)

LOOP = textwrap.dedent(
    """
    import torch
    from torch import nn


    class UNet(nn.Module):
        def forward(self, x, t):
            return x


    class SamplingLoop(nn.Module):
        def __init__(self, unet, scheduler, steps=3):
            super().__init__()
            self.unet, self.scheduler = unet, scheduler

        def forward(self, x):
            for t in self.scheduler.timesteps:
                x = self.scheduler.step(self.unet(x, t), t, x)
            return x
    """
)


def regions(*args: str) -> str:
    result = CliRunner().invoke(cli, ["check", "--show-regions", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def prints(found: list[tuple[str, int, str]]) -> list[tuple[str, int]]:
    return [(name, row) for name, row, code in found if code == "TL101"]


def row(path: Path, text: str) -> int:
    """The line of ``path`` that holds ``text``."""
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_classes_passed_to_the_constructor_in_one_file(project: Path) -> None:
    built = """
        loop = SamplingLoop(UNet(), DDPMScheduler(10))


        def build(unet):
            ddim = DDIMScheduler()
            return SamplingLoop(unet, scheduler=ddim)
        """
    write(project, {"model.py": SCHEDULERS + LOOP.replace("import torch\n", "") + textwrap.dedent(built)})
    model = project / "model.py"
    # Both schedulers' `step`; not the method nobody calls, not the class never passed.
    assert prints(check("model.py")) == [("model.py", row(model, '"ddpm"')), ("model.py", row(model, '"ddim"'))]
    shown = regions("model.py")
    assert (
        "DDPMScheduler.step: called through self.scheduler (a DDPMScheduler given to SamplingLoop() in model)"
        " from model.SamplingLoop.forward" in shown
    )
    assert (
        "DDIMScheduler.step: called through self.scheduler (a DDIMScheduler given to SamplingLoop() in model.build)"
        in shown
    )
    assert "UNet.forward" in shown
    assert "EulerScheduler" not in shown and "unused" not in shown


def test_classes_passed_from_other_files(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/schedulers.py": SCHEDULERS,
            "pkg/loop.py": LOOP,
            "train.py": """
                from pkg.loop import SamplingLoop, UNet
                from pkg import schedulers


                def main():
                    unet = UNet()
                    fast = SamplingLoop(unet, schedulers.DDIMScheduler())
                    return SamplingLoop(unet, scheduler=schedulers.DDPMScheduler(10))
                """,
        },
    )
    schedulers = project / "pkg/schedulers.py"
    expected = [("schedulers.py", row(schedulers, '"ddpm"')), ("schedulers.py", row(schedulers, '"ddim"'))]
    assert prints(check(".")) == expected
    # Without the file that builds the loop nothing says what the scheduler is.
    assert prints(check("pkg")) == []
    assert (
        "DDPMScheduler.step: called through self.scheduler (a DDPMScheduler given to SamplingLoop() in train.main)"
        " from pkg.loop.SamplingLoop.forward, reached from other file pkg/loop.py" in regions(".")
    )


def test_the_index_and_the_final_lint_agree_on_held_objects(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            # The loop's own file builds one loop; train.py builds another.
            "pkg/loop.py": LOOP
            + "\n\nfrom pkg.schedulers import DDIMScheduler\nDEFAULT = SamplingLoop(UNet(), DDIMScheduler())\n",
            "pkg/schedulers.py": SCHEDULERS,
            "train.py": """
                from pkg.loop import SamplingLoop, UNet
                from pkg.schedulers import EulerScheduler
                loop = SamplingLoop(UNet(), EulerScheduler())
                """,
        },
    )
    compiled = indexed_regions(sorted(project.rglob("*.py")))
    assert {"DDIMScheduler.step", "EulerScheduler.step", "UNet.forward"} <= compiled
    assert "DDPMScheduler.step" not in compiled


def test_annotated_parameters(project: Path) -> None:
    write(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/schedulers.py": SCHEDULERS,
            "pkg/loop.py": """
                from typing import Optional

                import torch
                from torch import nn
                from pkg.schedulers import DDPMScheduler, EulerScheduler


                class Loop(nn.Module):
                    def __init__(self, scheduler: DDPMScheduler, fallback: Optional[EulerScheduler] = None):
                        super().__init__()
                        self.scheduler = scheduler
                        self.fallback = fallback

                    def forward(self, x):
                        return self.fallback.step(x, 0, self.scheduler.step(x, 0, x))


                @torch.compile
                def run(scheduler: "DDIMScheduler", x):
                    return scheduler.step(x, 0, x)  # a string annotation is not followed
                """,
        },
    )
    schedulers = project / "pkg/schedulers.py"
    expected = [("schedulers.py", row(schedulers, '"ddpm"')), ("schedulers.py", row(schedulers, '"never given'))]
    assert prints(check("pkg")) == expected
    assert "self.scheduler (a DDPMScheduler as annotated in pkg.loop.Loop.__init__)" in regions("pkg")


def test_only_construction_sites_and_annotations_give_a_class(project: Path) -> None:
    loop = """
        import torch
        from torch import nn


        class Loop(nn.Module):
            def reset(self, other):
                self.other = other

            def __init__(self, scheduler, other, *rest):
                super().__init__()
                self.scheduler = scheduler
                self.other = other
                self.rest = rest

            def forward(self, x):
                x = self.scheduler.step(x, 0, x)
                x = self.other.step(x, 0, x)
                return self.rest.step(x, 0, x)


        def build(scheduler, *args):
            # The class of a parameter is unknown; so are the positions after `*args`.
            Loop(scheduler, DDPMScheduler(), *args)
            Loop(*args, EulerScheduler(), DDIMScheduler())
        """
    write(project, {"model.py": SCHEDULERS + textwrap.dedent(loop)})
    # `self.other` is set again outside __init__: the constructor's argument is not all it holds.
    assert prints(check("model.py")) == []


def test_module_names_outside_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    write(
        site,
        {
            "lib/__init__.py": "",
            "lib/models/__init__.py": "",
            "lib/models/net.py": """
                import torch
                from torch import nn
                from ..utils import helper

                class Net(nn.Module):
                    def forward(self, x):
                        return helper(x)
                """,
            "lib/utils.py": "def helper(x):\n    print(x)\n    return x\n",
            "script.py": "x = 1\n",
        },
    )
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = Settings(root=elsewhere)
    assert module_name(str(site / "lib/models/net.py"), settings) == "lib.models.net"
    assert module_name(str(site / "lib/models/__init__.py"), settings) == "lib.models"
    assert module_name(str(site / "script.py"), settings) == "script"
    # The relative import resolves though the library lies outside the project.
    found = check_paths([site / "lib/models/net.py", site / "lib/utils.py"], ConfigResolver()).diagnostics
    assert [(Path(d.path).name, d.location.row, d.code) for d in found] == [("utils.py", 2, "TL101")]


def test_classes_re_exported_lazily(project: Path) -> None:
    write(
        project,
        {
            "lib/__init__.py": """
                from typing import TYPE_CHECKING

                from .utils import SLOW_IMPORT, OptionalDependencyNotAvailable, is_torch_available

                _import_structure = {"schedulers": ["DDPMScheduler"]}

                if TYPE_CHECKING or SLOW_IMPORT:
                    try:
                        if not is_torch_available():
                            raise OptionalDependencyNotAvailable()
                    except OptionalDependencyNotAvailable:
                        from .utils.dummy_pt_objects import *  # noqa: F403
                    else:
                        from .schedulers import DDPMScheduler
                else:
                    import sys

                    sys.modules[__name__] = object()
                """,
            "lib/utils.py": "SLOW_IMPORT = False\n",
            "lib/schedulers.py": SCHEDULERS,
            "lib/loop.py": LOOP,
            "targets.py": """
                def build():
                    import lib as L
                    from lib.loop import SamplingLoop, UNet

                    return SamplingLoop(UNet(), L.DDPMScheduler(num_train_timesteps=10))
                """,
        },
    )
    schedulers = project / "lib/schedulers.py"
    assert prints(check("targets.py", "lib")) == [("schedulers.py", row(schedulers, '"ddpm"'))]


def test_classes_re_exported_through_star_imports(project: Path) -> None:
    # transformers' way: `if TYPE_CHECKING: from .models import *`, one package per model.
    lazy = """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from {} import *
        else:
            import sys

            sys.modules[__name__] = object()
        """
    write(
        project,
        {
            "lib/__init__.py": lazy.format(".models"),
            "lib/models/__init__.py": lazy.format(".ddpm"),
            "lib/models/ddpm/__init__.py": lazy.format(".scheduling_ddpm"),
            "lib/models/ddpm/scheduling_ddpm.py": SCHEDULERS
            + "\n\nclass _Hidden:\n    def step(self, out, t, x):\n        print('hidden')\n",
            "lib/loop.py": LOOP,
            "targets.py": """
                import lib
                from lib.loop import SamplingLoop, UNet

                loop = SamplingLoop(UNet(), lib.DDPMScheduler())
                hidden = SamplingLoop(UNet(), lib._Hidden())
                """,
        },
    )
    schedulers = project / "lib/models/ddpm/scheduling_ddpm.py"
    # A star import brings no private names.
    assert prints(check("targets.py", "lib")) == [("scheduling_ddpm.py", row(schedulers, '"ddpm"'))]
