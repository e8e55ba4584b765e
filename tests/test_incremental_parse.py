"""A file parsed again from its last parse is the tree a whole parse gives, over chains of
edits of real files: characters typed and deleted anywhere, lines added and removed."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from torchlint.parse.incremental import LastParse, _bounds, first_parse, reparse
from torchlint.parse.positions import parse

REPO = Path(__file__).resolve().parents[1]
FILES = sorted((REPO / "fixtures").glob("*.py")) + sorted((REPO / "torchlint" / "rules").glob("tl2*.py"))[:6]
EDITS_PER_FILE = 40


def _edit(text: str, rng: random.Random) -> str:
    """One edit as a user makes it: a character typed or deleted, a line added or removed, code
    added at the end."""
    lines = text.splitlines(keepends=True)
    row = rng.randrange(len(lines))
    line = lines[row]
    kind = rng.choice(("type", "delete", "add line", "remove line", "add line", "type", "append"))
    if kind == "append":
        return text + rng.choice(["\n\ndef h(x):\n    return x\n", "# the end\n", "y = 2\n", "\n"])
    if kind == "type":
        at = rng.randrange(len(line)) if line.endswith("\n") else rng.randrange(len(line) + 1)
        lines[row] = line[:at] + rng.choice(["x", " ", "(", ")", ":", "#", "1", "\n", "'", "    "]) + line[at:]
    elif kind == "delete" and len(line) > 1:
        at = rng.randrange(len(line) - 1)
        lines[row] = line[:at] + line[at + 1 :]
    elif kind == "add line":
        indent = line[: len(line) - len(line.lstrip())] if line.strip() else ""
        lines.insert(row, indent + rng.choice(["y = 1\n", "# a note\n", "\n", "print(y)\n", "def f():\n", "return y\n"]))
    elif kind == "remove line" and len(lines) > 1:
        del lines[row]
    return "".join(lines)


def _whole(text: str) -> cst.Module | None:
    try:
        return parse(text).module
    except cst.ParserSyntaxError:
        return None


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_a_chain_of_edits_parses_as_the_whole_text_does(path: Path) -> None:
    rng = random.Random(path.name)
    text = path.read_text(encoding="utf-8")
    last = first_parse(text)
    assert isinstance(last, LastParse)
    reused = 0
    for _ in range(EDITS_PER_FILE):
        new = _edit(text, rng)
        whole = _whole(new)
        if whole is None:
            with pytest.raises(cst.ParserSyntaxError):
                reparse(last, new)
            continue  # the user types on from the last text that parsed
        found = reparse(last, new)
        module = found.parsed.module if isinstance(found, LastParse) else found.module
        assert module.code == new
        assert module.deep_equals(whole), f"after an edit of {path.name}"
        if isinstance(found, LastParse):
            assert found.bounds == _bounds(whole, new)
            # statements taken from the last parse, not parsed again
            reused += any(a is b for a, b in zip(module.body, last.parsed.module.body))
            last = found
        else:
            last = first_parse(new)
        text = new
    assert reused


def test_an_edit_inside_a_class_parses_only_around_it() -> None:
    text = "import torch\n\n\nclass A:\n    def f(self):\n        return 1\n\n\nclass B:\n    def g(self):\n        return 2\n\n\nclass C:\n    pass\n"
    last = first_parse(text)
    assert isinstance(last, LastParse)
    edited = text.replace("return 2", "return 3")
    found = reparse(last, edited)
    assert isinstance(found, LastParse)
    # A and the import are the very trees of the last parse: only B and its neighbours were parsed
    assert found.parsed.module.body[0] is last.parsed.module.body[0]
    assert found.parsed.module.deep_equals(parse(edited).module)


def test_a_line_added_at_the_end_of_a_class_joins_that_class() -> None:
    text = "import torch\n\n\nclass A:\n    x = 1\nclass B:\n    y = 2\n"
    last = first_parse(text)
    edited = text.replace("    x = 1\n", "    x = 1\n    z = 3\n")
    found = reparse(last if isinstance(last, LastParse) else None, edited)
    module = found.parsed.module if isinstance(found, LastParse) else found.module
    assert module.deep_equals(parse(edited).module)


def test_a_function_appended_at_the_end_is_parsed_with_the_last_statement() -> None:
    text = "import torch\n\n\nclass A:\n    x = 1\n\n\nclass B:\n    y = 2\n\n\ndef f():\n    return 1\n"
    last = first_parse(text)
    assert isinstance(last, LastParse)
    for added in ("\n\ndef g(x):\n    return x\n", "\n# the end\n"):
        found = reparse(last, text + added)
        assert isinstance(found, LastParse)
        assert found.parsed.module.body[1] is last.parsed.module.body[1]
        assert found.parsed.module.deep_equals(parse(text + added).module)
        assert found.bounds == _bounds(found.parsed.module, text + added)
    # Without a newline at its end the file is parsed whole (its statements' texts do not add up).
    found = reparse(last, text + "\n\ndef g(x):\n    return x")
    module = found.parsed.module if isinstance(found, LastParse) else found.module
    assert module.deep_equals(parse(text + "\n\ndef g(x):\n    return x").module)


@pytest.mark.parametrize("path", FILES[:10], ids=lambda path: path.name)
def test_findings_from_the_last_parse_are_those_of_a_whole_parse(path: Path) -> None:
    """The analysis of an edit parsed from the last parse (its untouched statements' code and
    node places kept too) finds what the analysis of the whole text finds, where it finds it."""
    from torchlint.analysis.engine import analyze_text
    from torchlint.analysis.project_hints import file_hints, project_hints
    from torchlint.settings.config import Settings
    from torchlint.settings.profile import compile_profile

    rng = random.Random(f"findings {path.name}")
    text = path.read_text(encoding="utf-8")
    settings = Settings(root=path.parent)
    profile = compile_profile(settings, project_hints([file_hints(text)]))
    state: dict[str, LastParse | None] = {"last": None}

    def from_last_parse(new: str):
        found = reparse(state["last"], new)
        state["last"] = found if isinstance(found, LastParse) else None
        return found.parsed if isinstance(found, LastParse) else found

    for _ in range(12):
        edited = _edit(text, rng)
        ours = analyze_text(edited, str(path), settings, profile, parser=from_last_parse)
        whole = analyze_text(edited, str(path), settings, profile)
        assert [p.diagnostic for p in ours.pending] == [p.diagnostic for p in whole.pending]
        assert ours.interface == whole.interface
        if _whole(edited) is not None:
            text = edited  # the user types on from the last text that parsed


@pytest.mark.parametrize("form", ["crlf", "tabs"])
def test_files_with_other_newlines_and_indentation_parse_as_a_whole(form: str) -> None:
    text = (REPO / "fixtures" / "transformer_block.py").read_text(encoding="utf-8")
    if form == "crlf":
        text = text.replace("\n", "\r\n")
    else:
        text = "\n".join(line.replace("    ", "\t") for line in text.split("\n"))
    rng = random.Random(form)
    last = first_parse(text)
    for _ in range(EDITS_PER_FILE):
        new = _edit(text, rng)
        whole = _whole(new)
        if whole is None:
            continue
        found = reparse(last if isinstance(last, LastParse) else None, new)
        module = found.parsed.module if isinstance(found, LastParse) else found.module
        assert module.code == new and module.deep_equals(whole)
        last, text = found, new
