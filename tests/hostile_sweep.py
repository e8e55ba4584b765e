"""The hostile-input sweep: `torchlint` run the way an unlucky or hostile user would, each
run judged by the same invariants.

Every case builds a project under a fresh folder that also holds a home, a runtime folder
with a listening socket where a command server used to be looked for, and a decoy folder
outside the project. The command runs as a real process (through an audit hook that
records every socket it connects or binds), and afterwards:

- no file changed except those the case lets a fix change, and those still compile;
- nothing changed outside the project, its cache folder and the user's torchlint cache;
- no socket was connected or bound, and the planted server was never reached;
- the exit code and the message say what happened (the case's expectation), and no run
  ends in an internal error.

`tests/test_hostile_sweep.py` runs every case; `bench/bench_hostile.py` runs them with many
generated programs and prints the counts.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

FORWARD_PRINT = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            print("shape", x.shape)
            return x
    """
)
FIXED_MARK = "torch.compiler.is_compiling()"

# The console entry point under an audit hook that logs each socket connect or bind to
# the file named by TORCHLINT_SWEEP_LOG (opened before the hook, written without auditing).
_AUDITED = """
import os, sys
log = os.open(os.environ.pop("TORCHLINT_SWEEP_LOG"), os.O_WRONLY | os.O_APPEND)
def hook(event, args):
    if event in ("socket.connect", "socket.bind"):
        os.write(log, f"{event} {args[1]!r}\\n".encode())
sys.addaudithook(hook)
saved = os.environ.pop("SWEEP_SAVE_BEFORE_WRITE", None)
if saved is not None:
    # The user saves the file between torchlint's check and its write.
    import torchlint.fix.fixing
    write = torchlint.fix.fixing.write_source
    def save_then_write(path, data, expected):
        with open(path, "w") as handle:
            handle.write(saved)
        return write(path, data, expected)
    torchlint.fix.fixing.write_source = save_then_write
sys.argv = ["torchlint", *sys.argv[1:]]
from torchlint.launch import main
main()
"""


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float
    sockets: list[str]


@dataclass
class Case:
    name: str
    item: int  # the reliability item it probes; 0 for generated programs
    setup: Callable[[Path], None]
    args: list[str]
    exit_codes: tuple[int, ...]
    expect: str = ""  # a pattern the output (stdout and stderr) must hold
    changes: tuple[str, ...] = ()  # project files a fix may rewrite
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)
    unprivileged: bool = False  # run without root's right to read and write any file
    root_only: bool = False
    after: Callable[[Path, Outcome], None] | None = None  # more checks on the project
    # a second step run the same way once the first is done (a warm run, an upgrade)
    then: Case | None = None
    signal_after: float | None = None  # send SIGINT this long after the command started
    max_seconds: float | None = None  # (after the signal, where one is sent)
    max_peak_mib: float | None = None
    # more processes of the same command, each started this much later than the one before
    alongside: int = 0
    stagger: float = 0.0


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def files(**named: str | bytes) -> Callable[[Path], None]:
    return lambda root: _write(root, {name.replace("__", "/"): content for name, content in named.items()})


def _snapshot(top: Path) -> dict[str, tuple]:
    """What each file and folder under ``top`` is: kind, mode, owner, links, content."""
    found: dict[str, tuple] = {}
    for folder, folders, names in os.walk(top):
        for name in folders + names:
            path = os.path.join(folder, name)
            status = os.lstat(path)
            key = os.path.relpath(path, top)
            if stat.S_ISREG(status.st_mode):
                try:
                    with open(path, "rb") as handle:
                        digest = hashlib.sha256(handle.read()).hexdigest()
                except OSError:
                    digest = "unreadable"
                found[key] = ("file", status.st_mode, status.st_uid, status.st_gid, status.st_nlink, digest)
            elif stat.S_ISLNK(status.st_mode):
                found[key] = ("link", os.readlink(path))
            else:
                found[key] = (stat.S_IFMT(status.st_mode), status.st_mode, status.st_uid)
    return found


class _PlantedServer:
    """A listening socket where `torchlint server` used to be looked for: any connection
    to it is a command handing its environment to whoever planted it."""

    def __init__(self, runtime: Path) -> None:
        folder = runtime / f"torchlint-{os.getuid()}"
        folder.mkdir(mode=0o700, parents=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(folder / "planted.sock"))
        self.listener.listen(8)
        self.listener.settimeout(0.1)
        self.reached = 0
        self._stop = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                connection, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            self.reached += 1
            connection.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.listener.close()


def _without_root() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise Skipped("running as root without setpriv")
    capabilities = "-dac_override,-dac_read_search,-fowner,-chown"
    return [setpriv, f"--inh-caps={capabilities}", f"--bounding-set={capabilities}"]


class Skipped(Exception):
    pass


class Violation(AssertionError):
    pass


def run_case(case: Case, top: Path) -> list[Outcome]:
    """Run ``case`` (and what it runs next) in a fresh tree under ``top``; raise Violation
    at the first broken invariant, Skipped where this machine cannot run it."""
    if case.root_only and os.geteuid() != 0:
        raise Skipped("needs root")
    project, home, runtime, outside = (top / name for name in ("project", "home", "runtime", "outside"))
    for folder in (project, home, outside):
        folder.mkdir(parents=True)
    _write(outside, {"keep.py": FORWARD_PRINT, "notes.txt": "the user's own\n"})
    case.setup(project)
    server = _PlantedServer(runtime)
    outcomes = []
    try:
        step: Case | None = case
        while step is not None:
            if step is not case:
                step.setup(project)
            outcomes.append(_run_step(step, top, project, home, runtime, server))
            step = step.then
    finally:
        server.close()
    return outcomes


