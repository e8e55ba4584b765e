"""The rule pages (`rules/TLnnn-name.md`) are documentation that cannot lie.

Each page has the agreed sections and names its Dynamo ids; its Example triggers exactly
its rule and its Use instead nothing; and, with torch installed, warm probe workers (one
per core, each page from the state of a fresh process) check the Example really breaks and
the Use instead really compiles to the same output. A recompile rule's page (TL7xx) says
`## Why it recompiles`, and its probe checks the Example recompiles (or is silently wrong,
or compiles nothing) and the Use instead does not.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from torchlint.pages import page_sections
from _page_probe import is_recompile_page, python_blocks, rule_code, sections_of
from helpers import dynamo_workers
from torchlint.settings.config import Settings
from torchlint.report.diagnostic import Applicability
from torchlint.project.resolve import lint_text
from torchlint.rules import all_rules, rule_by_code
from torchlint.verify.pool import Job, WorkerPool

REPO = Path(__file__).resolve().parent.parent
RULES_DIR = REPO / "rules"
PROBE = Path(__file__).resolve().parent / "_page_probe.py"
PAGES = sorted(RULES_DIR.glob("TL*.md"))
# Rules that predict a graph break have runnable examples; TL9xx pages are only linted.
RUNNABLE_PAGES = [page for page in PAGES if not rule_code(page).startswith("TL9")]

# One page's probe, Dynamo's first compile in a worker included (starting one has its own limit).
PROBE_TIMEOUT_S = 240

# The probes run in worker processes; the test process itself never imports torch.
torch_installed = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed"
)


def _page_id(page: Path) -> str:
    return rule_code(page)


def _block(page: Path, section: str) -> str:
    blocks = python_blocks(page_sections(page.read_text(encoding="utf-8"))[section])
    assert len(blocks) == 1, f"`## {section}` needs exactly one ```python block, found {len(blocks)}"
    return blocks[0]


def _lint(source: str, page: Path, section: str):
    path = RULES_DIR / f"{rule_code(page)}_{section.replace(' ', '_').lower()}.py"
    return lint_text(source, str(path), Settings(root=REPO))


def test_every_rule_has_a_page_and_every_page_a_rule():
    expected = {rule.page_name() for rule in all_rules()}
    found = {page.name for page in PAGES}
    assert found == expected, (
        f"missing pages: {sorted(expected - found)}; pages without a rule: {sorted(found - expected)}"
    )


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_layout(page: Path):
    rule = rule_by_code(rule_code(page))
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"# {rule.code} {rule.name}"
    summary = next(line for line in lines[1:] if line.strip())
    assert not summary.startswith("#"), "the title is followed by a one-line summary"
    sections = page_sections(page.read_text(encoding="utf-8"))
    assert tuple(sections) == sections_of(page)
    why = "Why it recompiles" if is_recompile_page(page) else "Why it breaks the graph"
    for gb_id in rule.gb_ids:
        for title in (why, "Dynamo reference"):
            assert gb_id in sections[title], f"`## {title}` does not name {gb_id}"
    for gb_type in rule.gb_types:
        assert gb_type in sections["Dynamo reference"], f"`## Dynamo reference` does not name {gb_type!r}"


_APPLICABILITY_WORDS = {
    Applicability.SAFE: "safe fix",
    Applicability.UNSAFE: "unsafe fix",
    Applicability.DISPLAY_ONLY: "display-only",
}


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_fix_section_says_what_fix_does(page: Path):
    """A rule without a fix says why none exists; a rule with fixes names each one's safety."""
    rule = rule_by_code(rule_code(page))
    fix_section = " ".join(page_sections(page.read_text(encoding="utf-8"))["Fix"].split())
    if not rule.fixes:
        assert fix_section.startswith("No mechanical fix: "), fix_section
        return
    assert "--fix" in fix_section or Applicability.DISPLAY_ONLY in rule.fixes
    for applicability in rule.fixes:
        assert _APPLICABILITY_WORDS[applicability] in fix_section, f"`## Fix` does not say it is a {applicability.value} fix"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_fixes_offered_are_declared(rule):
    """The fixes a rule offers on its own cases and its page's Example have the safety it declares."""
    page = RULES_DIR / rule.page_name()
    cases = [textwrap.dedent(case) for case in rule.invalid]
    if not rule.code.startswith("TL9"):
        cases.append(_block(page, "Example"))
    offered = {
        d.fix.applicability
        for case in cases
        for d in lint_text(case, str(RULES_DIR / f"{rule.code}_case.py"), Settings(root=REPO))
        if d.code == rule.code and d.fix is not None
    }
    assert offered <= set(rule.fixes), f"{rule.code} offers {offered} but declares {rule.fixes}"


def test_readme_indexes_every_page():
    readme = (RULES_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(TL\d{3})\]\(([^)]+)\) \| ([^|]+) \| (.+) \|$", readme, re.MULTILINE)
    indexed = {code: (link, name.strip(), summary.strip()) for code, link, name, summary in rows}
    for page in PAGES:
        rule = rule_by_code(rule_code(page))
        summary = next(line for line in page.read_text(encoding="utf-8").splitlines()[1:] if line.strip())
        assert indexed.get(rule.code) == (page.name, rule.name, summary), f"README row for {rule.code}"
    assert len(indexed) == len(PAGES)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_example_triggers_exactly_its_rule(page: Path):
    code = rule_code(page)
    findings = _lint(_block(page, "Example"), page, "Example")
    assert findings, f"{code}'s Example gives no finding"
    # A TL6xx finding comes with the break it reports on, which is that rule's finding.
    inner = {related.code for d in findings if d.code == code for related in d.related}
    assert {d.code for d in findings} == {code} | inner, [(d.code, d.location.row, d.message) for d in findings]


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_use_instead_is_clean(page: Path):
    findings = _lint(_block(page, "Use instead"), page, "Use instead")
    assert findings == [], [(d.code, d.location.row, d.message) for d in findings]


