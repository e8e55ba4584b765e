"""The command line under hostile conditions: odd files named on the command line, broken
options, killed and interrupted runs. Each runs the real `torchlint` process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import BAD_FORWARD, run_in_process, without_root_privileges

FINDING = "net.py:7:9: TL101"
COMMAND = [sys.executable, "-m", "torchlint"]


def run(*args: str, cwd: Path, **options) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "TORCHLINT_OUTPUT_FORMAT"}
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env, **options)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "net.py").write_text(BAD_FORWARD)
    return tmp_path


def test_a_named_pipe_gets_an_error_line_and_the_run_goes_on(project: Path) -> None:
    os.mkfifo(project / "pipe.py")
    result = run("check", "pipe.py", "net.py", cwd=project)
    assert result.returncode == 2
    assert "error: pipe.py: not a regular file (a named pipe)" in result.stderr.splitlines()
    assert FINDING in result.stdout


def test_a_pipe_found_in_a_folder_is_not_read(project: Path) -> None:
    os.mkfifo(project / "pipe.py")
    result = run("check", ".", cwd=project)
    assert result.returncode == 1 and FINDING in result.stdout


def test_an_unreadable_named_file_gets_an_error_line_and_the_run_goes_on(tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "net.py").write_text(BAD_FORWARD)
    locked = folder / "locked.py"
    locked.write_text(BAD_FORWARD)
    locked.chmod(0)
    result = subprocess.run(
        [*without_root_privileges(), *COMMAND, "check", "locked.py", "net.py"],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "error: locked.py: permission denied" in result.stderr.splitlines()
    assert FINDING in result.stdout
    assert "1 file could not be checked." in result.stderr


def test_errors_are_counted_instead_of_all_checks_passed(project: Path) -> None:
    (project / "clean.py").write_text("x = 1\n")
    result = run("check", "missing.py", "clean.py", cwd=project)
    assert result.returncode == 2
    assert "All checks passed!" not in result.stderr
    assert result.stderr.splitlines()[-1] == "1 file could not be checked."
    both = run("check", "missing.py", "net.py", cwd=project)
    assert "Found 1 finding in 1 file. 1 file could not be checked." in both.stderr.splitlines()


def test_a_syntax_error_in_a_file_without_torch_is_reported(project: Path) -> None:
    (project / "broken.py").write_text("def f(:\n  pass\n")
    result = run("check", "broken.py", cwd=project)
    assert result.returncode == 1
    assert result.stdout.startswith("broken.py:1:7: TL901 ")
    assert "All checks passed!" not in result.stderr


def test_show_regions_reports_a_file_that_does_not_parse(project: Path) -> None:
    (project / "broken.py").write_text("import torch\ndef f(:\n  pass\n")
    result = run("check", "--show-regions", "broken.py", "net.py", cwd=project)
    assert result.returncode == 1
    assert "broken.py:2:7: TL901 " in result.stdout
    assert "Net.forward" in result.stdout


def test_report_file_in_a_missing_folder_is_a_usage_error_before_the_run(project: Path) -> None:
    result = run("check", "-o", "nowhere/report.txt", "net.py", cwd=project)
    assert result.returncode == 2
    assert "does not exist" in result.stderr and "internal error" not in result.stderr
    assert result.stdout == "" and "Found" not in result.stderr


# --- a report written over an input ------------------------------------------------------

def _refused_as_input(result, name: str) -> None:
    assert result.returncode == 2, result.stderr
    assert f"'{name}' is one of the files checked" in result.stderr, result.stderr
    assert "internal error" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("spelling", ["net.py", "./net.py", "{folder}/net.py", "link.txt", "hard.txt"])
def test_a_report_over_a_named_file_is_refused_before_anything_is_written(project: Path, spelling: str) -> None:
    (project / "link.txt").symlink_to("net.py")
    os.link(project / "net.py", project / "hard.txt")
    output = spelling.format(folder=project)
    result = run_in_process("check", "--fix", "--unsafe-fixes", "-o", output, "net.py", cwd=project)
    _refused_as_input(result, str(Path(output)))
    assert (project / "net.py").read_text() == BAD_FORWARD


def test_a_report_over_a_file_found_in_a_named_folder_is_refused(project: Path) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "model.py").write_text(BAD_FORWARD)
    result = run_in_process("check", "-o", "pkg/model.py", ".", cwd=project)
    _refused_as_input(result, "pkg/model.py")
    assert (project / "pkg" / "model.py").read_text() == BAD_FORWARD


def test_a_report_beside_the_inputs_that_no_walk_finds_is_written(project: Path) -> None:
    (project / "build").mkdir()  # excluded by default
    for output in ("report.txt", "build/report.py"):
        result = run_in_process("check", "-o", output, ".", cwd=project)
        assert result.returncode == 1, result.stderr
        assert FINDING in (project / output).read_text()


@pytest.mark.parametrize("exists", [True, False])
def test_a_report_over_the_stdin_filename_is_refused(project: Path, exists: bool) -> None:
    name = "net.py" if exists else "new.py"
    result = run("check", "--stdin-filename", name, "-o", name, "-", cwd=project, input=BAD_FORWARD)
    _refused_as_input(result, name)
    assert (project / "net.py").read_text() == BAD_FORWARD and not (project / "new.py").exists()


def test_verify_refuses_a_report_over_a_target_file(project: Path) -> None:
    (project / "targets.py").write_text("def torchlint_targets():\n    return []\n")
    for target in ("targets.py", "targets.py::model", "."):
        result = run_in_process("verify", "-o", "targets.py", target, cwd=project)
        _refused_as_input(result, "targets.py")
    assert (project / "targets.py").read_text().startswith("def torchlint_targets")


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
def test_an_empty_rule_selection_is_a_usage_error(project: Path, option: str) -> None:
    result = run("check", option, "", "net.py", cwd=project)
    assert result.returncode == 2
    assert f"{option} needs at least one rule code" in result.stderr
    assert result.stdout == ""


# --- killed and interrupted runs ---------------------------------------------------------

# Enough files for two workers (a pool needs 16 files a worker) and enough work that they
# are still busy when the run is stopped.
_FILES, _COPIES = 48, 60


@pytest.fixture
def busy_project(tmp_path: Path) -> Path:
    block = BAD_FORWARD.split("\n\n\n", 1)[1]
    body = "import torch\nimport torch.nn as nn\n\n\n" + "\n\n".join(
        block.replace("class Net", f"class Net{index}") for index in range(_COPIES)
    )
    for index in range(_FILES):
        (tmp_path / f"model_{index:02}.py").write_text(body)
    return tmp_path


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its parent's bookkeeping is left


def _start_with_workers(project: Path) -> tuple[subprocess.Popen, set[int]]:
    process = subprocess.Popen(
        [*COMMAND, "check", "-j", "2", "."],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell job has
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        workers = _children(process.pid)
    assert len(workers) >= 2, "the run did not start two workers"
    return process, workers


def _assert_all_gone(process: subprocess.Popen, workers: set[int]) -> tuple[bytes, bytes]:
    # The pipes close only when every process holding them has ended.
    out, err = process.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if _alive(pid)], "workers outlived their run"
    return out, err


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@linux_only
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_workers_die_with_a_killed_run(busy_project: Path, signum: int) -> None:
    process, workers = _start_with_workers(busy_project)
    os.kill(process.pid, signum)
    _assert_all_gone(process, workers)
    assert process.returncode == -signum or process.returncode == 128 + signum


@linux_only
def test_ctrl_c_exits_130_quietly_and_stops_the_workers(busy_project: Path) -> None:
    process, workers = _start_with_workers(busy_project)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal does: the whole foreground group
    out, err = _assert_all_gone(process, workers)
    assert process.returncode == 130
    assert out == b"" and err == b""


def test_a_file_python_compiles_but_libcst_cannot_parse_is_an_error_not_a_syntax_error(project: Path) -> None:
    # libcst's parser gives up on thousands of adjacent string literals; CPython does not.
    (project / "strings.py").write_text("import torch\nx = (" + " ".join(f'"p{i}"' for i in range(5000)) + ")\n")
    result = run("check", "strings.py", "net.py", cwd=project)
    assert result.returncode == 2
    assert "TL901" not in result.stdout and FINDING in result.stdout
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: strings.py:")]
    assert "could not be checked: Python compiles it, but libcst cannot parse it" in line


# --- file names that are not UTF-8 ------------------------------------------------------

# Python keeps the byte 0xe9 of such a name as the lone surrogate U+DCE9, which no
# strict encoder takes; a report shows it as \xe9.
ODD_NAME = b"caf\xe9.py"


@pytest.fixture
def odd_names(project: Path) -> Path:
    try:
        (project / os.fsdecode(ODD_NAME)).write_text(BAD_FORWARD)
    except (OSError, UnicodeError):
        pytest.skip("the file system takes only UTF-8 names")
    (project / os.fsdecode(b"bin\xe9.py")).write_bytes(b"x = 1\0\n")
    return project


def _strict_run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # As under a UTF-8 locale other than C: stdout refuses what is not UTF-8.
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    env["PYTHONIOENCODING"] = "utf-8:strict"
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, timeout=120, env=env)


@pytest.mark.parametrize("output_format", ["concise", "full", "json", "github", "sarif"])
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(odd_names: Path, output_format: str) -> None:
    result = _strict_run("check", "--no-cache", "--output-format", output_format, ".", cwd=odd_names)
    stdout, stderr = result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    assert result.returncode == 2, stderr
    assert "internal error" not in stderr
    assert "error: bin\\xe9.py: binary file (contains NUL bytes)" in stderr.splitlines()
    if output_format == "json":
        found = {Path(finding["filename"]).name for finding in json.loads(stdout)}
        assert found == {"caf\\xe9.py", "net.py"}
    elif output_format == "sarif":
        results = json.loads(stdout)["runs"][0]["results"]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
        assert uris == {"caf%E9.py", "net.py"}
    else:
        assert "caf\\xe9.py:7:9" in stdout and "net.py:7:9" in stdout


def test_a_report_file_takes_a_name_that_is_not_utf8(odd_names: Path) -> None:
    result = _strict_run("check", "--no-cache", "-o", "report.txt", ".", cwd=odd_names)
    assert result.returncode == 2 and b"internal error" not in result.stderr
    assert "caf\\xe9.py:7:9: TL101" in (odd_names / "report.txt").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs the `patch` program")
def test_a_diff_names_a_file_by_its_own_bytes(odd_names: Path) -> None:
    result = _strict_run("check", "--no-cache", "--unsafe-fixes", "--diff", os.fsdecode(ODD_NAME), cwd=odd_names)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(b"--- " + ODD_NAME + b"\n+++ " + ODD_NAME + b"\n")
    applied = subprocess.run(["patch", "-p0", "--batch"], cwd=odd_names, input=result.stdout, capture_output=True, timeout=60)
    assert applied.returncode == 0, applied.stderr
    assert b"is_compiling()" in (odd_names / os.fsdecode(ODD_NAME)).read_bytes()


# --- a file whose folder cannot be listed ----------------------------------------

def test_a_buffer_named_in_a_missing_folder_is_checked_with_the_settings_above(project: Path) -> None:
    result = run("check", "--stdin-filename", "newdir/deeper/x.py", "-", cwd=project, input=BAD_FORWARD)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(f"{os.path.join('newdir', 'deeper', 'x.py')}:7:9: TL101")
    fixed = run("check", "--fix", "--unsafe-fixes", "--stdin-filename", "newdir/x.py", "-", cwd=project, input=BAD_FORWARD)
    assert fixed.returncode == 0 and "torch.compiler.is_compiling()" in fixed.stdout, fixed.stderr
    regions = run("check", "--show-regions", "--stdin-filename", "newdir/x.py", "-", cwd=project, input=BAD_FORWARD)
    assert regions.returncode == 0 and "Net.forward" in regions.stdout, regions.stderr
    (project / "torchlint.toml").write_text('ignore = ["TL101"]\n')
    ignored = run("check", "--stdin-filename", "newdir/x.py", "-", cwd=project, input=BAD_FORWARD)
    assert ignored.returncode == 0 and ignored.stdout == "", ignored.stderr


def test_a_named_file_in_a_folder_that_cannot_be_listed_is_checked(project: Path) -> None:
    folder = project / "hidden"
    folder.mkdir()
    (folder / "net.py").write_text(BAD_FORWARD)
    folder.chmod(0o111)  # entered, not listed: the files beside the named one stay unknown
    try:
        result = subprocess.run(
            [*without_root_privileges(), *COMMAND, "check", "--no-cache", "hidden/net.py"],
            cwd=project, capture_output=True, text=True, timeout=120,
        )
    finally:
        folder.chmod(0o755)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(os.path.join("hidden", "net.py") + ":7:9: TL101")


# --- configuration files that cannot be read -------------------------------------------------

DEEP_ARRAY = "a = " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_TABLE = "a = " + "{b = " * 5000 + "}" * 5000 + "\n"


@pytest.mark.parametrize(
    ("name", "text", "option"),
    [
        ("pyproject.toml", "[tool.torchlint]\n" + DEEP_ARRAY, False),
        ("torchlint.toml", DEEP_TABLE, False),
        ("deep.toml", DEEP_ARRAY, True),
    ],
)
def test_a_configuration_nested_too_deeply_is_invalid_toml(project: Path, name: str, text: str, option: bool) -> None:
    (project / name).write_text(text)
    result = run_in_process("check", *(["--config", name] if option else []), "net.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {project / name}: invalid TOML: nested too deeply\n1 configuration error."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tool = 1\n", None),  # another tool's business, not a torchlint table
        ('select = ["TL1"]\n# \udcff\n', "invalid TOML: not UTF-8: invalid start byte at offset 19"),
    ],
)
def test_a_configuration_with_odd_contents_is_read_or_named(project: Path, text: str, message: str | None) -> None:
    name = "pyproject.toml" if message is None else "torchlint.toml"
    (project / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    result = run_in_process("check", "net.py", cwd=project)
    if message is None:
        assert result.returncode == 1 and FINDING in result.stdout, result.stderr
    else:
        assert result.returncode == 2
        assert result.stderr.strip() == f"error: {project / name}: {message}\n1 configuration error."


def _run_briefly(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """A run that must end soon: one that waits on a named pipe fails the test, not hangs it."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    return subprocess.run([*COMMAND, *args], cwd=cwd, capture_output=True, text=True, timeout=30, env=env)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (os.mkfifo, "not a regular file (a named pipe)"),
        (os.mkdir, "is a directory"),
    ],
)
def test_a_named_configuration_that_is_no_file_says_what_it_is(project: Path, make, message: str) -> None:
    make(project / "odd.toml")
    result = _run_briefly("check", "--config", "odd.toml", "net.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {project / 'odd.toml'}: cannot read configuration: {message}\n1 configuration error."


def test_an_unreadable_configuration_says_why(project: Path) -> None:
    config = project / "torchlint.toml"
    config.write_text('select = ["TL1"]\n')
    config.chmod(0)
    result = subprocess.run(
        [*without_root_privileges(), *COMMAND, "check", "net.py"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {config}: cannot read configuration: permission denied\n1 configuration error."


@pytest.mark.parametrize("pipe", ["pyproject.toml", "torchlint.toml", "pkg/.gitignore", ".git/info/exclude"])
def test_a_named_pipe_among_the_files_that_steer_a_run_is_not_waited_on(project: Path, pipe: str) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "model.py").write_text(BAD_FORWARD)
    (project / ".git" / "info").mkdir(parents=True)
    os.mkfifo(project / pipe)
    for named in (".", "net.py", "pkg/model.py"):
        result = _run_briefly("check", named, cwd=project)
        assert result.returncode == 1, result.stderr
        assert "7:9: TL101" in result.stdout


# --- report files that cannot take the report --------------------------------------------------

def test_a_report_into_a_named_pipe_nobody_reads_is_an_error_not_a_wait(project: Path) -> None:
    os.mkfifo(project / "report.txt")
    result = _run_briefly("check", "-o", "report.txt", "net.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == "error: report.txt: cannot write the report: no process reads the named pipe"


def test_a_report_into_a_named_pipe_that_is_read_is_written(project: Path) -> None:
    os.mkfifo(project / "report.txt")
    # Opened without blocking, this test is the reader the run finds when it opens the pipe.
    reader = os.open(project / "report.txt", os.O_RDONLY | os.O_NONBLOCK)
    try:
        process = subprocess.Popen([*COMMAND, "check", "-o", "report.txt", "net.py"], cwd=project,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        received, deadline = b"", time.monotonic() + 60
        while time.monotonic() < deadline:
            ended = process.poll() is not None
            try:
                chunk = os.read(reader, 65536)
            except BlockingIOError:
                chunk = b""
            received += chunk
            if ended and not chunk:
                break
            time.sleep(0 if chunk else 0.02)
        _, stderr = process.communicate(timeout=30)
    finally:
        os.close(reader)
    assert process.returncode == 1, stderr
    assert FINDING in received.decode()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_report_file_that_cannot_take_the_report_is_an_error(project: Path) -> None:
    result = run("check", "-o", "/dev/full", "net.py", cwd=project)
    assert result.returncode == 2
    assert "error: /dev/full: cannot write the report: No space left on device" in result.stderr.splitlines()
    assert "Found 1 finding in 1 file." in result.stderr.splitlines()


# Runs the console entry point with an audit hook that records every socket the process
# connects or binds: the command must reach no other process (no server to hijack).
_AUDITED_RUN = """
import sys
events = []
sys.addaudithook(lambda event, args: events.append(event) if event in ("socket.connect", "socket.bind") else None)
sys.argv = ["torchlint", *sys.argv[1:]]
from torchlint.launch import main
try:
    main()
except SystemExit as done:
    code = done.code
print("SOCKET EVENTS:", sorted(set(events)), file=sys.stderr)
sys.exit(code)
"""


def test_the_command_talks_to_no_server(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # A private runtime folder of the user's, as a desktop session or CI provides.
    runtime = tmp_path_factory.mktemp("runtime")
    (runtime / f"torchlint-{os.getuid()}").mkdir(mode=0o700)
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    result = subprocess.run([sys.executable, "-c", _AUDITED_RUN, "check", "net.py"], cwd=project, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and FINDING in result.stdout
    assert "SOCKET EVENTS: []" in result.stderr.splitlines()

