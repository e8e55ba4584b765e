"""`torchlint verify --fix`: fixes applied to a temporary copy, the targets run again from it
with real workers and real TorchDynamo on the CPU, and the user's files left as they were."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.cli import cli
from torchlint.settings.config import ConfigResolver
from torchlint.fix.fixing import fix_files
from torchlint.parse.line_map import original_line
from torchlint.verify.fixed_copy import import_root, make_copy

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}

PRINTING_NET = """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            y = x * 2
            print("y", y.shape)
            return y + 1
"""

# The fix picks with torch.where, which broadcasts: where the branch gave a 0-d maximum, the
# fixed code gives a tensor of x's shape (the rule's page says so; this target shows it).
PEAK = """\
    import torch
    from torch import nn


    class Peak(nn.Module):
        def forward(self, x):
            y = x
            if x.sum() > 0:
                y = x.max()
            return y * 2


    def torchlint_targets():
        return {"peak": (Peak(), (torch.arange(3.0),))}
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def package_project(root: Path) -> Path:
    """A package whose module prints in forward, and a targets file beside the package that
    imports it: the fix lands in the package, which the run after must import from the copy."""
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "net.py", PRINTING_NET)
    return write(
        root / "net_targets.py",
        """\
        import torch
        from pkg.net import Net


        def torchlint_targets():
            return {"net": (Net(), (torch.ones(3),))}
        """,
    )


def verify_fix(pool, *arguments: str, cwd: Path):
    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["verify", "-q", "--fix", *arguments], obj={"verify_pool": pool})
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture(scope="module")
def verify_pool():
    from torchlint.verify.pool import WorkerPool

    with WorkerPool(1, env=ENV) as pool:
        yield pool


# -- without Dynamo ---------------------------------------------------------------------


def test_lines_of_a_fixed_text_map_back_to_the_lines_they_came_from():
    before = "a\nb\nprint(x)\nc\n"
    after = "a\nb\nif not torch.compiler.is_compiling():\n    print(x)\nc\n"
    line = original_line(before, after)
    assert [line(row) for row in range(1, 6)] == [1, 2, 3, 3, 4]


def test_fixes_are_placed_on_the_lines_of_the_original_text(tmp_path):
    # Two prints a line apart: whether the second is fixed in the same pass or the next (on
    # a text one line longer), it is placed on its own line of the file.
    source = PRINTING_NET.replace("return y + 1", 'print("z")\n            y = y + 1\n            print("w")\n            return y')
    path = write(tmp_path / "net.py", source)
    settings = ConfigResolver(cwd=tmp_path).for_path(path)
    fixed = fix_files([(path, settings)], unsafe=True)
    assert sorted(fixed.applied[str(path)]) == [(8, "TL101"), (9, "TL101"), (11, "TL101")]
    assert path.read_text() == fixed.changed[str(path)][0]  # worked out, not written


def test_the_copy_holds_whole_packages_and_lone_modules_with_the_fixed_texts(tmp_path):
    targets = package_project(tmp_path / "project")
    lone = write(tmp_path / "scripts" / "tool.py", "x = 1\n")
    net = tmp_path / "project" / "pkg" / "net.py"
    assert import_root(net) == (tmp_path / "project", tmp_path / "project" / "pkg")
    copy = make_copy({str(net): "fixed = True\n"}, [targets, lone], tmp_path / "copy")
    assert copy.copy_of(net).read_text() == "fixed = True\n"
    assert (copy.copy_of(net).parent / "__init__.py").is_file()
    assert copy.copy_of(targets).read_text() == targets.read_text()
    assert copy.copy_of(lone).parent != copy.copy_of(targets).parent  # one copy root per import root
    assert copy.original_of(str(copy.copy_of(net))) == str(net)
    assert net.read_text() == textwrap.dedent(PRINTING_NET)


