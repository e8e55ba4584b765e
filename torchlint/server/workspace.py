"""The editor's open buffers and the projects they belong to.

Each open file belongs to one project (its configuration's root, or its top package), read
and solved whole once, then kept up to date (`LiveProject`). Used from one thread only:
the server's lint thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from torchlint.files.project_files import project_root
from torchlint.report.diagnostic import FileError, FileResult
from torchlint.run.cache import cache_folder, refused_folder
from torchlint.run.memo import Progress
from torchlint.server.live_project import LiveProject
from torchlint.settings.config import CliOverrides, ConfigError, ConfigResolver
from torchlint.settings.selection import SelectorError, validate

# (title) -> a progress callback for a project's first read, and its end
ProgressFactory = Callable[[str], tuple[Progress, Callable[[], None]]]


# The settings an editor may send (`initializationOptions.settings`, or the `torchlint` section
# of `workspace/didChangeConfiguration`).
SETTING_KEYS = frozenset({"select", "extendSelect", "ignore", "configuration"})


@dataclass(frozen=True)
class ClientSettings:
    """What the editor's settings may say, over the configuration files: as `--select`,
    `--extend-select`, `--ignore` and `--config` would."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    configuration: str | None = None

    @classmethod
    def read(cls, raw: object) -> ClientSettings:
        """From the client's JSON (`{"select": [...], "ignore": [...], ...}`); ConfigError
        names what is wrong."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ConfigError("editor settings: expected an object of torchlint settings")
        unknown = set(raw) - SETTING_KEYS
        if unknown:
            raise ConfigError(f"editor settings: unknown setting `{sorted(unknown)[0]}`")

        def codes(key: str) -> tuple[str, ...] | None:
            value = raw.get(key)
            if value is None:
                return None
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"editor settings: `{key}` must be a list of rule codes")
            try:
                return validate(value, f"editor settings `{key}`")
            except SelectorError as error:
                raise ConfigError(str(error)) from None

        configuration = raw.get("configuration")
        if configuration is not None and not isinstance(configuration, str):
            raise ConfigError("editor settings: `configuration` must be a path")
        return cls(codes("select"), codes("extendSelect") or (), codes("ignore") or (), configuration)

    def resolver(self, cwd: Path) -> ConfigResolver:
        overrides = CliOverrides(select=self.select, extend_select=self.extend_select, ignore=self.ignore)
        explicit = Path(os.path.expanduser(self.configuration)) if self.configuration else None
        return ConfigResolver(overrides, explicit, cwd)


@dataclass
class Workspace:
    root: Path
    settings: ClientSettings = field(default_factory=ClientSettings)
    progress: ProgressFactory | None = None
    # path -> the open buffer's text
    texts: dict[str, str] = field(default_factory=dict)
    # project root -> the project
    projects: dict[Path, LiveProject] = field(default_factory=dict)
    _resolver: ConfigResolver | None = None

    @property
    def resolver(self) -> ConfigResolver:
        if self._resolver is None:
            self._resolver = self.settings.resolver(self.root)
        return self._resolver

    def reconfigure(self, settings: ClientSettings | None = None) -> None:
        """Configuration changed (the editor's, or a configuration file): every project is read
        again when next needed."""
        if settings is not None:
            self.settings = settings
        self._resolver = None
        for project in self.projects.values():
            project.close()
        self.projects.clear()

    def close(self) -> None:
        self.reconfigure()

    def project_of(self, path: str) -> LiveProject:
        """The project ``path`` belongs to, read and solved the first time it is asked for.
        ConfigError where its configuration is broken."""
        resolver = self.resolver
        root = project_root(Path(path), resolver)
        project = self.projects.get(root)
        if project is not None and project.needs_rebuild:
            # what every file's analysis depends on changed (see `LiveProject.needs_rebuild`)
            project.close()
            project = None
        if project is None:
            project = self._read(Path(path), root)
            self.projects[root] = project
        return project

    def _read(self, anchor: Path, root: Path) -> LiveProject:
        # the cache `check` keeps in the project, unless it is not one to use (a link)
        folder = cache_folder(None, root)
        report, done = self.progress(f"torchlint: reading {root.name or root}") if self.progress else (None, None)
        try:
            return LiveProject(anchor, self.resolver, None if refused_folder(folder) else folder, self.texts, report)
        finally:
            if done is not None:
                done()

    def lint(self, path: str, text: str | None) -> tuple[FileResult, LiveProject | None]:
        """The file's findings with ``text`` as its content (None: as on disk), and the project
        that answered (None where the file is excluded or its configuration broken)."""
        try:
            project = self.project_of(path)
        except ConfigError as error:
            return FileResult(path, errors=[FileError(path, str(error))]), None
        if project.excluded(path):
            return FileResult(path), None
        try:
            result = project.set_text(path, text)
        except ConfigError as error:
            return FileResult(path, errors=[FileError(path, str(error))]), None
        return self.with_setting_errors(result, project), project

    def with_setting_errors(self, result: FileResult, project: LiveProject) -> FileResult:
        """The file's result with the errors of the project's configuration (an entry point
        that names nothing), which `check` prints once a run."""
        errors = project.setting_errors()
        return replace(result, errors=[*result.errors, *errors]) if errors else result

    def open_in(self, project: LiveProject) -> list[str]:
        return sorted(path for path in self.texts if project.holds(path))
