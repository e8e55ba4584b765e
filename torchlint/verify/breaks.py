"""Where TorchDynamo breaks the graph, measured by running the code.

Dynamo's `graph_breaks` log artifact is the ground truth here: `torch._dynamo.explain`
misses breaks that follow an empty graph and frames skipped for a break in a loop.
torch is imported inside the functions so that importing torchlint stays light.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sysconfig
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from torchlint.verify.block_spans import WITH_STATEMENTS, block_spans

_HEADER = re.compile(
    r"^Graph break(?: \(user stack suppressed due to duplicate graph break\))? "
    r"in user code at (?P<file>.+):(?P<line>\d+)$"
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')
_GB_URL = re.compile(r"/gb/(gb\d{4})\.html", re.IGNORECASE)
_REASON_PREFIXES = (
    "Encountered graph break when attempting to trace",
    "Failed to handle graph break gracefully",
)
_SKIP_MARKERS = (
    "Skipping the function and falling back to eager",
    "cannot properly resume from this graph break",
    "graph break in loop",
    "graph break that we cannot resume from",
)
# The frame Dynamo gave up on: `frame skipped: f (/path/m.py line 8)`, or `will skip tracing
# the frame f (/path/m.py line 8)`, with the first line of its code.
_SKIPPED_FRAME = re.compile(r"(?:frame skipped: |skip tracing the frame )\S+ \((?P<file>.+?) line (?P<line>\d+)\)")
# A break under a context manager that cannot take one (`with` of a generator's context
# manager): where the `with` statement is, from the record's source attribution. Dynamo gives
# up on the rest of the function that holds it.
_CONTEXT_ORIGIN = re.compile(
    r'Graph break under \w+.*?originated from:\s*\n\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.DOTALL
)
_UNDER_CONTEXT = "Graph break under "
# Sections of a log record that follow the reason.
_REASON_END = ("\nStack variable source attribution:", "\nUser code traceback:")
_GRAPH_BREAK_ARTIFACT = "__graph_breaks"
_TRACE_LOGGER = "torch.__trace"
_KNOWN_GRAPH_BREAK_LOGGERS = (
    "torch._dynamo.symbolic_convert.__graph_breaks",
    "torch._dynamo.convert_frame.__graph_breaks",
    "torch._dynamo.exc.__graph_breaks",
)


@dataclass(frozen=True)
class Break:
    """One graph break, blamed on the innermost line of user code."""

    filename: str | None
    lineno: int | None
    gb_type: str
    gb_id: str | None
    # Dynamo's one-line explanation of the break.
    reason: str
    # True when Dynamo gave up on the whole frame (break in a loop, `try`, `with`).
    frame_skipped: bool = False
    # Where tracing stopped in each frame given up on for this break, as (file, line): the
    # caller whose loop held the call when the break lies in a function it called. The rest
    # of that function ran eagerly, unseen by Dynamo.
    skipped_at: tuple[tuple[str, int], ...] = ()


# -- the graph-break registry -------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _registry_ids_by_type() -> dict[str, tuple[str, ...]]:
    import torch

    path = os.path.join(os.path.dirname(torch.__file__), "_dynamo", "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as handle:
            registry = json.load(handle)
    except (OSError, ValueError):
        return {}
    ids: dict[str, list[str]] = {}
    for gb_id, entries in registry.items():
        for entry in entries:
            found = ids.setdefault(entry.get("Gb_type", ""), [])
            if gb_id not in found:
                found.append(gb_id)
    return {gb_type: tuple(found) for gb_type, found in ids.items()}


def gb_id_for(gb_type: str) -> str | None:
    """The registry's id for a gb_type, when exactly one id carries it."""
    ids = _registry_ids_by_type().get(gb_type, ())
    return ids[0] if len(ids) == 1 else None


# -- which frames are the user's ----------------------------------------------------


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    import torch

    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths}
    return tuple(sorted(stdlib)) + (os.path.realpath(os.path.dirname(torch.__file__)),)


def is_user_file(filename: str) -> bool:
    """Neither the standard library nor torch (nor a frozen or generated module)."""
    if filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    return not any(real == root or real.startswith(root + os.sep) for root in _library_roots())


