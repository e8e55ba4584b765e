"""The cache through the command: where it lives, that a warm run says what a cold one
says, that edits and settings are never answered from stale entries, and that a damaged or
foreign cache file is ignored, never trusted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from torchlint.run.cache import Cache, digest
from torchlint.settings.config import ConfigResolver
from torchlint.files.project_files import other_project_files
from torchlint.run.runner import check_files

from helpers import SharedLog, write

MODEL = """\
import torch
from pkg.utils import helper


class Net(torch.nn.Module):
    def forward(self, x):
        return helper(x)
"""

UTILS = """\
def helper(x):
    print(x)
    return x
"""


def torchlint(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "check", *args],
        cwd=cwd, capture_output=True, text=True, env={**environment, **(env or {})}, timeout=120,
    )


@pytest.fixture
def pkg(project: Path) -> Path:
    write(project, {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/utils.py": UTILS})
    return project


def _cache_files(folder: Path) -> list[Path]:
    """The entries (one file each) of every fingerprint folder."""
    return sorted(folder.glob("*/*.entry"))


def _written(folder: Path) -> dict[str, int]:
    """Each file of the cache folder, with when it was last written."""
    return {path.relative_to(folder).as_posix(): path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}


def test_the_cache_folder_tells_git_and_backups_to_leave_it_alone(pkg: Path) -> None:
    first = torchlint("pkg", cwd=pkg)
    assert first.returncode == 1 and "pkg/utils.py:2:5: TL101" in first.stdout
    folder = pkg / ".torchlint_cache"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    # One folder for this torchlint and environment, holding the project's entries and its record.
    assert len({path.parent for path in _cache_files(folder)}) == 1
    assert len(list(_cache_files(folder)[0].parent.glob("*.record"))) == 1
    subprocess.run(["git", "init", "-q"], cwd=pkg, check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=pkg, capture_output=True, text=True)
    assert ".torchlint_cache" not in status.stdout


def test_a_warm_run_reports_what_the_cold_run_did(pkg: Path) -> None:
    cold = torchlint("pkg", "--output-format", "json", cwd=pkg)
    written = _written(pkg / ".torchlint_cache")
    warm = torchlint("pkg", "--output-format", "json", cwd=pkg)
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1
    # Nothing new was worked out, so nothing was written.
    assert _written(pkg / ".torchlint_cache") == written


def test_a_warm_run_works_nothing_out_again(pkg: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    resolver = ConfigResolver()
    work = [(path, resolver.for_path(path)) for path in sorted((pkg / "pkg").glob("*.py"))]
    cold = Cache(pkg / "cache", "pkg")
    expected = check_files(work, cache=cold)
    cold.save()
    parsed = _parsing_counted(monkeypatch, tmp_path)
    warm = Cache(pkg / "cache", "pkg")
    assert check_files(work, cache=warm) == expected
    # The record of the last solve answers: no file is parsed, no entry even read.
    assert parsed.values() == [] and not warm.misses


def test_an_edit_is_never_answered_from_the_cache(pkg: Path) -> None:
    assert "utils.py:2:5: TL101" in torchlint("pkg", cwd=pkg).stdout
    (pkg / "pkg/utils.py").write_text(UTILS.replace("    print(x)\n", "    y = x\n    print(y)\n"))
    assert "utils.py:3:5: TL101" in torchlint("pkg", cwd=pkg).stdout
    # A change in one file that changes what another is told: the call goes away.
    (pkg / "pkg/model.py").write_text(MODEL.replace("return helper(x)", "return x"))
    assert torchlint("pkg", cwd=pkg).returncode == 0


def test_settings_are_part_of_the_key(pkg: Path) -> None:
    assert torchlint("pkg", cwd=pkg).returncode == 1
    write(pkg, {"pyproject.toml": '[tool.torchlint]\nselect = ["TL2"]\n'})
    assert torchlint("pkg", cwd=pkg).returncode == 0
    assert torchlint("pkg", "--select", "TL1", cwd=pkg).returncode == 1


def test_a_damaged_cache_file_is_ignored(pkg: Path) -> None:
    expected = torchlint("pkg", cwd=pkg).stdout
    folder = pkg / ".torchlint_cache"
    originals = {path: path.read_bytes() for path in folder.glob("*/*") if path.suffix in (".entry", ".record")}
    for damage in (lambda d: d[: len(d) // 2], lambda d: d[:-1] + bytes([d[-1] ^ 1]), lambda d: b"", lambda d: b"\0" * 64):
        for path, data in originals.items():
            path.write_bytes(damage(data))
        again = torchlint("pkg", cwd=pkg)
        assert again.stdout == expected and again.returncode == 1


def test_no_cache_reads_and_writes_nothing(pkg: Path) -> None:
    assert torchlint("pkg", "--no-cache", cwd=pkg).returncode == 1
    assert torchlint("pkg", cwd=pkg, env={"TORCHLINT_NO_CACHE": "1"}).returncode == 1
    assert not (pkg / ".torchlint_cache").exists()


def test_the_cache_can_live_elsewhere(pkg: Path, tmp_path: Path) -> None:
    torchlint("pkg", "--cache-dir", str(tmp_path / "by-option"), cwd=pkg)
    torchlint("pkg", cwd=pkg, env={"TORCHLINT_CACHE_DIR": str(tmp_path / "by-environment")})
    assert _cache_files(tmp_path / "by-option") and _cache_files(tmp_path / "by-environment")
    assert not (pkg / ".torchlint_cache").exists()


def test_a_cache_folder_that_cannot_be_written_costs_nothing_but_time(pkg: Path) -> None:
    (pkg / "blocked").write_text("a file where the folder would go")
    result = torchlint("pkg", "--cache-dir", str(pkg / "blocked" / "cache"), cwd=pkg)
    assert result.returncode == 1 and "utils.py:2:5: TL101" in result.stdout and result.stderr.startswith("Found 1")


def test_concurrent_runs_leave_a_cache_that_reads_back(pkg: Path) -> None:
    for index in range(30):
        write(pkg, {f"pkg/extra_{index}.py": f"import torch\n\ndef f{index}(x):\n    return x\n"})
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_")}
    runs = [
        subprocess.Popen([sys.executable, "-m", "torchlint", "check", "pkg", *extra], cwd=pkg, env=environment,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for extra in ([], ["--select", "TL1"], [], ["-j", "2"])
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 1 for run in runs), outputs
    assert all("utils.py:2:5: TL101" in out for out, _ in outputs)
    folder = pkg / ".torchlint_cache"
    assert [p for p in folder.rglob("*") if p.name.endswith(".tmp")] == []
    warm = torchlint("pkg", cwd=pkg)
    assert "utils.py:2:5: TL101" in warm.stdout


def test_digests_do_not_depend_on_set_order() -> None:
    assert digest(frozenset({"a", "b", "c"}), {"x": 1, "y": 2}) == digest(frozenset({"c", "b", "a"}), {"y": 2, "x": 1})
    assert digest(("a", "b")) != digest(("b", "a"))


OTHERS = {f"pkg/layer_{index}.py": f"import torch\n\n\nclass Layer{index}(torch.nn.Module):\n    def forward(self, x):\n        return x * {index}\n" for index in range(4)}


def _parsing_counted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> SharedLog:
    """The length of each text libcst parses from now on, in this process or its workers."""
    import torchlint.parse.parsing

    parsed = SharedLog(tmp_path / "parsed.log")
    real = torchlint.parse.parsing.cst.parse_module

    def counted(text: str):
        parsed.append(len(text))
        return real(text)

    monkeypatch.setattr(torchlint.parse.parsing.cst, "parse_module", counted)
    return parsed


def _check_named(pkg: Path, named: str, cache: Cache) -> list:
    return [(row, code) for _, row, code in _named_run(pkg, named, cache)]


def test_one_edited_file_is_the_only_file_parsed_again(pkg: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write(pkg, OTHERS)
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == [(2, "TL101")]
    edited = UTILS.replace("    return x\n", "    print(x.shape)\n    return x\n")
    (pkg / "pkg/utils.py").write_text(edited)
    parsed = _parsing_counted(monkeypatch, tmp_path)
    warm = Cache(pkg / "cache", "pkg")
    assert _check_named(pkg, "utils.py", warm) == [(2, "TL101"), (3, "TL101")]
    # Parsed once: every other file's analysis comes from the cache, and the project is
    # solved from them.
    assert parsed.values() == [len(edited)]
    assert _check_named(pkg, "utils.py", Cache(None)) == [(2, "TL101"), (3, "TL101")]


def test_a_cold_run_parses_once_a_file_whose_own_view_compiles_what_the_project_does(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Net is a module through Pre and PreTrained in another file: the project knows it, and
    model.py alone takes it for one (a forward, and a base that derives from what the file
    cannot see). The lint of its own view stands; nothing is parsed twice."""
    texts = {
        "pkg/__init__.py": "",
        "pkg/base.py": "from torch import nn\n\n\nclass PreTrained(nn.Module):\n    pass\n",
        "pkg/model.py": (
            "from pkg.base import PreTrained\n\n\nclass Pre(PreTrained):\n    pass\n\n\n"
            "class Net(Pre):\n    def forward(self, x):\n        print(x)\n        return x\n"
        ),
        # Parsed after model.py: a parse of model.py kept for its next step would not count.
        "pkg/zoo.py": "import torch\n\n\ndef zoo(x):\n    return torch.relu(x)\n",
    }
    write(project, texts)
    parsed = _parsing_counted(monkeypatch, tmp_path)
    resolver = ConfigResolver()
    files = sorted((project / "pkg").glob("*.py"))
    found = check_files([(path, resolver.for_path(path)) for path in files], jobs=1)
    assert [(Path(r.path).name, d.location.row, d.code) for r in found for d in r.diagnostics] == [("model.py", 10, "TL101")]
    assert sorted(parsed.values()) == sorted(len(texts[name]) for name in ("pkg/base.py", "pkg/model.py", "pkg/zoo.py"))


