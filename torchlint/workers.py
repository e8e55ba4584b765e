"""Worker processes for per-file work, tied to the run that started them.

A worker must never outlive its run: a killed `torchlint check` (SIGTERM, SIGKILL, a
closed editor) whose workers kept running would hold the caller's stdout and stderr open,
and whoever waits on those pipes would wait for ever. Linux ends a worker the moment its
parent dies (`PR_SET_PDEATHSIG`); on every POSIX system a watch thread also ends it once
it has been handed to another parent. Ctrl-C reaches the whole process group: workers
ignore it, and the run that owns them kills them and exits.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from torchlint.deep_stack import run_with_deep_stack

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

# How often a worker looks whether its parent is still the one that started it.
_PARENT_POLL_S = 0.5
_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# The pools of this process, for the signal handler to kill their workers.
_live_pools: weakref.WeakSet = weakref.WeakSet()


def tune_collector() -> None:
    """For a process that is all torchlint's (the command, its workers).

    libcst builds a file's tree from millions of objects that live as long as the file's
    analysis. At Python's default young-generation threshold (700 allocations) the cyclic
    collector walks them again and again: about a tenth of a check's time. At 10,000 it
    takes half as long, at the same peak memory (bench/README.md)."""
    gc.set_threshold(10_000)


def _die_with_parent(parent: int) -> None:
    """Pool initializer: run in each worker before any work.

    The worker was forked with the stop signals blocked (see ``Workers.map``), so none can
    reach it before it has its own handlers: the run's, which end the run, must not run here."""
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


class Workers:
    """Runs per-file work in this process, or across one process pool kept for every phase."""

    def __init__(self, count: int) -> None:
        self.count = max(1, count)
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type, *exc_info) -> None:
        if self._pool is None:
            return
        if exc_type is None:
            self._pool.shutdown()
            return
        # Failed: what the workers are doing no longer matters.
        _kill_workers(self._pool)

    def map(self, function: Callable[..., list], items: list, *args) -> list:
        """``function(batch, *args)`` over batches of ``items``; results in the order of ``items``."""
        if self.count == 1 or len(items) < 2:
            return _on_deep_stack(function, items, *args) if items else []
        if self._pool is None:
            # Imported here: multiprocessing costs start-up time that small runs never need.
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                max_workers=self.count, initializer=_die_with_parent, initargs=(os.getpid(),)
            )
            _live_pools.add(self._pool)
        # Interleaved batches spread big and small files evenly over the workers.
        stride = min(len(items), self.count * 4)
        batches = [items[i::stride] for i in range(stride)]
        results: list = [None] * len(items)
        repeated = [[arg] * stride for arg in args]
        # Workers are forked while the work is handed out; a signal held back meanwhile
        # reaches this process once they are started, never a worker still without handlers.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            done = self._pool.map(_on_deep_stack, [function] * stride, batches, *repeated)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        for first, batch_results in enumerate(done):
            results[first::stride] = batch_results
        return results


def _on_deep_stack(function: Callable[..., list], batch: list, *args) -> list:
    """A batch on one deep-stack thread (see `deep_stack`): each file's work then runs on it
    directly, instead of starting a thread of its own."""
    return run_with_deep_stack(lambda: function(batch, *args))


def _processes(pool: ProcessPoolExecutor) -> list:
    # Before Python 3.14 the pool names its processes only until it is shut down.
    return list((getattr(pool, "_processes", None) or {}).values())


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    kill = getattr(pool, "kill_workers", None)  # Python 3.14 and later
    if kill is not None:
        kill()
        pool.shutdown(wait=False, cancel_futures=True)
        return
    processes = _processes(pool)
    for process in processes:
        process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.join(timeout=5)


def _stop_now(signum: int, frame) -> None:
    """Ctrl-C or SIGTERM: end the run at once, quietly, with the shell's 128+N.

    Raising from a signal handler could leave the pool's locks held and hang the run, so
    nothing unwinds: the workers are killed and the process exits. Nothing is lost but
    the report, which is written only at the end."""
    for pool in list(_live_pools):
        for process in _processes(pool):
            try:
                os.kill(process.pid, signal.SIGKILL)
            except OSError:
                pass
    os._exit(128 + signum)


def stop_on_signals() -> None:
    """Make Ctrl-C and SIGTERM end the command at once, its workers with it."""
    signal.signal(signal.SIGINT, _stop_now)
    signal.signal(signal.SIGTERM, _stop_now)
