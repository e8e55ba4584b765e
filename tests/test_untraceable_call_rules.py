"""TL5xx: calls Dynamo skips or cannot trace, recognised by the callee's qualified name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import codes, findings
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text

MODULE = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        {init}

    def forward(self, x):
        y = self.proj(x)
        {body}
        return y
"""


def in_forward(body: str, prelude: str = "", init: str = "pass") -> str:
    return prelude + MODULE.format(body=body, init=init)


def messages(source: str) -> list[str]:
    root = Path("/project")
    diagnostics = lint_text(textwrap.dedent(source), str(root / "pkg" / "model.py"), Settings(root=root))
    return [d.message for d in diagnostics]


@pytest.mark.parametrize(
    ("prelude", "body", "code"),
    [
        # TL501: the clocks, sleep and the date functions, however imported
        ("import time\n", "t = time.time()", "TL501"),
        ("import time\n", "t = time.perf_counter_ns()", "TL501"),
        ("import time\n", "t = time.monotonic()", "TL501"),
        ("import time\n", "t = time.process_time()", "TL501"),
        ("import time\n", "time.sleep(0.01)", "TL501"),
        ("import time\n", 'stamp = time.strftime("%H:%M")', "TL501"),
        ("import time as t\n", "start = t.perf_counter()", "TL501"),
        ("from time import perf_counter\n", "start = perf_counter()", "TL501"),
        ("from time import monotonic_ns as now\n", "start = now()", "TL501"),
        ("import timeit\n", "start = timeit.default_timer()", "TL501"),
        # TL502: the module's skipped functions and a Random object's unmodelled methods
        ("import random\n", "r = random.random()", "TL502"),
        ("import random\n", "k = random.choice([1, 2, 3])", "TL502"),
        ("import random\n", "g = random.gauss(0.0, 1.0)", "TL502"),
        ("import random\n", "random.shuffle(order)", "TL502"),
        ("import random\n", "picks = random.sample(range(8), 2)", "TL502"),
        ("import random\n", "random.seed(0)", "TL502"),
        ("from random import random as draw\n", "r = draw()", "TL502"),
        ("import random as rnd\n", "r = rnd.uniform(0, 1) + rnd.betavariate(1, 1)", "TL502"),
        ("import random\nRNG = random.Random(0)\n", "k = RNG.choice([1, 2])", "TL502"),
        ("import random\n", "k = random.Random(0).shuffle(order)", "TL502"),
        ("from random import Random\nRNG = Random(1)\n", "k = RNG.sample([1, 2], 1)", "TL502"),
        # TL503
        ("import copy\n", "z = copy.deepcopy(y)", "TL503"),
        ("import copy\n", "ema = copy.deepcopy(self.proj)", "TL503"),
        ("from copy import deepcopy\n", "z = deepcopy(y)", "TL503"),
        ("import copy\n", 'state = copy.deepcopy({"y": y})', "TL503"),
        ("import copy\n", "z = copy.copy(y)", "TL503"),
        ("import copy\n", "sizes = copy.copy([1, 2])", "TL503"),
        # TL505
        ("", "torch._dynamo.graph_break()", "TL505"),
        ("from torch._dynamo import graph_break\n", "graph_break()", "TL505"),
        ("import torch._dynamo as dynamo\n", "dynamo.graph_break()", "TL505"),
        # TL506
        ("", "torch.manual_seed(0)", "TL506"),
        ("", "torch.random.manual_seed(0)", "TL506"),
        ("", "torch.cuda.manual_seed(0)", "TL506"),
        ("", "torch.cuda.manual_seed_all(0)", "TL506"),
        ("from torch import manual_seed\n", "manual_seed(0)", "TL506"),
        # TL507
        ("", "g = torch.Generator()", "TL507"),
        ("", 'g = torch.Generator(device="cpu")', "TL507"),
        ("from torch import Generator\n", "g = Generator()", "TL507"),
        ("G = torch.Generator().manual_seed(0)\n", "y = y + torch.randn(8, generator=G)", "TL507"),
        ("G = torch.Generator().manual_seed(0)\n", "y = y.normal_(generator=G)", "TL507"),
        ("G = torch.Generator().manual_seed(0)\n", "G.manual_seed(1)", "TL507"),
        ("", "y = y + torch.rand(8, generator=torch.default_generator)", "TL507"),
        ("", "torch.default_generator.manual_seed(0)", "TL507"),
        # TL512
        ("import ctypes\n", "n = ctypes.sizeof(ctypes.c_double)", "TL512"),
        ("import ctypes\n", 'lib = ctypes.CDLL("libm.so.6")', "TL512"),
        ("import ctypes\n", 'lib = ctypes.cdll.LoadLibrary("libm.so.6")', "TL512"),
        ("import ctypes\n", "v = ctypes.c_double(2.0).value", "TL512"),
        ("import ctypes\n_LIB = ctypes.CDLL('libm.so.6')\n", "c = _LIB.cos(0.5)", "TL512"),
        ("import ctypes\n_LIB = ctypes.cdll.LoadLibrary('libm.so.6')\n", "c = _LIB.cos(0.5)", "TL512"),
        ("from ctypes import CDLL\n_LIB = CDLL('libm.so.6')\n", "c = _LIB.cos(0.5)", "TL512"),
        ("import ctypes\n_cos = ctypes.CDLL('libm.so.6').cos\n", "c = _cos(0.5)", "TL512"),
        ("import ctypes\n", "n = ctypes.cdll.LoadLibrary('libc.so.6').abs(-3)", "TL512"),
        # TL513
        ("import threading\n", "lock = threading.Lock()", "TL513"),
        ("import threading\n", "cond = threading.Condition()", "TL513"),
        ("from threading import RLock\n", "lock = RLock()", "TL513"),
        ("import threading\nLOCK = threading.Lock()\n", "with LOCK:\n            y = y + 1", "TL513"),
        ("import threading\n", "with threading.Semaphore(2):\n            y = y + 1", "TL513"),
        ("import threading\nLOCK = threading.Lock()\n", "LOCK.acquire()", "TL513"),
    ],
)
def test_flags_untraceable_call_in_forward(prelude: str, body: str, code: str) -> None:
    assert codes(in_forward(body, prelude)) == [code]


