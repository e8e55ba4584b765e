"""`--fix`: the findings' fixes applied in passes until none is left to apply, each pass
checked to parse, the files written whole at the end.

A pass applies every applicable fix of a file that overlaps no fix already taken (two
fixes that add the same `import torch` share it); the next pass checks the fixed text
again, which may offer fixes that overlapped before. A pass whose result Python cannot
compile is dropped for that file and reported, never written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.settings.config import ConfigResolver, Settings
from torchlint.report.diagnostic import Diagnostic, FileError, FileResult
from torchlint.fix.fix_edits import TextLines, splice_at
from torchlint.parse.line_map import original_line
from torchlint.run.runner import CheckRun, check_files, check_paths
from torchlint.run.run_record import content_hash
from torchlint.files.source import SourceError, decode_source, encode_source, read_bytes
from torchlint.files.source_write import NotWritten, write_source

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


def removed_by_fixes(first: Sequence[Diagnostic], left: Sequence[Diagnostic], before: str, after: str) -> Counter:
    """The findings of ``before`` that ``after``, the text with the fixes made, no longer has,
    by code: each finding a fix removed, those whose fix was applied and those another fix
    made go (a break fixed in a helper ends the loop's finding over it)."""
    where = original_line(before, after) if before != after else (lambda row: row)
    still = Counter((where(d.location.row), d.code) for d in left)
    gone = Counter((d.location.row, d.code) for d in first) - still
    return Counter(code for (_, code), count in gone.items() for _ in range(count))


@dataclass
class FixedText:
    text: str
    fixed: list[Diagnostic]
    # the findings of the last check: those of ``text``
    left: list[Diagnostic]
    # why the last pass was dropped, if it was
    problem: str | None
    passes: int
    # the findings the fixes removed, by code (`removed_by_fixes`)
    removed: Counter = field(default_factory=Counter)


def fix_text(text: str, check: Callable[[str], list[Diagnostic]], unsafe: bool, path: str) -> FixedText:
    """One text (a buffer, a page's Example) fixed pass after pass, ``check`` finding what
    each pass starts from."""
    fixed: list[Diagnostic] = []
    original, first = text, None
    for passes in range(MAX_PASSES):
        found = check(text)
        first = found if first is None else first
        new, done, problem = one_pass(text, found, unsafe, path)
        if not done:
            return FixedText(text, fixed, found, problem, passes, removed_by_fixes(first, found, original, text))
        text, fixed = new, fixed + done
    left = check(text)
    return FixedText(text, fixed, left, None, MAX_PASSES, removed_by_fixes(first or [], left, original, text))


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
    # path -> (the bytes checked, their text) of each file a fix is made in
    originals: dict[str, tuple[bytes, str]] = {}
    applied: dict[str, list[tuple[int, str]]] = {}
    errors: list[FileError] = []
    refused: set[str] = set()
    # each file's findings as it is on disk, for a file whose fixes are not written
    found_first: dict[str, FileResult] = {}
    for _ in range(MAX_PASSES):
        check = check_texts(texts)
        progress = False
        for result in check.results:
            path = result.path
            found_first.setdefault(path, result)
            if path in refused or not any(d.fix_applies(unsafe) for d in result.diagnostics):
                continue
            current = texts.get(path)
            if current is None:
                current = _as_checked(path, result, originals, errors)
                if current is None:
                    refused.add(path)
                    continue
            new, done, problem = one_pass(current, result.diagnostics, unsafe, path)
            if problem is not None:
                errors.append(FileError(path, problem))
                refused.add(path)
            if not done:
                continue
            texts[path] = new
            where = original_line(originals[path][1], current)
            applied.setdefault(path, []).extend((where(d.location.row), d.code) for d in done)
            progress = True
        if not progress:
            break
    else:
        check = check_texts(texts)
    changed = {path: (originals[path][1], text) for path, text in texts.items()}
    # Counted by what the fixes removed, whichever fix removed it, in every file.
    fixed: dict[str, Counter] = {}
    for result in check.results:
        first = found_first.get(result.path)
        before, after = changed.get(result.path, ("", ""))
        removed = removed_by_fixes(first.diagnostics, result.diagnostics, before, after) if first is not None else Counter()
        if removed:
            fixed[result.path] = removed
    run = FixRun(check, fixed, changed, errors, applied)
    # A file saved while it was checked: its findings are of a text it no longer holds.
    saved_meanwhile = {error.path for error in errors if error.message == CHANGED_WHILE_CHECKED}
    run.check.results = [FileResult(r.path) if r.path in saved_meanwhile else r for r in run.check.results]
    if write:
        for path, (_, text) in list(run.changed.items()):
            failure = write_fixed(Path(path), text, originals[path][0])
            if failure is not None:
                run.errors.append(FileError(path, failure))
                _not_written(run, path, found_first[path])
    return run


CHANGED_WHILE_CHECKED = "changed while it was being checked; not fixed"


def _as_checked(
    path: str, result: FileResult, originals: dict[str, tuple[bytes, str]], errors: list[FileError]
) -> str | None:
    """The text of ``path`` as the check that found ``result`` read it, its bytes kept in
    ``originals``; None (with an error where it is not the check's own) where the file no
    longer holds what was checked: fixes made for other text would land in the wrong places."""
    try:
        data = read_bytes(Path(path))
        text = decode_source(data)
    except SourceError:
        return None  # the check reported it, or the next check will
    if content_hash(data) != result.content:
        errors.append(FileError(path, CHANGED_WHILE_CHECKED))
        return None
    originals[path] = (data, text)
    return text


def _not_written(run: FixRun, path: str, on_disk: FileResult) -> None:
    """A file whose fixes were not written is reported as it is on disk."""
    run.fixed.pop(path, None)
    run.applied.pop(path, None)
    run.changed.pop(path, None)
    run.check.results = [on_disk if result.path == path else result for result in run.check.results]


def compile_error(text: str, path: str) -> str | None:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return str(error)
    return None


def write_fixed(path: Path, text: str, original: bytes) -> str | None:
    """Write ``text`` over the file in the encoding of ``original``, if it still holds
    ``original`` (see `source_write`); why not, where it is not written."""
    try:
        data = encode_source(text, original)
    except (SourceError, UnicodeError) as error:
        return f"fixes not written: {error}"
    try:
        write_source(path, data, original)
    except NotWritten as refusal:
        return str(refusal)
    return None
