"""A verify worker: a long-lived process that keeps torch imported and runs targets.

Requests (on the pipe whose descriptor is the first argument) and responses (on stdout)
are JSON lines. What user code prints goes to stderr, so the response channel carries
nothing else; stdin is left to the targets.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchlint.files.atomic_write import atomic_file
from torchlint.verify.module_import import import_target_module
from torchlint.verify.targets import TARGETS_FUNCTION, calls_of


def _load_targets(path: str) -> dict[str, tuple]:
    module = import_target_module(path)
    declared = getattr(module, TARGETS_FUNCTION, None)
    if declared is None:
        raise LookupError(f"{path} defines no {TARGETS_FUNCTION}()")
    # Models built with random weights get the same ones in every worker and every run,
    # so that a run of fixed code can be compared with the run before the fixes.
    _seed_everything()
    targets = declared()
    if not isinstance(targets, dict):
        raise TypeError(f"{TARGETS_FUNCTION}() must return a dict of name -> (callable, args[, kwargs]), or a list or iterator of those")
    return targets


def _seed_everything() -> None:
    import random

    import torch

    random.seed(0)
    torch.manual_seed(0)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)


def _unpack(entry: Any) -> tuple[Any, tuple, dict]:
    """The target's call; of a target of several calls, the first (`--recompiles` makes them all)."""
    first = next(calls_of(entry), None)
    if first is None:
        raise ValueError("the target makes no call")
    return first


def with_marks(copy, original):
    """``copy`` of the tensor ``original`` (moved, cloned) with Dynamo's marks on it:
    `mark_dynamic`, `mark_static` and their kin live in the tensor's own attributes, which
    neither `.to()` nor `.clone()` carries over."""
    if copy is not original:
        for name, mark in vars(original).items():
            if name.startswith("_dynamo"):
                setattr(copy, name, _copied(mark))
    return copy


def _copied(mark):
    return mark.copy() if isinstance(mark, (set, dict, list)) else mark


def _to_device(fn, args, kwargs, device: str):
    import torch
    from torch.utils._pytree import tree_map

    def move(value):
        if isinstance(value, torch.Tensor):
            return with_marks(value.to(device), value)
        return value.to(device) if isinstance(value, torch.nn.Module) else value

    owner = getattr(fn, "__self__", None)
    if isinstance(fn, torch.nn.Module):
        fn.to(device)
    elif isinstance(owner, torch.nn.Module):
        owner.to(device)
    return fn, tree_map(move, args), tree_map(move, kwargs)


def _executed_lines(fn, args, kwargs) -> tuple[Any, dict[str, list[int]], dict[str, list[list[int]]]]:
    """Run eagerly once, recording what ran in user code (not stdlib, not torch)."""
    import torch

    # Compiled functions run as plain Python here, so their lines are seen.
    with torch.compiler.set_stance("force_eager"), tracing_user_code() as ran:
        output = fn(*args, **kwargs)
    return output, ran.lines, ran.spans


@dataclass
class UserCodeRan:
    """What `tracing_user_code` saw: lines of user code that ran, and for the lines where only
    some instructions ran, the source spans of those that did: a line can run while a part of it
    does not (`a is not None and a.any()` with `a` None). A line missing from the spans ran whole."""

    lines: dict[str, list[int]] = field(default_factory=dict)
    spans: dict[str, list[list[int]]] = field(default_factory=dict)


@contextmanager
def tracing_user_code() -> Iterator[UserCodeRan]:
    """Record the user code (not stdlib, not torch) that runs inside; filled in on exit."""
    from torchlint.verify.breaks import is_user_file

    executed: dict[str, set[int]] = {}
    offsets: dict[Any, set[int]] = {}
    user: dict[str, bool] = {}

    def local(frame, event, arg):
        if event == "opcode":
            offsets[frame.f_code].add(frame.f_lasti)
        elif event == "line":
            executed[frame.f_code.co_filename].add(frame.f_lineno)
        return local

    def tracer(frame, event, arg):
        filename = frame.f_code.co_filename
        if filename not in user:
            user[filename] = is_user_file(filename)
        if not user[filename]:
            return None
        executed.setdefault(filename, set()).add(frame.f_lineno)
        offsets.setdefault(frame.f_code, set())
        frame.f_trace_opcodes = True
        return local

    ran = UserCodeRan()
    sys.settrace(tracer)
    try:
        yield ran
    finally:
        sys.settrace(None)
        ran.lines = {os.path.realpath(f): sorted(rows) for f, rows in executed.items()}
        ran.spans = _partly_run_spans(offsets)


