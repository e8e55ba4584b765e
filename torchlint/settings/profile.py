"""The compile profile: the torch version and Dynamo settings a project compiles under.

Static rules and `torchlint verify` read the same profile, so a run of verify measures
the rules under the settings they assume.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypedDict

from torchlint.settings.config import Settings

if TYPE_CHECKING:
    from torchlint.analysis.project_hints import ProjectHints

# config attribute -> torch._dynamo.config attribute
_DYNAMO_FLAGS = {
    "capture_scalar_outputs": "capture_scalar_outputs",
    "capture_dynamic_output_shape_ops": "capture_dynamic_output_shape_ops",
    "trace_numpy": "trace_numpy",
    "trace_autograd_ops": "trace_autograd_ops",
}

TorchVersion = tuple[int, int]


class DynamoSettings(TypedDict):
    """What a verify worker sets before running a target (`dynamo_settings`)."""

    # torch._dynamo.config attribute -> its value, for the flags the settings set
    flags: dict[str, bool]
    reorderable_logging_functions: list[str]
    module_mode: str


def dynamo_settings(settings: Settings) -> DynamoSettings:
    """What verify sets in `torch._dynamo.config` before running a target.

    Flags left unset keep torch's defaults. `reorderable_logging_functions` stays as
    dotted names ("print", "logging.info"); the worker imports them.
    """
    flags = {
        dynamo: getattr(settings, attribute)
        for attribute, dynamo in _DYNAMO_FLAGS.items()
        if getattr(settings, attribute) is not None
    }
    return {
        "flags": flags,
        "reorderable_logging_functions": list(settings.reorderable_logging_functions),
        "module_mode": settings.mode,
    }


@dataclass(frozen=True)
class CompileProfile:
    """The settings the static rules assume; torch's defaults unless told otherwise."""

    capture_scalar_outputs: bool = False
    capture_dynamic_output_shape_ops: bool = False
    trace_numpy: bool = True
    trace_autograd_ops: bool = False
    # Calls Dynamo moves out of the graph instead of breaking on ("print", "warnings.warn").
    reorderable_logging_functions: frozenset[str] = frozenset()
    # (major, minor) of the torch the code runs on; None when neither configured nor installed.
    torch_version: TorchVersion | None = None
    # The mode modules are compiled in: "train", "eval" or "both" (findings that hold only in
    # the other mode are dropped).
    mode: str = "both"
    # What counts as compiled (config `compiled`): "forward", every module's forward among the
    # rest, or "reachable", only what compile sites and configured entry points reach.
    compiled: str = "forward"
    # The names by which a call may reach another file's disabled function, or build its
    # TypedDict with optional keys (`project_hints`); None: any name may.
    disabled_names: frozenset[str] | None = None
    typed_dict_names: frozenset[str] | None = None

    @property
    def presumes_forwards(self) -> bool:
        """Whether a module's `forward` counts as compiled though nothing is seen compiling it."""
        return self.compiled == "forward"

    def may_be_disabled(self, *names: str) -> bool:
        return self.disabled_names is None or any(name in self.disabled_names for name in names)

    def may_be_typed_dict(self, *names: str) -> bool:
        return self.typed_dict_names is None or any(name in self.typed_dict_names for name in names)

    def torch_before(self, version: TorchVersion) -> bool:
        """Whether the code runs on a torch older than ``version`` (an unknown torch is not)."""
        return self.torch_version is not None and self.torch_version < version

    def reorders(self, *names: str) -> bool:
        """Whether Dynamo reorders a call known by any of these names instead of breaking."""
        return any(name in self.reorderable_logging_functions for name in names)


def parse_version(text: str | None) -> TorchVersion | None:
    match = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


@lru_cache(maxsize=1)
def installed_torch_version() -> TorchVersion | None:
    """The installed torch's version from its distribution metadata: torch is not imported."""
    return parse_version(distribution_version("torch"))


def distribution_version(name: str) -> str | None:
    """What `importlib.metadata.version` answers, found as it finds it (the first entry of
    `sys.path` that holds the distribution's metadata folder) without importing it: that
    import costs a one-file run more than the rest of its start-up together."""
    for entry in sys.path:
        try:
            folders = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in folders:
            stem, _, suffix = folder.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or stem.partition("-")[0].lower() != name:
                continue
            version = _version_field(os.path.join(entry, folder, "METADATA" if suffix == "dist-info" else "PKG-INFO"))
            if version is not None:
                return version
    return None


def _version_field(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as metadata:
            for line in metadata:
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip()
                if not line.strip():
                    return None  # the headers end at the first empty line
    except OSError:
        pass
    return None


def target_torch(settings: Settings) -> TorchVersion | None:
    """`target-torch` from the configuration, else the installed torch."""
    return parse_version(settings.target_torch) if settings.target_torch else installed_torch_version()


def compile_profile(settings: Settings, hints: ProjectHints | None = None) -> CompileProfile:
    """Config keys win over `torch._dynamo.config.X = ...` assignments found in the code
    (``hints``, the project's; none where only the settings count)."""
    found = hints.dynamo_config if hints is not None else {}
    values: dict[str, bool] = {}
    for attribute in _DYNAMO_FLAGS:
        configured = getattr(settings, attribute)
        assigned = found.get(attribute)
        if configured is not None:
            values[attribute] = configured
        elif isinstance(assigned, bool):
            values[attribute] = assigned
    return CompileProfile(
        **values,
        reorderable_logging_functions=frozenset(settings.reorderable_logging_functions),
        torch_version=target_torch(settings),
        mode=settings.mode,
        compiled=settings.compiled,
        disabled_names=hints.disabled_names if hints is not None else None,
        typed_dict_names=hints.typed_dict_names if hints is not None else None,
    )
