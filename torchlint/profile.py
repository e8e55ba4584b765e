"""The compile profile: the Dynamo settings a project compiles under.

Static rules and `torchlint verify` read the same profile, so a run of verify measures
the rules under the settings they assume.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchlint.config import Settings

# config attribute -> torch._dynamo.config attribute
_DYNAMO_FLAGS = {
    "capture_scalar_outputs": "capture_scalar_outputs",
    "capture_dynamic_output_shape_ops": "capture_dynamic_output_shape_ops",
    "trace_numpy": "trace_numpy",
}


def dynamo_settings(settings: Settings) -> dict:
    """What verify sets in `torch._dynamo.config` before running a target.

    Flags left unset keep torch's defaults. `reorderable_logging_functions` stays as
    dotted names ("print", "logging.info"); the worker imports them.
    """
    flags = {
        dynamo: getattr(settings, attribute)
        for attribute, dynamo in _DYNAMO_FLAGS.items()
        if getattr(settings, attribute) is not None
    }
    return {"flags": flags, "reorderable_logging_functions": list(settings.reorderable_logging_functions)}


@dataclass(frozen=True)
class CompileProfile:
    """The Dynamo settings the static rules assume; torch's defaults unless told otherwise."""

    capture_scalar_outputs: bool = False
    capture_dynamic_output_shape_ops: bool = False
    trace_numpy: bool = True


def compile_profile(settings: Settings, dynamo_config: dict | None = None) -> CompileProfile:
    """Config keys win over `torch._dynamo.config.X = ...` assignments found in the code."""
    found = dynamo_config or {}
    values = {}
    for attribute in _DYNAMO_FLAGS:
        configured = getattr(settings, attribute)
        assigned = found.get(attribute)
        if configured is not None:
            values[attribute] = configured
        elif isinstance(assigned, bool):
            values[attribute] = assigned
    return CompileProfile(**values)
