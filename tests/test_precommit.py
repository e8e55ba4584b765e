"""The pre-commit hook end to end: pre-commit installs torchlint from this repository
into its own environment and runs the hook from .pre-commit-hooks.yaml on a staged file.

`pre-commit try-repo` is pointed at a committed snapshot of this repository's working
tree rather than at the checkout itself: on the checkout it needs a HEAD commit and it
leaves out untracked files, so it would test an older torchlint, or nothing at all in a
repository without commits. The snapshot holds exactly what `git status` would show.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
HOOK_ID = "torchlint"
# Installing the hook environment builds torchlint and pip-installs its dependencies.
TIMEOUT_S = 600

pytestmark = [
    pytest.mark.hooks,
    pytest.mark.skipif(
        shutil.which("git") is None or importlib.util.find_spec("pre_commit") is None,
        reason="needs git and pre-commit",
    ),
]

MODEL_WITH_PRINT = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        print(x)
        return x
"""

MODEL_WITH_GUARDED_PRINT = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            print(x)
        return x
"""


def _environment(tmp_path: Path) -> dict[str, str]:
    # GIT_DIR and friends (set when the suite runs inside a git hook) would point the
    # git commands below at the wrong repository; SKIP could silence the hook.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "SKIP"}
    # Keeps pre-commit's database and log out of the user's cache. try-repo itself
    # installs the hook environment into a temporary store of its own on every run
    # (pre_commit/commands/try_repo.py), so the two runs below each install it.
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def _init_repository(path: Path, env: dict[str, str]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, env, "init", "--quiet")
    _git(path, env, "config", "user.name", "torchlint tests")
    _git(path, env, "config", "user.email", "tests@torchlint.invalid")
    _git(path, env, "config", "commit.gpgsign", "false")


def _working_tree_files(root: Path, env: dict[str, str]) -> list[Path]:
    """Tracked and untracked files that are not ignored, relative to ``root``, less any
    virtual environment made inside the checkout (a folder holding `pyvenv.cfg`): copying
    one, torch and all, into every snapshot would cost minutes."""
    listing = _git(root, env, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    relative = [Path(name) for name in listing.split("\0") if name]
    environments = {path.parent for path in relative if path.name == "pyvenv.cfg"}
    # Deleted but still tracked files are listed too.
    return [
        path for path in relative
        if (root / path).is_file() and not any(folder in environments for folder in path.parents)
    ]


def _snapshot(root: Path, destination: Path, env: dict[str, str]) -> Path:
    """A one-commit repository holding the working tree of ``root``."""
    inside_git = subprocess.run(
        ["git", "rev-parse", "--is-inside-work-tree"], cwd=root, env=env, capture_output=True, text=True
    )
    if inside_git.returncode == 0:
        destination.mkdir(parents=True)
        for relative in _working_tree_files(root, env):
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / relative, destination / relative)
    else:
        # An unpacked sdist: `git add -A` below still honours the copied .gitignore.
        shutil.copytree(root, destination, ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache"))
    _init_repository(destination, env)
    _git(destination, env, "add", "-A")
    _git(destination, env, "commit", "--quiet", "--no-verify", "-m", "snapshot")
    return destination


def _try_repo(
    hook_repo: Path, project: Path, file: str | None, env: dict[str, str], hook: str = HOOK_ID
) -> subprocess.CompletedProcess[str]:
    """The hook on ``file``, or on the staged files (what `git commit` runs) when None."""
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook]
    command += ["--files", file] if file is not None else []
    return subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def _output(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit code {done.returncode}\n--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"


def test_hook_fails_on_print_in_forward_and_passes_once_guarded(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    hook_repo = _snapshot(REPO_ROOT, tmp_path / "torchlint-snapshot", env)
    project = tmp_path / "project"
    _init_repository(project, env)
    model = project / "model.py"

    model.write_text(MODEL_WITH_PRINT, encoding="utf-8")
    _git(project, env, "add", "model.py")
    failing = _try_repo(hook_repo, project, "model.py", env)
    assert failing.returncode == 1, _output(failing)
    assert re.search(rf"^{HOOK_ID}\.+Failed$", failing.stdout, re.MULTILINE), _output(failing)
    # 1 is torchlint's "findings" exit; 2 would be an error such as a broken install.
    assert "- exit code: 1" in failing.stdout, _output(failing)
    assert re.search(r"^model\.py:6:9: TL101 ", failing.stdout, re.MULTILINE), _output(failing)

    model.write_text(MODEL_WITH_GUARDED_PRINT, encoding="utf-8")
    _git(project, env, "add", "model.py")
    passing = _try_repo(hook_repo, project, "model.py", env)
    assert passing.returncode == 0, _output(passing)
    assert re.search(rf"^{HOOK_ID}\.+Passed$", passing.stdout, re.MULTILINE), _output(passing)
    assert "TL101" not in passing.stdout, _output(passing)


MODEL_CALLING_HELPER = """\
import torch

