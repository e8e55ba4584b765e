"""The console entry point. When a `torchlint server` with the same code is listening,
the command runs there (already started, with torchlint and libcst imported)
and this process only hands over its arguments, folder, environment, import path and
standard streams; otherwise it runs here. Nothing heavier than the standard library's socket
module is imported before that choice is made."""

from __future__ import annotations

import gc
import marshal
import os
import signal
import socket
import struct
import sys
import zlib
from collections.abc import Sequence

# Set to 1 to run in this process even when a server is listening.
NO_SERVER = "TORCHLINT_NO_SERVER"
_HEADER = struct.Struct("!I")
# The server's first byte: the request was taken, and from here on the command runs there.
ACCEPTED = b"+"


# The distributions a server has imported besides torchlint and the standard library
# (pathspec may also import typing_extensions, for decorators that change nothing it does).
_IMPORTED_DISTRIBUTIONS = frozenset({"libcst", "click", "pathspec"})


def server_key() -> str:
    """Names what a server has imported: Python's version, torchlint's code and the
    versions of the other distributions it imports, as this process would find them. Any
    environment with the same (a pre-commit hook's, an editor's) may use that server; one
    with other code or versions, such as a server started before torchlint's code changed,
    has another key and never finds it."""
    parts = [sys.version]
    package = os.path.dirname(os.path.abspath(__file__))
    for folder, folders, names in os.walk(package):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            with open(os.path.join(folder, name), "rb") as source:
                parts.append(f"{os.path.relpath(folder, package)}/{name}:{zlib.crc32(source.read()):08x}")
    wanted = set(_IMPORTED_DISTRIBUTIONS)
    for entry in sys.path:  # the first metadata folder on the path wins, as for an import
        try:
            listed = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in listed:
            project = name.partition("-")[0].lower()
            if name.endswith(".dist-info") and project in wanted:
                wanted.discard(project)
                parts.append(name)
    return f"{zlib.crc32(chr(0).join(parts).encode()):08x}"


def server_folder() -> str:
    """The per-user folder that holds servers' sockets: only its owner may enter it."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, f"torchlint-{os.getuid()}")


def socket_path() -> str:
    return os.path.join(server_folder(), f"{server_key()}.sock")


def owned_alone(path: str, others: int) -> bool:
    """A file or folder this user owns whose permission bits in ``others`` are all clear."""
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return stat.st_uid == os.getuid() and stat.st_mode & others == 0


def private_folder(folder: str) -> bool:
    """A folder this user owns that nobody else can enter, so that no other user can
    have planted the socket in it."""
    return owned_alone(folder, 0o077)


def send_message(connection: socket.socket, message: object, fds: Sequence[int] = ()) -> None:
    data = marshal.dumps(message)
    socket.send_fds(connection, [_HEADER.pack(len(data))], list(fds))
    connection.sendall(data)


def receive_message(connection: socket.socket, max_fds: int = 0) -> tuple[object, list[int]]:
    header, fds, _, _ = socket.recv_fds(connection, _HEADER.size, max_fds)
    if len(header) != _HEADER.size:
        raise ConnectionError("the message ended early")
    (size,) = _HEADER.unpack(header)
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the message ended early")
        data += chunk
    return marshal.loads(bytes(data)), fds


def servers_possible() -> bool:
    """fork() and Unix sockets that carry file descriptors: not on Windows."""
    return hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(os, "getuid")


def _connect() -> socket.socket | None:
    if os.environ.get(NO_SERVER) or not servers_possible() or not private_folder(server_folder()):
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path())
    except OSError:
        connection.close()
        return None
    return connection


def _streams() -> dict[str, object]:
    """How this process's standard streams are set up, for the server to set up the same."""
    return {
        name: (stream.encoding, stream.errors) if stream is not None else None
        for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout), ("stderr", sys.stderr))
    }


def run_on_server(argv: list[str]) -> int | None:
    """The exit code of the command run by a listening server; None when no server took it
    (there is none, or it was stopping), so that it runs here instead."""
    connection = _connect()
    if connection is None:
        return None
    umask = os.umask(0)
    os.umask(umask)
    request = {
        "command": "run", "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
        "streams": _streams(), "path": list(sys.path), "executable": sys.executable,
    }
    with connection:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            send_message(connection, request, [0, 1, 2])
            if connection.recv(1) != ACCEPTED:
                return None
        except OSError:
            return None
        return _wait_for_exit(connection)


def _wait_for_exit(connection: socket.socket) -> int:
    """Wait for the command's exit code. Ctrl-C and SIGTERM go on to the command, which
    ends as it would have here: at once, with the shell's 128+N."""
    reply = b""
    command_pid: int | None = None
    received: list[int] = []

    def forward(signum: int, frame: object) -> None:
        received.append(signum)
        if command_pid is not None:
            os.kill(command_pid, signum)

    handlers = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        while chunk := connection.recv(64):
            reply += chunk
            if command_pid is None and b"\n" in reply:
                first, _, reply = reply.partition(b"\n")
                command_pid = int(first[len(b"pid "):])
                for signum in received:  # a signal that came before the command was known
                    os.kill(command_pid, signum)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    if reply.startswith(b"exit "):
        return int(reply[len(b"exit "):])
    if received:
        return 128 + received[-1]
    print("error: the torchlint server stopped before the command ended; run it again, or set "
          f"{NO_SERVER}=1 to run without the server", file=sys.stderr)
    return 2


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] != ["server"]:
        code = run_on_server([sys.argv[0], *argv])
        if code is not None:
            sys.exit(code)
    from torchlint.dataclass_code import kept_between_commands

    with kept_between_commands():
        from torchlint.cli import main as run_here

        try:
            run_here()
        finally:
            # All the command built goes when the process ends. Python's last collection would
            # walk it first: about 0.08 s of a one-file run, for nothing.
            gc.freeze()
