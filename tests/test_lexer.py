"""The Pygments lexer (align/lexer.py): it round-trips every spec without `Token.Error`, colours the
language's words as intended, and keeps its word lists equal to the grammar's and the resolver's."""

from __future__ import annotations

import functools
import re
from importlib import metadata
from pathlib import Path

import pytest
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, Token

from align.lexer import (
    CONSTANTS,
    DECLARATIONS,
    KEYWORDS,
    TYPES,
    WORD_OPERATORS,
    AlignLexer,
)

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").rglob("*.dp"))
GRAMMAR = ROOT / "align" / "grammar.lark"


def lex(text: str) -> list[tuple[object, str]]:
    """Tokens of exactly `text` (get_tokens_unprocessed skips Pygments' newline normalisation)."""
    return [(kind, value) for _, kind, value in AlignLexer().get_tokens_unprocessed(text)]


def significant(text: str) -> list[tuple[object, str]]:
    return [(k, v) for k, v in lex(text) if k not in Token.Text.Whitespace and k not in Comment]


# ------------------------------------------------------------------------------------------- corpus


def test_the_corpus_is_not_empty():
    assert SPECS, "no .dp files under specs/"


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_spec_lexes_without_errors_and_round_trips(path: Path):
    text = path.read_bytes().decode("utf-8")  # exactly the file, line endings included
    tokens = list(AlignLexer().get_tokens_unprocessed(text))
    errors = [(text.count("\n", 0, pos) + 1, value) for pos, kind, value in tokens if kind in Error]
    assert not errors, f"Token.Error at (line, text) {errors[:5]}"
    assert "".join(value for _, _, value in tokens) == text
    # Through the ordinary Pygments API (which normalises newlines first) there are no errors either.
    assert not [v for k, v in AlignLexer().get_tokens(text) if k in Error]


# --------------------------------------------------------------------------------------- token types


SAMPLE = """\
# expect: proved
mechanism svt(q: real[], T: real, k: int, ok: bool)
  adjacent |q[i] - q'[i]| <= 1, sum |q[i] - q'[i]| <= 2.5e-1, monotone q
  requires k >= 1 and not false
  privacy len(out) / k * 0.5
{
  eta ~ Lap(1 / 2)
  g ~ Gumbel(0); d ~ DLap(1); z ~ TruncNormal(0, 1, -1, 1)
  for i in 0 .. len(q) {
    if q[i] + eta >= T or true { output TOP2(q[i]) } else { output BOT }
    while x { break }
  }
}
alignment svt {
  let I = indices(out)
  let m' = max(l not in I: q'[l] + eta)
  eta' = eta + (out[0] is TOP2 ? 1 : 0)
  xi[i]' = xi[i] + sum(l in 0 .. 3 if l in I: 1)
  invariant aligned_cost <= 1
}
"""


def kinds(text: str) -> dict[str, object]:
    """The token type of the first occurrence of each distinct value."""
    seen: dict[str, object] = {}
    for kind, value in significant(text):
        seen.setdefault(value, kind)
    return seen


def test_intended_token_types():
    k = kinds(SAMPLE)
    for word in ("mechanism", "alignment", "let"):
        assert k[word] in Keyword, word
    for word in ("adjacent", "monotone", "requires", "privacy", "for", "if", "else", "while", "break", "output",
                 "invariant"):
        assert k[word] is Keyword, word
    for word in ("and", "not", "or", "in", "is"):
        assert k[word] is Operator.Word, word
    assert k["true"] is Keyword.Constant and k["false"] is Keyword.Constant
    for word in ("real[]", "real", "int", "bool"):
        assert k[word] is Keyword.Type, word
    for word in ("Lap", "Gumbel", "DLap", "TruncNormal"):
        assert k[word] is Name.Class, word
    for word in ("len", "indices", "max"):
        assert k[word] is Name.Builtin, word
    assert k["out"] is Name.Builtin.Pseudo and k["aligned_cost"] is Name.Builtin.Pseudo
    assert k["TOP2"] is Name.Constant and k["BOT"] is Name.Constant
    assert k["T"] is Name and k["I"] is Name  # one capital is an ordinary name, not a tag
    for word in ("q'", "m'", "eta'"):
        assert k[word] is Name.Variable, word
    assert k["svt"] is Name.Function
    assert k["1"] is Number.Integer and k["0"] is Number.Integer
    assert k["2.5e-1"] is Number.Float and k["0.5"] is Number.Float
    for op in ("..", "~", ">=", "<=", "|", "?", ":", "=", "'", "+", "-", "*", "/"):
        assert k[op] is Operator, op
    for p in ("(", ")", "[", "]", "{", "}", ",", ";"):
        assert k[p] is Punctuation, p
    assert (Comment.Single, "# expect: proved") in lex(SAMPLE)


