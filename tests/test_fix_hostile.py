"""`--fix` when the file is not what it was, or not the user's to rewrite: saved again
between the check and the write, fixed by two runs at once, owned by someone else, linked
twice, read-only, or in a folder that takes no new file."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import torchlint.fix.fixing
from helpers import run_in_process, without_root_privileges, write

MODEL = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        print("shape", x.shape)
        x = x.clamp(min=0)
        return x
"""

# The user's save while the run was working: one line more at the top shifts every row.
SAVED_MEANWHILE = '"""Saved meanwhile."""\n' + MODEL

FIXED_PRINT = 'if not torch.compiler.is_compiling():\n            print("shape", x.shape)'
COMMAND = [sys.executable, "-m", "torchlint"]
# What a summary says when it counts a finding fixed.
NOTHING_FIXED = re.compile(r"Fixed [1-9]|\b[1-9][0-9]* fixed")


def fix(*args: str, cwd: Path):
    return run_in_process("check", "--no-cache", "--fix", "--unsafe-fixes", *args, cwd=cwd)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    write(tmp_path, {"model.py": MODEL})
    return tmp_path / "model.py"


def _save_after_the_check(monkeypatch: pytest.MonkeyPatch, path: Path, text: str, when: str) -> None:
    """The user saves ``path`` once, right after the check (``when="checked"``) or right
    before the write (``when="written"``)."""
    if when == "checked":
        original = torchlint.fix.fixing.one_pass

        def save_then_fix(*args, **kwargs):
            if path.read_text() != text:
                path.write_text(text)
            return original(*args, **kwargs)

        monkeypatch.setattr(torchlint.fix.fixing, "one_pass", save_then_fix)
    else:
        original_write = torchlint.fix.fixing.write_source

        def save_then_write(target, data, expected):
            path.write_text(text)
            return original_write(target, data, expected)

        monkeypatch.setattr(torchlint.fix.fixing, "write_source", save_then_write)


