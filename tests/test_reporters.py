from __future__ import annotations

import dataclasses

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.report.diagnostic import Applicability, Diagnostic, Edit, Fix, Location, Severity
from torchlint.report import FORMATS, ReportContext, render
from torchlint.pages import page_text
from torchlint.project.resolve import lint_text
from torchlint.report.links import graph_break_url
from torchlint.report.paths import display_path
from torchlint.rules import all_rules
from torchlint.settings.config import Settings
from torchlint.rules.base import Rule
from sarif_schema import assert_valid_sarif, schema_errors

ROOT = Path("/project").absolute()
NET = str(ROOT / "models" / "net.py")
OUTSIDE = str(Path("/elsewhere/util.py").absolute())

NET_SOURCE = (
    "import torch\n"
    "\n"
    "@torch.compile\n"
    "def forward(x):\n"
    "    print(x)\n"
    "    return x.item()\n"
)


class PrintRule(Rule):
    code = "TL101"
    name = "print-in-compiled"
    message = "print() inside compiled code breaks the graph"
    suggestion = "Log outside the compiled function"
    gb_ids = ("GB0001",)
    gb_types = ("Unsupported builtin",)


class ItemRule(Rule):
    code = "TL301"
    name = "tensor-item"
    message = ".item() turns a tensor into a Python number"
    severity = Severity.WARNING


def print_finding(**overrides) -> Diagnostic:
    fields = dict(
        path=NET,
        code="TL101",
        name=PrintRule.name,
        message=PrintRule.message,
        location=Location(5, 5),
        end_location=Location(5, 13),
        suggestion=PrintRule.suggestion,
        gb_ids=PrintRule.gb_ids,
        url=PrintRule.url(),
        fix=Fix(
            message="Remove the print() call",
            applicability=Applicability.SAFE,
            edits=(Edit(content="pass", location=Location(5, 5), end_location=Location(5, 13)),),
        ),
        noqa_row=5,
    )
    fields.update(overrides)
    return Diagnostic(**fields)


def item_finding(**overrides) -> Diagnostic:
    fields = dict(
        path=NET,
        code="TL301",
        name=ItemRule.name,
        message=ItemRule.message,
        location=Location(6, 12),
        end_location=Location(6, 20),
        severity=Severity.WARNING,
        url=ItemRule.url(),
        noqa_row=6,
    )
    fields.update(overrides)
    return Diagnostic(**fields)


@pytest.fixture
def ctx() -> ReportContext:
    return ReportContext(
        cwd=ROOT, sources={NET: NET_SOURCE}, rules=(PrintRule, ItemRule), version="1.2.3"
    )


def test_every_format_renders_empty_input(ctx):
    for fmt in FORMATS:
        render(fmt, [], ctx)
    assert render("concise", [], ctx) == ""
    assert json.loads(render("json", [], ctx)) == []


def test_unknown_format_is_refused(ctx):
    with pytest.raises(ValueError, match="unknown output format"):
        render("xml", [], ctx)


def test_display_path():
    assert display_path(NET, ROOT) == str(Path("models/net.py"))
    assert display_path(OUTSIDE, ROOT) == OUTSIDE
    assert display_path("-", ROOT) == "-"


# --- concise -------------------------------------------------------------------------


def test_concise_lines_mark_only_fixable_findings(ctx):
    shown = str(Path("models/net.py"))
    display_only = print_finding(
        fix=Fix(message="m", applicability=Applicability.DISPLAY_ONLY, edits=()),
        location=Location(9, 1),
    )
    unsafe = print_finding(
        fix=Fix(message="m", applicability=Applicability.UNSAFE, edits=()),
        location=Location(10, 1),
    )
    out = render("concise", [print_finding(), item_finding(), display_only, unsafe], ctx)
    assert out.splitlines() == [
        f"{shown}:5:5: TL101 [*] print() inside compiled code breaks the graph",
        f"{shown}:6:12: TL301 .item() turns a tensor into a Python number",
        f"{shown}:9:1: TL101 print() inside compiled code breaks the graph",
        f"{shown}:10:1: TL101 print() inside compiled code breaks the graph",
    ]
    # With `--unsafe-fixes`, an unsafe fix is one `--fix` applies.
    unsafe_on = dataclasses.replace(ctx, unsafe_fixes=True)
    assert render("concise", [unsafe], unsafe_on) == f"{shown}:10:1: TL101 [*] print() inside compiled code breaks the graph\n"


