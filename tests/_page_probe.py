"""Runs rule pages' Example and Use instead blocks through TorchDynamo.

    python tests/_page_probe.py rules/TL101-print-in-compiled-code.md

probes one page and exits non-zero naming every claim of the page that does not hold.
A page of a graph-break rule claims its Example breaks where torchlint says and its Use
instead compiles whole to the same output. A page of a recompile rule (TL7xx) has blocks
that define `run()`, which compiles as a user would, makes ten calls and returns their
outputs; it claims its Example recompiles more than twice, gives other outputs than eager,
or compiles nothing, and its Use instead recompiles at most once, gives eager's outputs
and compiles something (`_probe_recompiles`).
The test suite runs it as `--serve`: a long-lived worker (driven by verify's
`pool.Worker`) that imports torch once and probes page after page, each from the state
of a fresh process (see `handle`). Torch stays out of the test process either way. The
parsing helpers at the top import neither torch nor torchlint's engine, so the tests
share them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from torchlint.pages import page_sections

SECTIONS = (
    "What it does",
    "Why it breaks the graph",
    "Example",
    "Use instead",
    "Fix",
    "Settings that change it",
    "Dynamo reference",
)
# A recompile rule's page says why its pattern recompiles instead.
RECOMPILE_SECTIONS = tuple("Why it recompiles" if title == "Why it breaks the graph" else title for title in SECTIONS)
RECOMPILE_FAMILY = "TL7"
# How often a frame of the Example must recompile in its calls, and a Use instead may.
EXAMPLE_RECOMPILES_MORE_THAN = 2
USE_INSTEAD_RECOMPILES_AT_MOST = 1
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
INPUT_SHAPE = (4, 8)
# Lines for `input()`; `breakpoint()` returns at once (the worker runs with PYTHONBREAKPOINT=0).
STDIN = "1\n" * 100


def python_blocks(section: str) -> list[str]:
    return _PYTHON_BLOCK.findall(section)


def rule_code(page: Path) -> str:
    return page.name.split("-", 1)[0]


def is_recompile_page(page: Path) -> bool:
    return rule_code(page).startswith(RECOMPILE_FAMILY)


def sections_of(page: Path) -> tuple[str, ...]:
    """The sections a page must have, in order."""
    return RECOMPILE_SECTIONS if is_recompile_page(page) else SECTIONS


def _load_module(source: str, path: Path) -> ModuleType:
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _lint_rows(source: str, path: Path, code: str) -> tuple[set[int], set[str]]:
    """The rows where the rule predicts a break, and the rules of the breaks it reports on.

    A TL6xx finding sits on a loop or a `try`; Dynamo blames the break inside it. Another
    finding that reports on breaks (TL524's `super().__init__()`) is a break of its own too.
    """
    from torchlint.settings.config import Settings
    from torchlint.project.resolve import lint_text

    rows: set[int] = set()
    inner_codes: set[str] = set()
    for finding in lint_text(source, str(path), Settings(root=path.parent)):
        if finding.code != code:
            continue
        rows.update(related.location.row for related in finding.related)
        inner_codes.update(related.code for related in finding.related)
        if not (finding.related and code.startswith("TL6")):
            rows.add(finding.location.row)
    return rows, inner_codes


def probe(page: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="torchlint-page-") as workdir:
        try:
            return _probe_in(page, Path(workdir))
        finally:
            # The page's modules go with their folder.
            for name, module in list(sys.modules.items()):
                if (getattr(module, "__file__", None) or "").startswith(workdir):
                    del sys.modules[name]


def _probe_in(page: Path, workdir: Path) -> dict:
    import torch

    from torchlint.rules import rule_by_code
    from torchlint.verify.breaks import collect_breaks

    code = rule_code(page)
    rule = rule_by_code(code)
    if is_recompile_page(page):
        return _probe_recompiles(page, workdir, rule)
    # The suite probes on the CPU; TORCHLINT_PROBE_DEVICE=cuda probes a page on a GPU.
    device = torch.device(os.environ.get("TORCHLINT_PROBE_DEVICE", "cpu"))
    sections = page_sections(page.read_text(encoding="utf-8"))
    example_source = python_blocks(sections["Example"])[0]
    fixed_source = python_blocks(sections["Use instead"])[0]
    problems: list[str] = []

    example_path = workdir / f"example_{code.lower()}.py"
    fixed_path = workdir / f"use_instead_{code.lower()}.py"
    example_module = _load_module(example_source, example_path)
    fixed_module = _load_module(fixed_source, fixed_path)
    # Equal layer definitions get equal weights.
    torch.manual_seed(0)
    example = example_module.Model().to(device)
    torch.manual_seed(0)
    fixed = fixed_module.Model().to(device)
    torch.manual_seed(1)
    x = torch.randn(*INPUT_SHAPE).to(device)
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

    problems += _clean_and_equal(fixed, x, expected, "Use instead")
    fixed_by_torchlint = _fixed(example_source, example_path)
    if fixed_by_torchlint is not None:
        # What `--fix --unsafe-fixes` writes must compile whole and compute what the Example does.
        torch.manual_seed(0)
        rewritten = _load_module(fixed_by_torchlint, workdir / f"fixed_{code.lower()}.py").Model().to(device)
        problems += _clean_and_equal(rewritten, x, expected, "--fix")

    return {
        "page": page.name,
        "example_breaks": [f"line {b.lineno}: {b.gb_type} ({b.gb_id})" for b in breaks],
        "lint_rows": sorted(lint_rows),
        "fixed": fixed_by_torchlint is not None,
        "problems": problems,
    }


def _seed() -> None:
    import random

    import torch

    random.seed(0)
    torch.manual_seed(0)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)


def _run_block(source: str, path: Path, backend: str) -> dict:
    """``run()`` of a block, once under `force_eager` and once compiled, each from a fresh
    module seeded alike: what Dynamo compiled, and whether the outputs agree."""
    import torch
    import torch._inductor.config

    from torchlint.verify.recompiles import counting_compiles, default_backend, detached, restoring_settings

    with restoring_settings(), default_backend(backend):
        _seed()
        module = _load_module(source, path)
        _seed()
        with torch.compiler.set_stance("force_eager"):
            expected = detached(module.run())
    # Inductor draws random numbers its own way unless told to fall back to eager's.
    with restoring_settings(), default_backend(backend), torch._inductor.config.patch(fallback_random=True):
        with counting_compiles() as frames:
            _seed()
            module = _load_module(source, path)
            _seed()
            outputs = detached(module.run())
    own = [frame for frame in frames if frame.file == os.path.realpath(path)]
    try:
        torch.testing.assert_close(outputs, expected, equal_nan=True)
        same = True
    except (AssertionError, TypeError, ValueError, RuntimeError):
        same = False
    return {
        "recompiles": max((frame.recompiles for frame in own), default=0),
        "limit_hit": any(frame.limit_hit for frame in own),
        "frames_compiled": sum(1 for frame in frames if frame.graphs),
        "outputs_match": same,
        "calls": len(outputs) if isinstance(outputs, (list, tuple)) else None,
    }


def _probe_recompiles(page: Path, workdir: Path, rule) -> dict:
    """A TL7xx page: the Example shows the hazard, the Use instead does not."""
    # A hazard only inductor shows (`backends = ("inductor",)`) is probed under inductor.
    backend = "inductor" if rule is not None and tuple(rule.backends) == ("inductor",) else "eager"
    code = rule_code(page)
    sections = page_sections(page.read_text(encoding="utf-8"))
    example = _run_block(python_blocks(sections["Example"])[0], workdir / f"example_{code.lower()}.py", backend)
    fixed = _run_block(python_blocks(sections["Use instead"])[0], workdir / f"use_instead_{code.lower()}.py", backend)
    problems = []
    shown = (
        example["recompiles"] > EXAMPLE_RECOMPILES_MORE_THAN
        or not example["outputs_match"]
        or example["frames_compiled"] == 0
    )
    if not shown:
        problems.append(
            f"Example: no hazard shown under {backend}: its frames recompiled at most {example['recompiles']} times, "
            f"its outputs equal eager's and it compiled {example['frames_compiled']} frames"
        )
    if fixed["recompiles"] > USE_INSTEAD_RECOMPILES_AT_MOST:
        problems.append(f"Use instead: a frame recompiled {fixed['recompiles']} times under {backend}")
    if not fixed["outputs_match"]:
        problems.append(f"Use instead: outputs differ from an eager run under {backend}")
    if fixed["frames_compiled"] == 0:
        problems.append(f"Use instead: compiled nothing under {backend}")
    return {"page": page.name, "backend": backend, "example": example, "use_instead": fixed, "problems": problems}


def _clean_and_equal(model, x, expected, label: str) -> list[str]:
    """What is wrong with ``model``: a graph break, a failing `fullgraph=True` compile, or an
    output other than the Example's eager one."""
    import torch

    from torchlint.verify.breaks import collect_breaks, fullgraph_compiles

    breaks = collect_breaks(model, (x,))
    if breaks:
        return [f"{label}: Dynamo still breaks: {breaks}"]
    ok, why, output = fullgraph_compiles(model, (x,))
    if not ok:
        return [f"{label}: fullgraph=True fails with {why}"]
    try:
        torch.testing.assert_close(output, expected)
    except AssertionError as error:
        return [f"{label}: output differs from the Example's eager output: {error}"]
    return []


def _fixed(source: str, path: Path) -> str | None:
    """The Example after `--fix --unsafe-fixes` (every pass), or None when nothing is fixed.
    A pass dropped for not compiling is a failure of the fix."""
    from torchlint.settings.config import Settings
    from torchlint.project.resolve import lint_text
    from torchlint.fix.fixing import fix_text

    result = fix_text(source, lambda text: lint_text(text, str(path), Settings(root=path.parent)), True, str(path))
    if result.problem is not None:
        raise AssertionError(f"--fix: {result.problem}")
    return result.text if result.text != source else None


def _configs() -> dict[str, object]:
    import torch._dynamo.config
    import torch._functorch.config
    import torch.fx.experimental._config

    return {
        "torch._dynamo.config": torch._dynamo.config,
        "torch._functorch.config": torch._functorch.config,
        "torch.fx.experimental._config": torch.fx.experimental._config,
    }


def _modes() -> dict[str, tuple]:
    """torch's global modes a page may switch: name -> (getter, setter)."""
    import torch

    return {
        "torch.is_grad_enabled": (torch.is_grad_enabled, torch.set_grad_enabled),
        "torch.are_deterministic_algorithms_enabled": (
            torch.are_deterministic_algorithms_enabled,
            torch.use_deterministic_algorithms,
        ),
        "torch.get_default_dtype": (torch.get_default_dtype, torch.set_default_dtype),
    }


def _settings() -> dict[str, object]:
    """What a page's code may change for the pages after it: the config of Dynamo and its
    neighbours, and torch's global modes."""
    found = {name: getter() for name, (getter, _) in _modes().items()}
    for owner, config in _configs().items():
        found.update({f"{owner}.{key}": value for key, value in config.get_config_copy().items()})
    return found


def _restore(fresh: dict[str, object]) -> list[str]:
    """Put back every setting that differs from ``fresh``; returns their names."""
    changed = sorted(name for name, value in _settings().items() if fresh[name] != value)
    modes, configs = _modes(), _configs()
    for name in changed:
        if name in modes:
            modes[name][1](fresh[name])
        else:
            owner, _, key = name.rpartition(".")
            configs[owner].load_config({key: fresh[name]})
    return changed


# The settings of this process before its first page.
_FRESH: dict[str, object] = {}


def handle(request: dict) -> dict:
    """Probe one page in a long-lived worker, as a fresh process would.

    Before: Dynamo reset, a fresh stdin for `input()`. After (`probe` unloads the page's
    modules): every setting it changed put back and named in the result, Dynamo reset again.
    """
    import torch._dynamo

    if not _FRESH:
        _FRESH.update(_settings())
    torch._dynamo.reset()
    sys.stdin = io.StringIO(STDIN)
    try:
        result = probe(Path(request["page"]))
    finally:
        restored = _restore(_FRESH)
        torch._dynamo.reset()
    return {"status": "ok", **result, "restored": restored}


def _probe_one(path: str) -> int:
    os.environ["PYTHONBREAKPOINT"] = "0"
    # What the probed code prints goes to stderr; stdout carries only the result.
    with contextlib.redirect_stdout(sys.stderr):
        result = handle({"page": str(Path(path).resolve())})
    print(json.dumps(result, indent=1))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        from torchlint.verify.worker import serve

        serve(handle, int(sys.argv[2]))
    else:
        sys.exit(_probe_one(sys.argv[1]))
