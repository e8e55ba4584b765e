"""`torchlint server`: a process that keeps torchlint, libcst and the rules imported, so
that a command run while it listens (pre-commit's, an editor's) does not pay for starting
them. Each command runs in a fork of the server with the caller's arguments, folder,
environment, umask and standard streams, and its import path, and reads and writes the same cache as a command run without it: its
output and exit code are the same. A server serves every environment with the same code
(`launch.server_key`). See `launch` for the caller's side."""

from __future__ import annotations

import gc
import importlib
import io
import os
import signal
import socket
import sys
import time

from torchlint.launch import (
    ACCEPTED, private_folder, receive_message, send_message, server_folder, servers_possible, socket_path,
)

DEFAULT_IDLE_TIMEOUT = 3600.0
# What a command may need, imported once here instead of in every command.
_PRELOAD = (
    "torchlint.cli", "torchlint.runner", "torchlint.engine", "torchlint.fixing", "torchlint.reporters.concise",
    "torchlint.reporters.full", "torchlint.reporters.json_", "torchlint.reporters.github",
    "torchlint.reporters.sarif", "pathspec", "tomllib" if sys.version_info >= (3, 11) else "tomli", "json",
    "tempfile", "difflib",
)


class ServerError(Exception):
    pass


def _ask(message: dict) -> object | None:
    """The answer of the server with this code to ``message``; None when none listens."""
    if not servers_possible() or not private_folder(server_folder()):
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with connection:
        try:
            connection.connect(socket_path())
            send_message(connection, message)
            if connection.recv(1) != ACCEPTED:
                return None
            answer, _ = receive_message(connection)
        except OSError:
            return None
    return answer


def status() -> dict | None:
    answer = _ask({"command": "status"})
    return answer if isinstance(answer, dict) else None


def stop() -> bool:
    """Stop the server with this code; False when none was listening."""
    return _ask({"command": "stop"}) is not None


def start(idle_timeout: float) -> dict:
    """Start a server in the background and return its status once it listens (that of the
    one already listening, marked `already`, where there is one)."""
    running = status()
    if running is not None:
        return {**running, "already": True}
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the daemon's side; its behaviour is tested through the socket
        os.close(ready_read)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        _daemon(idle_timeout, ready_write)
    os.close(ready_write)
    os.waitpid(pid, 0)
    with os.fdopen(ready_read, "rb") as ready:
        said = ready.read().decode(errors="replace")
    if said != "ready":
        raise ServerError(said or "the server ended before it listened")
    answer = status()
    if answer is None:
        raise ServerError("the server said it listens, but does not answer")
    return answer


def _daemon(idle_timeout: float, ready_write: int) -> None:  # pragma: no cover - see start()
    """The server process: detach from the terminal, import, listen, serve until idle."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.chdir("/")
    try:
        listener = _listen()
        for name in _PRELOAD:
            importlib.import_module(name)
        from torchlint.rules import all_rules

        all_rules()
    except Exception as error:  # noqa: BLE001 - told to the `start` that waits
        os.write(ready_write, f"{type(error).__name__}: {error}".encode())
        os._exit(1)
    # Everything imported so far lives as long as the server: keep the collector off it.
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished commands
    os.write(ready_write, b"ready")
    os.close(ready_write)
    _serve(listener, idle_timeout)
    os._exit(0)


def _listen() -> socket.socket:
    folder = server_folder()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if not private_folder(folder):
        raise ServerError(f"{folder} is not a folder only this user can enter")
    path = socket_path()
    if os.path.exists(path):
        os.unlink(path)  # left by a server that was killed: `start` found nobody listening
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    return listener


def _serve(listener: socket.socket, idle_timeout: float) -> None:  # pragma: no cover - see start()
    path = listener.getsockname()
    facts = {"pid": os.getpid(), "socket": path, "started": time.time(), "idle_timeout": idle_timeout, "served": 0}
    last_command = time.monotonic()
    while True:
        # Only commands keep the server up: asking for its status does not.
        left = idle_timeout - (time.monotonic() - last_command)
        if left <= 0:
            break
        listener.settimeout(left)
        try:
            connection, _ = listener.accept()
        except socket.timeout:
            break
        with connection:
            try:
                command = _answer(connection, listener, facts)
            except OSError:
                continue  # a caller that went away, or sent something else: the next one
        if command == "run":
            last_command = time.monotonic()
        elif command == "stop":
            break
    # Unlink first: a caller that connects from now on finds nobody and runs by itself.
    os.unlink(path)
    listener.close()


def _answer(connection: socket.socket, listener: socket.socket, facts: dict) -> str | None:  # pragma: no cover
    """Take one request: run a command in a fork, or tell the server's facts. The request's
    command, or None for one that is not understood."""
    # A caller sends its request as soon as it connects; one that does not holds up the rest.
    connection.settimeout(2)
    try:
        request, fds = receive_message(connection, max_fds=3)
    except (ValueError, EOFError) as error:
        raise OSError(f"not a request: {error}") from None
    command = request.get("command") if isinstance(request, dict) else None
    if command == "run" and len(fds) == 3:
        facts["served"] += 1
        connection.sendall(ACCEPTED)
        if os.fork() == 0:
            listener.close()
            _run_command(connection, request, fds)
    _close(fds)
    if command in ("status", "stop"):
        connection.sendall(ACCEPTED)
        send_message(connection, facts)
    return command if command in ("run", "status", "stop") else None


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _stream(fd: int, mode: str, setup: tuple[str, str] | None) -> io.TextIOWrapper:
    encoding, errors = setup or ("utf-8", "strict")
    binary = open(fd, mode + "b", closefd=False, buffering=-1)  # noqa: SIM115 - lives as long as the command
    return io.TextIOWrapper(binary, encoding=encoding, errors=errors, line_buffering=mode == "w" and os.isatty(fd))


def _run_command(connection: socket.socket, request: dict, fds: list[int]) -> None:  # pragma: no cover
    """In the fork: become the caller (its streams, folder, environment, umask, arguments,
    import path and interpreter), run the command and send back its exit code."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # The caller sends its Ctrl-C and SIGTERM on to this process.
    connection.sendall(f"pid {os.getpid()}\n".encode())
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    streams = request["streams"]
    sys.stdin = _stream(0, "r", streams["stdin"])
    sys.stdout = _stream(1, "w", streams["stdout"])
    sys.stderr = _stream(2, "w", streams["stderr"])
    code = 2
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(request["umask"])
        sys.argv = list(request["argv"])
        # What the command imports from here on, and the Python its own processes run
        # (`verify`'s workers), are the caller's.
        sys.path[:] = request["path"]
        sys.executable = request["executable"]
        from torchlint.cli import main

        main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if isinstance(done.code, str):
            print(done.code, file=sys.stderr)
    except BaseException as error:  # noqa: BLE001 - the caller must hear back
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        try:
            connection.sendall(f"exit {code}".encode())
        finally:
            os._exit(0)