def test_full_shows_a_display_only_fix_with_its_code(ctx):
    # Lines after the first carry the indentation of the statement the edit replaces.
    skeleton = "def true_fn(x):\n        return x + 1\n"
    fix = Fix("Run the branches with `torch.cond`", Applicability.DISPLAY_ONLY, (Edit(skeleton, Location(5, 5), Location(5, 13)),))
    lines = render("full", [dataclasses.replace(print_finding(), fix=fix)], ctx).splitlines()
    at = lines.index("  = fix (display-only): Run the branches with `torch.cond`")
    # The lines the fix touches, as they would read.
    assert lines[at + 1 : at + 3] == ["  |     def true_fn(x):", "  |         return x + 1"]


def test_concise_keeps_the_given_order_and_absolute_paths_outside_cwd(ctx):
    out = render("concise", [item_finding(path=OUTSIDE), print_finding()], ctx)
    first, second = out.splitlines()
    assert first.startswith(f"{OUTSIDE}:6:12: TL301 ")
    assert second.startswith(str(Path("models/net.py")) + ":5:5: TL101 [*] ")


# --- full ----------------------------------------------------------------------------


def test_full_shows_excerpt_carets_help_and_docs(ctx):
    out = render("full", [print_finding()], ctx)
    lines = out.splitlines()
    assert lines[0] == (
        f"{Path('models/net.py')}:5:5: TL101 [*] print() inside compiled code breaks the graph"
    )
    assert lines[1:9] == [
        "  |",
        "4 | def forward(x):",
        "5 |     print(x)",
        "  |     ^^^^^^^^ TL101",
        "6 |     return x.item()",
        "  |",
        "  = help: Log outside the compiled function",
        "  = fix (safe): Remove the print() call",
    ]
    assert lines[9:11] == [
        "  = graph break: GB0001 https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0001.html",
        "  = docs: run `torchlint rule TL101`",
    ]
    # Carets sit exactly under `print(x)`.
    source_line, caret_line = lines[3], lines[4]
    start = caret_line.index("^")
    assert source_line[start : start + 8] == "print(x)"
    assert caret_line[start + 8 :] == " TL101"
    assert out.endswith("\n\n")


def test_full_omits_help_without_suggestion(ctx):
    out = render("full", [item_finding()], ctx)
    assert "= help:" not in out
    # The last line of the file has no line after it to show.
    assert out.splitlines()[2:6] == [
        "5 |     print(x)",
        "6 |     return x.item()",
        "  |            ^^^^^^^^ TL301",
        "  |",
    ]


def test_full_multiline_range_underlines_to_end_of_first_line():
    source = "x = foo(\n    1,\n)\n"
    ctx = ReportContext(cwd=ROOT, sources={NET: source})
    finding = print_finding(
        location=Location(1, 5), end_location=Location(3, 2), suggestion=None, url=None
    )
    lines = render("full", [finding], ctx).splitlines()
    assert lines[1:6] == ["  |", "1 | x = foo(", "  |     ^^^^ TL101", "2 |     1,", "  |"]


def test_full_widens_gutter_for_two_digit_rows():
    source = "".join(f"line{n}\n" for n in range(1, 12))
    ctx = ReportContext(cwd=ROOT, sources={NET: source})
    finding = print_finding(location=Location(10, 1), end_location=Location(10, 5))
    lines = render("full", [finding], ctx).splitlines()
    assert lines[1:7] == [
        "   |",
        " 9 | line9",
        "10 | line10",
        "   | ^^^^ TL101",
        "11 | line11",
        "   |",
    ]


