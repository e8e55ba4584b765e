"""`torchlint server`: real servers, real sockets and real `torchlint` processes. A command
that a server runs must print and exit exactly as one run without it."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import write
from torchlint.launch import servers_possible
from torchlint.server import status, stop

pytestmark = pytest.mark.skipif(not servers_possible(), reason="the server needs fork() and Unix sockets")

MODEL = """
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        print("shape", x.shape)
        return x * 2
"""


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    """An environment whose servers live in a folder of their own (a short path: a socket's
    is limited to about 100 bytes), stopped at the end."""
    folder = tempfile.mkdtemp(prefix="tls")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_") and k != "XDG_RUNTIME_DIR"}
    environment["TMPDIR"] = folder
    yield environment
    with _environment_of(environment):
        stop()
    shutil.rmtree(folder, ignore_errors=True)


def torchlint(*args: str, cwd: Path, env: dict[str, str], server: bool = True, stdin: str | None = None):
    environment = dict(env) if server else {**env, "TORCHLINT_NO_SERVER": "1"}
    return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, env=environment, input=stdin,
                          capture_output=True, text=True)


@contextlib.contextmanager
def _environment_of(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _facts(env: dict[str, str]) -> dict | None:
    """The status of the server ``env`` finds, asked from this process (as `torchlint server
    status` asks it, without starting a Python for it)."""
    with _environment_of(env):
        return status()


def served(env: dict[str, str]) -> int | None:
    facts = _facts(env)
    return None if facts is None else facts["served"]


@pytest.fixture
def running(env: dict[str, str]) -> dict[str, str]:
    started = torchlint("server", "start", cwd=Path("/"), env=env)
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith("torchlint server listening on " + env["TMPDIR"])
    return env


COMMANDS = [
    ["check", "model.py", "--no-cache"],
    ["model.py", "--no-cache", "--output-format", "json"],
    ["check", "missing.py", "--no-cache"],
    ["check", "model.py", "--select", "TL999"],
    ["--version"],
]


def test_a_command_the_server_runs_prints_and_exits_as_one_run_without_it(tmp_path: Path, running: dict[str, str]) -> None:
    write(tmp_path, {"model.py": MODEL})
    for count, args in enumerate(COMMANDS, 1):
        alone = torchlint(*args, cwd=tmp_path, env=running, server=False)
        through = torchlint(*args, cwd=tmp_path, env=running)
        assert served(running) == count
        assert (through.returncode, through.stdout, through.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def test_standard_input_and_folder_are_the_callers(tmp_path: Path, running: dict[str, str]) -> None:
    found = torchlint("check", "-", "--stdin-filename", "model.py", "--no-cache", cwd=tmp_path, env=running,
                      stdin=textwrap_model())
    assert found.returncode == 1
    assert found.stdout.startswith("model.py:6:9: TL101 ")
    # `--fix` rewrites the file named relative to the caller's folder, with the caller's umask.
    write(tmp_path, {"model.py": MODEL})
    os.chmod(tmp_path / "model.py", 0o640)
    fixed = torchlint("check", "model.py", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path, env=running)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "if not torch.compiler.is_compiling():" in (tmp_path / "model.py").read_text()
    assert (tmp_path / "model.py").stat().st_mode & 0o777 == 0o640
    assert served(running) == 2


def textwrap_model() -> str:
    return MODEL.lstrip("\n")


def test_after_stop_and_when_none_was_started_the_command_runs_by_itself(tmp_path: Path, env: dict[str, str]) -> None:
    write(tmp_path, {"model.py": MODEL})
    assert torchlint("server", "status", cwd=tmp_path, env=env).stdout == "no torchlint server is running\n"
    assert torchlint("check", "model.py", "--no-cache", cwd=tmp_path, env=env).returncode == 1
    assert torchlint("server", "start", cwd=tmp_path, env=env).returncode == 0
    shown = torchlint("server", "status", cwd=tmp_path, env=env)
    assert shown.returncode == 0
    assert re.fullmatch(r"torchlint server listening on .+\.sock \(pid \d+\), 0 commands run, stops after 3600 s idle\n",
                        shown.stdout), shown.stdout
    again = torchlint("server", "start", cwd=tmp_path, env=env)
    assert again.returncode == 0 and again.stdout.startswith("torchlint server already listening on ")
    assert torchlint("server", "stop", cwd=tmp_path, env=env).stdout == "torchlint server stopped\n"
    assert served(env) is None
    alone = torchlint("check", "model.py", "--no-cache", cwd=tmp_path, env=env)
    assert alone.returncode == 1 and ": TL101 " in alone.stdout


def test_an_idle_server_stops_by_itself(env: dict[str, str]) -> None:
    assert torchlint("server", "start", "--idle-timeout", "0.5", cwd=Path("/"), env=env).returncode == 0
    deadline = time.monotonic() + 20
    while served(env) is not None:
        assert time.monotonic() < deadline, "the server is still listening"
        time.sleep(0.2)
    assert not list(Path(env["TMPDIR"]).glob("torchlint-*/*.sock"))


def _pid(env: dict[str, str]) -> int:
    facts = _facts(env)
    assert facts is not None
    return facts["pid"]


def test_a_socket_left_by_a_killed_server_is_passed_over_and_replaced(tmp_path: Path, running: dict[str, str]) -> None:
    write(tmp_path, {"model.py": MODEL})
    os.kill(_pid(running), signal.SIGKILL)
    deadline = time.monotonic() + 20
    while served(running) is not None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert list(Path(running["TMPDIR"]).glob("torchlint-*/*.sock")), "the dead server's socket is still there"
    alone = torchlint("check", "model.py", "--no-cache", cwd=tmp_path, env=running)
    assert alone.returncode == 1 and ": TL101 " in alone.stdout
    assert torchlint("server", "start", cwd=tmp_path, env=running).returncode == 0
    assert served(running) == 0


def test_a_folder_other_users_can_enter_is_not_trusted(tmp_path: Path, running: dict[str, str]) -> None:
    write(tmp_path, {"model.py": MODEL})
    (folder,) = Path(running["TMPDIR"]).glob("torchlint-*")
    folder.chmod(0o777)
    try:
        assert served(running) is None
        assert torchlint("check", "model.py", "--no-cache", cwd=tmp_path, env=running).returncode == 1
    finally:
        folder.chmod(0o700)
    assert served(running) == 0


def test_a_server_of_other_code_is_not_used(tmp_path: Path, env: dict[str, str]) -> None:
    """A server started before torchlint's code changed runs the old code: the socket's
    name holds a key of the installation's files, so the changed code never finds it."""
    import torchlint

    copy = tmp_path / "copy"
    shutil.copytree(Path(torchlint.__file__).parent, copy / "torchlint", ignore=shutil.ignore_patterns("__pycache__"))
    with_copy = {**env, "PYTHONPATH": str(copy)}
    started = torchlint_at("server", "start", "--idle-timeout", "60", env=with_copy)
    assert started.returncode == 0, started.stderr
    pid = int(started.stdout.split("(pid ")[1].split(")")[0])
    try:
        assert torchlint_at("server", "status", env=with_copy).returncode == 0
        edited = copy / "torchlint" / "wording.py"
        edited.write_text(edited.read_text() + "\n# edited\n")
        assert torchlint_at("server", "status", env=with_copy).returncode == 1
    finally:
        os.kill(pid, signal.SIGTERM)