def _partly_run_spans(offsets: dict[Any, set[int]]) -> dict[str, list[list[int]]]:
    """file -> [line, column, end line, end column] of the instructions that ran, on the
    lines where some instruction of a code object that ran did not."""
    import dis

    # (file, line) -> [(ran, span)] over every code object that ran
    by_line: dict[tuple[str, int], list[tuple[bool, tuple[int, int, int, int]]]] = {}
    for code, code_offsets in offsets.items():
        filename = os.path.realpath(code.co_filename)
        for instruction in dis.get_instructions(code):
            span = instruction.positions
            if span is None or None in (span.lineno, span.end_lineno, span.col_offset, span.end_col_offset):
                continue
            where = (span.lineno, span.col_offset, span.end_lineno, span.end_col_offset)
            by_line.setdefault((filename, span.lineno), []).append((instruction.offset in code_offsets, where))
    spans: dict[str, set[tuple[int, int, int, int]]] = {}
    for (filename, _), instructions in by_line.items():
        ran = [span for did, span in instructions if did]
        if ran and len(ran) < len(instructions):
            spans.setdefault(filename, set()).update(ran)
    return {f: sorted(map(list, s)) for f, s in spans.items()}


def _numpy_array(value) -> bool:
    # Named, not imported: numpy is optional for torch and for the code verify runs.
    return type(value).__name__ == "ndarray" and type(value).__module__ == "numpy"


def _outputs_match(expected, actual) -> bool:
    """Tensors and numpy arrays within tolerance, and every other leaf (a string, a number,
    None) equal."""
    from torch.utils._pytree import tree_flatten

    expected_leaves, expected_structure = tree_flatten(expected)
    actual_leaves, actual_structure = tree_flatten(actual)
    return expected_structure == actual_structure and _leaves_match(expected_leaves, actual_leaves)


def _leaves_match(expected: list, actual: list) -> bool:
    import torch

    if len(expected) != len(actual):
        return False
    for want, got in zip(expected, actual):
        try:
            if isinstance(want, torch.Tensor) or isinstance(got, torch.Tensor):
                torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3, equal_nan=True)
            elif _numpy_array(want) or _numpy_array(got):
                # `==` on arrays gives an array, whose truth Python cannot take.
                torch.testing.assert_close(torch.as_tensor(got), torch.as_tensor(want), rtol=1e-3, atol=1e-3, equal_nan=True)
            elif not bool(want == got):
                return False
        except (AssertionError, TypeError, ValueError, RuntimeError):
            return False
    return True


def _kept_form(output) -> dict:
    """An output as plain data that `torch.load(weights_only=True)` reads back: its
    structure's text and its leaves (tensors on the CPU, numbers, strings). Any other object
    is opaque: only its type is kept, and an output holding one matches nothing, as an
    object without a value equality would not. A file kept on disk is never unpickled as
    arbitrary objects."""
    import torch
    from torch.utils._pytree import tree_flatten

    leaves, structure = tree_flatten(output)
    opaque = False

    def kept(leaf):
        nonlocal opaque
        if isinstance(leaf, torch.Tensor):
            return leaf.detach().cpu()
        if _numpy_array(leaf):
            return torch.as_tensor(leaf)
        if leaf is None or type(leaf) in (bool, int, float, str):
            return leaf
        opaque = True
        return f"<{type(leaf).__module__}.{type(leaf).__qualname__}>"

    return {"structure": str(structure), "leaves": [kept(leaf) for leaf in leaves], "opaque": opaque}