def test_an_edited_file_that_passes_tensors_to_another_is_replayed(pkg: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """helper is compiled through model.py, and Block.forward, compiled on its own, hands a
    tensor to layer_0.py: what its calls pass is part of utils.py's outline, so an edit that
    keeps it needs no new solve, and the file is parsed once."""
    utils = (
        "import torch\nfrom pkg.layer_0 import check\n\n\nclass Block(torch.nn.Module):\n"
        "    def forward(self, x):\n        return check(torch.ones(1) * x)\n\n\n"
        "def helper(x):\n    print(x)\n    return x\n"
    )
    write(pkg, {**OTHERS, "pkg/layer_0.py": "def check(v):\n    return v\n", "pkg/utils.py": utils})
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == [(11, "TL101")]
    edited = utils.replace("def helper", "# a comment\ndef helper")
    (pkg / "pkg/utils.py").write_text(edited)
    parsed = _parsing_counted(monkeypatch, tmp_path)
    warm = Cache(pkg / "cache", "pkg")
    assert _check_named(pkg, "utils.py", warm) == [(12, "TL101")]
    assert parsed.values() == [len(edited)]


def test_an_edit_elsewhere_in_the_project_reaches_the_named_file(pkg: Path) -> None:
    write(pkg, OTHERS)
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == [(2, "TL101")]
    (pkg / "pkg/model.py").write_text(MODEL.replace("return helper(x)", "return x"))
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == []
    (pkg / "pkg/model.py").write_text(MODEL)
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == [(2, "TL101")]


def test_an_edit_that_changes_what_a_file_tells_the_project_runs_the_project(pkg: Path) -> None:
    """utils.py now hands the tensor to a helper of layer_0.py: its outline changed, so the
    project is solved again, and the new callee's branch is a finding of layer_0.py."""
    write(pkg, {**OTHERS, "pkg/layer_0.py": "def check(v):\n    if v:\n        return 1\n    return 0\n"})
    cache_folder = pkg / "cache"
    assert _check_named(pkg, "layer_0.py", Cache(cache_folder, "pkg")) == []
    (pkg / "pkg/utils.py").write_text("import torch\nfrom pkg.layer_0 import check\n\n\ndef helper(x):\n    check(torch.ones(1))\n    return x\n")
    assert _check_named(pkg, "utils.py", Cache(cache_folder, "pkg")) == []
    assert _check_named(pkg, "layer_0.py", Cache(cache_folder, "pkg")) == [(2, "TL201")]
    assert _check_named(pkg, "layer_0.py", Cache(None)) == [(2, "TL201")]


def test_the_record_follows_the_project_after_a_run_that_changed_it(pkg: Path) -> None:
    write(pkg, OTHERS)
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == [(2, "TL101")]
    (pkg / "pkg/model.py").write_text(MODEL.replace("return helper(x)", "return x"))
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == []
    (pkg / "pkg/utils.py").write_text(UTILS.replace("    return x\n", "    print(x.shape)\n    return x\n"))
    warm = Cache(pkg / "cache", "pkg")
    assert _check_named(pkg, "utils.py", warm) == []


def test_a_warm_run_over_the_whole_project_writes_nothing(pkg: Path) -> None:
    write(pkg, OTHERS)
    _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg"))
    written = _written(pkg / "cache")
    assert _check_named(pkg, "utils.py", Cache(pkg / "cache", "pkg")) == [(2, "TL101")]
    assert _written(pkg / "cache") == written


def _age(root: Path) -> None:
    """Every file and folder under ``root`` as if written a while ago: times the record
    can vouch for (a time of the last two seconds is looked at again, never trusted)."""
    past = time.time() - 100
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)