def _run_step(case: Case, top: Path, project: Path, home: Path, runtime: Path, server: _PlantedServer) -> Outcome:
    before = _snapshot(top)
    log = top / "sockets.log"
    log.write_text("")
    env = {key: value for key, value in os.environ.items() if not key.startswith("TORCHLINT_")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_RUNTIME_DIR=str(runtime),
               TORCHLINT_SWEEP_LOG=str(log), PYTHONDONTWRITEBYTECODE="1")
    for key, value in case.env.items():
        env[key] = value.replace("{top}", str(top))
    command = [*(_without_root() if case.unprivileged else []), sys.executable, "-c", _AUDITED, *case.args]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=project, env=env, stdin=subprocess.PIPE if case.stdin is not None else None,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    others = []
    for _ in range(case.alongside):
        time.sleep(case.stagger)
        others.append(subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    if case.signal_after is not None:
        time.sleep(case.signal_after)
        os.killpg(process.pid, 2)
        started = time.monotonic()
    watchdog = threading.Timer(HANG_SECONDS, _kill_group, (process.pid,))
    watchdog.start()
    try:
        out, err, returncode, peak = _communicate(process, case.stdin)
    finally:
        watchdog.cancel()
    seconds = time.monotonic() - started
    if returncode == -9 and seconds >= HANG_SECONDS:
        raise Violation(f"{case.name}: still running after {HANG_SECONDS} s (hung)")
    for other in others:
        other_out, other_err = other.communicate(timeout=HANG_SECONDS)
        _judge_output(case, Outcome(other.returncode, other_out.decode(errors="replace"),
                                    other_err.decode(errors="replace"), 0.0, 0.0, []))
    outcome = Outcome(returncode, out.decode(errors="replace"), err.decode(errors="replace"), seconds, peak,
                      log.read_text().splitlines())
    log.unlink()
    after = _snapshot(top)
    _judge(case, project, top, before, after, outcome, server)
    return outcome


# A run that takes longer than this is taken to hang (the slowest case takes a few seconds).
HANG_SECONDS = 120


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, 9)
    except OSError:
        pass


def _communicate(process: subprocess.Popen, stdin: bytes | None) -> tuple[bytes, bytes, int, float]:
    """(stdout, stderr, exit code, peak MiB of the command and the workers it waited for)."""
    streams: dict[str, bytes] = {}

    def drain(name: str, stream) -> None:
        streams[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(name, stream)) for name, stream in
               (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    if process.stdin is not None:
        try:
            process.stdin.write(stdin or b"")
        except BrokenPipeError:
            pass
        process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join(timeout=60)
    return streams.get("out", b""), streams.get("err", b""), process.returncode, usage.ru_maxrss / 1024


def _judge_output(case: Case, outcome: Outcome) -> None:
    said = outcome.stdout + outcome.stderr
    if "internal error" in said or "Traceback" in said or "would not parse" in said:
        raise Violation(f"{case.name}: an internal error:\n{said}")
    if outcome.returncode not in case.exit_codes:
        raise Violation(f"{case.name}: exit {outcome.returncode}, expected {case.exit_codes}:\n{said}")
    if case.expect and not case.alongside and not re.search(case.expect, said, re.MULTILINE):
        raise Violation(f"{case.name}: the output lacks {case.expect!r}:\n{said}")


def _judge(case: Case, project: Path, top: Path, before: dict, after: dict, outcome: Outcome,
           server: _PlantedServer) -> None:
    _judge_output(case, outcome)
    if case.max_seconds is not None and outcome.seconds > case.max_seconds:
        raise Violation(f"{case.name}: took {outcome.seconds:.1f} s, more than {case.max_seconds} s")
    if case.max_peak_mib is not None and outcome.peak_mib > case.max_peak_mib:
        raise Violation(f"{case.name}: peak {outcome.peak_mib:.0f} MiB, more than {case.max_peak_mib} MiB")
    if outcome.sockets or server.reached:
        raise Violation(f"{case.name}: sockets used: {outcome.sockets}, planted server reached {server.reached}x")
    # The project's cache, and the user's cache of compiled code (and the folder it needs).
    allowed = ("project/.torchlint_cache", "home/.cache/torchlint")
    for key in sorted(before.keys() | after.keys()):
        if before.get(key) == after.get(key) or key == "home/.cache" or key.startswith(allowed):
            continue
        relative = os.path.relpath(top / key, project)
        if relative in case.changes and before.get(key, ("",))[0] == "file" and after.get(key, ("",))[0] == "file":
            was, now = before[key], after[key]
            if was[1:5] != now[1:5]:
                raise Violation(f"{case.name}: {relative} lost its mode, owner or links: {was[1:5]} -> {now[1:5]}")
            text = (top / key).read_bytes()
            compile(text, relative, "exec", dont_inherit=True)
            continue
        raise Violation(f"{case.name}: {key} changed: {before.get(key)} -> {after.get(key)}")
    if case.after is not None:
        case.after(project, outcome)
