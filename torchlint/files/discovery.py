"""Which files to check: named paths, directory walks, exclude patterns and .gitignore.

Patterns are gitignore-style and decided per walked entry, the way git does: a pattern
that rejects a folder prunes it, and a named folder is walked even when a pattern would
reject it (unless excludes are forced), so `torchlint build/` checks what it is asked to.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from torchlint.settings.config import ConfigResolver, Settings
from torchlint.report.diagnostic import FileError
from torchlint.files.source import SourceError, not_a_regular_file, os_error_cause, read_bytes

if TYPE_CHECKING:
    from pathspec.pattern import RegexPattern

PYTHON_SUFFIXES = (".py", ".pyi")

DEFAULT_EXCLUDES = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "__pycache__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

_GLOB_CHARACTERS = frozenset("*?[\\")


# Files that change what a walk finds without being found themselves.
WALK_SETTINGS_FILES = (".gitignore", "torchlint.toml", "pyproject.toml")


@dataclass
class Discovered:
    """The files to check, and the named paths or folders that could not be searched."""

    files: list[Path] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    # (folder, its st_mtime_ns before it was listed, `folder_names` of it) for each folder
    # walked; only when asked for
    folders: list[tuple[str, int, tuple[str, ...]]] = field(default_factory=list)


def folder_names(entries: Iterable[os.DirEntry[str]]) -> tuple[str, ...]:
    """What a walk takes from a folder's entries: its subfolders (with a slash), its Python
    files and the files that configure the walk, sorted. An editor's swap file, or a file
    saved by a rename, leaves them as they were."""
    names = []
    for entry in entries:
        name = entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir or name.endswith(PYTHON_SUFFIXES) or name in WALK_SETTINGS_FILES or name == ".git":
            names.append(name + "/" if is_dir else name)
    return tuple(sorted(names))


# --- gitignore-style patterns --------------------------------------------------------


class _Rule(NamedTuple):
    rejects: bool  # False for a negated (`!`) pattern
    on_name: bool  # no slash inside: matched against the entry's own name
    dir_only: bool  # ends with a slash
    contents: bool  # "x/**" or "x/**/": what lies below x at any depth, but not x itself
    literal: str | None  # a plain name, compared without a regex
    regex: re.Pattern[str]


def _parse(lines: Sequence[str]) -> list[RegexPattern]:
    # Imported here: a run on a few files of a known project reads no ignore file.
    from pathspec import GitIgnoreSpec

    try:
        return list(GitIgnoreSpec.from_lines(lines).patterns)
    except (ValueError, re.error):
        pass
    # One bad line: keep the others, as git skips only the patterns it cannot parse.
    parsed: list[RegexPattern] = []
    for line in lines:
        try:
            parsed.extend(GitIgnoreSpec.from_lines([line]).patterns)
        except (ValueError, re.error):
            continue
    return parsed


def _rule(pattern: RegexPattern) -> _Rule | None:
    if pattern.include is None:
        return None
    line, regex = pattern.pattern, pattern.regex
    assert isinstance(line, str) and regex is not None  # a pattern parsed from a line of text
    body = line if line.endswith("\\ ") else line.rstrip()
    if body.startswith("!"):
        body = body[1:]
    on_name = "/" not in body.rstrip("/")
    is_literal = on_name and not _GLOB_CHARACTERS.intersection(body)
    return _Rule(
        rejects=bool(pattern.include),
        on_name=on_name,
        dir_only=body.endswith("/"),
        contents=body.rstrip("/").endswith("/**"),
        literal=body.rstrip("/") if is_literal else None,
        regex=regex,
    )


def _hits(rule: _Rule, name: str, relative: str, is_dir: bool) -> bool:
    """Whether the pattern matches this entry itself, as git decides each walked entry.

    pathspec's regexes also match everything below a matching folder; the walk prunes
    such folders instead, so only a match that ends with the entry counts here.
    """
    if rule.dir_only and not is_dir:
        return False
    subject = name if rule.on_name else relative
    if rule.literal is not None:
        return subject == rule.literal
    if rule.contents:
        return rule.regex.search(subject) is not None
    if is_dir:
        subject += "/"  # how pathspec tells a folder from a file
    if not rule.regex.pattern.startswith("^"):
        return rule.regex.search(subject) is not None  # "*", "**/" and the like
    match = rule.regex.fullmatch(subject)
    if match is None:
        return False
    marker = "ps_d" if "ps_d" in rule.regex.groupindex else None
    return marker is None or match.end(marker) in (-1, len(subject))


class _NameMatcher(NamedTuple):
    """Name patterns of a set without negation, where only "does any match" matters."""

    names: frozenset[str]  # plain names, files or folders
    dir_names: frozenset[str]  # plain names ending with a slash
    regex: re.Pattern[str] | None  # the other name patterns, in one search
    others: tuple[_Rule, ...]  # left over when they cannot share one regex

    def hits(self, name: str, is_dir: bool) -> bool:
        if name in self.names or (is_dir and name in self.dir_names):
            return True
        if self.regex is not None and self.regex.search(name + "/" if is_dir else name) is not None:
            return True
        return any(_hits(rule, name, "", is_dir) for rule in self.others)


def _name_matcher(rules: Sequence[_Rule]) -> _NameMatcher:
    literal = [(rule.literal, rule.dir_only) for rule in rules if rule.literal is not None]
    others = tuple(rule for rule in rules if rule.literal is None)
    regex = None
    if len(others) > 1:
        # A name has no inner slash, so searching it equals matching it whole; group
        # names may not repeat inside one regex, and plain grouping is all that is needed.
        parts = (re.sub(r"[(][?]P<[^>]*>", "(?:", rule.regex.pattern) for rule in others)
        try:
            regex = re.compile("|".join(f"(?:{part})" for part in parts))
            others = ()
        except re.error:
            regex = None
    return _NameMatcher(
        names=frozenset(name for name, dir_only in literal if not dir_only),
        dir_names=frozenset(name for name, dir_only in literal if dir_only),
        regex=regex,
        others=others,
    )


class _PatternSet:
    """The patterns of one file (or one setting); the last pattern that matches decides."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.rules = tuple(rule for rule in map(_rule, _parse(list(lines))) if rule is not None)
        self.has_negation = any(not rule.rejects for rule in self.rules)
        self.path_rules = tuple(rule for rule in self.rules if not rule.on_name)
        # Without negation the order does not matter: plain names become set lookups
        # and the other name patterns one regex.
        self._names = _name_matcher([rule for rule in self.rules if rule.on_name])

    def decide(self, name: str, relative: str, is_dir: bool) -> bool | None:
        """True: rejected; False: re-included by a negation; None: no pattern matches."""
        if not self.has_negation:
            if self._names.hits(name, is_dir):
                return True
            return True if any(_hits(rule, name, relative, is_dir) for rule in self.path_rules) else None
        for rule in reversed(self.rules):
            if _hits(rule, name, relative, is_dir):
                return rule.rejects
        return None


