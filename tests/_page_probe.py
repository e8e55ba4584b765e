"""Runs one rule page's Example and Use instead blocks through TorchDynamo.

    python tests/_page_probe.py rules/TL101-print-in-compiled-code.md

It runs in a process of its own so that Dynamo's state never leaks into the test
process, and exits non-zero naming every claim of the page that does not hold. The
parsing helpers at the top import neither torch nor torchlint's engine, so the tests
share them.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from _probe_process import probe_main

SECTIONS = (
    "What it does",
    "Why it breaks the graph",
    "Example",
    "Use instead",
    "Settings that change it",
    "Dynamo reference",
)
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
INPUT_SHAPE = (4, 8)


def split_sections(text: str) -> dict[str, str]:
    """`## Title` -> the text up to the next `## ` heading (dicts keep the page order)."""
    found: dict[str, str] = {}
    title = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            title = line[3:].strip()
            found[title] = ""
        elif title is not None:
            found[title] += line
    return found


def python_blocks(section: str) -> list[str]:
    return _PYTHON_BLOCK.findall(section)


def rule_code(page: Path) -> str:
    return page.name.split("-", 1)[0]


def _load_module(source: str, path: Path) -> ModuleType:
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _lint_rows(source: str, path: Path, code: str) -> tuple[set[int], set[str]]:
    """The rows where the rule predicts a break, and the rules of the breaks it reports on.

    A TL6xx finding sits on a loop or a `try`; Dynamo blames the break inside it.
    """
    from torchlint.config import Settings
    from torchlint.engine import lint_text

    rows: set[int] = set()
    inner_codes: set[str] = set()
    for finding in lint_text(source, str(path), Settings(root=path.parent)):
        if finding.code != code:
            continue
        if finding.related:
            rows.update(related.location.row for related in finding.related)
            inner_codes.update(related.code for related in finding.related)
        else:
            rows.add(finding.location.row)
    return rows, inner_codes


def probe(page: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="torchlint-page-") as workdir:
        return _probe_in(page, Path(workdir))


def _probe_in(page: Path, workdir: Path) -> dict:
    import torch

    from torchlint.rules import rule_by_code
    from torchlint.verify.breaks import collect_breaks, fullgraph_compiles

    code = rule_code(page)
    rule = rule_by_code(code)
    sections = split_sections(page.read_text(encoding="utf-8"))
    example_source = python_blocks(sections["Example"])[0]
    fixed_source = python_blocks(sections["Use instead"])[0]
    problems: list[str] = []

    example_path = workdir / f"example_{code.lower()}.py"
    fixed_path = workdir / f"use_instead_{code.lower()}.py"
    example_module = _load_module(example_source, example_path)
    fixed_module = _load_module(fixed_source, fixed_path)
    # Equal layer definitions get equal weights.
    torch.manual_seed(0)
    example = example_module.Model()
    torch.manual_seed(0)
    fixed = fixed_module.Model()
    torch.manual_seed(1)
    x = torch.randn(*INPUT_SHAPE)
    expected = example(x)

    breaks = collect_breaks(example, (x,))
    break_rows = {b.lineno for b in breaks if b.filename == str(example_path)}
    lint_rows, inner_codes = _lint_rows(example_source, example_path, code)
    gb_types = set(rule.gb_types).union(*(rule_by_code(inner).gb_types for inner in inner_codes))
    if not breaks:
        problems.append("Example: Dynamo found no graph break")
    elif not any(b.gb_type in gb_types for b in breaks):
        problems.append(f"Example: no break of {sorted(gb_types)}; got {sorted({b.gb_type for b in breaks})}")
    if break_rows != lint_rows:
        problems.append(
            f"Example: Dynamo broke on lines {sorted(break_rows)}, torchlint reported {sorted(lint_rows)}"
        )

    fixed_breaks = collect_breaks(fixed, (x,))
    if fixed_breaks:
        problems.append(f"Use instead: Dynamo still breaks: {fixed_breaks}")
    ok, why, output = fullgraph_compiles(fixed, (x,))
    if not ok:
        problems.append(f"Use instead: fullgraph=True fails with {why}")
    else:
        try:
            torch.testing.assert_close(output, expected)
        except AssertionError as error:
            problems.append(f"Use instead: output differs from the Example's eager output: {error}")

    return {
        "page": page.name,
        "example_breaks": [f"line {b.lineno}: {b.gb_type} ({b.gb_id})" for b in breaks],
        "lint_rows": sorted(lint_rows),
        "problems": problems,
    }


if __name__ == "__main__":
    sys.exit(probe_main(probe, sys.argv))