def test_the_project_is_found_without_a_walk_while_its_folders_are_unchanged(pkg: Path) -> None:
    write(pkg, {"pkg/sub/__init__.py": "", "pkg/sub/extra.py": ""})
    _age(pkg)
    resolver = ConfigResolver()
    named = [pkg / "pkg/utils.py"]
    others, listing = other_project_files(named, named, resolver)
    assert listing is not None and pkg / "pkg/sub/extra.py" in others
    # What the listing says is taken as it is, not found again.
    known = replace(listing, files=(*listing.files, str(pkg / "pkg/kept.py")))
    assert other_project_files(named, named, resolver, known)[0] == [*others, pkg / "pkg/kept.py"]
    # A file saved by a rename changes its folder's time, not what a walk finds there.
    (pkg / "pkg/sub/extra.py.tmp").write_text("x = 1\n")
    (pkg / "pkg/sub/extra.py.tmp").replace(pkg / "pkg/sub/extra.py")
    assert other_project_files(named, named, resolver, known)[0] == [*others, pkg / "pkg/kept.py"]
    (pkg / "pkg/sub/new.py").write_text("")
    assert other_project_files(named, named, resolver, known)[0] == sorted([*others, pkg / "pkg/sub/new.py"])


def test_a_new_or_deleted_file_is_noticed_by_a_run_on_another_file(pkg: Path) -> None:
    (pkg / "pkg/model.py").write_text(MODEL.replace("return helper(x)", "return x"))
    write(pkg, {"pkg/sub/__init__.py": ""})
    _age(pkg)
    assert torchlint("pkg/utils.py", cwd=pkg).returncode == 0
    assert torchlint("pkg/utils.py", cwd=pkg).returncode == 0
    (pkg / "pkg/sub/net.py").write_text(MODEL)
    found = torchlint("pkg/utils.py", cwd=pkg)
    assert found.returncode == 1 and "pkg/utils.py:2:5: TL101" in found.stdout
    (pkg / "pkg/sub/net.py").unlink()
    assert torchlint("pkg/utils.py", cwd=pkg).returncode == 0