def test_full_handles_tabs_and_wide_characters():
    source = "\tx = '日本' + y\n"
    ctx = ReportContext(cwd=ROOT, sources={NET: source})
    # Columns count characters: `y` is the 13th character.
    finding = print_finding(location=Location(1, 13), end_location=Location(1, 14))
    lines = render("full", [finding], ctx).splitlines()
    assert lines[2] == "1 |     x = '日本' + y"
    # Tab -> 4 columns, each of 日本 -> 2 columns, so `y` starts at display offset 17.
    assert lines[3] == "  | " + " " * 17 + "^ TL101"


def test_full_shows_control_characters_as_pictures():
    ctx = ReportContext(cwd=ROOT, sources={NET: "a\x1b[31mb = 1\r\n"})
    finding = print_finding(location=Location(1, 7), end_location=Location(1, 8))
    lines = render("full", [finding], ctx).splitlines()
    assert lines[2] == "1 | a\u241b[31mb = 1"
    assert lines[3] == "  |       ^ TL101"


def test_full_without_source_prints_header_and_notes():
    ctx = ReportContext(cwd=ROOT)
    findings = [print_finding(), print_finding(location=Location(99, 1))]
    lines = render("full", findings, ctx).splitlines()
    assert lines[0].endswith("TL101 [*] print() inside compiled code breaks the graph")
    assert lines[1] == "  = help: Log outside the compiled function"
    assert lines[2] == "  = fix (safe): Remove the print() call"
    assert lines[3].startswith("  = graph break: GB0001 ")
    assert lines[4] == "  = docs: run `torchlint rule TL101`"
    assert lines[5] == ""
    assert lines[6].startswith(f"{Path('models/net.py')}:99:1:")


def test_full_tolerates_ranges_past_the_line_end(ctx):
    finding = print_finding(location=Location(2, 40), end_location=Location(2, 50))
    lines = render("full", [finding], ctx).splitlines()
    assert "  | ^ TL101" in lines


# --- json ----------------------------------------------------------------------------

RUFF_KEYS = {
    "cell", "code", "end_location", "filename", "fix", "location", "message", "noqa_row", "url"
}
OWN_KEYS = {"name", "severity", "suggestion", "gb_ids", "related"}


def test_json_has_ruff_fields_and_ours(ctx):
    out = render("json", [print_finding(), item_finding()], ctx)
    assert out.startswith("[\n  {")
    fixable, plain = json.loads(out)
    for record in (fixable, plain):
        assert set(record) == RUFF_KEYS | OWN_KEYS
        assert record["cell"] is None
        assert record["filename"] == NET

    assert fixable["code"] == "TL101"
    assert fixable["location"] == {"column": 5, "row": 5}
    assert fixable["end_location"] == {"column": 13, "row": 5}
    assert fixable["message"] == PrintRule.message
    assert fixable["noqa_row"] == 5
    assert fixable["url"] == PrintRule.url()
    assert fixable["name"] == "print-in-compiled"
    assert fixable["severity"] == "error"
    assert fixable["suggestion"] == PrintRule.suggestion
    assert fixable["gb_ids"] == ["GB0001"]
    assert fixable["fix"] == {
        "applicability": "safe",
        "edits": [
            {
                "content": "pass",
                "location": {"column": 5, "row": 5},
                "end_location": {"column": 13, "row": 5},
            }
        ],
        "message": "Remove the print() call",
    }

    assert plain["fix"] is None
    assert plain["severity"] == "warning"
    assert plain["suggestion"] is None
    assert plain["gb_ids"] == []
    assert plain["location"] == {"column": 12, "row": 6}


# --- github --------------------------------------------------------------------------


def test_github_annotations(ctx):
    shown = str(Path("models/net.py"))
    out = render("github", [print_finding(), item_finding()], ctx)
    assert out.splitlines() == [
        f"::error title=torchlint (TL101),file={shown},line=5,col=5,endLine=5,endColumn=13"
        f"::{shown}:5:5: TL101 print() inside compiled code breaks the graph",
        f"::warning title=torchlint (TL301),file={shown},line=6,col=12,endLine=6,endColumn=20"
        f"::{shown}:6:12: TL301 .item() turns a tensor into a Python number",
    ]


