"""`torchlint verify` on target files inside packages: a src layout's `src/pkg/model.py`
is imported as `pkg.model` from `src`, so its relative imports work, its breaks map to the
real files, and two projects' packages of one name stay apart in a worker that runs both.

The runs go through the command in this process on warm workers shared by the module, as
tests/test_verify.py does; the tests of where a file imports from run no torch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import dynamo_workers
from torchlint.cli import cli
from torchlint.verify.module_import import ModuleLocation, locate
from torchlint.verify.pool import WorkerPool

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


# -- where a file is imported from ------------------------------------------------------


def test_a_src_layout_module_is_imported_from_src_under_its_dotted_name(tmp_path):
    write(tmp_path / "src" / "pkg" / "__init__.py", "")
    write(tmp_path / "src" / "pkg" / "nn" / "__init__.py", "")
    model = write(tmp_path / "src" / "pkg" / "nn" / "model.py", "")
    assert locate(model) == ModuleLocation(tmp_path / "src", "pkg.nn.model")
    assert locate(tmp_path / "src" / "pkg" / "__init__.py") == ModuleLocation(tmp_path / "src", "pkg")


def test_a_file_outside_any_package_is_imported_from_its_folder(tmp_path):
    model = write(tmp_path / "models" / "model.py", "")
    assert locate(model) == ModuleLocation(tmp_path / "models", None)
    # A name with a dot cannot be imported by its dotted name, in a package or not.
    write(tmp_path / "pkg" / "__init__.py", "")
    dotted = write(tmp_path / "pkg" / "model.v2.py", "")
    assert locate(dotted) == ModuleLocation(tmp_path / "pkg", None)


# -- against Dynamo ----------------------------------------------------------------------

LAYERS = """\
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x):
            print("{name} block")
            return self.linear(x)


    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls
"""
BLOCK_PRINT = 11
COUNTER_LINE = 21

MODEL = """\
    import torch
    from torch import nn

    import pkg.layers
    from .layers import Block, Counter


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            print("net")
            return self.block(x) * 2


    def counted():
        model = Counter()
        for _ in range(10):
            yield model, (torch.ones(2),)


    def torchlint_targets():
        # The package's own absolute import gives the very module the relative one does.
        assert pkg.layers.Block is Block
        return {"net": (Net(), (torch.ones(2, 4),)), "counted": counted()}