def test_the_copy_links_the_shared_libraries_a_repaired_wheel_keeps_beside_its_package(tmp_path):
    # auditwheel's `<name>.libs` folder, which extension modules find relative to their own folder
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "solver.py").write_text("print('x')\n")
    (site / "pkg.libs").mkdir()
    (site / "pkg.libs" / "libgomp.so.1").write_bytes(b"\x7fELF")
    copy = make_copy({str(site / "pkg" / "solver.py"): "pass\n"}, [], tmp_path / "copy")
    linked = copy.roots[site.resolve()] / "pkg.libs"
    assert linked.is_symlink() and linked.resolve() == (site / "pkg.libs").resolve()
    assert (linked / "libgomp.so.1").read_bytes() == b"\x7fELF"


def test_unsafe_fixes_without_fix_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["verify", "--unsafe-fixes", str(tmp_path)])
    assert result.exit_code == 2 and "--unsafe-fixes needs --fix" in result.output


# -- against Dynamo ---------------------------------------------------------------------


@pytest.mark.dynamo
def test_the_guard_fix_removes_the_break_in_the_copy_and_leaves_the_files_alone(verify_pool, tmp_path):
    package_project(tmp_path)
    originals = {path: path.read_bytes() for path in tmp_path.rglob("*.py")}
    result = verify_fix(verify_pool, "--unsafe-fixes", "net_targets.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith("· safe and unsafe fixes")
    # Removed in the run after: the package came from the copy, not from the folder the
    # run started in, which is first on a plain worker's path.
    assert lines[2:4] == [
        f"{'target':<52} {'before':>6} {'after':>5}  {'output':<12} fixes",
        f"{'net_targets.py::net':<52} {1:>6} {0:>5}  {'same':<12} TL101",
    ]
    assert "total: 1 target, 1 break before the fixes, 0 after: 1 removed (100%); 1 fix in 1 file; 0 outputs changed" in result.stdout
    assert {path: path.read_bytes() for path in tmp_path.rglob("*.py")} == originals


@pytest.mark.dynamo
def test_safe_fixes_only_leave_the_unsafe_ones_unapplied(verify_pool, tmp_path):
    package_project(tmp_path)
    result = verify_fix(verify_pool, "--output-format", "json", "net_targets.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["unsafe_fixes"] is False
    assert report["summary"]["fixes"] == 0 and report["summary"]["unsafe_fixes_not_applied"] == 1
    [target] = report["targets"]
    assert len(target["breaks_before"]) == len(target["breaks_after"]) == 1 and target["output"] == "same"


@pytest.mark.dynamo
def test_a_fix_that_changes_the_output_is_an_error(verify_pool, tmp_path):
    write(tmp_path / "model.py", PEAK)
    original = (tmp_path / "model.py").read_bytes()
    result = verify_fix(verify_pool, "--unsafe-fixes", "model.py", cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert f"{'model.py::peak':<52} {1:>6} {0:>5}  {'changed':<12} TL201" in result.stdout
    assert "error: outputs changed beyond tolerance (rtol=atol=1e-3) after the fixes:" in result.stdout
    assert "model.py::peak: the eager and compiled outputs differ from the eager output before the fixes" in result.stdout
    report = json.loads(verify_fix(verify_pool, "--unsafe-fixes", "--output-format", "json", "model.py", cwd=tmp_path).stdout)
    assert report["summary"]["output_changes"] == 1 and report["targets"][0]["output_error"] is True
    assert report["fixes"] == [{"file": str((tmp_path / "model.py").resolve()), "line": 8, "code": "TL201"}]
    assert (tmp_path / "model.py").read_bytes() == original


# The fix picks with torch.where, which evaluates both sides: `x[5]` raises where the branch
# never read it.
BOTH_SIDES = """\
    import torch
    from torch import nn


    class Pick(nn.Module):
        def forward(self, x):
            y = x[0] if x.sum() > 0 else x[5]
            return y * 2


    def torchlint_targets():
        return {"pick": (Pick(), (torch.arange(3.0),))}
"""


@pytest.mark.dynamo
def test_a_target_that_fails_after_the_fixes_keeps_its_breaks(verify_pool, tmp_path):
    write(tmp_path / "model.py", BOTH_SIDES)
    result = verify_fix(verify_pool, "--unsafe-fixes", "model.py", cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "1 break before the fixes, 1 after: 0 removed (0%)" in result.stdout
    assert "model.py::pick fails after the fixes: IndexError" in result.stdout


# A print the fix guards, and an output that no run reproduces: an object equal only to itself
# (its class importable, so the saved output loads again).
OWN_RESULT = """\
    import torch
    from torch import nn

    from results import Result


    class Net(nn.Module):
        def forward(self, x):
            print("x", x.shape)
            return Result(x * 2)


    def torchlint_targets():
        return {"net": (Net(), (torch.ones(3),))}
"""


@pytest.mark.dynamo
def test_an_output_the_unfixed_code_does_not_reproduce_is_not_compared(verify_pool, tmp_path):
    write(tmp_path / "results.py", "class Result:\n    def __init__(self, value):\n        self.value = value\n")
    write(tmp_path / "model.py", OWN_RESULT)
    result = verify_fix(verify_pool, "--unsafe-fixes", "model.py", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert f"{'model.py::net':<52} {1:>6} {0:>5}  {'not compared':<12} TL101" in result.stdout
    assert "does not give its first output" in result.stdout


@pytest.mark.dynamo
def test_the_output_kept_between_the_runs_is_read_back_as_plain_data_only(tmp_path: Path) -> None:
    """The file that holds the output before the fixes is read with `weights_only`: one
    replaced by a pickle that runs a command is refused, and the command never runs."""
    import torch

    from torchlint.verify.worker import _against_original, _save_output

    kept = tmp_path / "output.pt"
    assert _save_output({"logits": torch.ones(2), "steps": 3}, str(kept)) is None
    same, other = {"logits": torch.ones(2), "steps": 3}, {"logits": torch.zeros(2), "steps": 3}
    assert _against_original(str(kept), same, other) == {"eager": True, "compiled": False}
    marker = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    torch.save(Payload(), kept)
    refused = _against_original(str(kept), same, same)
    assert "cannot load the output saved before the fixes" in refused["error"] and not marker.exists()


@pytest.mark.dynamo
def test_progress_names_the_users_files_not_their_copies(verify_pool, tmp_path: Path) -> None:
    from torchlint.verify.fix_run import verify_fix as fix_and_verify
    from torchlint.verify.run import VerifyOptions

    targets = package_project(tmp_path / "project")
    seen: list[str] = []
    report = fix_and_verify([str(targets)], ConfigResolver(cwd=tmp_path), VerifyOptions(), True,
                            lambda done, total, key: seen.append(key), verify_pool)
    assert report.targets and len(seen) == 2 * len(report.targets)  # before the fixes and after
    assert all(key.rpartition("::")[0] == str(targets) for key in seen), seen


@pytest.mark.dynamo
def test_breaks_before_the_fixes_count_each_site_once_as_plain_verify_does(verify_pool, tmp_path: Path) -> None:
    """Two targets that meet the same print: two rows of one break, one break in all, in both
    reports."""
    write(tmp_path / "net.py", PRINTING_NET)
    write(tmp_path / "net_targets.py", """\
        import torch
        from net import Net


        def torchlint_targets():
            return {"small": (Net(), (torch.ones(2),)), "large": (Net(), (torch.ones(8),))}
        """)
    fixed = verify_fix(verify_pool, "--unsafe-fixes", "net_targets.py", cwd=tmp_path)
    assert "total: 2 targets, 1 break before the fixes, 0 after" in fixed.stdout, fixed.stdout
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        plain = CliRunner().invoke(cli, ["verify", "-q", "net_targets.py"], obj={"verify_pool": verify_pool})
    finally:
        os.chdir(before)
    assert "overall: 1 break, " in plain.stdout, plain.stdout