def test_github_escapes_data_and_properties():
    cwd = Path("/x").absolute()
    odd_path = str(cwd / "a,b:c%d.py")
    ctx = ReportContext(cwd=cwd)
    finding = print_finding(path=odd_path, message="100% sure, really: yes\nsecond\rline")
    (line,) = render("github", [finding], ctx).splitlines()
    assert line == (
        "::error title=torchlint (TL101),file=a%2Cb%3Ac%25d.py,line=5,col=5,endLine=5,endColumn=13"
        "::a,b:c%25d.py:5:5: TL101 100%25 sure, really: yes%0Asecond%0Dline"
    )


# --- sarif ---------------------------------------------------------------------------


def test_sarif_structure(ctx):
    out = render("sarif", [item_finding(), print_finding(), item_finding(path=OUTSIDE)], ctx)
    log = json.loads(out)
    assert_valid_sarif(log)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    assert set(run) == {"tool", "originalUriBaseIds", "columnKind", "results"}
    # Results carry columns, so SARIF 2.1.0 (3.14.27) requires saying what they count.
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": ROOT.as_uri().rstrip("/") + "/"}}

    driver = run["tool"]["driver"]
    assert driver["name"] == "torchlint"
    assert driver["version"] == "1.2.3"
    assert driver["informationUri"] == "https://github.com/torchlint/torchlint"
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == ["TL101", "TL301"]
    assert rules[0] == {
        "id": "TL101",
        "name": "print-in-compiled",
        "shortDescription": {"text": PrintRule.message},
        # A rule without a page of its own (this one is made up) is described by its words.
        "help": {"text": page_text(PrintRule), "markdown": page_text(PrintRule)},
        "helpUri": "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0001.html",
        "properties": {
            "family": "side effects and I/O",
            "gb_ids": ["GB0001"],
            "gb_types": ["Unsupported builtin"],
        },
        "defaultConfiguration": {"level": "error"},
    }
    assert rules[1]["defaultConfiguration"] == {"level": "warning"}

    results = run["results"]
    assert len(results) == 3
    for result in results:
        fixes = {"fixes"} if result["ruleId"] == "TL101" else set()
        assert set(result) == {"ruleId", "ruleIndex", "level", "message", "locations"} | fixes
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        physical = result["locations"][0]["physicalLocation"]
        assert set(physical) == {"artifactLocation", "region"}
        assert set(physical["region"]) == {"startLine", "startColumn", "endLine", "endColumn"}
        assert isinstance(result["message"]["text"], str)

    item, printed, outside = results
    assert (item["ruleId"], item["ruleIndex"], item["level"]) == ("TL301", 1, "warning")
    assert (printed["ruleId"], printed["ruleIndex"], printed["level"]) == ("TL101", 0, "error")
    assert printed["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "models/net.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 13},
    }
    outside_artifact = outside["locations"][0]["physicalLocation"]["artifactLocation"]
    assert outside_artifact == {"uri": Path(OUTSIDE).as_uri()}
    assert printed["fixes"] == [{
        "description": {"text": "Remove the print() call (safe)"},
        "artifactChanges": [{
            "artifactLocation": {"uri": "models/net.py", "uriBaseId": "%SRCROOT%"},
            "replacements": [{
                "deletedRegion": {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 13},
                "insertedContent": {"text": "pass"},
            }],
        }],
    }]


