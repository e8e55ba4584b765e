"""What every rule declares, and the families codes are grouped in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from torchlint.report.diagnostic import Applicability, Severity
from torchlint.report.links import RECOMPILATION_URL, TROUBLESHOOTING_URL, graph_break_url

FAMILIES = {
    "TL1": "side effects and I/O",
    "TL2": "data-dependent control flow",
    "TL3": "tensor to Python conversions",
    "TL4": "dynamic output shapes",
    "TL5": "calls Dynamo skips or cannot trace",
    "TL6": "costly breaks",
    "TL7": "recompile hazards",
    "TL9": "torchlint",
}

@dataclass(frozen=True)
class MetBreak:
    """A break that holds, as a finding about breaks met elsewhere tells it: a break of the
    finding's file (its rule ``code``, met in ``via``, a helper called, where not the function
    itself), or a call (``callee``, as spelled) into code that breaks."""

    code: str | None = None
    via: str | None = None
    callee: str | None = None


class Rule:
    """One rule: its identity, what it tells the user, and its detectors.

    Detectors are methods named ``visit_<libcst node class>(self, node, ctx)``; the checker
    calls them for every such node inside compiled code and they report through
    ``ctx.report``. ``ctx`` is a ``torchlint.rules.context.RuleContext``: all that a rule
    may ask about the code, and the only way to make a finding. A rule about other rules'
    findings (TL6xx) defines ``finish_function(self, findings, ctx)``, called with a
    compiled function's findings once it is walked, or ``finish_file(self, findings, ctx)``,
    called with the file's once every function is. One rule object checks many files: a
    rule that keeps state for a file resets it in ``start_file(self, ctx)``, called before
    each file is walked.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    # One sentence: the problem and, where it fits, the remedy.
    message: ClassVar[str]
    # The rewrite to reach for, shown by `full` output and in JSON.
    suggestion: ClassVar[str | None] = None
    # How safe each kind of fix the rule offers is; () where no mechanical rewrite exists
    # (its page's `## Fix` says why).
    fixes: ClassVar[tuple[Applicability, ...]] = ()
    # Dynamo's graph-break ids and types (torch/_dynamo/graph_break_registry.json).
    gb_ids: ClassVar[tuple[str, ...]] = ()
    gb_types: ClassVar[tuple[str, ...]] = ()
    # A rule that reports where other rules' breaks cost more (TL6xx) may have no id of its
    # own: its findings carry the inner breaks' ids.
    wraps_breaks: ClassVar[bool] = False
    # The torch releases the rule applies to, as (major, minor): from `since` on, up to but
    # not including `until`. The compile profile's torch version (`target-torch`, else the
    # installed torch) picks the rules that run.
    since: ClassVar[tuple[int, int] | None] = None
    until: ClassVar[tuple[int, int] | None] = None
    # The backends under which the hazard shows (TL7xx): a rule for what only inductor
    # specializes says ("inductor",), and its page's examples run under inductor.
    backends: ClassVar[tuple[str, ...]] = ("eager", "inductor")
    # What a finding does where it holds, as its message says when that is only on one path
    # ("breaks only while training").
    effect: ClassVar[str] = "breaks"
    severity: ClassVar[Severity] = Severity.ERROR
    compiled_only: ClassVar[bool] = True
    # The rule's cases, each a small module (dedented before it is linted): `invalid` ones
    # must give findings of this rule and of no other (a TL6xx finding brings the break it
    # reports on), `valid` ones none of this rule. tests/test_rule_examples.py runs them and
    # keeps the `full` output of the invalid ones as a snapshot.
    invalid: ClassVar[tuple[str, ...]] = ()
    valid: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def restate(cls, args: tuple[str, ...], met: list[MetBreak]) -> str:
        """The message of a finding about breaks met elsewhere, once the project says which of
        them hold (``met``). Rules that make such findings say how."""
        return cls.message

    @classmethod
    def applies_to(cls, torch_version: tuple[int, int] | None) -> bool:
        """Whether the rule predicts a break on this torch (an unknown torch: every rule runs)."""
        if torch_version is None:
            return True
        return (cls.since is None or torch_version >= cls.since) and (cls.until is None or torch_version < cls.until)

    @classmethod
    def family(cls) -> str:
        return FAMILIES.get(cls.code[:3], "other")

    @classmethod
    def page_name(cls) -> str:
        return f"{cls.code}-{cls.name}.md"

    @classmethod
    def url(cls) -> str | None:
        """PyTorch's page for what the rule finds (its own page is `torchlint rule CODE`).

        The page of its first graph break id; for a recompile hazard (TL7xx), PyTorch's page
        on recompilations. A rule about where breaks cost more without an id of its own (TL602)
        gets the troubleshooting page, which explains skipped frames; its findings carry the
        inner breaks' ids, and `full` output links each. torchlint's own rules (TL9xx: a
        file that does not parse, an unused `noqa`) have none: no PyTorch page is about them.
        """
        if cls.gb_ids:
            return graph_break_url(cls.gb_ids[0])
        if cls.code.startswith("TL7"):
            return RECOMPILATION_URL
        if cls.code.startswith("TL9"):
            return None
        return TROUBLESHOOTING_URL
