"""Which rule codes are on, from `select` / `extend-select` / `ignore` selectors.

As in ruff, a selector is a code (`TL101`), a prefix (`TL1`) or `ALL`; where a code
matches both an enabling and a disabling selector, the more specific one wins, and on a
tie `ignore` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from torchlint.rules import all_rules

if TYPE_CHECKING:
    import pathspec

    from torchlint.settings.config import Settings


class SelectorError(ValueError):
    pass


def _specificity(selector: str, code: str) -> int:
    """How closely ``selector`` matches ``code``: -1 no match, 0 ALL, else its length."""
    if selector == "ALL":
        return 0
    return len(selector) if code.startswith(selector) else -1


def validate(selectors: Iterable[str], where: str) -> tuple[str, ...]:
    codes = [rule.code for rule in all_rules()]
    normalised = []
    for selector in selectors:
        value = selector.strip().upper()
        if value != "ALL" and not any(code.startswith(value) for code in codes):
            raise SelectorError(f"{where}: unknown rule selector `{selector}`")
        normalised.append(value)
    return tuple(normalised)


def enabled_codes(
    select: Iterable[str] | None, extend_select: Iterable[str], ignore: Iterable[str]
) -> frozenset[str]:
    enable = list(select) if select is not None else ["ALL"]
    enable += list(extend_select)
    disable = list(ignore)
    enabled = set()
    for rule in all_rules():
        best_on = max((_specificity(s, rule.code) for s in enable), default=-1)
        best_off = max((_specificity(s, rule.code) for s in disable), default=-1)
        if best_on >= 0 and best_on > best_off:
            enabled.add(rule.code)
    return frozenset(enabled)


@lru_cache(maxsize=64)
def codes_for(settings: Settings) -> frozenset[str]:
    return enabled_codes(settings.select, settings.extend_select, settings.ignore)


@lru_cache(maxsize=64)
def _per_file_specs(settings: Settings) -> tuple[tuple[pathspec.GitIgnoreSpec, tuple[str, ...]], ...]:
    # Imported here: most projects set no per-file-ignores.
    import pathspec

    return tuple(
        (pathspec.GitIgnoreSpec.from_lines([pattern]), codes)
        for pattern, codes in settings.per_file_ignores
    )


def _relative(path: str, settings: Settings) -> PurePath | None:
    try:
        return Path(path).resolve().relative_to(settings.root.resolve())
    except (ValueError, OSError):
        return None


def codes_for_file(path: str, settings: Settings) -> frozenset[str]:
    """The codes printed for ``path``: the selection, less its per-file-ignores."""
    enabled = codes_for(settings)
    if not settings.per_file_ignores:
        return enabled
    relative = _relative(path, settings)
    if relative is None:
        return enabled
    ignored: list[str] = []
    for spec, codes in _per_file_specs(settings):
        if spec.match_file(relative.as_posix()):
            ignored.extend(codes)
    if not ignored:
        return enabled
    return enabled - enabled_codes(ignored, (), ())