@pytest.mark.parametrize(
    ("init", "body", "code"),
    [
        ("self._lock = threading.Lock()", "with self._lock:\n            y = y + 1", "TL513"),
        ("self._lock = threading.RLock()", "self._lock.release()", "TL513"),
        ("self.gen = torch.Generator().manual_seed(0)", "y = y + torch.randn(8, generator=self.gen)", "TL507"),
        ("self.rng = random.Random(0)", "k = self.rng.gauss(0.0, 1.0)", "TL502"),
        ("self._lib = ctypes.CDLL('libm.so.6')", "c = self._lib.cos(0.5)", "TL512"),
    ],
)
def test_objects_made_in_init_are_followed(init: str, body: str, code: str) -> None:
    prelude = "import ctypes\nimport random\nimport threading\n"
    assert codes(in_forward(body, prelude, init)) == [code]


@pytest.mark.parametrize(
    ("prelude", "body"),
    [
        # Dynamo traces these
        ("import random\n", "k = random.randint(0, 3) + random.randrange(4) + random.uniform(0, 1)"),
        ("import random\n", "rng = random.Random(0)\n        rng.seed(1)"),
        ("", "y = y + torch.rand(()) + torch.randn_like(y)"),
        ("import numpy as np\n", "r = np.random.rand()"),
        ("import copy\n", 'cfg = copy.deepcopy({"scale": [1.0, 2.0]})'),
        ("import copy\nDEFAULTS = {'scale': 1.0}\n", "cfg = copy.deepcopy(DEFAULTS)"),
        ("", "z = y.clone()"),
        ("", "torch.seed()"),
        ("", "y = y + torch.randn(8, generator=None)"),
        ("import math\n", "y = y * math.cos(0.5)"),
        ("import os\n", 'flag = os.environ.get("DEBUG")'),
        ("import threading\n_TLS = threading.local()\n", 'v = getattr(_TLS, "v", 1)'),
        ("", "with torch.no_grad():\n            y = y + 1"),
        # look-alikes the file does not show to be what the rule is about
        ("import math\nfrom types import SimpleNamespace\n_LIB = SimpleNamespace(cos=math.cos)\n", "c = _LIB.cos(0.5)"),
        ("", "with self.lock:\n            y = y + 1"),
        ("", "y = y + torch.randn(8, generator=self.generator)"),
        ("", "k = self.rng.choice([1, 2])"),
        # shadowed module names
        ("import time\n", "time = y.sum(-1)\n        y = y * time.float()"),
        ("import random\n", "random = y.mean()\n        y = y + random.abs()"),
        ("import copy\n", "copy = y.detach()\n        y = copy.clone()"),
    ],
)
def test_look_alikes_stay_silent(prelude: str, body: str) -> None:
    assert codes(in_forward(body, prelude)) == []