def test_another_environment_with_the_same_code_is_served(
    tmp_path: Path, running: dict[str, str]
) -> None:
    """A copy of torchlint's code elsewhere (as pre-commit installs its own) finds the server."""
    import torchlint as package

    copy = tmp_path / "copy"
    shutil.copytree(Path(package.__file__).parent, copy / "torchlint", ignore=shutil.ignore_patterns("__pycache__"))
    write(tmp_path / "project", {"model.py": MODEL})
    with_copy = {**running, "PYTHONPATH": str(copy)}
    ran = torchlint("check", "model.py", "--no-cache", cwd=tmp_path / "project", env=with_copy)
    assert ran.returncode == 1 and ": TL101 " in ran.stdout
    assert served(running) == 1


def torchlint_at(*args: str, env: dict[str, str]):
    return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd="/", env=env, capture_output=True, text=True)


def test_a_caller_that_sends_nonsense_or_leaves_does_not_stop_the_server(running: dict[str, str]) -> None:
    import socket as sockets

    (path,) = Path(running["TMPDIR"]).glob("torchlint-*/*.sock")
    for payload in (b"", b"\x00\x00\x00\x05junk!", b"\x00\x00\xff\xffshort"):
        with sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM) as caller:
            caller.connect(str(path))
            caller.sendall(payload)
    assert served(running) == 0


def _children(pid: int) -> list[int]:
    listing = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in listing.read_text().split()]


@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
                    reason="needs /proc's list of a process's children (Linux)")
def test_ctrl_c_stops_the_command_the_server_runs(tmp_path: Path, running: dict[str, str]) -> None:
    write(tmp_path, {f"pkg/model_{n}.py": MODEL for n in range(400)})
    server_pid = _pid(running)
    caller = subprocess.Popen([sys.executable, "-m", "torchlint", "check", "pkg", "--no-cache", "-j", "1"],
                              cwd=tmp_path, env=running, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not _children(server_pid):
        assert time.monotonic() < deadline and caller.poll() is None, "the command never started on the server"
        time.sleep(0.05)
    caller.send_signal(signal.SIGINT)
    out, err = caller.communicate(timeout=20)
    assert caller.returncode == 128 + signal.SIGINT, err
    assert "Traceback" not in err and out == ""
    deadline = time.monotonic() + 20
    while _children(server_pid):
        assert time.monotonic() < deadline, "the command went on after Ctrl-C"
        time.sleep(0.05)
    assert served(running) == 1