def test_sarif_appends_rules_missing_from_the_selection():
    ctx = ReportContext(cwd=ROOT, rules=(ItemRule,), version="0")
    unknown = print_finding(code="TL998", name="made-up", url=None)
    log = json.loads(render("sarif", [unknown, item_finding(), unknown], ctx))
    assert_valid_sarif(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["TL301", "TL998"]
    assert rules[1]["name"] == "made-up"
    assert rules[1]["defaultConfiguration"] == {"level": "error"}
    assert [result["ruleIndex"] for result in run["results"]] == [1, 0, 1]


def test_sarif_with_no_findings_still_lists_rules(ctx):
    log = json.loads(render("sarif", [], ctx))
    assert_valid_sarif(log)
    assert log["runs"][0]["results"] == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == 2


def test_the_schema_check_rejects_what_the_standard_forbids(ctx):
    log = json.loads(render("sarif", [print_finding()], ctx))
    log["runs"][0]["columnKind"] = "bytes"
    del log["runs"][0]["results"][0]["message"]
    errors = schema_errors(log)
    assert any("columnKind" in error and "'bytes'" in error for error in errors), errors
    assert any("'message' is a required property" in error for error in errors), errors


def test_a_rule_without_a_pytorch_page_has_no_help_uri():
    from torchlint.rules.tl902_unused_noqa import UnusedNoqa

    log = json.loads(render("sarif", [], ReportContext(cwd=ROOT, rules=(UnusedNoqa,), version="0")))
    assert_valid_sarif(log)
    (descriptor,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert "helpUri" not in descriptor
    # Its page still travels with it.
    assert descriptor["help"]["markdown"].startswith("# TL902 unused-noqa")


# --- links ---------------------------------------------------------------------------

GRAPH_BREAK_PAGE = re.compile(r"https://meta-pytorch\.github\.io/compile-graph-break-site/gb/gb(\d{4})\.html")
RECOMPILATION_PAGE = "https://docs.pytorch.org/docs/stable/user_guide/torch_compiler/compile/programming_model.recompilation.html"
TROUBLESHOOTING_PAGE = "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html"


def test_graph_break_url_is_the_page_dynamo_links():
    assert graph_break_url("GB0123") == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0123.html"
    assert graph_break_url("GB7000") == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb7000.html"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_rule_links_a_pytorch_page(rule):
    url = rule.url()
    if rule.gb_ids:
        # Exactly the page of the rule's first graph break id.
        match = GRAPH_BREAK_PAGE.fullmatch(url or "")
        assert match is not None, url
        assert "GB" + match.group(1) == rule.gb_ids[0]
    elif rule.code.startswith("TL7"):
        assert url == RECOMPILATION_PAGE
    elif rule.code.startswith("TL9"):
        assert url is None
    else:
        assert rule.wraps_breaks and url == TROUBLESHOOTING_PAGE


def test_a_finding_carries_its_rules_page():
    source = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x.item()\n"
    found = {d.code: d for d in lint_text(source, str(ROOT / "m.py"), Settings(root=ROOT))}
    assert found["TL101"].url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"
    assert found["TL301"].url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"


def test_full_names_every_id_and_links_the_first(ctx):
    finding = print_finding(gb_ids=("GB0124", "GB0033", "GB0059"))
    lines = render("full", [finding], ctx).splitlines()
    assert lines[-3:] == [
        "  = graph break: GB0124 https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html (or GB0033, GB0059)",
        "  = docs: run `torchlint rule TL101`",
        "",
    ]


def test_full_links_the_page_of_a_finding_without_ids(ctx):
    recompile = print_finding(code="TL701", gb_ids=(), url=RECOMPILATION_PAGE)
    own = print_finding(code="TL902", gb_ids=(), url=None)
    recompile_lines, own_lines = (render("full", [f], ctx).splitlines() for f in (recompile, own))
    assert recompile_lines[-3:-1] == [f"  = see also: {RECOMPILATION_PAGE}", "  = docs: run `torchlint rule TL701`"]
    assert own_lines[-3:-1] == ["  = fix (safe): Remove the print() call", "  = docs: run `torchlint rule TL902`"]


def test_the_rules_table_gives_each_rules_pytorch_page(tmp_path):
    listed = subprocess.run(
        [sys.executable, "-m", "torchlint", "rules", "--output-format", "json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True,
    )
    urls = {entry["code"]: entry["url"] for entry in json.loads(listed.stdout)}
    assert urls == {rule.code: rule.url() for rule in all_rules()}
    assert urls["TL101"] == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"
    assert urls["TL701"] == RECOMPILATION_PAGE
    assert urls["TL901"] is None
