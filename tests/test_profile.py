"""The compile profile: the torch version and the Dynamo settings the rules assume."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from torchlint.config import ConfigError, settings_from_table
from torchlint.profile import compile_profile, installed_torch_version, parse_version
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
        "import sys; from torchlint.profile import installed_torch_version; installed_torch_version(); "
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
    found = {"capture_scalar_outputs": True, "trace_autograd_ops": True}
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
