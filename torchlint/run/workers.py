"""Worker processes for per-file work, tied to the run that started them.

Every file is analysed in a worker process, never in the run's own: libcst parses in
native code that may take gigabytes on a huge file, abort the process on a parser fault,
or hold the interpreter for seconds on deeply nested code, during which Python cannot
act on Ctrl-C. A worker that dies takes only the file it was working on with it: that
file gets an error saying so, and the rest of the run goes on in a new worker. The run
itself stays free to answer Ctrl-C at once.

A worker must never outlive its run: a killed `torchlint check` (SIGTERM, SIGKILL, a
closed editor) whose workers kept running would hold the caller's stdout and stderr open,
and whoever waits on those pipes would wait for ever. Linux ends a worker the moment its
parent dies (`PR_SET_PDEATHSIG`); on every POSIX system a watch thread also ends it once
it has been handed to another parent. Ctrl-C reaches the whole process group: workers
ignore it, and the run that owns them kills them and exits.
"""

from __future__ import annotations

import collections
import gc
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torchlint.parse.deep_stack import run_with_deep_stack

# How often a worker looks whether its parent is still the one that started it.
_PARENT_POLL_S = 0.5
_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# Items handed to a worker ahead of the one it works on, so that it never waits for the run.
_AHEAD = 2
# The workers of this process, for the signal handler to kill.
_live_workers: weakref.WeakSet = weakref.WeakSet()

# A map's step: ``step(batch, *args)`` gives one result per item of ``batch``.
Step = Callable[..., list]
# What an item stands for when its worker died on it: (item, why) -> its result.
OnDeath = Callable[[Any, str], Any]


def tune_collector() -> None:
    """For a process that is all torchlint's (the command, its workers).

    libcst builds a file's tree from millions of objects that live as long as the file's
    analysis. At Python's default young-generation threshold (700 allocations) the cyclic
    collector walks them again and again: about a tenth of a check's time. At 10,000 it
    takes half as long, at the same peak memory (bench/README.md)."""
    gc.set_threshold(10_000)


def _start_worker(parent: int) -> None:
    """Run first in each worker.

    The worker was started with the stop signals blocked (see ``Workers._start``), so none
    can reach it before it has its own handlers: the run's, which end the run, must not run
    here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    tune_collector()  # a worker started by spawn rather than fork has the default
    if sys.platform.startswith("linux"):
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The parent may have died before the line above took effect.
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="torchlint-parent-watch").start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_S)
    os._exit(1)


def _serve(connection, parent: int) -> None:  # pragma: no cover - runs in the worker
    """A worker's life: take (step, args) and then items, answer each item's result, until
    told to stop (None) or the run is gone."""
    _start_worker(parent)
    step: Step | None = None
    args: tuple = ()
    try:
        while True:
            message = connection.recv()
            if message is None:
                break
            kind, payload = message
            if kind == "step":
                step, args = payload
                continue
            index, item = payload
            result = run_with_deep_stack(lambda: step([item], *args)[0])
            connection.send((index, result))
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    os._exit(0)


@dataclass(eq=False)
class _Worker:
    process: Any
    connection: Any
    # indices of the items sent and not yet answered, in the order sent (and worked on)
    in_flight: collections.deque = field(default_factory=collections.deque)
    # the (step, args) this worker was last told
    call: object = None


def why_it_died(exitcode: int | None) -> str:
    """What a dead worker's exit status says about the file it was working on."""
    if exitcode is not None and exitcode < 0:
        number = -exitcode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if number == signal.SIGKILL:
            return f"the process checking it was killed ({name}; out of memory?)"
        return f"the process checking it crashed ({name})"
    return f"the process checking it ended unexpectedly (exit status {exitcode})"


