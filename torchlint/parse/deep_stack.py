"""Runs one file's analysis on a thread with a large stack and a high recursion limit.

libcst trees nest as deep as the code does: an `elif` chain is an `If` inside the
`orelse` of the one before, `a + b + c` and `x.relu().relu()` nest one node per term,
adjacent string literals one per literal. libcst's code generation (which positions
use) recurses through that nesting, and so do the walks that judge an expression. Valid
code that CPython compiles, such as a 600-branch `elif` or a 400-term sum, goes deeper
than the default limit of 1,000 frames and than the main thread's stack would bear if
the limit were simply raised. A fresh thread, one per batch of files (see `workers`),
gets a stack sized for the raised limit; its pages are only touched as deep as the work
goes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

# Each Python frame of the deepest walks costs well under 2 KiB of C stack; the margin
# keeps RecursionError, never a stack overflow, the way deeper code fails.
_RECURSION_LIMIT = 60_000
_STACK_BYTES = 512 * 1024 * 1024

_state = threading.local()
# The recursion limit is the interpreter's, not the thread's: one deep thread at a time.
_one_at_a_time = threading.Lock()


def run_with_deep_stack(work: Callable[[], _T]) -> _T:
    """``work()`` on a thread with a deep stack; its result, or the exception it raised."""
    if getattr(_state, "deep", False):
        return work()  # already on a deep thread
    outcome: list = []

    def run() -> None:
        _state.deep = True
        try:
            outcome.append((True, work()))
        except BaseException as error:  # noqa: BLE001 - handed back to the caller's thread
            outcome.append((False, error))

    with _one_at_a_time:
        limit = sys.getrecursionlimit()
        try:
            size = threading.stack_size(_STACK_BYTES)
        except (ValueError, RuntimeError):
            return work()  # a platform that cannot size stacks: the default limits apply
        try:
            thread = threading.Thread(target=run, name="torchlint-deep-stack")
            sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
            thread.start()
        except RuntimeError:  # no thread to be had (memory, process limits)
            sys.setrecursionlimit(limit)
            return work()
        finally:
            threading.stack_size(size)
        try:
            thread.join()
        finally:
            sys.setrecursionlimit(limit)
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value
