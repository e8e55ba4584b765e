"""Where a finding's reader learns more: PyTorch's own pages, never a page of ours that might
not exist. Every address torchlint prints is made here."""

from __future__ import annotations

# PyTorch's page for each graph break id. Dynamo's own messages link the same pages, spelled
# the same way (`torch._dynamo.exc.get_gbid_documentation_link`).
GRAPH_BREAK_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"

# "Dealing with Recompilations" in the torch.compile programming model: the page Dynamo's
# own recompile warning points at (`torch._dynamo.utils.troubleshooting_url`), on the
# stable docs rather than main.
RECOMPILATION_URL = (
    "https://docs.pytorch.org/docs/stable/user_guide/torch_compiler/compile/programming_model.recompilation.html"
)

# torch.compile troubleshooting: graph breaks, and frames Dynamo skips and runs eagerly.
TROUBLESHOOTING_URL = "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html"


def graph_break_url(gb_id: str) -> str:
    """PyTorch's page for a graph break id: ``GB0123`` -> ``.../gb/gb0123.html``."""
    number = gb_id[2:] if gb_id[:2].upper() == "GB" else gb_id
    return f"{GRAPH_BREAK_SITE}gb{number}.html"
