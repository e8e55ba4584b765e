"""`# noqa` comments: per line, per file (`# torchlint: noqa`), and the unused ones."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field, replace

from torchlint.report.diagnostic import Applicability, Diagnostic, Edit, Fix, Location
from torchlint.rules import rule_by_code
from torchlint.rules.tl902_unused_noqa import UnusedNoqa
from torchlint.files.source import split_lines

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_FILE_NOQA = re.compile(r"#\s*torchlint\s*:\s*noqa(?:\s*:\s*" + _CODES + r")?", re.IGNORECASE)
LINE_NOQA = re.compile(r"#\s*noqa(?::\s*" + _CODES + r")?", re.IGNORECASE)
_NEVER_SUPPRESSED = frozenset({"TL901"})


@dataclass
class Directive:
    row: int
    column: int  # 1-based column of the `#` that starts the directive
    end_column: int
    file_level: bool
    # The codes as written, in order; none: every code.
    written: tuple[str, ...]
    # 1-based columns of the whole comment the directive is in, and what deleting that comment
    # removes: the spaces before it too, or its whole row where no code shares the row.
    comment_column: int
    comment_end_column: int
    comment_removal: tuple[Location, Location] | None
    used: set[str] = field(default_factory=set)
    # `written` for lookups; None: every code.
    codes: frozenset[str] | None = field(init=False)

    def __post_init__(self) -> None:
        self.codes = frozenset(self.written) if self.written else None

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


def _comments(text: str) -> list[tuple[int, int, str]]:
    """(row, column, text) of every comment; strings that merely contain `#` are skipped."""
    # `newline=None`: `\r` and `\r\n` end lines as `\n` does, so rows agree with positions.
    tokens = tokenize.generate_tokens(io.StringIO(text, newline=None).readline)
    try:
        return [(token.start[0], token.start[1], token.string) for token in tokens if token.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # A file tokenize rejects (after yielding some comments): a plain scan of the lines.
        found = []
        for row, line in enumerate(split_lines(text), start=1):
            at = line.find("#")
            if at != -1:
                found.append((row, at, line[at:]))
        return found


def _written_codes(match: re.Match[str]) -> tuple[str, ...]:
    raw = match.group("codes")
    return () if raw is None else tuple(code.upper() for code in re.split(r"[\s,]+", raw.strip()) if code)


def find_directives(text: str) -> list[Directive]:
    if "noqa" not in text and "NOQA" not in text.upper():
        return []
    directives = []
    lines = split_lines(text)
    for row, column, comment in _comments(text):
        file_match = _FILE_NOQA.search(comment)
        file_level = file_match is not None
        match = file_match if file_match is not None else LINE_NOQA.search(comment)
        if match is None:
            continue
        start = column + match.start()
        end = column + len(comment) + 1
        directives.append(
            Directive(
                row, start + 1, column + match.end() + 1, file_level,
                _written_codes(match), column + 1, end, _comment_removal(lines, row, column, end),
            )
        )
    return directives


def _comment_removal(lines: list[str], row: int, column: int, end: int) -> tuple[Location, Location] | None:
    if row > len(lines):
        return None
    code = lines[row - 1][:column].rstrip()
    if code:
        return Location(row, len(code) + 1), Location(row, end)
    if row < len(lines):
        return Location(row, 1), Location(row + 1, 1)
    return Location(row, 1), Location(row, end)


def apply_suppressions(diagnostics: list[Diagnostic], directives: list[Directive], path: str) -> list[Diagnostic]:
    """Drop suppressed findings and report directives that name TL codes nothing used.

    Every rule's findings count, whichever are selected: a `# noqa: TL101` that suppresses a
    print is used though TL101 is not shown, so selecting codes changes no other code's."""
    directives = [replace(directive, used=set()) for directive in directives]
    by_row: dict[int, Directive] = {d.row: d for d in directives if not d.file_level}
    file_level = [d for d in directives if d.file_level]
    kept = []
    for diagnostic in diagnostics:
        if diagnostic.code in _NEVER_SUPPRESSED:
            kept.append(diagnostic)
            continue
        directive = next((d for d in file_level if d.covers(diagnostic.code)), None)
        if directive is None:
            # The finding's first or last line, or its statement's first line.
            for row in (diagnostic.location.row, diagnostic.end_location.row, diagnostic.noqa_row):
                candidate = by_row.get(row) if row is not None else None
                if candidate is not None and candidate.covers(diagnostic.code):
                    directive = candidate
                    break
        if directive is None:
            kept.append(diagnostic)
        else:
            directive.used.add(diagnostic.code)
    kept.extend(_unused(directives, path))
    return kept


def _unused(directives: list[Directive], path: str) -> list[Diagnostic]:
    found = []
    for directive in directives:
        if directive.codes is None:
            continue  # a bare `# noqa` may be meant for another linter
        unused, unknown = [], []
        for code in sorted(directive.codes - directive.used):
            if not code.startswith("TL"):
                continue
            if rule_by_code(code) is None:
                unknown.append(code)
            else:
                unused.append(code)
        if not unused and not unknown:
            continue
        parts = []
        if unused:
            parts.append("unused `noqa` directive for " + ", ".join(unused))
        if unknown:
            parts.append("unknown rule code " + ", ".join(unknown))
        found.append(
            Diagnostic(
                path=path,
                code=UnusedNoqa.code,
                name=UnusedNoqa.name,
                message="; ".join(parts) + "; remove it",
                location=Location(directive.row, directive.column),
                end_location=Location(directive.row, directive.end_column),
                severity=UnusedNoqa.severity,
                suggestion=UnusedNoqa.suggestion,
                url=UnusedNoqa.url(),
                fix=_removal(directive, {*unused, *unknown}),
                noqa_row=directive.row,
            )
        )
    return found


def _removal(directive: Directive, dropped: set[str]) -> Fix | None:
    """The directive without the codes ``dropped``; with none left, the directive gone (and its
    comment, with the spaces before it, when the directive was all of it). Safe: only a
    comment changes."""
    kept = [code for code in directive.written if code not in dropped]
    row = directive.row
    if kept:
        keyword = "# torchlint: noqa" if directive.file_level else "# noqa"
        edit = Edit(f"{keyword}: {', '.join(kept)}", Location(row, directive.column), Location(row, directive.end_column))
        return Fix(f"Remove unused {', '.join(sorted(dropped))}", Applicability.SAFE, (edit,))
    whole_comment = directive.column == directive.comment_column and directive.end_column == directive.comment_end_column
    if not whole_comment:
        # Other words share the comment: they stay, behind a `#` of their own.
        start, end = Location(row, directive.column), Location(row, directive.end_column)
        edit = Edit("#" if directive.column == directive.comment_column else "", start, end)
    elif directive.comment_removal is not None:
        edit = Edit("", *directive.comment_removal)
    else:
        return None
    return Fix("Remove unused `noqa` directive", Applicability.SAFE, (edit,))

