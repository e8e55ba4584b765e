"""The hostile-input sweep, counted: every case of `tests/hostile_cases.py` and many
generated projects fixed whole, each judged by the invariants of `tests/hostile_sweep.py`
(no file changed but by an intended fix, nothing written outside the project and its
cache, no socket used, the exit code and message say what happened).

    python bench/bench_hostile.py [--generated N] [--seed S] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hostile_cases import cases, generated_cases  # noqa: E402
from hostile_sweep import Skipped, Violation, run_case  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generated", type=int, default=100, help="generated projects to fix (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the counts to this file")
    options = parser.parse_args()

    held, broken, skipped = Counter(), Counter(), Counter()
    runs = 0
    violations = []
    figures = {}
    for case in cases() + generated_cases(options.generated, options.seed):
        with tempfile.TemporaryDirectory(prefix="torchlint-sweep-") as top:
            try:
                outcomes = run_case(case, Path(top))
            except Skipped:
                skipped[case.item] += 1
                continue
            except Violation as violation:
                broken[case.item] += 1
                violations.append(str(violation).splitlines()[0])
                continue
        held[case.item] += 1
        runs += len(outcomes)
        if case.max_seconds is not None or case.max_peak_mib is not None:
            figures[case.name] = {"seconds": round(outcomes[-1].seconds, 2), "peak_mib": round(outcomes[-1].peak_mib)}

    items = sorted(held.keys() | broken.keys() | skipped.keys())
    print(f"{'item':>4} {'held':>5} {'broken':>6} {'skipped':>7}")
    for item in items:
        label = "gen" if item == 0 else str(item)
        print(f"{label:>4} {held[item]:>5} {broken[item]:>6} {skipped[item]:>7}")
    print(f"cases held {sum(held.values())}, broken {sum(broken.values())}, skipped {sum(skipped.values())}; "
          f"{runs} torchlint runs judged")
    for name, measured in figures.items():
        print(f"  {name}: {measured['seconds']} s, peak {measured['peak_mib']} MiB")
    for violation in violations:
        print(f"  BROKEN {violation}")
    if options.json:
        options.json.write_text(json.dumps({
            "held": dict(held), "broken": dict(broken), "skipped": dict(skipped), "runs": runs,
            "figures": figures, "violations": violations,
        }, indent=2) + "\n")
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