class _Scope(NamedTuple):
    """A pattern set and the folder its patterns are relative to."""

    patterns: _PatternSet
    base: str

    def relative(self, path: str) -> str:
        prefix = self.base if self.base.endswith(os.sep) else self.base + os.sep
        relative = path[len(prefix) :] if path.startswith(prefix) else ""
        return relative.replace(os.sep, "/") if os.sep != "/" else relative

    def decide(self, path: str, name: str, is_dir: bool) -> bool | None:
        relative = self.relative(path) if self.patterns.path_rules else ""
        return self.patterns.decide(name, relative, is_dir)


def _first_decision(scopes: Sequence[_Scope], path: str, name: str, is_dir: bool) -> bool | None:
    """The deepest pattern file with an opinion wins, as in git."""
    for scope in reversed(scopes):
        decision = scope.decide(path, name, is_dir)
        if decision is not None:
            return decision
    return None


def _rejected_on_the_way(scope: _Scope, target: str, is_dir: bool) -> bool:
    """Whether ``target``, or a folder between the scope's base and it, is rejected."""
    relative = scope.relative(target)
    if not relative:
        return False
    parts = relative.split("/")
    current = scope.base
    for index, name in enumerate(parts):
        current = os.path.join(current, name)
        if scope.decide(current, name, is_dir or index < len(parts) - 1) is True:
            return True
    return False


# --- exclude settings -------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _exclude_patterns(exclude: tuple[str, ...] | None, extend_exclude: tuple[str, ...]) -> _PatternSet:
    return _PatternSet((DEFAULT_EXCLUDES if exclude is None else exclude) + extend_exclude)