def test_sum_is_a_keyword_in_adjacency_and_a_builtin_when_called():
    tokens = significant(SAMPLE)
    sums = [kind for kind, value in tokens if value == "sum"]
    assert sums == [Keyword, Name.Builtin]


def test_family_shift_prime_is_an_operator_after_the_bracket():
    tokens = significant("alignment a { xi[i]' = xi[i] }")
    assert (Operator, "'") in tokens and (Name.Variable, "i'") not in tokens


def test_words_that_merely_start_with_a_keyword_are_names():
    k = kinds("iffy = format + outer + interval + Lapse + lengths + TOPx + real_part + int2")
    for word in ("iffy", "format", "outer", "interval", "Lapse", "lengths", "TOPx", "real_part", "int2"):
        assert k[word] is Name, word


def test_numbers_follow_the_grammar():
    # NUMBER is /[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/: `0..5` is 0, `..`, 5 and `2e` needs exponent digits.
    assert significant("0..5") == [(Number.Integer, "0"), (Operator, ".."), (Number.Integer, "5")]
    assert significant("1e5 1E+5 3.25") == [(Number.Float, "1e5"), (Number.Float, "1E+5"), (Number.Float, "3.25")]
    assert significant("2exp") == [(Number.Integer, "2"), (Name.Builtin, "exp")]


def test_a_character_outside_the_language_is_an_error():
    assert (Error, "@") in lex("x = @")


# ---------------------------------------------------------------------- word lists match the language


def test_keyword_lists_match_the_grammar():
    literals = set(re.findall(r'"([a-z]+)"', GRAMMAR.read_text(encoding="utf-8")))
    lexed = set(DECLARATIONS) | set(KEYWORDS) | set(WORD_OPERATORS) | set(CONSTANTS) | set(TYPES)
    assert literals == lexed


def test_every_builtin_distribution_and_reserved_name_lexes_as_such():
    # the lists come from the registries; this checks that the lexer's rules give each its token
    from pygments.token import Name

    from align.distributions import DISTRIBUTIONS
    from align.resolve import BUILTIN_ARITY, COMPREHENSIONS, RESERVED

    expected = {**dict.fromkeys(DISTRIBUTIONS, Name.Class),
                **dict.fromkeys(set(BUILTIN_ARITY) | COMPREHENSIONS, Name.Builtin),
                **dict.fromkeys(RESERVED, Name.Builtin.Pseudo)}
    for word, token in expected.items():
        if word in ("sum", "count"):
            continue  # keywords in `adjacent sum |...|` and `adjacent count ...`, builtins before `(`
        tokens = [(t, v) for t, v in AlignLexer().get_tokens(word) if v.strip()]
        assert tokens == [(token, word)], (word, tokens)


# -------------------------------------------------------- anything lark can tokenize is never an error


FRAGMENTS = [
    "mechanism", "alignment", "adjacent", "requires", "privacy", "monotone", "sum", "if", "else", "for", "in",
    "while", "break", "output", "let", "invariant", "and", "or", "not", "is", "true", "false", "real", "int",
    "bool", "real[]", "int[]", "[]", "Lap", "Geo", "TruncNormal", "len", "top_k_with_gaps", "count", "out",
    "aligned_cost", "TOP", "BOT", "TOP_1", "T", "x", "_y2", "q'", "eta'", "m_'", "'", "0", "42", "3.5", "1e-3",
    "2.0E+7", "..", "~", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "^", "?", ":", "=", "|", "(", ")",
    "[", "]", "{", "}", ",", ";", "# comment ∑ é ü\n", "#", " ", "\n", "\t", "\r\n", "\f",
]


@functools.lru_cache(maxsize=1)
def _lark_lexer():
    from lark import Lark

    return Lark.open(str(GRAMMAR), parser="lalr", lexer="basic")


def _lark_tokenizes(text: str) -> bool:
    """Whether lark's own lexer for grammar.lark splits `text` into tokens (a superset of what parses)."""
    from lark.exceptions import LexError

    try:
        list(_lark_lexer().lex(text))
    except LexError:
        return False
    return True


@pytest.mark.slow
def test_token_soup_that_lark_accepts_never_lexes_as_error():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=400, deadline=None, derandomize=True)
    @hypothesis.given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        hypothesis.assume(_lark_tokenizes(text))
        tokens = lex(text)
        assert "".join(v for _, v in tokens) == text
        assert not [v for k, v in tokens if k in Error], text

    check()


# ------------------------------------------------------------------------------- optional entry point


def test_entry_point_when_installed():
    names = {ep.name: ep.value for ep in metadata.entry_points(group="pygments.lexers")}
    if names.get("align") != "align.lexer:AlignLexer":
        pytest.skip("the pygments.lexers entry point `align` is not installed")
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename

    assert isinstance(get_lexer_by_name("align"), AlignLexer)
    assert isinstance(get_lexer_by_name("dp"), AlignLexer)
    assert isinstance(get_lexer_for_filename("alg2_svt_gap.dp"), AlignLexer)
