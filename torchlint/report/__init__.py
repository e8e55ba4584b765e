"""Output formats: one module per format, each turning sorted findings into text."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.report.diagnostic import Diagnostic

if TYPE_CHECKING:
    from torchlint.rules.base import Rule

# format -> the module that renders it
_MODULES = {"concise": "concise", "full": "full", "json": "json_", "github": "github", "sarif": "sarif"}
FORMATS = tuple(_MODULES)


@dataclass(frozen=True)
class ReportContext:
    """What a format needs beyond the findings themselves."""

    cwd: Path
    # Absolute path -> file text, for the excerpts of `full`.
    sources: dict[str, str] = field(default_factory=dict)
    # The selected rules, for SARIF's rule table.
    rules: tuple[type[Rule], ...] = ()
    version: str = ""
    # whether `--unsafe-fixes` is on: an unsafe fix then counts as one `--fix` applies
    unsafe_fixes: bool = False
    # whether the line formats colour their output (see `style.wants_colour`); the others
    # never do
    colour: bool = False


def render(fmt: str, diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> str:
    """The whole report in format ``fmt``, findings in the order given.

    Line formats give "" for no findings; JSON and SARIF always give a document. Non-empty
    output ends with a newline.
    """
    try:
        renderer = _renderer(fmt)
    except KeyError:
        expected = ", ".join(FORMATS)
        raise ValueError(f"unknown output format {fmt!r}; expected one of {expected}") from None
    return renderer(list(diagnostics), ctx)


def _renderer(fmt: str) -> Callable[[list[Diagnostic], ReportContext], str]:
    """KeyError for an unknown format."""
    # Only the format asked for is imported: a run pays for no other.
    renderer: Callable[[list[Diagnostic], ReportContext], str] = importlib.import_module(
        f"torchlint.report.{_MODULES[fmt]}"
    ).render
    return renderer
