"""`hash(obj)` runs `obj.__hash__`, and objects made by a classmethod that returns its class
(`Config.from_dict(d)`) are of that class: real files on disk, linted through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import check, write

CONFIG = """
    import json


    class Config:
        def __init__(self, scale: float = 1.0):
            self.scale = scale

        @classmethod
        def from_dict(cls, values: dict){returns}:
            return cls(**values)

        def __hash__(self):
            return hash(self.to_json())

        def to_json(self) -> str:
            return json.dumps({{"scale": self.scale}})
"""

MODEL = """
    import torch
    from torch import nn

    from pkg.config import Config


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = None

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            config = {made}
            self.config = config
            if self.seen != hash({hashed}):
                x = x * 2
            return x
"""


def _project(root: Path, returns: str = ' -> "Config"', made: str = 'Config.from_dict({"scale": 2.0})',
             hashed: str = "self.config") -> None:
    write(root, {
        "pkg/__init__.py": "",
        "pkg/config.py": CONFIG.format(returns=returns),
        "pkg/model.py": MODEL.format(made=made, hashed=hashed),
    })


def test_hash_of_an_object_made_by_a_factory_runs_its_hash(project: Path) -> None:
    _project(project)
    assert check("pkg") == [("config.py", 16, "TL520")]


@pytest.mark.parametrize("returns", [' -> "Self"', " -> 'Config'"])
def test_factories_say_they_return_their_class(project: Path, returns: str) -> None:
    _project(project, returns=returns)
    assert check("pkg") == [("config.py", 16, "TL520")]


def test_a_constructor_call_and_a_local_name_work_too(project: Path) -> None:
    _project(project, made="Config()", hashed="config")
    assert check("pkg") == [("config.py", 16, "TL520")]


@pytest.mark.parametrize(
    "returns, hashed",
    [
        ("", "self.config"),  # a classmethod that does not say what it returns
        (' -> "dict"', "self.config"),
        (' -> "Config"', "x"),  # a tensor's hash: no project code runs
    ],
)
def test_what_is_not_known_to_run_stays_silent(project: Path, returns: str, hashed: str) -> None:
    _project(project, returns=returns, hashed=hashed)
    assert check("pkg") == []


def test_one_file(project: Path) -> None:
    source = CONFIG.format(returns=' -> "Config"') + MODEL.replace("from pkg.config import Config", "").format(
        made='Config.from_dict({"scale": 2.0})', hashed="self.config"
    )
    write(project, {"one.py": source})
    assert check("one.py") == [("one.py", 16, "TL520")]