def _break_json(brk) -> dict:
    return {
        "file": os.path.realpath(brk.filename) if brk.filename else None,
        "line": brk.lineno,
        "gb_type": brk.gb_type,
        "gb_id": brk.gb_id,
        "reason": brk.reason,
        "frame_skipped": brk.frame_skipped,
        "skipped_at": [[os.path.realpath(file), line] for file, line in brk.skipped_at],
    }


def _resolve_dotted(name: str) -> Any:
    """`print` -> the builtin, `logging.info` -> the function, `a.b.C.method` -> the attribute."""
    import builtins

    if "." not in name:
        return getattr(builtins, name)
    parts = name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            value = getattr(value, attribute)
        return value
    raise ImportError(f"cannot import {name}")


@contextmanager
def _compile_profile(profile: dict | None) -> Iterator[None]:
    """Run under the project's Dynamo settings, then restore torch's."""
    import torch._dynamo

    profile = profile or {}
    changes = dict(profile.get("flags", {}))
    reorderable = profile.get("reorderable_logging_functions") or []
    if reorderable:
        changes["reorderable_logging_functions"] = set(
            torch._dynamo.config.reorderable_logging_functions
        ) | {_resolve_dotted(name) for name in reorderable}
    with torch._dynamo.config.patch(**changes):
        yield


def _set_module_mode(fn, mode: str | None) -> None:
    """The profile's `mode = "train"` or `"eval"`: the module a target runs (the target itself,
    or the object of a bound method) is put in that mode; "both" leaves it as built."""
    import torch

    if mode not in ("train", "eval"):
        return
    module = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if isinstance(module, torch.nn.Module):
        module.train(mode == "train")


def _compiled_function(fn) -> str | None:
    """`Class.method` of the Python function torch.compile traces first for ``fn``.

    The qualified name without the module: entry points match by suffix, and a file
    outside any project has no reliable module name.
    """
    import torch

    from torchlint.verify.breaks import _original

    fn = _original(fn)
    if isinstance(fn, torch.nn.Module):
        fn = type(fn).forward
    fn = getattr(fn, "__func__", fn)
    qualname = getattr(fn, "__qualname__", None)
    if not qualname or "<locals>" in qualname:
        return None
    return qualname


