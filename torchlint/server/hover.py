"""Hover on a finding: why it breaks the graph and what to write instead, from the rule's
own page, and PyTorch's page for each graph-break id."""

from __future__ import annotations

from torchlint.pages import page_sections, page_text
from torchlint.report.diagnostic import Diagnostic
from torchlint.report.links import graph_break_url
from torchlint.rules import rule_by_code

# The page sections a hover shows, by how their headings begin: "Why it breaks the graph",
# "Why it recompiles", "Use instead".
_SHOWN = ("why", "use instead")


def hover_markdown(diagnostic: Diagnostic) -> str:
    rule = rule_by_code(diagnostic.code)
    lines = [f"**{diagnostic.code}** `{diagnostic.name}`: {diagnostic.message}", ""]
    if rule is not None:
        for heading, body in page_sections(page_text(rule)).items():
            if heading.lower().startswith(_SHOWN) and body.strip():
                lines += [f"### {heading}", "", body.strip(), ""]
    for gb_id in diagnostic.gb_ids:
        lines.append(f"Graph break [{gb_id}]({graph_break_url(gb_id)}) on PyTorch's graph-break site.  ")
    if not diagnostic.gb_ids and diagnostic.url:
        lines.append(f"PyTorch's page: <{diagnostic.url}>  ")
    lines.append(f"The whole page: `torchlint rule {diagnostic.code}`")
    return "\n".join(lines)
