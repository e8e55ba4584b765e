"""Configured entry points that name no function of the project.

An `entry-points` pattern that matches nothing is most often a typo (`Net.forwrd`), and it
shows nowhere else: the function it meant is not compiled, its findings are gone, and the
`noqa` comments that suppressed them read as unused. So the run names such a pattern in an
error (its configuration file and key; exit 2), and the unused-`noqa` findings of the files
under that configuration keep their finding but lose their fix: `--fix` must not delete a
comment that is unused only because a misspelt entry point left its function uncompiled.

Only the whole project can tell that a pattern names nothing: a run that reads part of it
(`--no-project`, a buffer without a file name) withholds those fixes all the same but reports
no error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from torchlint.report.diagnostic import Diagnostic
from torchlint.rules.tl902_unused_noqa import UnusedNoqa
from torchlint.settings.config import Settings, SettingError, setting_error

_GLOB_CHARACTERS = frozenset("*?[")


class EntryPointCheck:
    """The configured entry points measured against those the project's files matched."""

    def __init__(self, matched: frozenset[str]) -> None:
        self.matched = matched

    def unmatched(self, settings: Settings) -> list[str]:
        return [entry for entry in settings.entry_points if entry not in self.matched]

    def errors(self, settings: Iterable[Settings]) -> list[SettingError]:
        """One error for each pattern of each configuration file that matched nothing, in the
        order of the files' paths and of the patterns in each."""
        found: dict[tuple[Path, str], SettingError] = {}
        seen: set[int] = set()
        for each in settings:
            if id(each) in seen or each.config_path is None:
                continue
            seen.add(id(each))
            for entry in self.unmatched(each):
                key = (each.config_path, entry)
                if key not in found:
                    found[key] = setting_error(each.config_path, "entry-points", _problem(entry))
        return [found[key] for key in sorted(found, key=lambda key: str(key[0]))]

    def fixable(self, diagnostics: list[Diagnostic], settings: Settings) -> list[Diagnostic]:
        """``diagnostics`` of a file under ``settings``, without the fixes of its unused-`noqa`
        findings where one of its entry points matched nothing."""
        if not self.unmatched(settings):
            return diagnostics
        return [
            replace(d, fix=None) if d.code == UnusedNoqa.code and d.fix is not None else d for d in diagnostics
        ]


def _problem(entry: str) -> str:
    problem = f'"{entry}" matches no function in the project'
    if _GLOB_CHARACTERS & set(entry):
        problem += " (entry points are dotted names matched by their end, such as `Net.forward`, not globs)"
    return problem
