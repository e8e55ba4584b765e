"""Colour for the line formats (`concise`, `full`) on a terminal, as ruff colours them, and
when to use it. Machine formats (json, sarif, github) are never coloured."""

from __future__ import annotations

import os
from collections.abc import Mapping

_RESET = "\x1b[0m"
_BOLD = "1"
_DIM = "2"
_RED = "31"
_BLUE = "34"
_CYAN = "36"


def wants_colour(is_terminal: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether output to a stream is coloured.

    `FORCE_COLOR` (any non-empty value) turns colour on even where output is piped, and wins
    over `NO_COLOR`, as force-color.org's reference implementation orders them: a user who
    keeps `NO_COLOR` in their profile and asks one command for colour (`FORCE_COLOR=1
    torchlint check | less -R`) gets it. Otherwise `NO_COLOR` (any non-empty value,
    no-color.org) turns it off, and a terminal, unless it calls itself dumb, turns it on.
    """
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("NO_COLOR"):
        return False
    return is_terminal and environ.get("TERM") != "dumb"


class Style:
    """The roles text plays in a report, each with its look; plain text where colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _paint(self, text: str, *codes: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{_RESET}"

    def path(self, text: str) -> str:
        return self._paint(text, _BOLD)

    def position(self, text: str) -> str:
        """``row:col`` after the path."""
        return self._paint(text, _DIM)

    def code(self, text: str) -> str:
        """A rule code, and the carets that point at its finding."""
        return self._paint(text, _BOLD, _RED)

    def fixable(self, text: str) -> str:
        """The ``[*]`` of a finding `--fix` applies."""
        return self._paint(text, _CYAN)

    def gutter(self, text: str) -> str:
        """Line numbers and the `|` and `=` of `full` output."""
        return self._paint(text, _BOLD, _BLUE)

    def label(self, text: str) -> str:
        """``help:``, ``fix (safe):`` and the other labels of `full` output."""
        return self._paint(text, _BOLD)
