"""Files that would cost a run its memory, its time or its life: a generated data module of
megabytes, code nested deeper than CPython compiles, a parser that crashes, and Ctrl-C
while libcst is busy for seconds on one file. Whatever one file does, the others are
checked and the exit code says what happened."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import torchlint.parse.parsing
from helpers import BAD_FORWARD, run_in_process

FINDING = "net.py:7:9: TL101"
COMMAND = [sys.executable, "-m", "torchlint"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "net.py").write_text(BAD_FORWARD)
    return tmp_path


def _data_module(size: int) -> str:
    """A generated table of weights that mentions torch, about ``size`` bytes long."""
    row = "    [" + ", ".join(["0.123456"] * 12) + "],\n"
    return "import torch\n\nWEIGHTS = [\n" + row * (size // len(row)) + "]\nTABLE = torch.tensor(WEIGHTS)\n"


def test_a_file_over_max_file_size_is_not_parsed_and_the_others_are_checked(project: Path) -> None:
    (project / "weights.py").write_text(_data_module(5_000_000))
    started = time.monotonic()
    result = run_in_process("check", "--no-cache", ".", cwd=project)
    assert time.monotonic() - started < 30  # parsed, it would take minutes and gigabytes
    assert result.returncode == 2
    assert FINDING in result.stdout
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: weights.py:")]
    assert "not checked: 5.0 MB is over the 1.0 MB of `max-file-size`" in line
    assert "1 file could not be checked." in result.stderr


def test_max_file_size_can_be_raised(project: Path) -> None:
    (project / "weights.py").write_text(_data_module(60_000))
    (project / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 50000\n")
    assert "max-file-size" in run_in_process("check", "--no-cache", ".", cwd=project).stderr
    (project / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 100000\n")
    checked = run_in_process("check", "--no-cache", ".", cwd=project)
    assert checked.returncode == 1 and "error:" not in checked.stderr


def test_max_file_size_holds_for_a_buffer_from_stdin(project: Path) -> None:
    result = subprocess.run(
        [*COMMAND, "check", "--stdin-filename", "weights.py", "-"], cwd=project, input=_data_module(1_200_000),
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and "`max-file-size`" in result.stderr


@pytest.mark.parametrize("bad_config", ["max-file-size = 0", 'max-file-size = "1MB"', "max-file-size = true"])
def test_max_file_size_is_a_positive_number_of_bytes(project: Path, bad_config: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.torchlint]\n{bad_config}\n")
    result = run_in_process("check", "--no-cache", ".", cwd=project)
    assert result.returncode == 2
    assert "`max-file-size` must be a number of bytes" in result.stderr


def test_a_file_whose_worker_dies_is_an_error_and_the_run_goes_on(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libcst aborting its process (as it does when it runs out of memory) ends the file's
    check, not the run: the worker that died is replaced."""
    real = torchlint.parse.parsing.cst.parse_module

    def aborting(text: str):
        if "CRASH_HERE" in text:
            faulthandler.disable()  # the test's own crash needs no traceback
            os.abort()
        return real(text)

    monkeypatch.setattr(torchlint.parse.parsing.cst, "parse_module", aborting)
    (project / "crash.py").write_text("import torch\nCRASH_HERE = 1\n")
    for number in range(3):
        (project / f"other_{number}.py").write_text(BAD_FORWARD)
    result = run_in_process("check", "--no-cache", "-j", "1", ".", cwd=project)
    assert result.returncode == 2
    assert "error: crash.py: could not be checked: the process checking it crashed (SIGABRT)" in result.stderr
    assert all(f"other_{number}.py:7:9: TL101" in result.stdout for number in range(3)), result.stdout
    assert FINDING in result.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_ends_the_run_while_libcst_parses_a_deep_file(project: Path) -> None:
    """A chain of 2,900 subscripts compiles, and libcst takes seconds on it while holding
    the interpreter: the run, waiting on its worker, still stops at once."""
    (project / "deep.py").write_text("import torch\nx = a" + "[0]" * 2900 + "\n")
    process = subprocess.Popen([*COMMAND, "check", "--no-cache", "deep.py"], cwd=project, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _has_children(process.pid):
        time.sleep(0.05)
    time.sleep(0.5)  # the worker is in libcst's parse, for seconds
    assert process.poll() is None, "the parse ended before it could be interrupted"
    os.killpg(process.pid, signal.SIGINT)
    sent = time.monotonic()
    out, err = process.communicate(timeout=60)
    assert time.monotonic() - sent < 2.0
    assert process.returncode == 130 and out == b"" and err == b""


def _has_children(pid: int) -> bool:
    try:
        return bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except OSError:
        return False


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("x = a" + ".b" * 3000, "nested deeper than Python can compile"),
        ("x = t" + ".relu()" * 2000, "nested deeper than Python can compile"),
        ("x = " + " + ".join(["a"] * 3500), "nested deeper than Python can compile"),
        ("def f():\n    nonlocal y\n", "no binding for nonlocal 'y' found"),
        ("return 1", "'return' outside function"),
    ],
)
def test_what_cpython_does_not_compile_is_a_syntax_error(project: Path, code: str, message: str) -> None:
    (project / "bad.py").write_text("import torch\n" + code + "\n")
    started = time.monotonic()
    result = run_in_process("check", "--no-cache", "bad.py", "net.py", cwd=project)
    assert time.monotonic() - started < 5  # libcst would take seconds, or minutes, on the chains
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("bad.py:")]
    assert " TL901 " in line and message in line
    assert FINDING in result.stdout


def test_a_chain_cpython_compiles_is_checked(project: Path) -> None:
    (project / "long.py").write_text(
        "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        print(x)\n        return x" + ".relu()" * 400 + "\n"
    )
    result = run_in_process("check", "--no-cache", "long.py", cwd=project)
    assert result.returncode == 1 and "long.py:6:9: TL101" in result.stdout
