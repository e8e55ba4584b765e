"""Colour and the progress line of `torchlint check`, as a user sees them: the real command,
its output piped or on a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from torchlint.report.progress import DELAY_S, INTERVAL_S, ProgressLine
from torchlint.report.style import wants_colour

ESC = "\x1b["
# A compiled function with a print (TL101, fixable with --unsafe-fixes) and an `.item()`.
MODEL = "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x.item()\n"
# Every variable that decides colour, removed so the test's own environment cannot decide.
_COLOUR_VARIABLES = ("NO_COLOR", "FORCE_COLOR", "TERM", "TORCHLINT_OUTPUT_FORMAT")


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _COLOUR_VARIABLES}
    env["TORCHLINT_NO_CACHE"] = "1"
    return {**env, **extra}


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args], cwd=cwd, capture_output=True, text=True, env=_env(**env), timeout=120
    )


def run_on_terminal(*args: str, cwd: Path, stdout_too: bool = False, **env: str) -> tuple[str, str]:
    """The command with stderr (and with ``stdout_too``, stdout) on a pseudo-terminal: what
    the terminal showed, and what went to the pipe."""
    terminal, other_end = pty.openpty()
    # A file, not a pipe: a full pipe would stop the command while the terminal is read.
    piped = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "torchlint", *args], cwd=cwd, env=_env(TERM="xterm", **env),
        stdin=subprocess.DEVNULL, stdout=other_end if stdout_too else piped, stderr=other_end,
    )
    os.close(other_end)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(terminal, 65536)
        except OSError:  # the other end closed: Linux says EIO
            break
        if not chunk:
            break
        shown += chunk
    process.wait(timeout=120)
    os.close(terminal)
    piped.seek(0)
    return shown.decode(), piped.read().decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


# --- colour --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_force_color_colours_the_line_formats_even_piped(project: Path, fmt: str) -> None:
    out = run("check", "--output-format", fmt, "--unsafe-fixes", "model.py", cwd=project, FORCE_COLOR="1").stdout
    assert f"{ESC}1mmodel.py{ESC}0m" in out  # the path bold
    assert f"{ESC}1;31mTL101{ESC}0m" in out  # the code red and bold
    assert f"{ESC}36m[*]{ESC}0m" in out  # fixable, cyan
    assert f"{ESC}2m6:5{ESC}0m" in out  # row:col dim


def test_the_full_format_colours_its_gutter_and_carets(project: Path) -> None:
    out = run("check", "--output-format", "full", "model.py", cwd=project, FORCE_COLOR="1").stdout
    assert f"{ESC}1;34m6 |{ESC}0m     print(x)" in out
    assert f"{ESC}1;31m^^^^^^^^ TL101{ESC}0m" in out
    assert f"{ESC}1mgraph break:{ESC}0m GB0059 https://" in out


def test_piped_output_has_no_colour(project: Path) -> None:
    for fmt in ("concise", "full"):
        result = run("check", "--output-format", fmt, "model.py", cwd=project)
        assert "TL101" in result.stdout and ESC not in result.stdout
        assert ESC not in result.stderr


def test_no_color_turns_colour_off_on_a_terminal(project: Path) -> None:
    shown, _ = run_on_terminal("check", "model.py", cwd=project, stdout_too=True, NO_COLOR="1")
    assert "TL101" in shown and ESC not in shown


def test_a_terminal_gets_colour(project: Path) -> None:
    shown, _ = run_on_terminal("check", "model.py", cwd=project, stdout_too=True)
    assert f"{ESC}1;31mTL101{ESC}0m" in shown


def test_force_color_wins_over_no_color(project: Path) -> None:
    out = run("check", "model.py", cwd=project, FORCE_COLOR="1", NO_COLOR="1").stdout
    assert f"{ESC}1;31mTL101" in out


def test_empty_values_count_as_unset(project: Path) -> None:
    assert ESC not in run("check", "model.py", cwd=project, FORCE_COLOR="").stdout
    shown, _ = run_on_terminal("check", "model.py", cwd=project, stdout_too=True, NO_COLOR="")
    assert ESC in shown


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_machine_formats_are_never_coloured(project: Path, fmt: str) -> None:
    out = run("check", "--output-format", fmt, "model.py", cwd=project, FORCE_COLOR="1").stdout
    assert "TL101" in out and ESC not in out


def test_a_report_file_is_never_coloured(project: Path) -> None:
    result = run("check", "-o", "report.txt", "model.py", cwd=project, FORCE_COLOR="1")
    report = (project / "report.txt").read_text()
    assert "TL101" in report and ESC not in report
    shown, _ = run_on_terminal("check", "-o", "report2.txt", "model.py", cwd=project, stdout_too=True)
    report = (project / "report2.txt").read_text()
    assert "TL101" in report and ESC not in report
    assert result.returncode == 1


def test_a_dumb_terminal_gets_no_colour() -> None:
    assert wants_colour(True, {})
    assert not wants_colour(True, {"TERM": "dumb"})
    assert wants_colour(True, {"TERM": "dumb", "FORCE_COLOR": "1"})
    assert not wants_colour(False, {})


# --- progress ------------------------------------------------------------------------


@pytest.fixture
def many_files(tmp_path: Path) -> Path:
    """Enough compiled code that one worker takes well over the progress line's delay."""
    blocks = "".join(
        f"    y{i} = torch.relu(x) * {i}\n    if y{i}.sum() > 0:\n        x = x + y{i}\n" for i in range(60)
    )
    for number in range(40):
        (tmp_path / f"m{number}.py").write_text(f"import torch\n\n\n@torch.compile\ndef f{number}(x):\n{blocks}    return x\n")
    return tmp_path