def test_traced_random_draws_are_no_break_but_a_constant() -> None:
    # Dynamo traces these `random.Random` methods (no TL502) by drawing once while compiling.
    source = in_forward("r = RNG.random() + RNG.randint(0, 3) + RNG.uniform(0, 1)", "import random\nRNG = random.Random(0)\n")
    assert codes(source) == ["TL710", "TL710", "TL710"]


def test_plain_config_made_in_init_deep_copies_fine() -> None:
    source = in_forward("cfg = copy.deepcopy(self.defaults)", "import copy\n", 'self.defaults = {"clip": [-3.0, 3.0]}')
    assert codes(source) == []


def test_generator_parameter_is_not_known_to_be_one() -> None:
    source = """
    import torch

    @torch.compile
    def noisy(x, generator=None):
        return x + torch.randn(x.shape, generator=generator)
    """
    assert codes(source) == []


def test_code_outside_compiled_regions_is_not_reported() -> None:
    source = """
    import copy
    import random
    import threading
    import time
    import torch
    import torch.nn as nn

    LOCK = threading.Lock()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.proj = nn.Linear(8, 8)
            self.ema = copy.deepcopy(self.proj)
            self.gen = torch.Generator().manual_seed(0)
            self._lock = threading.Lock()

        def forward(self, x):
            return self.proj(x)

    def train(model, batches):
        random.shuffle(batches)
        for batch in batches:
            start = time.perf_counter()
            with LOCK:
                loss = model(batch).sum()
            print(time.perf_counter() - start, loss)
    """
    assert codes(source) == []


def test_guarded_calls_are_not_reported() -> None:
    body = "if not torch.compiler.is_compiling():\n            start = time.perf_counter()\n            random.seed(0)"
    assert codes(in_forward(body, "import random\nimport time\n")) == []


def test_helpers_called_from_compiled_code_are_checked() -> None:
    source = """
    import time
    import torch

    def _stamp():
        return time.time()

    @torch.compile
    def step(x):
        return x * _stamp()
    """
    assert findings(source) == [("TL501", 6)]


def test_one_finding_per_chained_or_inline_call() -> None:
    prelude = "import ctypes\nimport threading\n"
    body = (
        "g = torch.Generator().manual_seed(0)\n"
        "        y = y + torch.randn(8, generator=torch.Generator())\n"
        "        with threading.Lock(), threading.Lock():\n"
        "            y = y + 1\n"
        "        n = ctypes.CDLL('libc.so.6').abs(-3)"
    )
    found = findings(in_forward(body, prelude))
    assert [code for code, _ in found] == ["TL507", "TL507", "TL513", "TL512"]
    assert len({row for _, row in found}) == 4


def test_generator_method_after_creation_breaks_again() -> None:
    body = "g = torch.Generator()\n        g.manual_seed(0)\n        n = torch.randn(8, generator=g)"
    assert codes(in_forward(body)) == ["TL507", "TL507", "TL507"]


def test_an_attribute_any_method_makes_a_generator_stays_one() -> None:
    # The setter's `self.rng = seed` is the attribute's last assignment; `__init__` made it a
    # generator, and a choice between two generators is one too.
    source = """
    import torch

    class Backend:
        def __init__(self):
            self.rng = torch.Generator("cpu")
            self.rng_cuda = torch.Generator("cpu")

        def seed(self, seed):
            if isinstance(seed, int):
                self.rng.manual_seed(seed)
            else:
                self.rng = seed

        def rand(self, n, on_gpu=False):
            generator = self.rng_cuda if on_gpu else self.rng
            return torch.rand(n, generator=generator)

    BACKEND = Backend()

    @torch.compile
    def step(x):
        BACKEND.seed(0)
        return x + BACKEND.rand(3)
    """
    assert findings(source) == [("TL507", 11), ("TL507", 17)]


def test_a_choice_with_something_else_is_not_known_to_be_a_generator() -> None:
    source = """
    import torch

    class Backend:
        def __init__(self):
            self.rng = torch.Generator("cpu")

        def rand(self, n, rng=None):
            generator = self.rng if rng is None else rng
            return torch.rand(n, generator=generator)

    BACKEND = Backend()

    @torch.compile
    def step(x):
        return x + BACKEND.rand(3)
    """
    assert codes(source) == []


