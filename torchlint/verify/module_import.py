"""How a verify worker imports a target file: as Python would import it from its project.

A file inside a package (folders with `__init__.py` above it) is imported under its dotted
name (`pkg.model`) with the package's import root first on `sys.path`, so that its relative
imports (`from .layers import Block`) and absolute imports of its own package work. The root
is the folder above the top package: `src` in a src layout (`src/pkg/model.py`, `src` without
an `__init__.py`). A file outside any package is imported from its own folder, as a script
runs, under a name of its own (`_torchlint_target_3`), so that two `model.py` files in two
folders stay apart. Namespace packages (folders without `__init__.py`) are not followed: a
file in one is a file outside any package.

A worker runs targets of many projects one after another, so before each import the target's
root becomes the current one: roots other targets put on `sys.path` are taken off, and a
module another root loaded under a name this root defines (two projects' `pkg`, or two
folders' `layers.py`) is forgotten, so that it cannot stand in for this root's own.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True)
class ModuleLocation:
    # the folder that goes on `sys.path`
    root: Path
    # `pkg.model` (`pkg` for `pkg/__init__.py`); None for a file outside any package
    name: str | None


def locate(path: Path) -> ModuleLocation:
    """Where Python would import ``path`` from: walk up through the folders with an
    `__init__.py`; the first folder without one is the root."""
    if "." in path.stem:
        # `model.v2.py` has no dotted name that Python could import it by.
        return ModuleLocation(path.parent, None)
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and "." not in folder.name and folder != folder.parent:
        parts.insert(0, folder.name)
        folder = folder.parent
    if folder == path.parent:
        return ModuleLocation(folder, None)
    return ModuleLocation(folder, ".".join(parts))


# -- the worker's state, shared by its break and recompile runs --------------------

# Top-level names of the modules the worker loaded before any target: torch, torchlint and
# what they use. They are never forgotten, whatever a target's root defines.
_own_modules: frozenset[str] | None = None
# Roots put on `sys.path` for targets (not those that were on it already).
_inserted_roots: list[str] = []
# Files outside any package, by path, each loaded once under a name of its own.
_loose_modules: dict[str, ModuleType] = {}
_loose_names = itertools.count()


def _worker_modules() -> frozenset[str]:
    global _own_modules
    if _own_modules is None:
        _own_modules = frozenset(name.partition(".")[0] for name in list(sys.modules))
    return _own_modules


def _defines(root: Path, top: str) -> bool:
    return (root / top / "__init__.py").is_file() or (root / f"{top}.py").is_file()


def _loaded_from(module: ModuleType, root: Path) -> bool:
    inside = os.path.realpath(root) + os.sep
    files = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or [])]
    return any(f and os.path.realpath(f).startswith(inside) for f in files)


def _make_current(root: Path) -> None:
    """Put ``root`` first on `sys.path`, alone of the target roots, and forget the modules
    other roots loaded under the names ``root`` defines."""
    own = _worker_modules()
    text = str(root)
    for previous in _inserted_roots:
        while previous in sys.path:
            sys.path.remove(previous)
    _inserted_roots.clear()
    if text not in sys.path:
        _inserted_roots.append(text)
    else:
        sys.path.remove(text)
    sys.path.insert(0, text)

    tops = {name.partition(".")[0] for name in list(sys.modules)} - own
    shadowing = {
        top for top in tops
        if top in sys.modules and _defines(root, top) and not _loaded_from(sys.modules[top], root)
    }
    if not shadowing:
        return
    for name in list(sys.modules):
        if name.partition(".")[0] in shadowing:
            del sys.modules[name]
    # A file outside any package holds the siblings it imported; one whose siblings were
    # forgotten is run again when next asked for, so that it and `sys.modules` agree.
    for path, module in list(_loose_modules.items()):
        if Path(path).parent != root:
            del _loose_modules[path]
            sys.modules.pop(module.__name__, None)
    importlib.invalidate_caches()


def _refuse_worker_module(path: Path, root: Path, name: str) -> None:
    """A package named like one the worker itself loaded (`numpy`, `torch`) from elsewhere
    cannot be imported without pulling that one from under the worker."""
    top = name.partition(".")[0]
    loaded = sys.modules.get(top)
    if top in _worker_modules() and loaded is not None and not _loaded_from(loaded, root):
        raise ImportError(
            f"cannot import {path} as {name}: the verify worker already uses a module named "
            f"{top} (from {getattr(loaded, '__file__', None) or 'no file'})"
        )


@contextmanager
def _naming_the_file(path: Path, where: ModuleLocation) -> Iterator[None]:
    """An error while the file (or its package) is imported names the file, the error, and the
    line of the project's code it came from (the worker's traceback is cut before it)."""
    try:
        yield
    except Exception as error:
        as_name = f" as {where.name} (from {where.root})" if where.name else ""
        raised = _raised_at(error, where.root)
        at = f" (at {raised[0]}:{raised[1]})" if raised else ""
        raise ImportError(f"cannot import {path}{as_name}: {type(error).__name__}: {error}{at}") from error


def _raised_at(error: BaseException, root: Path) -> tuple[str, int] | None:
    """The innermost frame of ``error``'s traceback in a file under ``root``."""
    inside = os.path.realpath(root) + os.sep
    found = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        if os.path.realpath(frame.f_code.co_filename).startswith(inside):
            found = (frame.f_code.co_filename, line)
    return found


def _execute(name: str, path: Path) -> ModuleType:
    """``path`` executed as a new module called ``name``, registered in `sys.modules`."""
    search = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_target_module(path: str) -> ModuleType:
    """The module of the target file at ``path``, imported the first time and kept after:
    under its dotted name when it is in a package, else under a name of its own."""
    file = Path(path)
    where = locate(file)
    _make_current(where.root)
    if where.name is None:
        module = _loose_modules.get(path)
        if module is None:
            importlib.invalidate_caches()
            with _naming_the_file(file, where):
                module = _execute(f"_torchlint_target_{next(_loose_names)}", file)
            _loose_modules[path] = module
        return module
    _refuse_worker_module(file, where.root, where.name)
    if where.name not in sys.modules:
        importlib.invalidate_caches()
    with _naming_the_file(file, where):
        return importlib.import_module(where.name)


@contextmanager
def target_module_anew(path: str) -> Iterator[ModuleType]:
    """The target file executed anew, so that state an earlier run left on it (a counter, a
    global) is gone; the rest of its package is imported once, as usual. Afterwards the name
    goes back to what it was (nothing, or the module `import_target_module` keeps)."""
    file = Path(path)
    where = locate(file)
    _make_current(where.root)
    importlib.invalidate_caches()
    if where.name is None:
        name = f"_torchlint_target_{next(_loose_names)}"
    else:
        _refuse_worker_module(file, where.root, where.name)
        name = where.name
    previous = sys.modules.get(name)
    with _naming_the_file(file, where):
        parent, _, _ = name.rpartition(".")
        if parent:
            importlib.import_module(parent)
        module = _execute(name, file)
    try:
        yield module
    finally:
        # The copy goes once its calls are made, with the models and tensors it holds.
        if sys.modules.get(name) is module:
            del sys.modules[name]
            if previous is not None:
                sys.modules[name] = previous
