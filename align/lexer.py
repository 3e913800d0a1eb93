"""Syntax highlighting for .dp files (Pygments), registered through the `pygments.lexers` entry point.

`AlignLexer` colours every token that grammar.lark accepts; nothing the grammar accepts is lexed as
`Token.Error` (tests/test_lexer.py checks this on every spec and on random token soups). The distribution
names come from the registry (`distributions.DISTRIBUTIONS`), the builtins and reserved names from
builtins.py (neither loads lark or sympy); the keywords are written out here, and the tests keep them
equal to the grammar's.

    pygmentize -l align specs/freegap/alg2_svt_gap.dp          # once the entry point is installed
    pygmentize -x -l align/lexer.py:AlignLexer FILE.dp          # without it
"""

from __future__ import annotations

from typing import ClassVar

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, Whitespace

from .builtins import BUILTIN_ARITY, COMPREHENSIONS
from .builtins import RESERVED as RESERVED_NAMES
from .distributions import DISTRIBUTIONS

__all__ = ["AlignLexer"]

DECLARATIONS = ("mechanism", "alignment", "release", "let")
KEYWORDS = ("adjacent", "requires", "privacy", "example", "monotone", "sum", "count", "if", "else", "for", "while",
            "break", "output", "invariant", "auto")
"""Clause and statement keywords (`while` is parsed only to be rejected, but it is still a keyword; `monotone` and
`auto` are keywords only where the grammar expects them)."""
WORD_OPERATORS = ("and", "or", "not", "in", "is")
"""`in` serves both `for i in a .. b` and membership `x in S`."""
CONSTANTS = ("true", "false")
TYPES = ("real", "int", "bool")
DISTRIBUTION_NAMES = tuple(DISTRIBUTIONS)
BUILTINS = tuple(sorted(set(BUILTIN_ARITY) | COMPREHENSIONS))
"""Builtin functions and comprehensions, from builtins.py (`sum` and `count` are builtins when called, keywords
in `adjacent sum |...|` and `adjacent count q[i] != q'[i] <= c`)."""
RESERVED = tuple(sorted(RESERVED_NAMES))
"""Names the language defines: the output sequence and, in invariants, the aligned run's cost so far."""

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_END = r"(?![A-Za-z0-9_'])"
"""A word ends where a name could not go on; a following prime makes it a primed name instead."""


class AlignLexer(RegexLexer):
    """Lexer for the align specification language (mechanisms and their randomness alignments)."""

    name = "align"
    aliases: ClassVar[list[str]] = ["align", "dp"]
    filenames: ClassVar[list[str]] = ["*.dp"]
    mimetypes: ClassVar[list[str]] = ["text/x-align"]

    tokens: ClassVar[dict[str, list[tuple[str, object]]]] = {
        "root": [
            (r"[ \t\f\r\n\v]+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            # `mechanism NAME` and `alignment NAME`: the name is a definition.
            (r"(mechanism|alignment)([ \t\f\r\n\v]+)(" + _IDENT + ")" + _END,
             bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            # Primed names (`q'`, `m'`, `eta'`) before anything that could take their first part.
            (_IDENT + "'", Name.Variable),
            (r"(real|int|bool)" + _END + r"(?:\[\])?", Keyword.Type),
            # `sum(...)` and `count(...)` are builtins; `sum |q[i] - q'[i]| <= 1` and `count q[i] != q'[i] <= 1`
            # are adjacency keywords.
            (r"(?:sum|count)(?=[ \t\f\r\n\v]*\()", Name.Builtin),
            (words(CONSTANTS, suffix=_END), Keyword.Constant),
            (words(WORD_OPERATORS, suffix=_END), Operator.Word),
            (words(DECLARATIONS, suffix=_END), Keyword.Declaration),
            (words(KEYWORDS, suffix=_END), Keyword),
            (words(DISTRIBUTION_NAMES, suffix=_END), Name.Class),
            (words(BUILTINS, suffix=_END), Name.Builtin),
            (words(RESERVED, suffix=_END), Name.Builtin.Pseudo),
            # Tags: two or more capitals, digits or `_`, starting with a capital (TOP, BOT, TOP1, MID).
            (r"[A-Z][A-Z0-9_]+" + _END, Name.Constant),
            (_IDENT, Name),
            (r"[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)", Number.Float),
            (r"[0-9]+", Number.Integer),
            (r"\.\.|==|!=|<=|>=|//|\+-|[~<>+\-*/%^?:=|'±]", Operator),
            (r"[()\[\]{},;]", Punctuation),
        ],
    }
