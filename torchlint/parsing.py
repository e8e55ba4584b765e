"""libcst's parse, refusing first what nests deeper than Python itself accepts.

CPython refuses more than 200 nested brackets and expressions nested a few thousand
deep (a long run of `not` or unary minus). libcst's native parser has no such limits:
on a few thousand nested brackets or operators it takes gigabytes of memory or overflows
its stack, which ends the whole process. A cheap scan of the text finds the files that
may nest that deep; CPython's own parser then decides, and what it refuses is reported
as a syntax error instead of being handed to libcst.
"""

from __future__ import annotations

import ast
import operator
import re
from itertools import accumulate

import libcst as cst

# Well below CPython's limit of 200 nested brackets, so a few closing brackets inside
# strings or comments cannot hide a nest that CPython refuses.
_SUSPECT_DEPTH = 100
_OPENING, _CLOSING = b"([{", b")]}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _OPENING + _CLOSING)
_STEP = [1 if b in _OPENING else -1 for b in range(256)]
# A run of prefix operators and brackets, each opening a nesting level: `- - -x`, `-(-(`.
_SYMBOL_RUN = re.compile(r"[-+~(\[{][-+~(\[{\s\\]{%d,}" % (_SUSPECT_DEPTH - 1))
# Prefix keywords repeated; no real code writes three in a row.
_WORD_RUNS = ("not not not", "await await await")


def parse_module(text: str) -> cst.Module:
    """The libcst module of ``text``; `ParserSyntaxError` for what does not parse,
    including what nests deeper than CPython accepts."""
    if _may_nest_too_deep(text):
        refusal = _python_refusal(text)
        if refusal is not None:
            message, row, column = refusal
            raise cst.ParserSyntaxError(message, lines=text.splitlines(), raw_line=row, raw_column=column)
    return cst.parse_module(text)


def _may_nest_too_deep(text: str) -> bool:
    if _SYMBOL_RUN.search(text) or any(run in text for run in _WORD_RUNS):
        return True
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    if len(brackets) < 2 * _SUSPECT_DEPTH:
        return False
    # The deepest nest is the largest rise of the running depth: closing brackets in
    # strings earlier on must not lower it.
    depths = list(accumulate(map(_STEP.__getitem__, brackets), initial=0))
    return max(map(operator.sub, depths, accumulate(depths, min))) > _SUSPECT_DEPTH


def python_syntax_error(text: str, path: str = "<torchlint>") -> SyntaxError | None:
    """Python's own verdict on ``text``: exact positions, and far cheaper than a libcst
    parse. Nesting deeper than Python's parser goes is a syntax error too."""
    try:
        compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        return error
    except (RecursionError, MemoryError) as error:
        return SyntaxError(f"nested deeper than Python can parse ({type(error).__name__})", (path, 1, 1, None))
    except ValueError:  # null bytes: libcst reports them
        pass
    return None


def _python_refusal(text: str) -> tuple[str, int, int] | None:
    """How CPython refuses the nesting of ``text`` (message, row, 0-based column), if it does."""
    error = python_syntax_error(text)
    if error is not None and ("nested" in error.msg or "too complex" in error.msg):
        return error.msg, error.lineno or 1, max((error.offset or 1) - 1, 0)
    return None