def test_finding_points_at_the_call() -> None:
    source = in_forward("start = time.perf_counter()", "import time\n")
    (found,) = findings(source)
    assert found == ("TL501", source.splitlines().index("        start = time.perf_counter()") + 1)


def test_messages_name_the_call_and_the_remedy() -> None:
    prelude = "import copy\nimport random\nimport threading\nimport time as t\n"
    body = (
        "start = t.perf_counter()\n"
        "        k = random.choice([1, 2])\n"
        "        ema = copy.deepcopy(self.proj)\n"
        "        with self._lock:\n"
        "            y = y + 1"
    )
    time_msg, random_msg, copy_msg, lock_msg = messages(in_forward(body, prelude, "self._lock = threading.Lock()"))
    assert time_msg.startswith("`t.perf_counter()` in compiled code breaks the graph")
    assert "pass the timestamp in" in time_msg
    assert random_msg.startswith("`random.choice()`") and "torch.rand(())" in random_msg
    assert copy_msg.startswith("`copy.deepcopy()`") and "x.clone()" in copy_msg and "__init__" in copy_msg
    assert "skip the whole function" in lock_msg and "around the call to the compiled function" in lock_msg
    assert not any("fullgraph" in message for message in (time_msg, random_msg, copy_msg, lock_msg))


def test_fullgraph_compile_sites_say_the_compile_fails() -> None:
    source = """
    import torch

    @torch.compile(fullgraph=True)
    def step(x):
        torch.manual_seed(0)
        return x + torch.randn_like(x)
    """
    (message,) = messages(source)
    assert message.startswith("`torch.manual_seed()` in compiled code breaks the graph")
    assert message.endswith("under `fullgraph=True` the compile fails")


def test_a_lock_under_fullgraph_fails_rather_than_skips() -> None:
    source = """
    import threading
    import torch

    LOCK = threading.Lock()

    @torch.compile(fullgraph=True)
    def step(x):
        with LOCK:
            x = x + 1
        return x
    """
    (message,) = messages(source)
    assert "skip" not in message and message.endswith("under `fullgraph=True` the compile fails")


@pytest.mark.parametrize(
    ("prelude", "body"),
    [
        ("import json\n", "key = json.dumps([1, 2])"),
        ("import pickle\n", "blob = pickle.dumps(3)"),
        ("from hashlib import sha1\n", "digest = sha1(b'x').hexdigest()"),
        ("import os\n", "found = os.path.exists('ckpt.pt')"),
        ("import os.path as osp\n", "found = osp.isfile('ckpt.pt')"),
        ("import datetime\n", "stamp = datetime.datetime.now()"),
        ("from datetime import date\n", "day = date.today()"),
        ("import sys\n", "size = sys.getsizeof(3)"),
        ("import sys\n", "caller = sys._getframe(1).f_code.co_name"),
        ("import inspect\n", "frame = inspect.currentframe()"),
        ("import inspect\n", "depth = len(inspect.stack())"),
        ("from importlib import import_module\n", "math = import_module('math')"),
    ],
)
def test_untraceable_stdlib_calls(prelude: str, body: str) -> None:
    assert codes(in_forward(body, prelude)) == ["TL520"]


@pytest.mark.parametrize(
    ("prelude", "body"),
    [
        ("import os\n", "path = os.path.join('a', 'b')"),
        ("import os\n", "debug = os.environ.get('DEBUG')"),
        ("import re\n", "ok = re.match('a', 'abc')"),
        ("import struct\n", "packed = struct.pack('i', 1)"),
        ("import importlib.util\n", "found = importlib.util.find_spec('math')"),
        ("import json\n", "json = {'a': 1}\n        key = json.get('a')"),  # a local dict named json
    ],
)
def test_traced_stdlib_calls_stay_silent(prelude: str, body: str) -> None:
    assert codes(in_forward(body, prelude)) == []


def test_deepcopy_of_plain_data_breaks_before_torch_2_13() -> None:
    source = in_forward("cfg = copy.deepcopy(self.defaults)", "import copy\n", 'self.defaults = {"clip": [-3.0, 3.0]}')
    assert codes(source, target_torch="2.13") == []
    assert codes(source, target_torch="2.11") == ["TL503"]
