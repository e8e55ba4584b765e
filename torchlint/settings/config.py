"""Finding, reading and validating `[tool.torchlint]` / `torchlint.toml`.

Each file is checked with the settings of the closest configuration file above it
(`torchlint.toml` before `pyproject.toml` in the same folder; a `pyproject.toml` counts
only if it has a `[tool.torchlint]` table). `--config` names one file for all.
"""

from __future__ import annotations

import difflib

import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from torchlint.report.diagnostic import FileError

CONFIG_FILENAMES = ("torchlint.toml", "pyproject.toml")
COMPILED_CHOICES = ("forward", "reachable")


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names file and key."""


@dataclass(frozen=True)
class SettingError(FileError):
    """A setting that the project's code contradicts (an entry point that names no function):
    every file is still checked, and the run exits 2. ``path`` is the configuration file."""


def setting_error(config_path: Path, key: str, problem: str) -> SettingError:
    """`pyproject.toml: [tool.torchlint] entry-points: "x" matches ...` once printed."""
    table = "[tool.torchlint] " if config_path.name == "pyproject.toml" else ""
    return SettingError(str(config_path), f"{table}{key}: {problem}")


@dataclass(frozen=True)
class Settings:
    """The settings that apply to the files under one configuration file."""

    root: Path
    config_path: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    target_torch: str | None = None
    guard_functions: tuple[str, ...] = ()
    entry_points: tuple[str, ...] = ()
    # What counts as compiled: "forward" (every nn.Module's forward, and what compile sites and
    # entry points reach) or "reachable" (only what compile sites and entry points reach).
    compiled: str = "forward"
    # The compile profile: Dynamo settings the project compiles under (None: torch's default).
    capture_scalar_outputs: bool | None = None
    capture_dynamic_output_shape_ops: bool | None = None
    trace_numpy: bool | None = None
    trace_autograd_ops: bool | None = None
    reorderable_logging_functions: tuple[str, ...] = ()
    # The mode modules are compiled in: "train", "eval" or "both".
    mode: str = "both"
    # `--fix` without being asked, and whether unsafe fixes count too (None: not said)
    fix: bool = False
    unsafe_fixes: bool | None = None
    # Larger files are not checked: libcst's tree takes several hundred times a file's size.
    max_file_size: int = 1 << 20

    def analysis_inputs(self) -> tuple[object, ...]:
        """What a file's analysis and the solve read of these settings, the compile profile's
        included. Selection, suppression and fixing only filter the findings afterwards, so a
        run with another `--select` reuses every analysis and the last solve."""
        return (
            self.root, self.entry_points, self.compiled, self.guard_functions, self.max_file_size, self.target_torch,
            self.capture_scalar_outputs, self.capture_dynamic_output_shape_ops, self.trace_numpy,
            self.trace_autograd_ops, self.reorderable_logging_functions, self.mode,
        )


@dataclass(frozen=True)
class CliOverrides:
    """Options given on the command line; they beat every configuration file."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, settings: Settings) -> Settings:
        return replace(
            settings,
            select=self.select if self.select is not None else settings.select,
            extend_select=settings.extend_select + self.extend_select,
            ignore=settings.ignore + self.ignore,
        )


def _string_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
    return tuple(
        (pattern, _string_list(codes, f"per-file-ignores.{pattern}", where))
        for pattern, codes in value.items()
    )