def _innermost_user_frame(frames: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
    """Dynamo blames the innermost frame; walk out of library code to the caller."""
    for filename, lineno in reversed(frames):
        if is_user_file(filename):
            return filename, lineno
    return None


# -- reading one graph-break log record -------------------------------------------


def _gb_type_of(reason: str) -> str:
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    known = _registry_ids_by_type()
    for line in lines:
        if line in known:
            return line
    for line in lines:
        if not line.startswith(_REASON_PREFIXES):
            return line
    return lines[0] if lines else "unknown"


def _explanation_of(reason: str, gb_type: str) -> str:
    for line in reason.splitlines():
        stripped = line.strip()
        if stripped.startswith("Explanation:"):
            return stripped[len("Explanation:"):].strip()
    return gb_type


def _gb_id_of(text: str, gb_type: str) -> str | None:
    match = _GB_URL.search(text)
    return match.group(1).upper() if match else gb_id_for(gb_type)


def _reason_section(message: str) -> str:
    start = message.find("Graph Break Reason:")
    body = message[start + len("Graph Break Reason:"):] if start != -1 else message
    ends = [at for at in (body.find(marker) for marker in _REASON_END) if at != -1]
    return body[: min(ends)] if ends else body


def _traceback_frames(message: str) -> list[tuple[str, int]]:
    at = message.find("User code traceback:")
    if at == -1:
        return []
    frames = []
    for line in message[at:].splitlines():
        match = _FRAME.match(line)
        if match:
            frames.append((match.group("file"), int(match.group("line"))))
    return frames


@dataclass(frozen=True)
class _Logged:
    """A break as the log reports it, before its location is mapped to user code."""

    blamed: tuple[str, int] | None  # the log header's location (may be library code)
    frames: tuple[tuple[str, int], ...]  # the user code traceback, outermost first
    gb_type: str
    gb_id: str | None
    reason: str
    frame_skipped: bool
    # (file, a line of it at or before where tracing stopped: its first, or the `with` it broke under)
    skipped_frame: tuple[str, int] | None = None


def _skipped_frame(*texts: str) -> tuple[str, int] | None:
    """The frame given up on, by a line at or before where tracing stopped in it."""
    for pattern in (_SKIPPED_FRAME, _CONTEXT_ORIGIN):
        for text in texts:
            match = pattern.search(text)
            if match:
                return match.group("file"), int(match.group("line"))
    return None


def _stopped_at(entry: _Logged) -> tuple[str, int] | None:
    """Where tracing stopped in the frame given up on: its outermost line in the traceback,
    else its first line (the whole function is unseen)."""
    if entry.skipped_frame is None:
        return None
    filename, first = entry.skipped_frame
    for frame in entry.frames:
        if frame[0] == filename and frame[1] >= first:
            return frame
    return entry.skipped_frame


def _from_exception(record: logging.LogRecord) -> _Logged | None:
    """The frame-skip record of convert_frame carries the exception, not a parsed header."""
    error = record.exc_info[1] if record.exc_info else None
    if error is None:
        return None
    text = str(error)
    gb_type = getattr(error, "gb_type", None) or _gb_type_of(text)
    stack = getattr(error, "real_stack", None) or []
    frames = tuple((frame.filename, frame.lineno) for frame in stack if frame.lineno is not None)
    return _Logged(
        blamed=frames[-1] if frames else None,
        frames=frames,
        gb_type=gb_type,
        gb_id=_gb_id_of(text, gb_type),
        reason=_explanation_of(text, gb_type),
        frame_skipped=True,
        skipped_frame=_skipped_frame(record.getMessage(), text),
    )


def _parse_record(record: logging.LogRecord) -> _Logged | None:
    message = record.getMessage()
    header = _HEADER.match(message.split("\n", 1)[0])
    if header is None:
        if any(marker in message for marker in _SKIP_MARKERS):
            return _from_exception(record)
        return None
    reason = _reason_section(message)
    gb_type = _gb_type_of(reason)
    frames = tuple(_traceback_frames(message))
    skipped = any(marker in reason for marker in _SKIP_MARKERS)
    skipped_frame = _skipped_frame(message)
    if skipped and skipped_frame is None and _UNDER_CONTEXT in reason:
        skipped_frame = _holding_a_with(frames)
    return _Logged(
        blamed=(header.group("file"), int(header.group("line"))),
        frames=frames,
        gb_type=gb_type,
        gb_id=_gb_id_of(reason, gb_type),
        reason=_explanation_of(reason, gb_type),
        frame_skipped=skipped,
        skipped_frame=skipped_frame,
    )


def _holding_a_with(frames: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
    """The outermost user frame of the traceback whose line lies in a `with` block: where a
    record names no `with` (torch before 2.13 gives no source attribution), the frame whose
    context manager could not take the break."""
    own = os.path.dirname(os.path.abspath(__file__))
    for filename, lineno in frames:
        if is_user_file(filename) and not os.path.abspath(filename).startswith(own + os.sep):
            spans = block_spans(filename)
            if any(kind in WITH_STATEMENTS and first < lineno <= last for kind, first, last in spans):
                return filename, lineno
    return None


def _locate(logged: list[_Logged]) -> list[Break]:
    """Map each break to user code, then merge repeats of (file, line, gb_type)."""
    # A repeated break is logged without its traceback; reuse the mapping of its first report.
    user_line_of_blamed: dict[tuple[str, int], tuple[str, int]] = {}
    for entry in logged:
        user = _innermost_user_frame(entry.frames)
        if entry.blamed is not None and user is not None:
            user_line_of_blamed.setdefault(entry.blamed, user)
    merged: dict[tuple[str | None, int | None, str], Break] = {}
    for entry in logged:
        location = _innermost_user_frame(entry.frames)
        if location is None and entry.blamed is not None:
            location = user_line_of_blamed.get(entry.blamed, entry.blamed)
        filename, lineno = location if location is not None else (None, None)
        key = (filename, lineno, entry.gb_type)
        stopped = _stopped_at(entry)
        skipped_at = (stopped,) if stopped is not None and is_user_file(stopped[0]) else ()
        found = merged.get(key)
        if found is None:
            merged[key] = Break(
                filename, lineno, entry.gb_type, entry.gb_id, entry.reason, entry.frame_skipped, skipped_at
            )
        elif entry.frame_skipped:
            merged[key] = replace(
                found,
                frame_skipped=True,
                skipped_at=tuple(dict.fromkeys(found.skipped_at + skipped_at)),
            )
    return list(merged.values())


# -- capturing ------------------------------------------------------------------


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _graph_break_loggers() -> list[logging.Logger]:
    # Importing these registers the artifact's loggers.
    import torch._dynamo.convert_frame  # noqa: F401
    import torch._dynamo.exc  # noqa: F401
    import torch._dynamo.symbolic_convert  # noqa: F401
    from torch._logging._internal import log_registry

    names = {
        name for name in log_registry.get_artifact_log_qnames() if name.endswith(_GRAPH_BREAK_ARTIFACT)
    }
    names.update(_KNOWN_GRAPH_BREAK_LOGGERS)
    return [logging.getLogger(name) for name in sorted(names)]


@contextmanager
def _capturing_graph_breaks() -> Iterator[_Collector]:
    """Route the `graph_breaks` artifact to a collector only, and restore the loggers after.

    Setting the loggers directly (rather than `torch._logging.set_logs`) leaves the user's
    other torch log settings alone and keeps the breaks off stderr.
    """
    collector = _Collector()
    loggers = _graph_break_loggers()
    # torch's structured trace (`torch.__trace`) logs every frame at DEBUG, and with no
    # TORCH_TRACE asked for, to handlers copied from the root logger: a test's log capture
    # would print hundreds of its lines under a failure. Off unless TORCH_TRACE asks for it.
    trace = logging.getLogger(_TRACE_LOGGER)
    saved = [(logger, logger.level, logger.propagate) for logger in (*loggers, trace)]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.addHandler(collector)
    if not os.environ.get("TORCH_TRACE"):
        trace.setLevel(logging.WARNING)
    try:
        yield collector
    finally:
        for logger, level, propagate in saved:
            logger.removeHandler(collector)
            logger.setLevel(level)
            logger.propagate = propagate


_COUNTER_GROUPS = ("graph_break", "unimplemented")
# Counted when a generator function (a `@contextmanager` body, say) is entered from code that
# already runs eagerly, after another break made Dynamo skip its caller. Called from compiled
# code, generators are inlined; this is a consequence of that other break, not a break itself.
_GENERATOR_FRAME = "Attempt to trace generator"


def _counter_snapshot() -> dict[str, dict[str, int]]:
    from torch._dynamo.utils import counters

    return {group: dict(counters[group]) for group in _COUNTER_GROUPS}


def _counted_gb_types(before: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
    """(gb_type, counter key) of every break counted since ``before``."""
    after = _counter_snapshot()
    found = []
    for group in _COUNTER_GROUPS:
        for key, count in after[group].items():
            if count > before[group].get(key, 0):
                found.append((_gb_type_of(key.split("\n", 1)[0]), key))
    return found


def _unlogged_breaks(breaks: list[Break], counted: list[tuple[str, str]]) -> list[Break]:
    """Breaks Dynamo counted but did not log (no location is known for them)."""
    logged_types = {brk.gb_type for brk in breaks}
    extra: dict[str, Break] = {}
    for gb_type, key in counted:
        if gb_type in logged_types or gb_type in extra or gb_type == _GENERATOR_FRAME:
            continue
        extra[gb_type] = Break(
            filename=None,
            lineno=None,
            gb_type=gb_type,
            gb_id=_gb_id_of(key, gb_type),
            reason=_explanation_of(key, gb_type),
            frame_skipped=any(marker in key for marker in _SKIP_MARKERS),
        )
    return list(extra.values())


# -- the public probes ---------------------------------------------------------------


def _original(fn: Callable) -> Callable:
    """Code already wrapped by `torch.compile` is probed on its own, with our backend."""
    module = getattr(fn, "_orig_mod", None)  # torch.compile(module) gives an OptimizedModule
    if module is not None:
        return module
    return getattr(fn, "_torchdynamo_orig_callable", fn)


def compile_and_collect(
    fn: Callable,
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    backend: str = "eager",
    mode: str | None = None,
) -> tuple[list[Break], Any]:
    """Run ``fn`` once under a default ``torch.compile``: every graph break, and the output."""
    import torch

    with _capturing_graph_breaks() as collector:
        torch._dynamo.reset()
        before = _counter_snapshot()
        output = torch.compile(_original(fn), **_compile_options(backend, mode))(*args, **(kwargs or {}))
    logged = [entry for entry in map(_parse_record, collector.records) if entry is not None]
    breaks = _locate(logged)
    return breaks + _unlogged_breaks(breaks, _counted_gb_types(before)), output


def collect_breaks(
    fn: Callable, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
) -> list[Break]:
    """Run ``fn`` once under a default ``torch.compile`` and return every graph break."""
    return compile_and_collect(fn, args, kwargs)[0]


def fullgraph_compiles(
    fn: Callable,
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    backend: str = "eager",
    mode: str | None = None,
) -> tuple[bool, str | None, object]:
    """(True, None, output) when ``fn`` compiles as one graph; else (False, why, None).

    ``why`` is the gb_type of Dynamo's Unsupported error, or the exception's type name with
    the first line of its message; either with the user's line Dynamo stopped at, where known.
    """
    import torch

    torch._dynamo.reset()
    compiled = torch.compile(_original(fn), fullgraph=True, **_compile_options(backend, mode))
    try:
        output = compiled(*args, **(kwargs or {}))
    except Exception as error:  # noqa: BLE001 - every failure is an answer here
        return False, _why_not(error), None
    return True, None, output


# How much of an error's first line the fullgraph column shows.
_CAUSE_CHARACTERS = 100


def _why_not(error: Exception) -> str:
    """`UserError: Could not guard on data-dependent expression ... at model.py:12 (if top_p > 0.99:)`."""
    why = getattr(error, "gb_type", None)
    if why is None:
        first = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
        if len(first) > _CAUSE_CHARACTERS:
            first = first[: _CAUSE_CHARACTERS - 1] + "…"
        why = f"{type(error).__name__}: {first}" if first else type(error).__name__
    stack = getattr(error, "real_stack", None)
    if stack:
        frame = stack[-1]
        where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
        why += f" at {where}" + (f" ({frame.line.strip()})" if frame.line else "")
    return why


def _compile_options(backend: str, mode: str | None) -> dict[str, str]:
    return {"backend": backend} if mode is None else {"backend": backend, "mode": mode}