def _own_copy(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The tensors of a call copied, so that a run that changes its inputs in place (an
    optimizer's update) leaves the next run the inputs the target built."""
    import torch
    from torch.utils._pytree import tree_map

    def copy(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
            return with_marks(value.detach().clone().requires_grad_(value.requires_grad), value)
        return value

    return tree_map(copy, args), tree_map(copy, kwargs)


def _eager_again(fn, args: tuple, kwargs: dict):
    _seed_everything()
    try:
        copied_args, copied_kwargs = _own_copy(args, kwargs)
        return fn(*copied_args, **copied_kwargs)
    except Exception as error:  # noqa: BLE001 - a second run that fails differs from the first
        return error


def run_target(request: dict) -> dict:
    from torchlint.verify.breaks import compile_and_collect, fullgraph_compiles

    fn, args, kwargs = _unpack(_load_targets(request["path"])[request["name"]])
    fn, args, kwargs = _to_device(fn, args, kwargs, request["device"])
    _set_module_mode(fn, (request.get("profile") or {}).get("module_mode"))
    backend, mode = request["backend"], request.get("mode")
    # The same seeds (torch's, NumPy's and `random`'s) before each run, so random draws give
    # comparable outputs.
    _seed_everything()
    expected, executed, spans = _executed_lines(fn, *_own_copy(args, kwargs))
    import torch._inductor.config

    # Inductor draws random numbers its own way unless told to fall back to eager's.
    with _compile_profile(request.get("profile")), torch._inductor.config.patch(fallback_random=True):
        _seed_everything()
        breaks, output = compile_and_collect(fn, *_own_copy(args, kwargs), backend=backend, mode=mode)
        _seed_everything()
        ok, why, _ = fullgraph_compiles(fn, *_own_copy(args, kwargs), backend=backend, mode=mode)
    matched = _outputs_match(expected, output)
    response = {
        "status": "ok",
        "breaks": [_break_json(b) for b in breaks],
        "fullgraph": {"ok": ok, "error": why},
        "outputs_match": matched,
        # Where they differ: whether eager, run again from the same seeds, differs from itself
        # too (a draw no seed fixes, the clock): then compiling is not what changed the output.
        "nondeterministic": None if matched else not _outputs_match(expected, _eager_again(fn, args, kwargs)),
        "executed": executed,
        "executed_spans": spans,
        "compiled": _compiled_function(fn),
    }
    if request.get("save_output"):
        response["output_saved"] = _save_output(expected, request["save_output"])
    if request.get("expected_output"):
        response["original_output"] = _against_original(request["expected_output"], expected, output)
    return response


def _save_output(output, path: str) -> str | None:
    """The eager output kept for a later run of the fixed code; why not, if it cannot be."""
    import torch

    try:
        # Whole or not at all: a save that fails part way must not leave a file to compare with.
        with atomic_file(Path(path)) as stream:
            torch.save(_kept_form(output), stream)
    except Exception as error:  # noqa: BLE001 - an output that cannot be kept is not compared
        return f"{type(error).__name__}: {error}"
    return None


def _against_original(path: str, eager, compiled) -> dict:
    """Whether this run's eager and compiled outputs match the eager output saved before the
    fixes, within `_outputs_match`'s tolerance."""
    import torch

    if not os.path.isfile(path):
        return {"error": "no output was saved before the fixes"}
    try:
        original = torch.load(path, weights_only=True)
    except Exception as error:  # noqa: BLE001 - reported, not compared
        return {"error": f"cannot load the output saved before the fixes: {type(error).__name__}: {error}"}
    if not isinstance(original, dict) or set(original) != {"structure", "leaves", "opaque"}:
        return {"error": "the output saved before the fixes is not one verify wrote"}

    def matches(output) -> bool:
        now = _kept_form(output)
        return (
            not (original["opaque"] or now["opaque"])
            and now["structure"] == original["structure"]
            and _leaves_match(original["leaves"], now["leaves"])
        )

    return {"eager": matches(eager), "compiled": matches(compiled)}


# The settings of this process before any target file ran (a file may change Dynamo's config
# at its top when it is imported to list its targets); recompile runs start from them.
_FRESH_SETTINGS: dict = {}


def handle(request: dict) -> dict:
    if not _FRESH_SETTINGS:
        from torchlint.verify.recompiles import settings_now

        _FRESH_SETTINGS.update(settings_now())
    if request["op"] == "list":
        return {"status": "ok", "names": list(_load_targets(request["path"]))}
    if request["op"] == "recompiles":
        from torchlint.verify.recompile_worker import run_recompile_target

        return run_recompile_target(request, _FRESH_SETTINGS)
    return run_target(request)


def _answer(handler: Callable[[dict], dict], request: dict) -> dict:
    try:
        return handler(request)
    except BaseException as error:  # noqa: BLE001 - the parent reports it and goes on
        if isinstance(error, KeyboardInterrupt):
            raise
        return {
            "status": "error",
            "error": f"{type(error).__name__}: {error}",
            "traceback": traceback.format_exc(limit=8),
        }


def serve(handler: Callable[[dict], dict], requests_fd: int) -> None:
    """Import torch once, then answer each JSON request line read from ``requests_fd``.

    Other long-lived torch processes (the test suite's page probes) serve with their own
    ``handler``, so that `pool.Worker` drives them too.
    """
    # Keep the response channel clean: user prints (even from C) land on stderr.
    responses = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import torch  # noqa: F401 - imported once, before the first request

    ready = {"status": "ready", "torch": torch.__version__, "cuda": torch.cuda.is_available()}
    responses.write(json.dumps(ready) + "\n")
    requests = os.fdopen(requests_fd, "r")
    for line in requests:
        if line.strip():
            responses.write(json.dumps(_answer(handler, json.loads(line))) + "\n")


if __name__ == "__main__":
    serve(handle, int(sys.argv[1]))
