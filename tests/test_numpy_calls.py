"""TL522: NumPy calls Dynamo cannot trace, against what `torch._numpy` implements."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from helpers import codes
from torchlint.rules import _numpy_api

MODULE = """
import numpy as np
import numpy
import torch
{prelude}

class Net(torch.nn.Module):
    def forward(self, x):
        a = x.numpy()
        {body}
        return x
"""


def in_forward(body: str, prelude: str = "") -> str:
    return MODULE.format(body=body, prelude=prelude)


@pytest.mark.parametrize(
    ("prelude", "body"),
    [
        ("", "b = np.insert(a, 1, 0.0)"),
        ("", "keep = np.isin(a, [1, 2])"),
        ("", "m = numpy.nanmean(a)"),
        ("from numpy import digitize", "bins = digitize(a, [0.5])"),
        ("", "lam = np.random.beta(0.4, 0.4, 4)"),
        ("from numpy.random import default_rng", "rng = default_rng(0)"),
        ("", "np.testing.assert_allclose(a, a)"),
        ("import numpy.testing as npt", "npt.assert_almost_equal(a, a)"),
        ("", "with np.errstate(all='ignore'):\n            b = a / 0"),
    ],
)
def test_untraced_numpy_calls(prelude: str, body: str) -> None:
    assert codes(in_forward(body, prelude)) == ["TL522"]


@pytest.mark.parametrize(
    "body",
    [
        "b = np.clip(a, -1.0, 1.0)",
        "n = np.linalg.norm(a)",
        "r = np.random.rand(4)",
        "f = np.fft.rfft(a)",
        "b = np.asarray(a, dtype=np.float32)",
        "p = np.pi * 2",
        "b = np.polynomial.polynomial.polyval(a, [1.0, 2.0])",  # not measured: silent
    ],
)
def test_traced_numpy_calls_stay_silent(body: str) -> None:
    assert codes(in_forward(body)) == []


def test_with_trace_numpy_off_every_numpy_call_breaks() -> None:
    source = in_forward("b = np.clip(a, -1.0, 1.0)", "torch._dynamo.config.trace_numpy = False")
    assert codes(source) == ["TL306", "TL522"]


def test_numpy_calls_outside_compiled_code_stay_silent() -> None:
    source = textwrap.dedent(
        """
        import numpy as np

        def prepare(a):
            return np.isin(a, [1, 2]), np.random.beta(0.4, 0.4)
        """
    )
    assert codes(source) == []


@pytest.mark.dynamo
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_the_traced_sets_are_what_the_installed_torch_implements() -> None:
    import torch._numpy as tnp

    def public(module, left_out=()):
        return {
            name
            for name in dir(module)
            if not name.startswith("_") and callable(getattr(module, name)) and name not in left_out
        }

    internals = {"ArrayLike", "DTypeLike", "KeysView", "Sequence", "annotations", "functools", "torch",
                 "normalizer", "array_or_scalar", "deco_stream", "use_numpy_random", "sqrt", "upcast",
                 "linalg_errors", "LinAlgError", "ufunc", "math"}
    assert _numpy_api.TRACED == public(tnp)
    assert _numpy_api.TRACED_RANDOM == public(tnp.random, internals)
    assert _numpy_api.TRACED_LINALG == public(tnp.linalg, internals)
    assert _numpy_api.TRACED_FFT == public(tnp.fft, internals)