def _exclude_scope(settings: Settings, path: str) -> _Scope:
    """Patterns relative to the settings' root; a path outside it is matched from its anchor."""
    root = os.path.abspath(settings.root)
    if path != root and not path.startswith(root.rstrip(os.sep) + os.sep):
        root = Path(path).anchor
    return _Scope(_exclude_patterns(settings.exclude, settings.extend_exclude), root)


def is_excluded(path: Path, settings: Settings) -> bool:
    """Whether exclude patterns (or the default excludes) reject ``path`` or a folder above it."""
    absolute = os.path.abspath(path)
    return _rejected_on_the_way(_exclude_scope(settings, absolute), absolute, os.path.isdir(absolute))


# --- .gitignore ------------------------------------------------------------------------------


class _GitState(NamedTuple):
    scopes: tuple[_Scope, ...]  # what applies to the folder's entries, deepest last
    ignored: bool  # the folder itself, or one above it, is ignored


class _GitIgnores:
    """Reads each .gitignore once and tracks which ones apply to a folder."""

    def __init__(self) -> None:
        self._files: dict[str, _PatternSet | None] = {}
        self._has_git: dict[str, bool] = {}
        self._states: dict[str, _GitState] = {}

    def _patterns(self, path: str) -> _PatternSet | None:
        if path not in self._files:
            try:
                # Only a regular file is read: a named pipe would be waited on.
                data = read_bytes(Path(path))
            except SourceError:
                self._files[path] = None
            else:
                text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
                patterns = _PatternSet(text.splitlines())
                self._files[path] = patterns if patterns.rules else None
        return self._files[path]

    def is_repository(self, directory: str) -> bool:
        if directory not in self._has_git:
            self._has_git[directory] = os.path.lexists(os.path.join(directory, ".git"))
        return self._has_git[directory]

    def in_repository(self, directory: str) -> bool:
        while True:
            if self.is_repository(directory):
                return True
            parent = os.path.dirname(directory)
            if parent == directory:
                return False
            directory = parent

    def with_own(
        self, inherited: tuple[_Scope, ...], directory: str, has_git: bool, has_gitignore: bool
    ) -> tuple[_Scope, ...]:
        """Add a folder's own files: a repository's top starts afresh from .git/info/exclude."""
        scopes = inherited
        if has_git:
            exclude = self._patterns(os.path.join(directory, ".git", "info", "exclude"))
            scopes = (_Scope(exclude, directory),) if exclude else ()
        if has_gitignore:
            patterns = self._patterns(os.path.join(directory, ".gitignore"))
            if patterns:
                scopes += (_Scope(patterns, directory),)
        return scopes

    def state(self, directory: str) -> _GitState:
        """The .gitignore files above and in ``directory``; outside a repository only its own."""
        cached = self._states.get(directory)
        if cached is not None:
            return cached
        parent = os.path.dirname(directory)
        has_git = self.is_repository(directory)
        inherited: tuple[_Scope, ...]
        if has_git or parent == directory or not self.in_repository(parent):
            inherited, ignored = (), False
        else:
            above = self.state(parent)
            name = os.path.basename(directory)
            ignored = above.ignored or _first_decision(above.scopes, directory, name, True) is True
            inherited = above.scopes
        has_gitignore = os.path.isfile(os.path.join(directory, ".gitignore"))
        state = _GitState(self.with_own(inherited, directory, has_git, has_gitignore), ignored)
        self._states[directory] = state
        return state

    def ignores(self, path: str, is_dir: bool) -> bool:
        above = self.state(os.path.dirname(path))
        return above.ignored or _first_decision(above.scopes, path, os.path.basename(path), is_dir) is True


# --- discovery -------------------------------------------------------------------------------


class _Pending(NamedTuple):
    directory: str
    settings: Settings
    excludes: _Scope
    gitignores: tuple[_Scope, ...]
    own_files_added: bool


