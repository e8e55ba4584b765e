"""The compile profile: the torch version and the Dynamo settings the rules assume."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from torchlint.analysis.project_hints import ProjectHints

from torchlint.settings.config import ConfigError, settings_from_table
from torchlint.settings.profile import compile_profile, installed_torch_version, parse_version
from torchlint.rules import all_rules

ROOT = Path("/project")


def _settings(**table):
    return settings_from_table(table, ROOT, "pyproject.toml [tool.torchlint]", None)


def test_target_torch_sets_the_version():
    assert compile_profile(_settings(**{"target-torch": "2.11"})).torch_version == (2, 11)
    assert compile_profile(_settings(**{"target-torch": "2.13.1"})).torch_version == (2, 13)


def test_without_target_torch_the_installed_torch_counts():
    try:
        installed = parse_version(metadata.version("torch"))
    except metadata.PackageNotFoundError:
        installed = None
    assert installed_torch_version() == installed
    assert compile_profile(_settings()).torch_version == installed


def test_reading_the_installed_version_does_not_import_torch():
    script = (
        "import sys; from torchlint.settings.profile import installed_torch_version; installed_torch_version(); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_bad_target_torch_is_a_config_error():
    with pytest.raises(ConfigError, match="target-torch"):
        _settings(**{"target-torch": "latest"})


def test_every_rule_applies_to_an_unknown_torch():
    assert all(rule.applies_to(None) for rule in all_rules())


def test_config_keys_win_over_assignments_in_code():
    found = ProjectHints({"capture_scalar_outputs": True, "trace_autograd_ops": True})
    profile = compile_profile(_settings(**{"capture-scalar-outputs": False}), found)
    assert profile.capture_scalar_outputs is False
    assert profile.trace_autograd_ops is True
    assert compile_profile(_settings(**{"trace-autograd-ops": False}), found).trace_autograd_ops is False


def test_reorderable_logging_functions_reach_the_profile():
    profile = compile_profile(_settings(**{"reorderable-logging-functions": ["print"]}))
    assert profile.reorders("print") and not profile.reorders("warnings.warn")


def test_a_rule_applies_to_the_releases_it_names():
    from torchlint.rules.base import Rule

    class FixedIn213(Rule):
        code, name, message = "TL999", "example", "example"
        since, until = (2, 4), (2, 13)

    assert FixedIn213.applies_to((2, 11)) and FixedIn213.applies_to((2, 4))
    assert not FixedIn213.applies_to((2, 13)) and not FixedIn213.applies_to((2, 3))
    assert FixedIn213.applies_to(None)


def _version_seen_with(path_entries: list[Path]) -> str:
    """`installed_torch_version()` in a fresh Python whose `sys.path` starts with ``path_entries``."""
    script = (
        f"import sys; sys.path[:0] = {[str(p) for p in path_entries]!r}; "
        "from torchlint.settings.profile import installed_torch_version; print(installed_torch_version())"
    )
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()


def test_the_first_path_entry_holding_torch_metadata_gives_the_version(tmp_path):
    wheel = tmp_path / "wheel"
    (wheel / "torch-9.1.0+cu130.dist-info").mkdir(parents=True)
    (wheel / "torch-9.1.0+cu130.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 9.1.0+cu130\n\nbody\n")
    (wheel / "torchvision-0.99.0.dist-info").mkdir()
    (wheel / "torchvision-0.99.0.dist-info" / "METADATA").write_text("Name: torchvision\nVersion: 0.99.0\n")
    develop = tmp_path / "develop"
    (develop / "torch.egg-info").mkdir(parents=True)
    (develop / "torch.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 3.4.0a0+git1234\n")
    assert _version_seen_with([wheel, develop]) == "(9, 1)"
    assert _version_seen_with([develop, wheel]) == "(3, 4)"


def test_a_metadata_folder_without_a_version_is_passed_over(tmp_path):
    broken = tmp_path / "broken"
    (broken / "torch-1.0.0.dist-info").mkdir(parents=True)
    later = tmp_path / "later"
    (later / "torch-7.2.0.dist-info").mkdir(parents=True)
    (later / "torch-7.2.0.dist-info" / "METADATA").write_text("Name: torch\nVersion: 7.2.0\n")
    assert _version_seen_with([broken, later]) == "(7, 2)"