"""
NET_PRINT = 14


def src_project(root: Path, name: str = "pkg") -> tuple[Path, Path]:
    """A src layout: `src/pkg/{__init__,layers,model}.py`; (model.py, layers.py), resolved."""
    package = root / "src" / "pkg"
    write(package / "__init__.py", '"""The package."""\n')
    layers = write(package / "layers.py", LAYERS.replace("{name}", name))
    model = write(package / "model.py", MODEL)
    return model.resolve(), layers.resolve()


@pytest.fixture(scope="module")
def verify_pool():
    with WorkerPool(dynamo_workers(), env=ENV) as pool:
        yield pool


def verify(pool: WorkerPool, *arguments: str, cwd: Path):
    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["verify", "-q", *arguments], obj={"verify_pool": pool})
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def verify_json(pool: WorkerPool, *arguments: str, cwd: Path, expect_exit: int = 0) -> dict:
    result = verify(pool, "--output-format", "json", *arguments, cwd=cwd)
    assert result.exit_code == expect_exit, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout)


def breaks_of(report: dict, target: str) -> dict[tuple[str, int], list[str]]:
    """(file, line) -> the codes that matched it, for the breaks of one target (`::name`)."""
    [found] = [t for t in report["targets"] if t["id"].endswith(f"::{target}")]
    assert found["status"] == "ok", found.get("error")
    return {(brk["file"], brk["line"]): brk["matched_by"] for brk in found["breaks"]}


@needs_torch
@pytest.mark.dynamo
def test_a_src_layout_module_with_relative_imports_is_verified(verify_pool, tmp_path):
    model, layers = src_project(tmp_path)
    report = verify_json(verify_pool, "src/pkg/model.py", cwd=tmp_path)
    # Each break maps to the real file it is in, and the finding there matches it.
    assert breaks_of(report, "net") == {(str(model), NET_PRINT): ["TL101"], (str(layers), BLOCK_PRINT): ["TL101"]}
    summary = report["summary"]
    assert (summary["errors"], summary["matched"], summary["misses"], summary["false_positives"]) == (0, 2, 0, 0)

    one = verify(verify_pool, "src/pkg/model.py::net", cwd=tmp_path)
    assert one.exit_code == 0, one.stdout
    assert "src/pkg/model.py::net" in one.stdout and "::counted" not in one.stdout
    assert "precision 1.00, recall 1.00" in one.stdout


@needs_torch
@pytest.mark.dynamo
def test_recompiles_of_a_src_layout_module(verify_pool, tmp_path):
    model, layers = src_project(tmp_path)
    report = verify_json(verify_pool, "--recompiles", "src/pkg/model.py::counted", cwd=tmp_path)
    [target] = report["targets"]
    assert target["status"] == "ok", target.get("error")
    assert target["calls"] == 10 and target["outputs_match"] is True
    [event] = target["events"]
    assert (event["file"], event["line"], event["matched_by"]) == (str(layers), COUNTER_LINE, ["TL701"])
    assert report["summary"]["misses"] == 0 and report["summary"]["false_positives"] == 0

    whole = verify(verify_pool, "--recompiles", "src/pkg/model.py", cwd=tmp_path)
    assert whole.exit_code == 0, whole.stdout
    assert "src/pkg/model.py::counted" in whole.stdout and "[matched by TL701]" in whole.stdout


@needs_torch
@pytest.mark.dynamo
def test_two_projects_packages_of_one_name_stay_apart_in_one_worker(verify_pool, tmp_path):
    first, first_layers = src_project(tmp_path / "first", name="first")
    second, second_layers = src_project(tmp_path / "second", name="second")
    run = {"name": "net", "device": "cpu", "backend": "eager", "profile": {}}
    with verify_pool.worker() as worker:
        responses = [
            worker.request({**run, "op": "run", "path": str(path)}, 300)
            for path in (first, second, first)
        ] + [
            worker.request({**run, "op": "recompiles", "name": "counted", "path": str(path)}, 300)
            for path in (second, first)
        ]
    for response in responses:
        assert response["status"] == "ok", response.get("error")
    blamed = [{(brk["file"], brk["line"]) for brk in response["breaks"]} for response in responses[:3]]
    assert blamed[0] == blamed[2] == {(str(first), NET_PRINT), (str(first_layers), BLOCK_PRINT)}
    assert blamed[1] == {(str(second), NET_PRINT), (str(second_layers), BLOCK_PRINT)}
    frames = [{frame["file"] for frame in response["frames"] if frame.get("user")} for response in responses[3:]]
    assert frames == [{str(second_layers)}, {str(first_layers)}]

    # Both in one run of the command, as `torchlint verify first/ second/` gives them.
    report = verify_json(verify_pool, "first/src/pkg/model.py::net", "second/src/pkg/model.py::net", cwd=tmp_path)
    assert report["summary"]["matched"] == 4 and report["summary"]["misses"] == 0


@needs_torch
@pytest.mark.dynamo
def test_files_outside_packages_still_import_their_own_siblings(verify_pool, tmp_path):
    # Two folders, each a `model.py` beside a `layers.py` of its own, run in one worker.
    models = {}
    for name in ("first", "second"):
        write(tmp_path / name / "layers.py", LAYERS.replace("{name}", name))
        models[name] = write(tmp_path / name / "model.py", MODEL.replace("import pkg.layers\n", "import layers as own\n")
                             .replace("from .layers", "from layers").replace("pkg.layers.Block", "own.Block")).resolve()
    run = {"op": "run", "name": "net", "device": "cpu", "backend": "eager", "profile": {}}
    with verify_pool.worker() as worker:
        responses = [worker.request({**run, "path": str(models[name])}, 300) for name in ("first", "second", "first")]
    for response in responses:
        assert response["status"] == "ok", response.get("error")
    files = [{brk["file"] for brk in response["breaks"]} for response in responses]
    assert files[0] == files[2] == {str(models["first"]), str(tmp_path.resolve() / "first" / "layers.py")}
    assert files[1] == {str(models["second"]), str(tmp_path.resolve() / "second" / "layers.py")}

    report = verify_json(verify_pool, "first/model.py", cwd=tmp_path)
    assert breaks_of(report, "net") == {
        (str(models["first"]), NET_PRINT): ["TL101"],
        (str(tmp_path.resolve() / "first" / "layers.py"), BLOCK_PRINT): ["TL101"],
    }


@needs_torch
@pytest.mark.dynamo
def test_an_import_error_in_a_package_module_names_the_file_and_the_error(verify_pool, tmp_path):
    model, _ = src_project(tmp_path)
    model.write_text(model.read_text().replace("from .layers import", "from .missing import"))
    completed = verify(verify_pool, "src/pkg/model.py", cwd=tmp_path)
    assert completed.exit_code == 2
    assert f"cannot import {model} as pkg.model" in completed.stdout
    assert f"ModuleNotFoundError: No module named 'pkg.missing' (at {model}:5)" in completed.stdout
    recompiles = verify(verify_pool, "--recompiles", "src/pkg/model.py::counted", cwd=tmp_path)
    assert recompiles.exit_code == 2
    assert f"cannot import {model} as pkg.model" in recompiles.stdout