from pkg.utils import helper


class Model(torch.nn.Module):
    def forward(self, x):
        return helper(x)
"""

HELPER = """\
def helper(x):
    return x * 2
"""


def test_hook_reports_a_break_in_a_helper_when_only_the_helper_is_staged(tmp_path: Path) -> None:
    """The compiled caller is in model.py, which the commit does not touch."""
    env = _environment(tmp_path)
    hook_repo = _snapshot(REPO_ROOT, tmp_path / "torchlint-snapshot", env)
    project = tmp_path / "project"
    _init_repository(project, env)
    (project / "pkg").mkdir()
    (project / "pkg/__init__.py").write_text("", encoding="utf-8")
    (project / "pkg/model.py").write_text(MODEL_CALLING_HELPER, encoding="utf-8")
    (project / "pkg/utils.py").write_text(HELPER, encoding="utf-8")
    _git(project, env, "add", "-A")
    _git(project, env, "commit", "--quiet", "--no-verify", "-m", "model and helper")

    (project / "pkg/utils.py").write_text(HELPER.replace("    return", "    print(x)\n    return"), encoding="utf-8")
    _git(project, env, "add", "pkg/utils.py")
    assert _git(project, env, "diff", "--cached", "--name-only").split() == ["pkg/utils.py"]
    failing = _try_repo(hook_repo, project, None, env)
    assert failing.returncode == 1, _output(failing)
    assert re.search(r"^pkg/utils\.py:2:5: TL101 ", failing.stdout, re.MULTILINE), _output(failing)
    assert "model.py" not in failing.stdout, _output(failing)


MODEL_WITH_GRAPH_BREAK = MODEL_WITH_PRINT.replace("print(x)", "torch._dynamo.graph_break()")
MODEL_WITHOUT_GRAPH_BREAK = MODEL_WITH_PRINT.replace("        print(x)\n", "")

FIX_HOOK_CASES = {
    # a safe fix, which the hook applies as it is configured by default
    "safe": ("", MODEL_WITH_GRAPH_BREAK, MODEL_WITHOUT_GRAPH_BREAK),
    # an unsafe fix, which the configuration lets it apply
    "unsafe": ("unsafe-fixes = true\n", MODEL_WITH_PRINT, MODEL_WITH_GUARDED_PRINT),
}


@pytest.mark.parametrize("case", list(FIX_HOOK_CASES))
def test_fix_hook_rewrites_the_staged_file_and_the_commit_then_passes(tmp_path: Path, case: str) -> None:
    setting, before, after = FIX_HOOK_CASES[case]
    env = _environment(tmp_path)
    hook_repo = _snapshot(REPO_ROOT, tmp_path / "torchlint-snapshot", env)
    project = tmp_path / "project"
    _init_repository(project, env)
    (project / "pyproject.toml").write_text("[tool.torchlint]\n" + setting, encoding="utf-8")
    model = project / "model.py"
    model.write_text(before, encoding="utf-8")
    _git(project, env, "add", "model.py", "pyproject.toml")

    fixing = _try_repo(hook_repo, project, None, env, hook="torchlint-fix")
    # pre-commit fails a hook that changed files, so that the fix is reviewed and staged.
    assert fixing.returncode == 1, _output(fixing)
    assert re.search(r"^torchlint \(fix\)\.+Failed$", fixing.stdout, re.MULTILINE), _output(fixing)
    assert "files were modified by this hook" in fixing.stdout, _output(fixing)
    assert model.read_text(encoding="utf-8") == after

    _git(project, env, "add", "model.py")
    passing = _try_repo(hook_repo, project, None, env, hook="torchlint-fix")
    assert passing.returncode == 0, _output(passing)
    assert re.search(r"^torchlint \(fix\)\.+Passed$", passing.stdout, re.MULTILINE), _output(passing)



def _documented_local_hook() -> str:
    """The `repo: local` configuration docs/pre-commit.md shows, word for word."""
    page = (REPO_ROOT / "docs" / "pre-commit.md").read_text()
    section = page.split("## With the torchlint you installed", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_documented_local_hook_runs_the_installed_torchlint(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    # `language: system` runs the `torchlint` on PATH: this interpreter's.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    project = tmp_path / "project"
    _init_repository(project, env)
    (project / ".pre-commit-config.yaml").write_text(_documented_local_hook())
    (project / "model.py").write_text(MODEL_WITH_PRINT)
    _git(project, env, "add", "-A")
    command = [sys.executable, "-m", "pre_commit", "run"]
    failing = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert failing.returncode == 1 and "model.py:6:9: TL101" in failing.stdout, _output(failing)
    (project / "model.py").write_text(MODEL_WITH_GUARDED_PRINT)
    _git(project, env, "add", "-A")
    passing = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert passing.returncode == 0, _output(passing)
