"""`--diff` gives what `patch` applies: the files it gives are the ones `--fix` writes,
whatever the files hold (characters `str.splitlines` takes for line ends, other line
endings, no final newline, another encoding), and a file it could not check is an error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import BAD_FORWARD, without_root_privileges

COMMAND = [sys.executable, "-m", "torchlint", "check", "--no-cache", "--unsafe-fixes"]

# Python ends lines only at \n, \r\n and \r; these are line ends to `str.splitlines` alone.
ODD_BREAKS = "\x0c \x1c \x1d \x1e \x85 \u2028 \u2029"

FILES = {
    "odd_breaks.py": BAD_FORWARD.replace("import torch\n", f"import torch\n# {ODD_BREAKS}\n")
    .replace('print("x", x.shape)', f'print("x{ODD_BREAKS}", x.shape)  # {ODD_BREAKS}')
    .replace("return x", "return x  # \x0c")
    .encode(),
    "crlf.py": BAD_FORWARD.replace("\n", "\r\n").encode(),
    "cr.py": BAD_FORWARD.replace("\n", "\r").encode(),
    "no_final_newline.py": BAD_FORWARD.rstrip("\n").encode(),
    "latin1.py": ("# -*- coding: latin-1 -*-\n" + BAD_FORWARD.replace('"x"', '"café"')).encode("latin-1"),
    # The fix adds `import torch` on the first line, the one that holds the byte order mark.
    "bom.py": b"\xef\xbb\xbf" + BAD_FORWARD.replace("import torch\nimport torch.nn as nn\n\n\n", "import torch.nn as nn  # é\n").encode(),
}

needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="needs the `patch` program")


def _torchlint(*args: str, cwd: Path, input: bytes | None = None) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    return subprocess.run([*COMMAND, *args], cwd=cwd, input=input, capture_output=True, timeout=120, env=env)


def _project(folder: Path) -> Path:
    folder.mkdir()
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    return folder


@needs_patch
def test_patch_applies_the_diff_and_gives_what_fix_writes(tmp_path: Path) -> None:
    patched, fixed = _project(tmp_path / "patched"), _project(tmp_path / "fixed")
    diff = _torchlint("--diff", *FILES, cwd=patched)
    assert diff.returncode == 1, diff.stderr.decode()
    assert f"Would fix {len(FILES)} findings." in diff.stderr.decode()
    applied = subprocess.run(["patch", "-p0", "--batch"], cwd=patched, input=diff.stdout, capture_output=True, timeout=60)
    assert applied.returncode == 0, applied.stdout.decode() + applied.stderr.decode()
    assert _torchlint("--fix", *FILES, cwd=fixed).returncode == 0
    for name, data in FILES.items():
        assert (fixed / name).read_bytes() != data, name
        assert (patched / name).read_bytes() == (fixed / name).read_bytes(), name


@needs_patch
def test_patch_applies_the_diff_of_a_buffer(tmp_path: Path) -> None:
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
        diff = _torchlint("--diff", "--stdin-filename", name, "-", cwd=tmp_path, input=data)
        assert diff.returncode == 1, diff.stderr.decode()
        fixed = _torchlint("--fix", "--stdin-filename", name, "-", cwd=tmp_path, input=data)
        applied = subprocess.run(["patch", "--batch", name], cwd=tmp_path, input=diff.stdout, capture_output=True, timeout=60)
        assert applied.returncode == 0, name + applied.stdout.decode()
        assert (tmp_path / name).read_bytes() == fixed.stdout, name


def test_diff_reports_the_files_it_could_not_check(tmp_path: Path) -> None:
    (tmp_path / "net.py").write_text(BAD_FORWARD)
    (tmp_path / "binary.py").write_bytes(b"x = 1\0\n")
    locked = tmp_path / "locked.py"
    locked.write_text(BAD_FORWARD)
    locked.chmod(0)
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    result = subprocess.run(
        [*without_root_privileges(), *COMMAND, "--diff", "binary.py", "locked.py", "net.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )
    assert result.returncode == 2, result.stderr
    errors = result.stderr.splitlines()
    assert "error: binary.py: binary file (contains NUL bytes)" in errors
    assert "error: locked.py: permission denied" in errors
    assert "Would fix 1 finding. 2 files could not be checked." in errors
    assert result.stdout.startswith("--- net.py\n")
