"""How often Dynamo compiled each frame over a series of calls, and why it compiled again.

`torch._dynamo.utils.get_compilation_metrics()` keeps one record per compile attempt of a
frame: its compile id `F/A` (attempt A > 0 of frame F is a recompile), the code's name, file
and first line, the guard that failed (`recompile_reason`, with the user line it names) and,
for the attempt that `recompile_limit` refuses, a `fail_reason`. Nothing has to be logged.
The counts must not depend on earlier runs: Dynamo is reset and the records cleared before a
run, automatic-dynamic profiles (PGO) are read only with a job id, which a run unsets, and
inductor gets a cache folder of the run's own.

The record types import nothing heavy; torch is imported inside the functions that run code.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# Dynamo's graph-break type for the attempt the recompile limit refuses.
LIMIT_EXCEEDED = "recompile limit exceeded"
# Records kept per run; Dynamo's own default (64) is less than ten frames at the limit.
_METRICS_LIMIT = 100_000

# `0/7: ` in front of a guard failure (`!1/0/7: ` under compiled autograd).
_COMPILE_ID = re.compile(r"^\s*!?[\d/_]+:\s?")
# `# self.calls += 1  # m.py:10 in forward`: the source line and where it is; a path Dynamo
# shortened may have lost its first characters.
_GUARD_SITE = re.compile(r"#\s(?P<file>[^\s#()]+):(?P<line>\d+) in (?P<function>\S+)")
_STACK_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$')
_USER_STACK = "User stack trace:"


@dataclass(frozen=True)
class Guard:
    """The guard whose failure made Dynamo compile a frame again."""

    attempt: int  # the compile attempt it caused (A of compile id F/A)
    guard: str  # the check that failed: `self.calls == 7`, `len(xs) == 3`
    reason: str  # Dynamo's whole line, with the source it quotes and any hint
    # The user source the guard names (None for tensor geometry, invalidated ids, ...).
    file: str | None
    line: int | None

    def as_json(self) -> dict:
        return {"attempt": self.attempt, "guard": self.guard, "reason": self.reason, "file": self.file, "line": self.line}


@dataclass
class Frame:
    """One code object Dynamo compiled (or tried to) during the calls."""

    file: str | None
    function: str | None
    first_line: int | None
    last_line: int | None
    compiles: int = 0  # attempts that finished
    graphs: int = 0  # finished attempts that made a graph with operations in it
    failed: int = 0  # attempts that failed for another reason than the limit (a graph break)
    limit_hit: bool = False
    user: bool = True  # neither torch nor the standard library
    guards: list[Guard] = field(default_factory=list)

    @property
    def recompiles(self) -> int:
        return max(0, self.compiles - 1)

    def spans(self, row: int) -> bool:
        return self.first_line is not None and self.first_line <= row <= (self.last_line or self.first_line)

    def as_json(self) -> dict:
        return {
            "file": self.file,
            "function": self.function,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "compiles": self.compiles,
            "recompiles": self.recompiles,
            "graphs": self.graphs,
            "failed": self.failed,
            "limit_hit": self.limit_hit,
            "user": self.user,
            "guards": [guard.as_json() for guard in self.guards],
        }


@dataclass
class RecompileCount:
    """The frames of a run of calls, in the order Dynamo first compiled them."""

    frames: list[Frame]
    calls: int

    @property
    def compiled_nothing(self) -> bool:
        """No frame made a graph, and none failed for a graph break: every call ran eagerly
        without Dynamo giving a reason (a module whose `forward` lives in torch.nn, a first call
        that took a path with no tensor operation)."""
        return not any(frame.graphs for frame in self.frames) and not any(frame.failed for frame in self.frames)

    def recompiling(self, allowed: int) -> list[Frame]:
        return [frame for frame in self.frames if frame.recompiles > allowed or frame.limit_hit]

    def as_json(self) -> dict:
        return {
            "calls": self.calls,
            "compiled_nothing": self.compiled_nothing,
            "frames": [frame.as_json() for frame in self.frames],
        }


# -- reading Dynamo's guard text ---------------------------------------------------------


def parse_guard(
    reason: str,
    attempt: int,
    frame_file: str | None,
    is_user: Callable[[str], bool] = lambda filename: True,
) -> Guard:
    """One `recompile_reason`: `0/7: self.calls == 7   # self.calls += 1  # m.py:10 in forward
    (HINT: ...)`, maybe followed by `User stack trace:` and its frames. The stack names files in
    full, so its innermost user frame is the site; else the `# file:LINE in fn` comment, whose
    shortened path is matched against the frame's file."""
    head, _, stack = reason.partition(_USER_STACK)
    first = _COMPILE_ID.sub("", head.strip().splitlines()[0] if head.strip() else "", count=1)
    guard = first.split("  #", 1)[0].split(" # ", 1)[0].strip()
    site: tuple[str | None, int | None] = (None, None)
    frames = [m for m in map(_STACK_FRAME.match, stack.splitlines()) if m]
    for match in reversed(frames):
        if is_user(match.group("file")):
            site = (_real(match.group("file")), int(match.group("line")))
            break
    comments = list(_GUARD_SITE.finditer(first))
    if site[0] is None and comments:
        file = _resolve_short(comments[-1].group("file"), frame_file)
        if file is not None:
            site = (file, int(comments[-1].group("line")))
    return Guard(attempt, guard, first.strip(), *site)


