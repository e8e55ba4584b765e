"""Values torchlint pickles (cache entries, a file's findings kept as bytes until they are
resolved), and loaded back only as torchlint's own classes: a pickle naming anything else
is foreign, and loading it could run any code."""

from __future__ import annotations

import io
import pickle
from typing import Any

# Only these may be rebuilt from a pickle: anything else is refused.
_TRUSTED_MODULES = ("torchlint.",)
_TRUSTED_BUILTINS = {("builtins", "frozenset"), ("builtins", "set"), ("pathlib", "PosixPath"), ("pathlib", "WindowsPath")}


class _TrustedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(_TRUSTED_MODULES) or (module, name) in _TRUSTED_BUILTINS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not torchlint's")


def dumps(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def trusted_loads(data: bytes) -> Any | None:
    """What ``data`` holds, or None where it is damaged or names anything but torchlint's own."""
    try:
        return _TrustedUnpickler(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - whatever is wrong with it, it is not used
        return None