def _torch_version(value: Any, where: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+(\.\d+)?", value):
        raise ConfigError(f'{where}: `target-torch` must be a version string such as "2.13"')
    return value


def _boolean(value: Any, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: `{key}` must be true or false")
    return value


def _byte_count(value: Any, key: str, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ConfigError(f"{where}: `{key}` must be a number of bytes (a whole number above 0)")


def _one_of(value: Any, key: str, where: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        shown = ", ".join(f'"{choice}"' for choice in allowed)
        raise ConfigError(f"{where}: `{key}` must be one of {shown}")
    return value


# key -> (Settings field, parser(value, key, where))
_KEYS = {
    "select": ("select", _string_list),
    "extend-select": ("extend_select", _string_list),
    "ignore": ("ignore", _string_list),
    "per-file-ignores": ("per_file_ignores", lambda v, k, w: _per_file_ignores(v, w)),
    "exclude": ("exclude", _string_list),
    "extend-exclude": ("extend_exclude", _string_list),
    "respect-gitignore": ("respect_gitignore", _boolean),
    "target-torch": ("target_torch", lambda v, k, w: _torch_version(v, w)),
    "guard-functions": ("guard_functions", _string_list),
    "entry-points": ("entry_points", _string_list),
    "compiled": ("compiled", lambda v, k, w: _one_of(v, k, w, COMPILED_CHOICES)),
    "capture-scalar-outputs": ("capture_scalar_outputs", _boolean),
    "capture-dynamic-output-shape-ops": ("capture_dynamic_output_shape_ops", _boolean),
    "trace-numpy": ("trace_numpy", _boolean),
    "trace-autograd-ops": ("trace_autograd_ops", _boolean),
    "reorderable-logging-functions": ("reorderable_logging_functions", _string_list),
    "mode": ("mode", lambda v, k, w: _one_of(v, k, w, ("train", "eval", "both"))),
    "fix": ("fix", _boolean),
    "unsafe-fixes": ("unsafe_fixes", _boolean),
    "max-file-size": ("max_file_size", _byte_count),
}


def _read_toml(path: Path) -> dict[str, Any]:
    # Imported here: most folders have no configuration file to read.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    from torchlint.files.source import SourceError, read_bytes

    try:
        # Only a regular file is read: a named pipe would be waited on.
        data = read_bytes(path)
    except SourceError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    try:
        table: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
        return table
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8: {exc.reason} at offset {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except RecursionError:
        # tomllib reads nested arrays and inline tables by recursion.
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def _torchlint_table(path: Path) -> tuple[dict[str, Any], str] | None:
    """The torchlint table of a configuration file and how to name it, or None."""
    document = _read_toml(path)
    if path.name == "pyproject.toml":
        tools = document.get("tool", {})
        table = tools.get("torchlint") if isinstance(tools, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.torchlint] must be a table")
        return table, f"{path} [tool.torchlint]"
    return document, str(path)


def settings_from_table(table: dict[str, Any], root: Path, where: str, path: Path | None) -> Settings:
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(key, list(_KEYS), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(f"{where}: unknown key `{key}`{hint} (known keys: {known})")
        attribute, parse = _KEYS[key]
        values[attribute] = parse(value, key, where)
    _validate_selectors(values, where)
    return Settings(root=root, config_path=path, **values)


def _validate_selectors(values: dict[str, Any], where: str) -> None:
    from torchlint.settings.selection import SelectorError, validate

    try:
        for key in ("select", "extend_select", "ignore"):
            if values.get(key) is not None:
                values[key] = validate(values[key], f"{where}: `{key.replace('_', '-')}`")
        if "per_file_ignores" in values:
            values["per_file_ignores"] = tuple(
                (pattern, validate(codes, f"{where}: `per-file-ignores.{pattern}`"))
                for pattern, codes in values["per_file_ignores"]
            )
    except SelectorError as error:
        raise ConfigError(str(error)) from None


def load_config(path: Path) -> Settings:
    """Settings from one named file; a pyproject.toml without our table gives defaults."""
    path = path.resolve()
    if not path.exists():
        raise ConfigError(f"{path}: configuration file not found")
    found = _torchlint_table(path)
    if found is None:
        return Settings(root=path.parent, config_path=path)
    table, where = found
    return settings_from_table(table, path.parent, where, path)


@dataclass
class ConfigResolver:
    """Finds the settings for any path, reading each configuration file once."""

    overrides: CliOverrides = field(default_factory=CliOverrides)
    explicit: Path | None = None
    cwd: Path = field(default_factory=lambda: Path.cwd())
    # Folders as strings: a project run looks up every folder it reads, and pathlib's
    # objects cost more than the lookups.
    _by_directory: dict[str, Settings] = field(default_factory=dict)
    _fixed: Settings | None = None

    def __post_init__(self) -> None:
        if self.explicit is not None:
            self._fixed = self.overrides.apply(load_config(self.explicit))

    def for_path(self, path: str | Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        directory = os.path.abspath(path)
        if not os.path.isdir(directory):
            directory = os.path.dirname(directory)
        return self._for_directory(directory)

    def _for_directory(self, directory: str) -> Settings:
        cached = self._by_directory.get(directory)
        if cached is not None:
            return cached
        settings = self._settings_in(directory)
        if settings is None:
            parent = os.path.dirname(directory)
            if parent == directory:
                settings = self.overrides.apply(Settings(root=self.cwd))
            else:
                settings = self._for_directory(parent)
        self._by_directory[directory] = settings
        return settings

    def _settings_in(self, directory: str) -> Settings | None:
        for name in CONFIG_FILENAMES:
            candidate = os.path.join(directory, name)
            # False too for a folder we may not look into: it has no config we can use.
            if os.path.isfile(candidate):
                found = _torchlint_table(Path(candidate))
                if found is not None:
                    table, where = found
                    return self.overrides.apply(settings_from_table(table, Path(directory), where, Path(candidate)))
        return None
