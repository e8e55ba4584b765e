"""The rule pages (`rules/TLnnn-name.md`): found in the wheel, or beside a source checkout."""

from __future__ import annotations

from pathlib import Path

from torchlint.rules.base import Rule

_PACKAGED = Path(__file__).parent / "_pages"
_CHECKOUT = Path(__file__).parent.parent / "rules"


def page_path(rule: type[Rule]) -> Path | None:
    for folder in (_PACKAGED, _CHECKOUT):
        candidate = folder / rule.page_name()
        if candidate.is_file():
            return candidate
    return None


def page_sections(text: str) -> dict[str, str]:
    """A page's `## Title` -> its text up to the next `## ` heading, in page order."""
    found: dict[str, str] = {}
    title = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            title = line[3:].strip()
            found[title] = ""
        elif title is not None:
            found[title] += line
    return found


def page_text(rule: type[Rule]) -> str:
    path = page_path(rule)
    if path is not None:
        return path.read_text(encoding="utf-8")
    # A page that did not ship still leaves the user with the rule's own words.
    lines = [f"# {rule.code} {rule.name}", "", rule.message]
    if rule.suggestion:
        lines += ["", f"Use instead: {rule.suggestion}"]
    return "\n".join(lines) + "\n"
