"""The rule registry: every ``tlNNN_*.py`` module here defines one rule."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from torchlint.rules.base import Rule


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for module_info in pkgutil.iter_modules(__path__):
        if not module_info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        found.extend(
            value
            for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule
            and value.__module__ == module.__name__
        )
    codes = [rule.code for rule in found]
    duplicates = {code for code in codes if codes.count(code) > 1}
    if duplicates:
        raise RuntimeError(f"rule codes defined twice: {sorted(duplicates)}")
    return tuple(sorted(found, key=lambda rule: rule.code))


def rule_by_code(code: str) -> type[Rule] | None:
    return {rule.code: rule for rule in all_rules()}.get(code.upper())