class _Discovery:
    def __init__(self, resolver: ConfigResolver, force_exclude: bool, keep_folders: bool = False) -> None:
        self.resolver = resolver
        self.force_exclude = force_exclude
        self.gitignores = _GitIgnores()
        self.files: set[str] = set()
        self.errors: list[FileError] = []
        self.folders: list[tuple[str, int, tuple[str, ...]]] | None = [] if keep_folders else None

    def add(self, raw: str | os.PathLike[str]) -> None:
        path = os.path.abspath(raw)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            if os.path.islink(path):  # listed so that reading it reports the broken link
                self._add_named_file(path)
            else:
                self._error(path, "no such file or directory")
            return
        except OSError as error:
            self._error(path, os_error_cause(error))
            return
        if not stat.S_ISDIR(mode):
            reason = not_a_regular_file(mode)
            if reason is None:
                self._add_named_file(path)
            else:
                self._error(path, reason)
        elif path.endswith(PYTHON_SUFFIXES):
            self._error(path, "is a directory, not a Python file")
        elif not (self.force_exclude and self._rejected(path, is_dir=True)):
            self._walk(path)

    def _add_named_file(self, path: str) -> None:
        if not (self.force_exclude and self._rejected(path, is_dir=False)):
            self.files.add(path)

    def _settings(self, path: str, error_prefix: str = "") -> Settings | None:
        """The settings for ``path``, or None (and an error) where its folder cannot be searched."""
        try:
            return self.resolver.for_path(Path(path))
        except OSError as error:
            self._error(path, error_prefix + os_error_cause(error))
            return None

    def _rejected(self, path: str, is_dir: bool) -> bool:
        # A folder is judged by the settings it sits in, like a walked entry.
        settings = self._settings(os.path.dirname(path) if is_dir else path)
        if settings is None:
            return True
        if _rejected_on_the_way(_exclude_scope(settings, path), path, is_dir):
            return True
        return settings.respect_gitignore and self.gitignores.ignores(path, is_dir)

    def _error(self, path: str, message: str) -> None:
        error = FileError(path, message)
        if error not in self.errors:
            self.errors.append(error)

    def _walk(self, top: str) -> None:
        settings = self._settings(top, "cannot list directory: ")
        if settings is None:
            return
        excludes = _exclude_scope(settings, top)
        pending = [_Pending(top, settings, excludes, self.gitignores.state(top).scopes, True)]
        while pending:
            self._scan(pending.pop(), pending)

    def _scan(self, item: _Pending, pending: list[_Pending]) -> None:
        directory, settings, excludes, gitignores, own_files_added = item
        try:
            # Taken before the listing: a change made meanwhile shows as a newer time.
            modified = os.stat(directory).st_mtime_ns if self.folders is not None else 0
            with os.scandir(directory) as iterator:
                entries = list(iterator)
        except OSError as error:
            self._error(directory, f"cannot list directory: {os_error_cause(error)}")
            return
        if self.folders is not None:
            self.folders.append((directory, modified, folder_names(entries)))
        if not own_files_added:
            names = {entry.name for entry in entries}
            gitignores = self.gitignores.with_own(
                gitignores, directory, has_git=".git" in names, has_gitignore=".gitignore" in names
            )
        respect_gitignore = settings.respect_gitignore
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    is_dir = True
                elif not name.endswith(PYTHON_SUFFIXES):
                    continue
                elif entry.is_symlink():
                    if entry.is_dir():  # folder links are not followed, so walks cannot loop
                        continue
                    is_dir = False  # file links are listed, broken ones too
                elif entry.is_file(follow_symlinks=False):
                    is_dir = False
                else:
                    continue  # sockets, pipes and devices are never source files
            except OSError:
                continue
            path = entry.path
            if excludes.decide(path, name, is_dir) is True:
                continue
            if respect_gitignore and _first_decision(gitignores, path, name, is_dir) is True:
                continue
            if not is_dir:
                self.files.add(path)
                continue
            child_settings = self._settings(path, "cannot list directory: ")
            if child_settings is None:
                continue
            child_excludes = excludes if child_settings is settings else _exclude_scope(child_settings, path)
            pending.append(_Pending(path, child_settings, child_excludes, gitignores, False))


def discover(
    paths: Sequence[str | os.PathLike[str]],
    resolver: ConfigResolver,
    *,
    force_exclude: bool,
    keep_folders: bool = False,
) -> Discovered:
    """The Python files under ``paths`` (absolute, unique, sorted) and what could not be
    searched; with ``keep_folders``, each folder walked as well."""
    discovery = _Discovery(resolver, force_exclude, keep_folders)
    for path in paths:
        discovery.add(path)
    # Sorting by components orders a folder's files before a sibling such as "pkg-extra".
    files = sorted(discovery.files, key=lambda path: path.split(os.sep))
    return Discovered(files=[Path(path) for path in files], errors=discovery.errors, folders=discovery.folders or [])
