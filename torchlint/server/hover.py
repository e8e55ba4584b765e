"""Hover on a finding: why it breaks the graph and what to write instead, from the rule's
own page, and PyTorch's page for each graph-break id."""

from __future__ import annotations

import re

from torchlint.pages import page_text
from torchlint.report.diagnostic import Diagnostic
from torchlint.report.links import graph_break_url
from torchlint.rules import rule_by_code

# The page sections a hover shows, by how their headings begin: "Why it breaks the graph",
# "Why it recompiles", "Use instead".
_SHOWN = ("why", "use instead")
_HEADING = re.compile(r"^## +(.*)$", re.MULTILINE)


def page_sections(page: str) -> dict[str, str]:
    """The page's `## ` sections by heading (lower case), each without its heading."""
    found = {}
    headings = list(_HEADING.finditer(page))
    for at, heading in enumerate(headings):
        end = headings[at + 1].start() if at + 1 < len(headings) else len(page)
        found[heading.group(1).strip().lower()] = page[heading.end() : end].strip()
    return found


def hover_markdown(diagnostic: Diagnostic) -> str:
    rule = rule_by_code(diagnostic.code)
    lines = [f"**{diagnostic.code}** `{diagnostic.name}`: {diagnostic.message}", ""]
    if rule is not None:
        for heading, body in page_sections(page_text(rule)).items():
            if heading.startswith(_SHOWN) and body:
                lines += [f"### {heading[0].upper()}{heading[1:]}", "", body, ""]
    for gb_id in diagnostic.gb_ids:
        lines.append(f"Graph break [{gb_id}]({graph_break_url(gb_id)}) on PyTorch's graph-break site.  ")
    if not diagnostic.gb_ids and diagnostic.url:
        lines.append(f"PyTorch's page: <{diagnostic.url}>  ")
    lines.append(f"The whole page: `torchlint rule {diagnostic.code}`")
    return "\n".join(lines)