@pytest.mark.parametrize("when", ["checked", "written"])
def test_a_file_saved_during_the_run_keeps_the_users_text(
    model: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    _save_after_the_check(monkeypatch, model, SAVED_MEANWHILE, when)
    result = fix("model.py", cwd=model.parent)
    assert model.read_text() == SAVED_MEANWHILE
    assert result.returncode == 2, result.stderr
    assert any(
        line.startswith("error: model.py: changed ") and "not fixed" in line or "fixes not written" in line
        for line in result.stderr.splitlines()
    ), result.stderr
    assert not NOTHING_FIXED.search(result.stderr), result.stderr


def test_a_file_saved_during_a_check_is_reported_and_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes a step read are not those the run hashed: nothing found is reported or kept."""
    import torchlint.run.memo

    write(tmp_path, {"model.py": MODEL})
    model = tmp_path / "model.py"
    original = torchlint.run.memo.file_content

    def hashed_then_saved(path, known, known_started):
        hashed = original(path, known, known_started)
        if Path(path).name == "model.py" and "Saved" not in model.read_text():
            model.write_text(SAVED_MEANWHILE)  # saved after the run hashed it, before a step read it
        return hashed

    monkeypatch.setattr(torchlint.run.memo, "file_content", hashed_then_saved)
    first = run_in_process("check", "model.py", cwd=tmp_path)
    monkeypatch.undo()
    assert first.returncode == 2 and "changed while it was being checked" in first.stderr, first.stderr
    again = run_in_process("check", "model.py", cwd=tmp_path)
    fresh = run_in_process("check", "--no-cache", "model.py", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (fresh.returncode, fresh.stdout) == (1, fresh.stdout)


def test_two_fixing_runs_at_once_leave_one_fixed_file_and_a_true_cache(tmp_path: Path) -> None:
    """Two real processes fix the same file, the second started a little later each time,
    so that its check reads the file before the first one's write and its fixes come after
    it: neither applies its edits to the other's text, and the cache stays true."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    # A project large enough that a run's check and its fixes lie a fraction of a second apart.
    for i in range(300):
        (tmp_path / f"helper_{i}.py").write_text(f"import torch\n\n\ndef helper_{i}(x):\n    return torch.relu(x) * {i}\n")
    body = MODEL.split("\n\n\n", 1)[1]
    many = MODEL + "".join(body.replace("class Net", f"class Net{i}") for i in range(150))
    for trial in range(6):
        (tmp_path / "model.py").write_text(many)
        shutil.rmtree(tmp_path / ".torchlint_cache", ignore_errors=True)
        runs = []
        for delay in (0, trial * 0.15):
            time.sleep(delay)
            runs.append(subprocess.Popen([*COMMAND, "check", "--fix", "--unsafe-fixes", "model.py"], cwd=tmp_path,
                                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for run in runs:
            code, stderr = run.wait(timeout=120), run.stderr.read()
            assert "internal error" not in stderr and "would not parse" not in stderr, (trial, stderr)
            assert code in (0, 2), (trial, stderr)
        text = (tmp_path / "model.py").read_text()
        assert text.count("is_compiling()") == 151, (trial, text)
        cached = subprocess.run([*COMMAND, "check", "model.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
        fresh = subprocess.run([*COMMAND, "check", "--no-cache", "model.py"], cwd=tmp_path, env=env,
                               capture_output=True, text=True)
        assert (cached.returncode, cached.stdout) == (fresh.returncode, fresh.stdout) == (0, ""), trial


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_fixed_file_keeps_its_owner_and_group(model: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    os.chown(model, nobody.pw_uid, nobody.pw_gid)
    model.chmod(0o640)
    assert fix("model.py", cwd=model.parent).returncode == 0
    status = model.stat()
    assert FIXED_PRINT in model.read_text()
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (nobody.pw_uid, nobody.pw_gid, 0o640)


def test_a_file_with_two_names_is_fixed_under_both(model: Path) -> None:
    other = model.parent / "other_name.py"
    os.link(model, other)
    assert fix("model.py", cwd=model.parent).returncode == 0
    assert FIXED_PRINT in model.read_text()
    assert other.read_text() == model.read_text()
    assert model.stat().st_ino == other.stat().st_ino and model.stat().st_nlink == 2


def test_a_read_only_file_is_left_alone_and_not_counted(model: Path) -> None:
    model.chmod(0o444)
    result = fix("model.py", cwd=model.parent)
    assert model.read_text() == MODEL
    assert result.returncode == 2
    assert "error: model.py: read-only; fixes not written" in result.stderr.splitlines()
    assert not NOTHING_FIXED.search(result.stderr), result.stderr
    # What is left to report is the file as it is.
    assert "model.py:6:9: TL101" in result.stdout


def test_a_file_in_a_folder_that_takes_no_new_file_is_fixed_in_place(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    write(folder, {"model.py": MODEL})
    folder.chmod(0o555)
    try:
        result = subprocess.run(
            [*without_root_privileges(), *COMMAND, "check", "--no-cache", "--fix", "--unsafe-fixes", "model.py"],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert FIXED_PRINT in (folder / "model.py").read_text()
        assert sorted(os.listdir(folder)) == ["model.py"]
    finally:
        folder.chmod(0o755)


def test_a_failed_write_is_not_counted_as_fixed(tmp_path: Path) -> None:
    """Neither the file nor its folder may be written: the summary counts nothing fixed."""
    folder = tmp_path / "locked"
    write(folder, {"model.py": MODEL})
    (folder / "model.py").chmod(0o444)
    folder.chmod(0o555)
    try:
        result = subprocess.run(
            [*without_root_privileges(), *COMMAND, "check", "--no-cache", "--fix", "--unsafe-fixes", "model.py"],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2
    assert (folder / "model.py").read_text() == MODEL
    assert not NOTHING_FIXED.search(result.stderr), result.stderr
    assert "model.py:6:9: TL101" in result.stdout
