"""A run that names some files still reads their project: the calls into them from files
it did not name are followed, and only the named files are reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from torchlint.settings.config import ConfigResolver
from torchlint.files.project_files import other_project_files, project_root

from helpers import check, write

CHAIN = {
    "pkg/__init__.py": "",
    "pkg/a.py": """\
        import torch
        from pkg.b import step_b


        class Net(torch.nn.Module):
            def forward(self, x):
                return step_b(x.sum())
        """,
    "pkg/b.py": """\
        from pkg.c import step_c


        def step_b(v):
            return step_c(v)
        """,
    "pkg/c.py": """\
        from pkg.d import step_d


        def step_c(v):
            print(v)
            return step_d(v)
        """,
    "pkg/d.py": """\
        def step_d(v):
            if v:
                return 1
            return 0
        """,
}


def test_a_tensor_handed_across_any_number_of_files(project: Path) -> None:
    write(project, CHAIN)
    assert check("pkg") == [("c.py", 5, "TL101"), ("d.py", 2, "TL201")]


def test_each_named_file_gets_the_findings_of_the_whole_run(project: Path) -> None:
    write(project, CHAIN)
    whole = check("pkg")
    for name in ("a.py", "b.py", "c.py", "d.py"):
        assert check(f"pkg/{name}") == [found for found in whole if found[0] == name], name
    assert check("pkg/c.py", "pkg/d.py") == whole


def test_no_project_reads_the_named_files_alone(project: Path) -> None:
    write(project, CHAIN)
    assert check("--no-project", "pkg/d.py") == []
    assert check("--no-project", "pkg/c.py", "pkg/d.py") == []


def _stdin(project: Path, *args: str, text: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", *args],
        cwd=project, input=text, capture_output=True, text=True, timeout=120,
    )


def test_an_editor_buffer_is_checked_with_its_project_on_disk(project: Path) -> None:
    write(project, CHAIN)
    # The buffer, not the file on disk, is what is checked: here it breaks in a new place.
    buffer = "def step_d(v):\n    x = 1\n    if v:\n        return 1\n    return 0\n"
    found = _stdin(project, "--stdin-filename", "pkg/d.py", "-", text=buffer)
    assert found.returncode == 1
    assert found.stdout.splitlines() == [
        "pkg/d.py:3:8: TL201 `if` on a tensor value breaks the graph (Dynamo cannot know which way it goes)"
    ]
    alone = _stdin(project, "--no-project", "--stdin-filename", "pkg/d.py", "-", text=buffer)
    assert alone.returncode == 0 and alone.stdout == ""


def test_show_regions_of_a_named_file_names_its_callers_elsewhere(project: Path) -> None:
    write(project, CHAIN)
    shown = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--show-regions", "pkg/d.py"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert shown.stdout.splitlines() == [
        "pkg/d.py",
        "  1: step_d: called from pkg.c.step_c, reached from other file pkg/c.py",
    ]


def test_the_project_root(project: Path) -> None:
    write(project, {
        "src/pkg/__init__.py": "", "src/pkg/sub/__init__.py": "", "src/pkg/sub/m.py": "",
        "scripts/run.py": "", "lib/pyproject.toml": "[tool.torchlint]\n", "lib/deep/x.py": "",
    })
    resolver = ConfigResolver()
    # The top package; a file in no package: its folder; under a configuration: its folder.
    assert project_root(project / "src/pkg/sub/m.py", resolver) == project / "src/pkg"
    assert project_root(project / "scripts/run.py", resolver) == project / "scripts"
    assert project_root(project / "lib/deep/x.py", resolver) == project / "lib"


def test_a_file_in_no_package_reads_the_files_beside_it_only(project: Path) -> None:
    write(project, {
        "model.py": """\
            import torch
            from helper import step


            class Net(torch.nn.Module):
                def forward(self, x):
                    return step(x)
            """,
        "helper.py": "def step(x):\n    print(x)\n    return x\n",
        "deep/other.py": "",
    })
    assert check("helper.py") == [("helper.py", 2, "TL101")]
    # The folders below are not read: this one could be a home folder.
    assert other_project_files(["helper.py"], [Path("helper.py")], ConfigResolver())[0] == [project / "model.py"]
