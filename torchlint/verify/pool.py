"""Worker processes for verify: each keeps torch imported; a crash or a hang costs one target.

A worker that dies or runs past the timeout is killed and replaced, and its target is
reported as an error; the run goes on. A pool keeps its workers between runs, so listing
the targets and running them share one torch import.
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

# Importing torch in a fresh worker takes seconds; that is not the target's time.
_START_TIMEOUT_S = 180


class WorkerFailed(Exception):
    pass


class Worker:
    """One worker process; ``command`` starts a different server (see `worker.serve`)."""

    def __init__(self, env: dict[str, str] | None = None, command: Sequence[str] | None = None) -> None:
        self._stderr = tempfile.TemporaryFile()
        # Requests travel on their own pipe: the worker's stdin is empty, so a target
        # that reads the terminal (`input()`, `pdb`) gets end-of-file instead of hanging.
        env = dict(os.environ if env is None else env)
        env.setdefault("PYTHONBREAKPOINT", "0")
        request_read, request_write = os.pipe()
        command = list(command or [sys.executable, "-m", "torchlint.verify.worker"])
        self._process = subprocess.Popen(
            [*command, str(request_read)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            text=True,
            bufsize=1,
            pass_fds=(request_read,),
        )
        os.close(request_read)
        self._requests = os.fdopen(request_write, "w", buffering=1)
        ready = self._read(_START_TIMEOUT_S)
        self.torch_version: str | None = ready.get("torch")
        self.has_cuda: bool = bool(ready.get("cuda"))

    def request(self, payload: dict, timeout: float) -> dict:
        try:
            self._requests.write(json.dumps(payload) + "\n")
            self._requests.flush()
        except (BrokenPipeError, OSError) as error:
            raise WorkerFailed(f"worker exited: {error}; {self._stderr_tail()}") from None
        return self._read(timeout)

    def _read(self, timeout: float) -> dict:
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                self.close()
                raise WorkerFailed(f"timed out after {timeout:g} s")
        line = self._process.stdout.readline()
        if not line:
            self._process.wait(timeout=5)
            raise WorkerFailed(f"worker crashed (exit {self._process.returncode}); {self._stderr_tail()}")
        return json.loads(line)

    def _stderr_tail(self) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 1500))
        tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return "last output: " + " | ".join(tail[-4:]) if tail else "no output"

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        try:
            self._requests.close()
        except OSError:
            pass
        self._stderr.close()


@dataclass
class Job:
    key: str
    payload: dict


class WorkerPool:
    """Up to ``size`` workers, each started when first needed and kept until `close`."""

    def __init__(self, size: int, env: dict[str, str] | None = None, command: Sequence[str] | None = None) -> None:
        self.size = max(1, size)
        # None: the workers inherit this process's environment
        self.env = env
        self._command = command
        # A slot holds a started worker, or None until one is needed.
        self._slots: queue.Queue[Worker | None] = queue.Queue()
        for _ in range(self.size):
            self._slots.put(None)

    @contextmanager
    def worker(self) -> Iterator[Worker]:
        """A started worker, back in the pool afterwards; one that failed is closed and dropped."""
        worker = self._slots.get()
        try:
            if worker is None:
                worker = Worker(self.env, self._command)
            yield worker
        except WorkerFailed:
            if worker is not None:
                worker.close()
            worker = None
            raise
        finally:
            self._slots.put(worker)

    def run(self, jobs: Iterable[Job], *, timeout: float, on_done: Callable[[Job, dict], None]) -> None:
        """Run every job, ``size`` at a time; ``on_done`` gets each job with its response."""
        pending: queue.Queue[Job] = queue.Queue()
        for job in jobs:
            pending.put(job)
        lock = threading.Lock()

        def serve() -> None:
            while True:
                try:
                    job = pending.get_nowait()
                except queue.Empty:
                    return
                started = time.monotonic()
                try:
                    with self.worker() as worker:
                        response = worker.request(job.payload, timeout)
                except WorkerFailed as failure:
                    response = {"status": "error", "error": str(failure)}
                response["seconds"] = round(time.monotonic() - started, 2)
                with lock:
                    on_done(job, response)

        threads = [threading.Thread(target=serve, daemon=True) for _ in range(self.size)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def close(self) -> None:
        for _ in range(self.size):
            worker = self._slots.get()
            if worker is not None:
                worker.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
