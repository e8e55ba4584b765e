"""TL1xx: side effects and I/O, reported only where Dynamo traces them."""

from __future__ import annotations

import pytest

from helpers import codes, findings

MODULE = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def forward(self, x):
        {body}
        return x
"""


def in_forward(body: str, prelude: str = "") -> str:
    return prelude + MODULE.format(body=body)


@pytest.mark.parametrize(
    ("prelude", "body", "code"),
    [
        ("", 'print("shape", x.shape)', "TL101"),
        ("import logging\nlogger = logging.getLogger(__name__)\n", 'logger.info("x %s", x.shape)', "TL102"),
        ("import logging\n", 'logging.warning("careful")', "TL102"),
        ("from logging import getLogger\nlog = getLogger('m')\n", 'log.debug("d")', "TL102"),
        ("import logging\n", 'logging.getLogger("m").error("e")', "TL102"),
        ("import warnings\n", 'warnings.warn("deprecated")', "TL103"),
        ("from warnings import warn as w\n", 'w("deprecated")', "TL103"),
        ("import sys\n", 'sys.stdout.write("progress\\n")', "TL104"),
        ("import sys\n", "sys.stderr.flush()", "TL104"),
        ("", 'scale = input("scale? ")', "TL105"),
        ("", "breakpoint()", "TL106"),
        ("import pdb\n", "pdb.set_trace()", "TL106"),
        ("", 'f = open("/dev/null")', "TL107"),
        ("import io\n", 'f = io.open("/dev/null")', "TL107"),
    ],
)
def test_flags_side_effect_in_forward(prelude: str, body: str, code: str) -> None:
    assert codes(in_forward(body, prelude)) == [code]


def test_finding_points_at_the_call() -> None:
    source = in_forward('print("hi")')
    (found,) = findings(source)
    assert found == ("TL101", source.splitlines().index('        print("hi")') + 1)


@pytest.mark.parametrize(
    "body",
    [
        'if not torch.compiler.is_compiling():\n            print("eager only")',
        'if not torch._dynamo.is_compiling():\n            print("eager only")',
        'if torch.compiler.is_compiling():\n            pass\n        else:\n            print("eager only")',
        'if not torch.compiler.is_compiling() and x.dim() > 1:\n            print("eager only")',
        'compiling = torch.compiler.is_compiling()\n        if not compiling:\n            print("eager only")',
        'if torch.compiler.is_compiling():\n            return x * 2\n        print("after an early return")',
        'y = x if torch.compiler.is_compiling() else print("eager")',
    ],
)
def test_guarded_calls_are_not_reported(body: str) -> None:
    assert codes(in_forward(body)) == []


def test_guard_helpers_from_other_libraries_and_config() -> None:
    prelude = "from transformers.utils import is_torchdynamo_compiling\nfrom mylib import eager_only\n"
    assert codes(in_forward('if not is_torchdynamo_compiling():\n            print("x")', prelude)) == []
    guarded_by_config = in_forward('if not eager_only():\n            print("x")', prelude)
    assert codes(guarded_by_config) == ["TL101"]
    assert codes(guarded_by_config, guard_functions=("mylib.eager_only",)) == []
    assert codes(guarded_by_config, guard_functions=("eager_only",)) == []


def test_the_traced_branch_of_a_guard_is_still_checked() -> None:
    assert codes(in_forward('if torch.compiler.is_compiling():\n            print("traced")')) == ["TL101"]


@pytest.mark.parametrize(
    "source",
    [
        # a training loop and a script are not compiled
        'import torch\ndef train(model):\n    for step in range(3):\n        print("step", step)\n',
        # a module's other methods are not compiled unless forward calls them
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        '        print("building")\n    def describe(self):\n        print("net")\n    def forward(self, x):\n        return x\n',
        # a class that is not a module
        'import torch\nclass Trainer:\n    def forward(self, x):\n        print("not a module")\n',
        # a shadowed print is not the builtin
        "import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        print = lambda *a: None\n        print(x)\n        return x\n",
        "import torch.nn as nn\nfrom rich import print\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        print(x)\n        return x\n",
        "import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x, print=None):\n"
        "        print(x)\n        return x\n",
        # a method that merely shares a name with a logging call
        "import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        self.stats.info(x)\n        return x\n",
        # disabled functions are not traced
        "import torch\nimport torch.nn as nn\n@torch.compiler.disable\ndef report(x):\n    print(x)\n"
        "class Net(nn.Module):\n    def forward(self, x):\n        return x\n",
    ],
)
def test_silent_outside_traced_code(source: str) -> None:
    assert codes(source) == []


def test_aliased_imports_resolve() -> None:
    source = """
    import torch as T
    import torch._dynamo as dynamo
    import sys as system

    @T.compile(mode="reduce-overhead")
    def step(x):
        if not dynamo.is_compiling():
            print("eager")
        system.stdout.write("x")
        return x
    """
    assert findings(source) == [("TL104", 10)]



@pytest.mark.parametrize(
    ("prelude", "body", "expected"),
    [
        # every Logger method breaks, including the level checks meant to guard a call
        ("import logging\nlogger = logging.getLogger(__name__)\n",
         "if logger.isEnabledFor(logging.DEBUG):\n            logger.debug('x')", ["TL102", "TL102"]),
        # aliases of aliases
        ("import logging\nlogger = logging.getLogger(__name__)\nlg = logger\nalias = lg\n",
         "alias.info('x')", ["TL102"]),
        ("import warnings\n", "with warnings.catch_warnings():\n            warnings.simplefilter('ignore')",
         ["TL103", "TL103"]),
        ("import sys\n", "tty = sys.stdout.isatty()", ["TL104"]),
        ("import os\n", "f = open(os.devnull, 'a')\n        f.write('x')\n        f.close()",
         ["TL107", "TL107", "TL107"]),
        ("from pathlib import Path\n", "Path('/tmp/log.txt').write_text('x')", ["TL107"]),
        ("import pathlib\n", "p = pathlib.Path('/tmp') / 'a.txt'\n        text = p.read_text()", ["TL107"]),
        # building a path is fine, and so is a method of another object called `write`
        ("from pathlib import Path\n", "p = Path('/tmp') / 'a'\n        self.buffer.write(x)", []),
    ],
)
def test_related_calls_that_break_too(prelude: str, body: str, expected: list[str]) -> None:
    assert codes(in_forward(body, prelude)) == expected


@pytest.mark.parametrize(
    ("call", "reordered"),
    [
        ("print(x.shape)", "print"),
        ("warnings.warn('slow path')", "warnings.warn"),
        ("logging.info('step')", "logging.info"),
    ],
)
def test_reorderable_logging_functions_silence_their_calls(call: str, reordered: str):
    source = f"""
import logging
import warnings
import torch

@torch.compile
def step(x):
    {call}
    return x
"""
    assert codes(source) != []
    assert codes(source, reorderable_logging_functions=(reordered,)) == []


def test_a_logger_method_is_not_reordered():
    source = """
import logging
import torch

log = logging.getLogger(__name__)

@torch.compile
def step(x):
    log.info("step")
    return x
"""
    assert codes(source, reorderable_logging_functions=("logging.info", "logging.Logger.info")) == ["TL102"]