def _real(filename: str) -> str:
    return filename if filename.startswith("<") else os.path.realpath(filename)


def _resolve_short(short: str, frame_file: str | None) -> str | None:
    """The file Dynamo shortened to ``short`` (relative to torch's folder, sometimes with the
    first characters cut): the frame's own file where it ends so."""
    if os.path.isabs(short) and os.path.exists(short):
        return os.path.realpath(short)
    if frame_file and frame_file.endswith(short.lstrip("./")):
        return frame_file
    return None


# -- counting ---------------------------------------------------------------------------


def _attempt(compile_id: str) -> tuple[str, int] | None:
    """`0/3` -> ("0", 3); `!1/0/3` -> ("!1/0", 3); None for an id of another shape."""
    frame, _, attempt = str(compile_id).rpartition("/")
    attempt = attempt.split("_", 1)[0]
    if not frame or not attempt.isdigit():
        return None
    return frame, int(attempt)


def _code_objects() -> dict[tuple[str, int, str], Any]:
    """(file, first line, name) -> the code objects Dynamo saw since its last reset."""
    from torch._dynamo import convert_frame

    found = {}
    for reference in list(convert_frame.input_codes.seen):
        code = reference()
        if code is not None:
            found[(code.co_filename, code.co_firstlineno, code.co_name)] = code
    return found


def _last_line(code: Any, first: int) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None] if code is not None else []
    return max([first, *lines])


def frames_from_metrics(records: Iterable[Any]) -> list[Frame]:
    """Group compilation records by frame (the F of compile id F/A)."""
    from torchlint.verify.breaks import is_user_file

    codes = _code_objects()
    frames: dict[str, Frame] = {}
    for record in records:
        parsed = _attempt(record.compile_id)
        if parsed is None:
            continue
        key, attempt = parsed
        frame = frames.get(key)
        if frame is None:
            frame = frames[key] = Frame(None, None, None, None)
        if record.co_filename and frame.file is None:
            code = codes.get((record.co_filename, record.co_firstlineno, record.co_name))
            frame.file = _real(record.co_filename)
            frame.function = record.co_name
            frame.first_line = record.co_firstlineno
            frame.last_line = _last_line(code, record.co_firstlineno)
            frame.user = is_user_file(record.co_filename)
        if record.fail_type:
            if LIMIT_EXCEEDED in (record.fail_reason or "").lower():
                frame.limit_hit = True
            else:
                frame.failed += 1
        else:
            frame.compiles += 1
            frame.graphs += bool(record.graph_op_count)
        if record.recompile_reason and attempt > 0:
            frame.guards.append(parse_guard(record.recompile_reason, attempt, frame.file, is_user_file))
    return list(frames.values())


