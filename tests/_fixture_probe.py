"""Runs one fixture's targets through TorchDynamo and compares with its annotations.

    python tests/_fixture_probe.py fixtures/transformer_block.py

A fixture marks each line where a graph break is expected with `# expect: TL101` (several
codes: `# expect: TL101, TL102`) and declares `torchlint_targets()`, a dict
`name -> (callable, args)` or `(callable, args, kwargs)`. Every line Dynamo breaks on must
be annotated, every annotated line must break, and each break's gb_type must be one its
line's rules predict. Runs in its own process and exits non-zero on any difference.
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import tokenize
from pathlib import Path

from _probe_process import probe_main

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TL\d{3}(?:\s*,\s*TL\d{3})*)")


def expected_findings(source: str) -> set[tuple[int, str]]:
    """(line, code) of every `# expect:` comment; strings that merely contain one do not count."""
    found = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _EXPECT.search(token.string)
        if match:
            found.update((token.start[0], code.strip()) for code in match.group("codes").split(","))
    return found


def _load_fixture(path: Path):
    spec = importlib.util.spec_from_file_location(f"torchlint_fixture_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _unpack(target) -> tuple:
    fn, args, *rest = target
    return fn, tuple(args), dict(rest[0]) if rest else {}


def probe(path: Path) -> dict:
    from torchlint.rules import rule_by_code
    from torchlint.verify.breaks import collect_breaks

    expected = expected_findings(path.read_text(encoding="utf-8"))
    codes_by_line: dict[int, set[str]] = {}
    for line, code in expected:
        codes_by_line.setdefault(line, set()).add(code)

    module = _load_fixture(path)
    breaks = []
    for name, target in module.torchlint_targets().items():
        fn, args, kwargs = _unpack(target)
        breaks.extend((name, brk) for brk in collect_breaks(fn, args, kwargs))

    problems = []
    broken_lines = set()
    for name, brk in breaks:
        if brk.filename != str(path):
            where = f"{brk.filename}:{brk.lineno}"
            problems.append(f"{name}: break outside the fixture at {where}: {brk.gb_type}")
            continue
        broken_lines.add(brk.lineno)
        codes = codes_by_line.get(brk.lineno)
        if not codes:
            problems.append(f"{name}: line {brk.lineno} breaks ({brk.gb_type}) but has no `# expect:`")
            continue
        predicted = {gb_type for code in codes for gb_type in rule_by_code(code).gb_types}
        if brk.gb_type not in predicted:
            problems.append(
                f"{name}: line {brk.lineno} breaks with {brk.gb_type!r}, not one of {sorted(predicted)}"
            )
    for line in sorted(set(codes_by_line) - broken_lines):
        problems.append(f"line {line} expects {sorted(codes_by_line[line])} but Dynamo did not break there")
    return {
        "fixture": path.name,
        "breaks": [
            f"{name}: line {brk.lineno}: {brk.gb_type}{' (frame skipped)' if brk.frame_skipped else ''}"
            for name, brk in breaks
        ],
        "problems": problems,
    }


if __name__ == "__main__":
    sys.exit(probe_main(probe, sys.argv))