def test_a_long_check_shows_progress_on_a_terminal_and_clears_it(many_files: Path) -> None:
    shown, report = run_on_terminal("check", "-j", "1", ".", cwd=many_files)
    assert "\r\x1b[KChecking " in shown
    counts = [line.split()[1] for line in shown.split("\r\x1b[K") if line.startswith("Checking ")]
    assert counts[-1] == "40/40"
    done = [int(count.split("/")[0]) for count in counts]
    assert done == sorted(done)
    # The line is cleared before the summary, which starts a line of its own.
    assert "\r\x1b[KFound 2400 findings in 40 files." in shown
    # The findings on stdout carry nothing of it.
    assert "Checking" not in report and report.count("TL201") == 2400


def test_no_progress_when_stderr_is_not_a_terminal(many_files: Path) -> None:
    result = run("check", "-j", "1", ".", cwd=many_files)
    assert result.returncode == 1
    assert "Checking" not in result.stderr and "\r" not in result.stderr
    assert result.stderr.startswith("Found 2400 findings in 40 files.")


def test_no_progress_with_quiet(many_files: Path) -> None:
    shown, report = run_on_terminal("check", "-q", "-j", "1", ".", cwd=many_files)
    assert shown == ""
    assert report.count("TL201") == 2400


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_waits_for_the_delay_and_rewrites_at_most_every_interval() -> None:
    clock, stream = Clock(), io.StringIO()
    line = ProgressLine(stream, clock)
    line(1, 10)
    clock.now += DELAY_S / 2
    line(2, 10)
    assert stream.getvalue() == ""  # a run this short shows nothing
    line.finish()
    assert stream.getvalue() == ""

    clock.now += DELAY_S
    line(3, 10)
    line(4, 10)  # too soon after the last
    clock.now += 2 * INTERVAL_S
    line(5, 10)
    line(10, 10)  # the last count is always shown
    line.finish()
    assert stream.getvalue() == (
        "\r\x1b[KChecking 3/10 files\r\x1b[KChecking 5/10 files\r\x1b[KChecking 10/10 files\r\x1b[K"
    )