class Workers:
    """Per-file work across ``count`` worker processes, kept for every phase of a run."""

    def __init__(self, count: int, start_method: str | None = None) -> None:
        self.count = max(1, count)
        self._workers: list[_Worker] = []
        self._context = None
        # None: fork where the system has it. A process with threads of its own (the
        # language server) asks for "spawn": a fork copies the locks another thread holds.
        self._start_method = start_method
        _live_workers.add(self)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type, *exc_info) -> None:
        if exc_type is None:
            self.close()
        else:
            self.kill()  # failed: what the workers are doing no longer matters

    def close(self) -> None:
        for worker in self._workers:
            try:
                worker.connection.send(None)
            except OSError:
                pass
        for worker in self._workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
            worker.connection.close()
        self._workers = []

    def kill(self) -> None:
        for worker in self._workers:
            _kill(worker.process.pid)
        for worker in self._workers:
            worker.process.join(timeout=5)
            worker.connection.close()
        self._workers = []

    def pids(self) -> list[int]:
        return [worker.process.pid for worker in self._workers]

    def map(
        self, step: Step, items: list, *args: object, on_death: OnDeath | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> list:
        """``step([item], *args)[0]`` for each item, in the workers; results in the order of
        ``items``. An item whose worker died gets ``on_death(item, why)`` (or the run fails
        with WorkerDied without it). ``on_done()`` is called as each item is done."""
        if not items:
            return []
        results: list = [None] * len(items)
        waiting = collections.deque(range(len(items)))
        call = (step, args)  # told to each worker once per map
        done = 0
        while done < len(items):
            self._hand_out(call, items, waiting)
            for worker, answer in self._answers():
                if answer is None:  # the worker died
                    index = worker.in_flight.popleft()
                    why = why_it_died(worker.process.exitcode)
                    if on_death is None:
                        raise WorkerDied(why)
                    results[index] = on_death(items[index], why)
                    done += 1
                    if on_done is not None:
                        on_done()
                    waiting.extendleft(reversed(worker.in_flight))  # the others: not started, or lost with it
                    self._drop(worker)
                    continue
                index, result = answer
                worker.in_flight.popleft()
                results[index] = result
                done += 1
                if on_done is not None:
                    on_done()
        return results

    def _hand_out(self, call: tuple, items: list, waiting: collections.deque) -> None:
        for worker in [w for w in self._workers if not w.in_flight and not w.process.is_alive()]:
            self._drop(worker)  # died between items (killed from outside): nothing of its to report
        while waiting and len(self._workers) < min(self.count, len(waiting) + self._busy()):
            self._workers.append(self._start())
        for worker in self._workers:
            while waiting and len(worker.in_flight) < _AHEAD:
                index = waiting[0]
                try:
                    if worker.call is not call:
                        worker.connection.send(("step", call))
                        worker.call = call
                    worker.connection.send(("item", (index, items[index])))
                except OSError:
                    break  # a worker that died: its sentinel says so
                worker.in_flight.append(waiting.popleft())

    def _busy(self) -> int:
        return sum(1 for worker in self._workers if worker.in_flight)

    def _answers(self):
        """Each answer that is ready: (worker, (index, result)), or (worker, None) for a
        worker that died (after the answers it gave before dying)."""
        from multiprocessing.connection import wait

        busy = [worker for worker in self._workers if worker.in_flight]
        by_handle = {}
        for worker in busy:
            by_handle[worker.connection] = worker
            by_handle[worker.process.sentinel] = worker
        dead: list[_Worker] = []
        for handle in wait(list(by_handle)):
            worker = by_handle[handle]
            if worker in dead:
                continue
            try:
                while worker.in_flight and worker.connection.poll():
                    yield worker, worker.connection.recv()
                if handle is worker.connection or worker.process.is_alive():
                    continue
            except (EOFError, OSError):
                pass
            dead.append(worker)
            worker.process.join(timeout=5)
            if worker.in_flight:
                yield worker, None
            else:
                self._drop(worker)

    def _drop(self, worker: _Worker) -> None:
        self._workers.remove(worker)
        worker.process.join(timeout=5)
        worker.connection.close()

    def _start(self) -> _Worker:
        import multiprocessing

        if self._context is None:
            # fork where the system has it: a worker starts with everything imported.
            methods = multiprocessing.get_all_start_methods()
            default = "fork" if "fork" in methods and sys.platform.startswith("linux") else None
            self._context = multiprocessing.get_context(self._start_method or default)
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(theirs, os.getpid()), daemon=True, name="torchlint-worker")
        # A signal held back while the worker starts reaches this process once it has,
        # never a worker still without its handlers.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        theirs.close()
        return _Worker(process, ours)


class WorkerDied(Exception):
    """A worker died on an item whose step says nothing of what that means."""


def _kill(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _stop_now(signum: int, frame) -> None:
    """Ctrl-C or SIGTERM: end the run at once, quietly, with the shell's 128+N.

    Raising from a signal handler could leave a pipe half read and hang the run, so nothing
    unwinds: the workers are killed and the process exits. Nothing is lost but the report,
    which is written only at the end, and a fixed file is never left half written (see
    `source_write`)."""
    for workers in list(_live_workers):
        for pid in workers.pids():
            _kill(pid)
    os._exit(128 + signum)


def stop_on_signals() -> None:
    """Make Ctrl-C and SIGTERM end the command at once, its workers with it."""
    signal.signal(signal.SIGINT, _stop_now)
    signal.signal(signal.SIGTERM, _stop_now)