@pytest.fixture(scope="module")
def probe_pool():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    with WorkerPool(dynamo_workers(), env=env, command=[sys.executable, str(PROBE), "--serve"]) as pool:
        yield pool


@pytest.fixture(scope="module")
def page_probes(probe_pool: WorkerPool, request: pytest.FixtureRequest) -> dict[str, dict]:
    """The probe of every page whose test below is selected, all run at once across the pool."""
    pages = [
        item.callspec.params["page"]
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_examples_hold_under_dynamo"
    ]
    results: dict[str, dict] = {}
    jobs = [Job(page.name, {"page": str(page)}) for page in pages]
    probe_pool.run(jobs, timeout=PROBE_TIMEOUT_S, on_done=lambda job, result: results.__setitem__(job.key, result))
    return results


@torch_installed
@pytest.mark.dynamo
@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=_page_id)
def test_examples_hold_under_dynamo(page: Path, page_probes: dict[str, dict]):
    result = page_probes[page.name]
    assert result["status"] == "ok", f"{result['error']}\n{result.get('traceback', '')}"
    assert result["problems"] == [], "\n".join(result["problems"])


@torch_installed
@pytest.mark.dynamo
def test_a_worker_puts_back_what_a_page_changes(probe_pool: WorkerPool):
    # TL306's Example turns Dynamo's trace_numpy off. Probed twice in one worker, the page
    # must find it on again the second time, as in a fresh process, and put it back again.
    numpy_page = next(page for page in RUNNABLE_PAGES if rule_code(page) == "TL306")
    with probe_pool.worker() as worker:
        changed = worker.request({"page": str(numpy_page)}, PROBE_TIMEOUT_S)
        after = worker.request({"page": str(numpy_page)}, PROBE_TIMEOUT_S)
    assert changed["restored"] == ["torch._dynamo.config.trace_numpy"], changed
    assert after["restored"] == ["torch._dynamo.config.trace_numpy"] and after["problems"] == [], after


# A page of a recompile rule as the rule pages write one: `self.calls += 1` on an int
# attribute recompiles on every call; the same count in a buffer compiles once.
SAMPLE_RECOMPILE_PAGE = """\
# TL701 module-int-attribute-mutated

An int attribute of an nn.Module changed in compiled code recompiles on every call.

## What it does

Flags an int attribute of a module that compiled code changes.

## Why it recompiles

Dynamo guards on the exact value of an int attribute of a module.

## Example

```python
import torch
from torch import nn


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.linear(x) * self.calls


def run():
    model = torch.compile(Counter())
    return [model(torch.randn(4, 8)) for _ in range(10)]
```

## Use instead

```python
import torch
from torch import nn


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        return self.linear(x) * self.calls


def run():
    model = torch.compile(Counter())
    return [model(torch.randn(4, 8)) for _ in range(10)]
```

## Fix

No mechanical fix: the count must move into a tensor.

## Settings that change it

`torch._dynamo.config.allow_unspec_int_on_nn_module = True`.

## Dynamo reference

`self.calls == 7`, with the hint that integer attributes of modules are static.
"""


def _sample_page(folder: Path, swapped: bool = False) -> Path:
    """The sample page; ``swapped``: its Example and Use instead exchanged, so that neither holds."""
    text = SAMPLE_RECOMPILE_PAGE
    if swapped:
        sections = page_sections(text)
        example, fixed = sections["Example"], sections["Use instead"]
        text = text.replace(example, "\0").replace(fixed, example).replace("\0", fixed)
    page = folder / "TL701-module-int-attribute-mutated.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_recompile_pages_have_their_own_sections(tmp_path: Path):
    page = _sample_page(tmp_path)
    assert is_recompile_page(page)
    assert tuple(page_sections(page.read_text(encoding="utf-8"))) == sections_of(page)
    assert "Why it recompiles" in sections_of(page) and "Why it breaks the graph" not in sections_of(page)


@torch_installed
@pytest.mark.dynamo
def test_probe_of_a_recompile_page(probe_pool: WorkerPool, tmp_path: Path):
    with probe_pool.worker() as worker:
        holds = worker.request({"page": str(_sample_page(tmp_path))}, PROBE_TIMEOUT_S)
        swapped = worker.request({"page": str(_sample_page(tmp_path, swapped=True))}, PROBE_TIMEOUT_S)
    assert holds["status"] == "ok", holds
    assert holds["problems"] == [], holds
    assert holds["backend"] == "eager"
    assert holds["example"]["recompiles"] == 7 and holds["example"]["limit_hit"], holds
    assert holds["use_instead"]["recompiles"] <= 1 and holds["use_instead"]["frames_compiled"] >= 1, holds
    assert holds["restored"] == []
    # A Use instead that recompiles, under an Example that does not: both claims fail.
    problems = swapped["problems"]
    assert len(problems) == 2 and problems[0].startswith("Example: no hazard shown"), problems
    assert problems[1].startswith("Use instead: a frame recompiled 7 times"), problems
