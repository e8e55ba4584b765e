"""Reading Dynamo's graph-break log records as other torch releases print them. torch is
imported (to tell user code from the library's), not run."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest
from helpers import BREAK_UNDER_A_WITH as MODEL

from torchlint.verify.breaks import _locate, _parse_record

# What torch 2.11 logs for `solve` (CUDA build): no source attribution names the `with`.
RECORD_2_11 = """\
Graph break in user code at {path}:12
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str'] (has_kwargs False)

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html

*** While handling this graph break, another graph break occurred: ***

Graph break under GenericContextWrappingVariable
  Explanation: Attempted to graph break in an active context manager(s) that doesn't support graph breaking.

  Developer debug context: Active generic context managers: [GenericContextWrappingVariable(_GeneratorContextManager)]

User code traceback:
  File "<string>", line 2, in <module>
  File "{path}", line 19, in solve
    y = report(y * 2)
  File "{path}", line 12, in report
    print("stepped")
"""


pytestmark = [
    pytest.mark.dynamo,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed"),
]


def _record(text: str) -> logging.LogRecord:
    return logging.LogRecord("torch._dynamo.symbolic_convert.__graph_breaks", logging.DEBUG, "", 0, text, None, None)


def test_a_break_under_a_with_names_the_line_of_the_frame_that_holds_it(tmp_path: Path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    entry = _parse_record(_record(RECORD_2_11.format(path=path)))
    assert entry is not None and entry.frame_skipped
    [brk] = _locate([entry])
    assert (brk.lineno, brk.skipped_at) == (12, ((str(path), 19),))


def test_a_skip_with_no_with_in_sight_names_no_frame(tmp_path: Path):
    path = tmp_path / "model.py"
    path.write_text(MODEL.replace("    with quiet():\n        y = report(y * 2)", "    y = report(y * 2)"))
    text = RECORD_2_11.format(path=path).replace(", line 19, in solve", ", line 18, in solve")
    [brk] = _locate([_parse_record(_record(text))])
    assert brk.frame_skipped and brk.skipped_at == ()