def test_an_edited_config_or_gitignore_is_noticed_by_a_run_on_another_file(pkg: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=pkg, check=True)
    write(pkg, {".gitignore": "", "pyproject.toml": "[tool.torchlint]\nextend-exclude = []\n"})
    _age(pkg)
    assert "pkg/utils.py:2:5: TL101" in torchlint("pkg/utils.py", cwd=pkg).stdout
    assert "pkg/utils.py:2:5: TL101" in torchlint("pkg/utils.py", cwd=pkg).stdout
    # Edited in place: the folder's time stays as it was.
    (pkg / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["pkg/model.py"]\n')
    assert torchlint("pkg/utils.py", cwd=pkg).returncode == 0
    (pkg / "pyproject.toml").write_text("[tool.torchlint]\nextend-exclude = []\n")
    assert "pkg/utils.py:2:5: TL101" in torchlint("pkg/utils.py", cwd=pkg).stdout
    (pkg / ".gitignore").write_text("pkg/model.py\n")
    assert torchlint("pkg/utils.py", cwd=pkg).returncode == 0


ITEM_MODEL = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x * x.sum().item()
"""


def _named_run(pkg: Path, named: str, cache: Cache) -> list:
    resolver = ConfigResolver()
    files = sorted((pkg / "pkg").glob("*.py"))
    work = [(path, resolver.for_path(path)) for path in files if path.name == named]
    context = [(path, resolver.for_path(path)) for path in files if path.name != named]
    found = check_files(work, context=context, cache=cache)
    cache.save()
    return [(Path(result.path).name, d.location.row, d.code) for result in found for d in result.diagnostics]


def test_an_edit_that_changes_the_dynamo_config_solves_the_project_again(pkg: Path) -> None:
    """settings.py's comment edit is answered from the last solve; its new
    `torch._dynamo.config` line changes how every file compiles, so the project is solved again."""
    write(pkg, {"pkg/net.py": ITEM_MODEL, "pkg/settings.py": "import torch\n"})
    cache = pkg / "cache"
    assert _named_run(pkg, "net.py", Cache(cache, "pkg")) == [("net.py", 6, "TL301")]
    (pkg / "pkg/settings.py").write_text("import torch\n# scalars\n")
    assert _named_run(pkg, "net.py", Cache(cache, "pkg")) == [("net.py", 6, "TL301")]
    (pkg / "pkg/settings.py").write_text("import torch\n\ntorch._dynamo.config.capture_scalar_outputs = True\n")
    assert _named_run(pkg, "net.py", Cache(cache, "pkg")) == _named_run(pkg, "net.py", Cache(None)) == []


def test_a_file_added_to_the_project_solves_it_again(pkg: Path) -> None:
    cache = pkg / "cache"
    assert _named_run(pkg, "utils.py", Cache(cache, "pkg")) == [("utils.py", 2, "TL101")]
    # A second caller, in a new file, compiles nothing new; a new module calling the helper does.
    write(pkg, {"pkg/other.py": "from pkg.utils import helper\n\n\ndef eager(x):\n    return helper(x)\n"})
    assert _named_run(pkg, "utils.py", Cache(cache, "pkg")) == [("utils.py", 2, "TL101")]
    (pkg / "pkg/model.py").unlink()
    assert _named_run(pkg, "utils.py", Cache(cache, "pkg")) == _named_run(pkg, "utils.py", Cache(None)) == []


def test_a_solve_whose_answers_left_the_cache_is_solved_again(pkg: Path) -> None:
    cache = pkg / "cache"
    assert _named_run(pkg, "utils.py", Cache(cache, "pkg")) == [("utils.py", 2, "TL101")]
    for entry in _cache_files(cache):
        entry.unlink()
    (pkg / "pkg/utils.py").write_text(UTILS + "# a comment\n")
    assert _named_run(pkg, "utils.py", Cache(cache, "pkg")) == [("utils.py", 2, "TL101")]


def test_a_comment_edit_reports_what_a_run_without_the_cache_does(pkg: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write(pkg, OTHERS)
    cache = pkg / "cache"
    _named_run(pkg, "utils.py", Cache(cache, "pkg"))
    edited = "# moved down a line\n" + UTILS
    (pkg / "pkg/utils.py").write_text(edited)
    parsed = _parsing_counted(monkeypatch, tmp_path)
    warm = Cache(cache, "pkg")
    assert _named_run(pkg, "utils.py", warm) == [("utils.py", 3, "TL101")]
    assert parsed.values() == [len(edited)]
    # Answered from the last solve: the one entry read is what the project answered utils.py.
    assert (warm.hits, warm.misses) == (1, 1)
    assert _named_run(pkg, "utils.py", Cache(None)) == [("utils.py", 3, "TL101")]


def test_the_cache_is_a_function_of_the_files_alone(tmp_path: Path) -> None:
    """Two cold runs over the same files, in processes whose sets iterate in other orders and
    at other times, leave the same files with the same bytes: nothing of the process, the
    clock or the order of a set is in them."""
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    written = []
    for seed in ("1", "2"):
        project = tmp_path / "project"
        shutil.copytree(fixtures, project, dirs_exist_ok=True)
        cache = tmp_path / f"cache-{seed}"
        torchlint(".", "--cache-dir", str(cache), cwd=project, env={"PYTHONHASHSEED": seed})
        written.append({path.relative_to(cache): path.read_bytes() for path in cache.rglob("*") if path.is_file()})
    assert len(written[0]) > 20 and written[0] == written[1]
