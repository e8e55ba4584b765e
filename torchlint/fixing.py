"""`--fix`: the findings' fixes applied in passes until none is left to apply, each pass
checked to parse, the files written whole at the end.

A pass applies every applicable fix of a file that overlaps no fix already taken (two
fixes that add the same `import torch` share it); the next pass checks the fixed text
again, which may offer fixes that overlapped before. A pass whose result Python cannot
compile is dropped for that file and reported, never written.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.atomic_write import atomic_file
from torchlint.config import ConfigResolver, Settings
from torchlint.diagnostic import Diagnostic, FileError
from torchlint.fix_edits import TextLines, splice_at
from torchlint.line_map import original_line
from torchlint.runner import CheckRun, check_files, check_paths
from torchlint.source import SourceError, encode_source, read_source

# Passes over the same files: each may uncover fixes the one before could not apply.
MAX_PASSES = 10


def apply_fixes(text: str, diagnostics: Sequence[Diagnostic], unsafe: bool) -> tuple[str, list[Diagnostic]]:
    """``text`` with the applicable fixes that overlap none taken before them; the findings fixed."""
    lines = TextLines(text)
    taken: list[tuple[int, int, str]] = []
    fixed = []
    candidates = sorted((d for d in diagnostics if d.fix_applies(unsafe)), key=lambda d: d.fix.edits[0].location)
    for diagnostic in candidates:
        edits = [(lines.offset(e.location), lines.offset(e.end_location), e.content) for e in diagnostic.fix.edits]
        new = [edit for edit in edits if edit not in taken]
        if any(_overlap(edit, other) for edit in new for other in taken):
            continue
        taken.extend(new)
        fixed.append(diagnostic)
    return splice_at(text, taken), fixed


def _overlap(one: tuple[int, int, str], other: tuple[int, int, str]) -> bool:
    # Two insertions at one place would depend on their order: they clash too.
    return one[0] < other[1] and other[0] < one[1] or one[0] == other[0]


def one_pass(text: str, diagnostics: Sequence[Diagnostic], unsafe: bool, path: str) -> tuple[str, list[Diagnostic], str | None]:
    """One pass over one file: (the fixed text, the findings fixed, None), or, where the
    result would not compile, (``text``, [], why). Nothing fixed: (``text``, [], None)."""
    new, done = apply_fixes(text, diagnostics, unsafe)
    if not done or new == text:
        return text, [], None
    problem = compile_error(new, path)
    if problem is not None:
        return text, [], f"fixes not applied: the result would not parse ({problem})"
    return new, done, None


@dataclass
class FixedText:
    text: str
    fixed: list[Diagnostic]
    # the findings of the last check: those of ``text``
    left: list[Diagnostic]
    # why the last pass was dropped, if it was
    problem: str | None
    passes: int


def fix_text(text: str, check: Callable[[str], list[Diagnostic]], unsafe: bool, path: str) -> FixedText:
    """One text (a buffer, a page's Example) fixed pass after pass, ``check`` finding what
    each pass starts from."""
    fixed: list[Diagnostic] = []
    for passes in range(MAX_PASSES):
        found = check(text)
        new, done, problem = one_pass(text, found, unsafe, path)
        if not done:
            return FixedText(text, fixed, found, problem, passes)
        text, fixed = new, fixed + done
    return FixedText(text, fixed, check(text), None, MAX_PASSES)


@dataclass
class FixRun:
    # the findings left after the last pass
    check: CheckRun
    # path -> the findings its fixes removed, by code
    fixed: dict[str, Counter] = field(default_factory=dict)
    # path -> (text before, text after) of each file a fix changed
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    errors: list[FileError] = field(default_factory=list)
    # path -> (line in the text before, code) of each finding fixed, in the order applied
    applied: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    @property
    def fixed_count(self) -> int:
        return sum(sum(counts.values()) for counts in self.fixed.values())


def fix_paths(paths: Sequence[str | Path], resolver: ConfigResolver, *, unsafe: bool, write: bool, **options) -> FixRun:
    """Check ``paths`` and apply their fixes (``write``: to the files; else only worked out,
    for `--diff`). ``options`` are `check_paths`'s."""
    return _fix(lambda texts: check_paths(paths, resolver, texts=texts, **options), unsafe, write)


def fix_files(work: list[tuple[Path, Settings]], *, unsafe: bool, write: bool = False, **options) -> FixRun:
    """`fix_paths` for files each with its own settings, as `check_files` takes them (verify's
    files, with the functions it compiles as entry points). ``options`` are `check_files`'s."""
    return _fix(lambda texts: CheckRun(check_files(work, texts=texts, **options)), unsafe, write)


def _fix(check_texts: Callable[[dict[str, str]], CheckRun], unsafe: bool, write: bool) -> FixRun:
    """The passes: ``check_texts`` checks the files with the fixed texts so far standing in
    for theirs on disk."""
    texts: dict[str, str] = {}
    originals: dict[str, str] = {}
    fixed: dict[str, Counter] = {}
    applied: dict[str, list[tuple[int, str]]] = {}
    errors: list[FileError] = []
    refused: set[str] = set()
    for _ in range(MAX_PASSES):
        check = check_texts(texts)
        progress = False
        for result in check.results:
            path = result.path
            if path in refused or not any(d.fix_applies(unsafe) for d in result.diagnostics):
                continue
            current = texts.get(path)
            if current is None:
                try:
                    current = originals[path] = read_source(Path(path))
                except SourceError:
                    continue  # the check reported it
            new, done, problem = one_pass(current, result.diagnostics, unsafe, path)
            if problem is not None:
                errors.append(FileError(path, problem))
                refused.add(path)
            if not done:
                continue
            texts[path] = new
            counts = fixed.setdefault(path, Counter())
            counts.update(d.code for d in done)
            where = original_line(originals[path], current)
            applied.setdefault(path, []).extend((where(d.location.row), d.code) for d in done)
            progress = True
        if not progress:
            break
    else:
        check = check_texts(texts)
    changed = {path: (originals[path], text) for path, text in texts.items()}
    run = FixRun(check, fixed, changed, errors, applied)
    if write:
        for path, (_, text) in run.changed.items():
            failure = write_fixed(Path(path), text)
            if failure is not None:
                run.errors.append(FileError(path, f"fixes not written: {failure}"))
    return run


def compile_error(text: str, path: str) -> str | None:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return str(error)
    return None


def write_fixed(path: Path, text: str) -> str | None:
    """Write ``text`` over the file in its own encoding and mode, whole or not at all."""
    path = Path(os.path.realpath(path))  # through a symbolic link, not over it
    try:
        original = path.read_bytes()
        mode = os.stat(path).st_mode & 0o7777
        data = encode_source(text, original)
        with atomic_file(path, mode) as stream:
            stream.write(data)
    except (OSError, SourceError, UnicodeError) as error:
        return str(error)
    return None
