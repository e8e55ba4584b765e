"""libcst's parse, for code that CPython itself compiles.

CPython's compiler decides first, as it would when the file is imported: what it refuses
is a syntax error (TL901), and libcst never sees it. That covers more than a parse: a
`return` outside a function, `nonlocal` at module level, and code nested deeper than
CPython goes (more than 200 brackets, a chain of a few thousand attribute accesses,
calls or operators) are errors CPython raises while compiling. libcst's native parser
has no such limits: on a few thousand nested brackets or links it takes gigabytes of
memory, seconds to minutes, or overflows its stack, which ends the whole process.
CPython's compile costs under a tenth of libcst's parse.
"""

from __future__ import annotations

import sys
import warnings

import libcst as cst
from libcst._nodes.base import CSTNode

_checked = CSTNode.__post_init__

# The recursion limit a fresh interpreter starts with: CPython's compiler refuses code
# nested deeper than a multiple of it, and a run raises it for its own deep walks.
_FRESH_RECURSION_LIMIT = 1000


def parse_module(text: str) -> cst.Module:
    """The libcst module of ``text``; `ParserSyntaxError` for what CPython does not compile."""
    error = python_syntax_error(text)
    if error is not None:
        raise cst.ParserSyntaxError(
            error.msg, lines=text.splitlines(), raw_line=error.lineno or 1, raw_column=max((error.offset or 1) - 1, 0)
        )
    # The parser builds only valid nodes: checking each again as it is made is a tenth of the
    # parse, for nothing (libcst's own note on `CSTNode.__post_init__` says as much). Nodes
    # made after the parse (a fix's) are checked as usual.
    CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = _checked  # type: ignore[method-assign]


def _unchecked(self: CSTNode) -> None:
    pass


def python_syntax_error(text: str, path: str = "<torchlint>") -> SyntaxError | None:
    """CPython's own verdict on ``text``, as importing the file would give it, with exact
    positions. Nesting deeper than CPython compiles is a syntax error too."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_FRESH_RECURSION_LIMIT)
    except RecursionError:
        pass  # called deeper than that: the run's own limit stands
    try:
        with warnings.catch_warnings():
            # The user's `x is 1` is theirs to hear about from Python, not from a linter.
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return error
    except (RecursionError, MemoryError) as error:
        return SyntaxError(f"nested deeper than Python can compile ({type(error).__name__})", (path, 1, 1, None))
    except ValueError:  # null bytes: decoding the file already refused them
        pass
    finally:
        sys.setrecursionlimit(limit)
    return None
