"""A verify worker's run of one target for recompiles (`torchlint verify --recompiles`).

The target's calls run twice, each from a fresh copy of its file (its module re-executed, its
`torchlint_targets()` called again, everything seeded alike), so that state one run changes
(a counter on the module, a global) does not reach the other: once under
`torch.compiler.set_stance("force_eager")`, recording the user code that ran and the outputs,
then under torch.compile, counting what Dynamo compiled. Calls that choose no backend get the
one asked for; the Dynamo settings a file changes are put back after each run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from torchlint.verify.module_import import target_module_anew
from torchlint.verify.recompiles import (
    Compiler,
    RecompileCount,
    counting_compiles,
    default_backend,
    detached,
    restoring_settings,
)
from torchlint.verify.targets import TARGETS_FUNCTION, calls_of
from torchlint.verify.worker import (
    _compile_profile,
    _compiled_function,
    _outputs_match,
    _seed_everything,
    _set_module_mode,
    _to_device,
    tracing_user_code,
)


def _calls(path: str, name: str) -> Iterator[tuple[Any, tuple, dict]]:
    _seed_everything()
    with target_module_anew(path) as module:
        declared = getattr(module, TARGETS_FUNCTION, None)
        if declared is None:
            raise LookupError(f"{path} defines no {TARGETS_FUNCTION}()")
        _seed_everything()
        yield from calls_of(declared()[name])


def _run_calls(request: dict, compiler: Compiler) -> list[Any]:
    """Every call of the target, each callable compiled once by ``compiler``; the outputs."""
    outputs = []
    module_mode = (request.get("profile") or {}).get("module_mode")
    seen: set[int] = set()
    for fn, args, kwargs in _calls(request["path"], request["name"]):
        fn, args, kwargs = _to_device(fn, args, kwargs, request["device"])
        if id(fn) not in seen:
            seen.add(id(fn))
            _set_module_mode(fn, module_mode)
        outputs.append(detached(compiler(fn)(*args, **kwargs)))
    return outputs


def run_recompile_target(request: dict, fresh_settings: dict | None = None) -> dict:
    """``fresh_settings``: the Dynamo settings both runs start from (the worker's own, before any
    target file changed them); by default the current ones."""
    import torch
    import torch._inductor.config

    backend, mode = request["backend"], request.get("mode")
    profile = request.get("profile")
    with restoring_settings(fresh_settings), _compile_profile(profile), default_backend(backend, mode):
        with torch.compiler.set_stance("force_eager"), tracing_user_code() as ran:
            expected = _run_calls(request, Compiler(backend, mode))
    with restoring_settings(fresh_settings), _compile_profile(profile), default_backend(backend, mode):
        # Inductor draws random numbers its own way unless told to fall back to eager's.
        with torch._inductor.config.patch(fallback_random=True), counting_compiles() as frames:
            compiler = Compiler(backend, mode)
            outputs = _run_calls(request, compiler)
    count = RecompileCount(frames, len(outputs))
    compiled = [name for name in map(_compiled_function, compiler.callables) if name]
    return {
        "status": "ok",
        **count.as_json(),
        "outputs_match": _outputs_match(expected, outputs),
        "executed": ran.lines,
        "executed_spans": ran.spans,
        "compiled": compiled[0] if compiled else None,
        "compiled_functions": sorted(set(compiled)),
        "targets_file": os.path.realpath(request["path"]),
    }
