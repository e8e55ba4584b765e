"""Configuration files: finding the closest, validating keys and types, selectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.settings.config import CliOverrides, ConfigError, ConfigResolver, load_config
from torchlint.settings.selection import codes_for, codes_for_file
from torchlint.settings.selection import enabled_codes


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_closest_configuration_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL1"]\n')
    write(tmp_path / "sub" / "torchlint.toml", 'ignore = ["TL101"]\n')
    write(tmp_path / "other" / "pyproject.toml", "[tool.black]\nline-length = 100\n")
    resolver = ConfigResolver(cwd=tmp_path)
    top = resolver.for_path(tmp_path / "a.py")
    sub = resolver.for_path(tmp_path / "sub" / "deep" / "b.py")
    other = resolver.for_path(tmp_path / "other" / "c.py")
    assert top.select == ("TL1",) and top.root == tmp_path
    assert sub.ignore == ("TL101",) and sub.root == tmp_path / "sub"
    # a pyproject.toml without [tool.torchlint] does not stop the search upwards
    assert other.config_path == tmp_path / "pyproject.toml"


def test_torchlint_toml_beats_pyproject_in_the_same_folder(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL1"]\n')
    write(tmp_path / "torchlint.toml", 'select = ["TL9"]\n')
    assert ConfigResolver(cwd=tmp_path).for_path(tmp_path / "x.py").select == ("TL9",)


def test_explicit_config_applies_everywhere(tmp_path: Path) -> None:
    config = write(tmp_path / "conf" / "torchlint.toml", 'extend-select = ["TL902"]\n')
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL1"]\n')
    resolver = ConfigResolver(explicit=config, cwd=tmp_path)
    assert resolver.for_path(tmp_path / "x.py").extend_select == ("TL902",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tool.torchlint]\nselct = ["TL1"]\n', "unknown key `selct`; did you mean `select`?"),
        ('[tool.torchlint]\nselect = "TL1"\n', "`select` must be a list of strings"),
        ("[tool.torchlint]\nrespect-gitignore = 1\n", "`respect-gitignore` must be true or false"),
        ('[tool.torchlint]\ntarget-torch = "latest"\n', "`target-torch` must be a version"),
        ('[tool.torchlint]\nper-file-ignores = ["x"]\n', "`per-file-ignores` must be a table"),
        ('[tool.torchlint]\nselect = ["TL77"]\n', "unknown rule selector `TL77`"),
        ('[tool.torchlint]\nper-file-ignores = {"a.py" = ["XX1"]}\n', "unknown rule selector `XX1`"),
        ("[tool.torchlint\n", "invalid TOML"),
        ('[tool.torchlint]\nmode = "inference"\n', '`mode` must be one of "train", "eval", "both"'),
        ('[tool.torchlint]\ncompiled = "all"\n', '`compiled` must be one of "forward", "reachable"'),
        ("[tool.torchlint]\ncompiled = true\n", '`compiled` must be one of "forward", "reachable"'),
    ],
)
def test_bad_configuration_names_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path / "pyproject.toml", text)
    with pytest.raises(ConfigError) as raised:
        ConfigResolver(cwd=tmp_path).for_path(tmp_path / "x.py")
    assert expected in str(raised.value)
    assert str(path) in str(raised.value)
    with pytest.raises(ConfigError):
        load_config(path)


def test_cli_overrides_replace_select_and_extend_the_rest(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", 'select = ["TL1"]\nignore = ["TL102"]\n')
    resolver = ConfigResolver(CliOverrides(select=("TL9",), ignore=("TL901",)), cwd=tmp_path)
    settings = resolver.for_path(tmp_path / "x.py")
    assert settings.select == ("TL9",)
    assert settings.ignore == ("TL102", "TL901")
    assert codes_for(settings) == {"TL902"}


def test_selection_specificity_like_ruff() -> None:
    assert "TL101" not in enabled_codes(None, (), ("TL1",))
    assert enabled_codes(("TL101",), (), ("TL1",)) == {"TL101"}
    assert "TL101" not in enabled_codes(("TL1",), (), ("TL101",))
    assert enabled_codes(("ALL",), (), ("ALL",)) == frozenset()
    assert enabled_codes(("TL9",), ("TL101",), ()) == {"TL101", "TL901", "TL902"}


def test_per_file_ignores(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", '[per-file-ignores]\n"scripts/*" = ["TL1"]\n"**/debug_*.py" = ["TL101"]\n')
    settings = ConfigResolver(cwd=tmp_path).for_path(tmp_path / "x.py")
    assert "TL102" not in codes_for_file(str(tmp_path / "scripts" / "run.py"), settings)
    debug = codes_for_file(str(tmp_path / "pkg" / "debug_net.py"), settings)
    assert "TL101" not in debug and "TL102" in debug
    assert "TL101" in codes_for_file(str(tmp_path / "pkg" / "net.py"), settings)