@contextmanager
def counting_compiles() -> Iterator[list[Frame]]:
    """Dynamo reset and its records cleared, no PGO profile read or written, inductor's cache
    in a folder of its own; on exit the list holds the frames compiled inside."""
    import torch
    import torch._dynamo
    from torch._dynamo import utils

    torch._dynamo.reset()
    utils.set_compilation_metrics_limit(_METRICS_LIMIT)
    utils.clear_compilation_metrics()
    cache = tempfile.mkdtemp(prefix="torchlint-inductor-")
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    frames: list[Frame] = []
    try:
        with torch.compiler.config.patch(job_id=None):
            yield frames
            frames.extend(frames_from_metrics(utils.get_compilation_metrics()))
    finally:
        if saved is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved
        shutil.rmtree(cache, ignore_errors=True)
        utils.clear_compilation_metrics()
        torch._dynamo.reset()


# -- what to call ---------------------------------------------------------------------------


def is_compiled(fn: Any) -> bool:
    """Whether ``fn`` already runs under torch.compile: an OptimizedModule, a function
    `torch.compile` returned, or a module whose `.compile()` was called."""
    import torch

    if isinstance(fn, torch._dynamo.eval_frame.OptimizedModule) or hasattr(fn, "_torchdynamo_orig_callable"):
        return True
    return isinstance(fn, torch.nn.Module) and getattr(fn, "_compiled_call_impl", None) is not None


class Compiler:
    """Each distinct callable (by identity) compiled once, so that a later call can recompile
    it; what is already compiled is called as it is."""

    def __init__(self, backend: str, mode: str | None) -> None:
        self.options = {"backend": backend} if mode is None else {"backend": backend, "mode": mode}
        # Keyed by id, holding the callable too, so that an id is not reused while kept.
        self._compiled: dict[int, tuple[Any, Any]] = {}

    def __call__(self, fn: Any) -> Any:
        import torch

        held = self._compiled.get(id(fn))
        if held is None:
            held = self._compiled[id(fn)] = (fn, fn if is_compiled(fn) else torch.compile(fn, **self.options))
        return held[1]

    @property
    def callables(self) -> list[Any]:
        return [fn for fn, _ in self._compiled.values()]


@contextmanager
def default_backend(backend: str, mode: str | None = None) -> Iterator[None]:
    """`torch.compile` (and so `Module.compile()`) calls that choose no backend, mode or options
    get ``backend`` (and ``mode``): code written as users write it runs under the backend asked for."""
    import torch

    original = torch.compile

    @functools.wraps(original)
    def compile_with_default(model: Any = None, **options: Any) -> Any:
        if not {"backend", "mode", "options"} & {key for key, value in options.items() if value is not None}:
            options["backend"] = backend
            if mode is not None:
                options["mode"] = mode
        return original(model, **options)

    torch.compile = compile_with_default
    try:
        yield
    finally:
        torch.compile = original


def detached(output: Any) -> Any:
    """A copy of the tensors in ``output``, so that a later call changing them in place does not
    change what this call returned."""
    import torch
    from torch.utils._pytree import tree_map

    return tree_map(lambda value: value.detach().clone() if isinstance(value, torch.Tensor) else value, output)


def _configs() -> tuple[Any, ...]:
    import torch
    import torch._dynamo.config
    import torch._inductor.config

    return (torch._dynamo.config, torch._inductor.config, torch.compiler.config)


def settings_now() -> dict:
    """Dynamo's, inductor's and torch.compile's config, and grad mode."""
    import torch

    return {"grad": torch.is_grad_enabled(), "configs": [config.get_config_copy() for config in _configs()]}


def _load_settings(settings: dict) -> None:
    import torch

    torch.set_grad_enabled(settings["grad"])
    for config, values in zip(_configs(), settings["configs"]):
        now = config.get_config_copy()
        changed = {key: value for key, value in values.items() if _differs(now.get(key), value)}
        if changed:
            config.load_config(changed)


@contextmanager
def restoring_settings(start_from: dict | None = None) -> Iterator[None]:
    """Put back on exit what code run inside changed of the settings (`settings_now`), such as
    `torch._dynamo.config.specialize_int = True` at a file's top; ``start_from``: settings to run
    under instead of the current ones (a process's own, before any file it ran changed them)."""
    saved = settings_now()
    if start_from is not None:
        _load_settings(start_from)
    try:
        yield
    finally:
        _load_settings(saved)


def _differs(now: Any, before: Any) -> bool:
    try:
        return bool(now != before)
    except Exception:  # noqa: BLE001 - a value that cannot be compared is put back
        return True
