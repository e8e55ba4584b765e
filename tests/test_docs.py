"""The README and docs/ hold together: every relative link and anchor resolves, every option a
`torchlint ...` command in a code block uses exists, docs/configuration.md documents exactly the keys
the configuration accepts, the reference lists every rule and option, and the README stays short."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_LIMIT = 10_000

_FENCE = re.compile(r"^(```+|~~~+)([^\n]*)\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _code_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of each fenced block."""
    return [(match.group(2).strip(), match.group(3)) for match in _FENCE.finditer(text)]


def _prose(text: str) -> str:
    """The text outside fenced blocks and inline code, where links and headings live."""
    without_blocks = _FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), text)
    return _INLINE_CODE.sub("", without_blocks)


def _github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, lower case, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def _anchors(page: Path) -> frozenset[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.MULTILINE):
        slug = _github_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(anchors)


def _relative_links(page: Path) -> list[str]:
    links = _LINK.findall(_prose(page.read_text(encoding="utf-8")))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def test_the_docs_are_there():
    names = {page.name for page in DOCS.glob("*.md")}
    assert {"README.md", "configuration.md", "command-line.md", "verify.md", "coverage.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_relative_links_resolve(page: Path):
    links = _relative_links(page)
    for link in links:
        target_text, _, anchor = link.partition("#")
        target = (page.parent / target_text).resolve() if target_text else page
        assert target.exists(), f"{_page_id(page)}: link `{link}` points at a file that does not exist"
        if anchor:
            assert target.suffix == ".md", f"{_page_id(page)}: link `{link}` has an anchor into a file that is not Markdown"
            assert anchor in _anchors(target), (
                f"{_page_id(page)}: link `{link}`: {_page_id(target)} has no heading with the anchor `#{anchor}` "
                f"(it has {sorted(_anchors(target))})"
            )


def test_the_link_check_reads_links_and_anchors():
    """The link test has something to check: the README links into docs/, with anchors somewhere."""
    readme_links = _relative_links(README)
    assert any(link.startswith("docs/") for link in readme_links), readme_links
    assert any("#" in link for page in PAGES for link in _relative_links(page))
    assert _github_slug("Checking the fixes: `torchlint verify --fix`") == "checking-the-fixes-torchlint-verify---fix"
    assert _github_slug("In your test suite: `torchlint.testing`") == "in-your-test-suite-torchlinttesting"


def test_every_page_is_in_the_index():
    linked = {link.partition("#")[0] for link in _relative_links(DOCS / "README.md")}
    for page in DOCS.glob("*.md"):
        if page.name != "README.md":
            assert page.name in linked, f"docs/README.md does not link {page.name}"


def test_the_readme_stays_short():
    size = len(README.read_bytes())
    assert size < README_LIMIT, (
        f"README.md is {size} bytes (limit {README_LIMIT}): it says how to install, run and set torchlint up; "
        "the reference belongs in docs/"
    )


# --- options shown in commands ------------------------------------------------------------------

_INVOCATION = re.compile(r"(?<![\w./-])torchlint(?=[ \t]|$)(.*)$", re.MULTILINE)


def _help(*command: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", *command, "--help"], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@functools.lru_cache(maxsize=None)
def _subcommands() -> frozenset[str]:
    commands = _help().split("Commands:", 1)[1]
    return frozenset(re.findall(r"^  ([a-z][\w-]*)", commands, re.MULTILINE))


@functools.lru_cache(maxsize=None)
def _options(command: str | None) -> frozenset[str]:
    """The options `torchlint [command] --help` lists (the names at the start of its option lines)."""
    text = _help(*([command] if command else []))
    names = set()
    for spec in re.findall(r"^  (-\S.*?)(?:\s{2,}|$)", text.split("Options:", 1)[1], re.MULTILINE):
        names.update(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", spec))
    return frozenset(names)


def _invocations() -> list[tuple[str, str, list[str]]]:
    """(page, command, arguments) of every `torchlint ...` in the docs' code blocks; a command line
    without a subcommand is `check`'s, as `torchlint PATHS` is `torchlint check PATHS`."""
    found = []
    for page in PAGES:
        for _, body in _code_blocks(page.read_text(encoding="utf-8")):
            for rest in _INVOCATION.findall(body):
                rest = re.split(r"#|&&|\|\||[|;\"`)]", rest, maxsplit=1)[0]
                words = rest.split()
                command = words.pop(0) if words and words[0] in _subcommands() else "check"
                found.append((_page_id(page), command, words))
    return found


def test_options_in_command_examples_exist():
    invocations = _invocations()
    shown = {(command, word) for _, command, words in invocations for word in words}
    # The check reads what it should: the README's and the docs' commands, with their options.
    assert {("check", "--fix"), ("check", "--output-format"), ("verify", "--recompiles")} <= shown, shown
    for page, command, words in invocations:
        for word in words:
            if not word.startswith("-") or word in ("-", "--"):
                continue
            option = word.split("=", 1)[0]
            accepted = _options(command) | (_options(None) if command == "check" else frozenset())
            assert option in accepted, f"{page}: `torchlint {command}` has no option {option} (`torchlint {command} --help`)"


@pytest.mark.parametrize(("command", "page"), [("check", "command-line.md"), ("verify", "verify.md")])
def test_the_reference_documents_every_option(command: str, page: str):
    from torchlint.cli import cli

    text = (DOCS / page).read_text(encoding="utf-8")
    for param in cli.commands[command].params:
        for flag in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
            if flag.startswith("--") and flag != "--help":
                assert f"`{flag}" in text or f", {flag}" in text or f"/ {flag}" in text, f"docs/{page} does not document {flag}"


# --- configuration keys -------------------------------------------------------------------------


def _accepted_keys() -> set[str]:
    """The keys the configuration accepts, read from torchlint/settings/config.py when the test runs."""
    from torchlint.settings import config

    return set(config._KEYS)


def _toml_blocks(page: Path) -> list[str]:
    return [body for info, body in _code_blocks(page.read_text(encoding="utf-8")) if info == "toml"]


def _documented_keys() -> set[str]:
    keys = set()
    for body in _toml_blocks(DOCS / "configuration.md"):
        table = None
        for line in body.splitlines():
            header = re.match(r"^\[([^\]]+)\]", line)
            if header:
                table = header.group(1)
            key = re.match(r"^([A-Za-z0-9_-]+)[ \t]*=", line)
            if key and table in (None, "tool.torchlint"):
                keys.add(key.group(1))
    return keys


def test_configuration_documents_every_accepted_key():
    missing = _accepted_keys() - _documented_keys()
    assert not missing, f"docs/configuration.md does not document {sorted(missing)}: add each to its `Every key` block"


def test_configuration_documents_only_accepted_keys():
    unknown = _documented_keys() - _accepted_keys()
    assert not unknown, f"docs/configuration.md documents keys the configuration rejects: {sorted(unknown)}"


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_configuration_examples_load(page: Path, tmp_path: Path):
    """Every TOML example is a configuration torchlint accepts, values included."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    from torchlint.settings.config import settings_from_table

    for body in _toml_blocks(page):
        document = tomllib.loads(body)
        table = document["tool"]["torchlint"] if "tool" in document else document
        settings_from_table(table, tmp_path, _page_id(page), None)


# --- the reference's tables ----------------------------------------------------------------------


def test_rules_table_lists_every_rule_with_its_ids():
    from torchlint.rules import all_rules

    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| \[(TL\d{3})\]\(\.\./rules/[^)]+\) \| [^|]+ \| .+ \| ([^|]*) \|$", text, re.MULTILINE))
    for rule in all_rules():
        assert rule.code in rows, f"docs/rules.md's table has no row for {rule.code}"
        listed = [item.strip() for item in rows[rule.code].split(",")]
        if rule.gb_ids:
            assert listed == list(rule.gb_ids), f"{rule.code}: docs/rules.md lists {listed}, the rule {rule.gb_ids}"
    assert set(rows) == {rule.code for rule in all_rules()}
