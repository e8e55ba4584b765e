"""The hostile-input sweep (`hostile_sweep`): every case of `hostile_cases`, and a few
generated projects fixed whole, each judged by the sweep's invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile_cases import cases, generated_cases
from hostile_sweep import Case, Skipped, run_case

ALL = cases() + generated_cases(4)


@pytest.mark.parametrize("case", ALL, ids=[case.name for case in ALL])
def test_the_sweep_holds(case: Case, tmp_path: Path) -> None:
    try:
        run_case(case, tmp_path)
    except Skipped as reason:
        pytest.skip(str(reason))
