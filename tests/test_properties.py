"""Property tests: random mutations of valid specs never escape as exceptions; printing is faithful.

Hypothesis runs derandomized (a fixed seed), so CI sees the same examples every time.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from align import nodes as n
from align.diagnostics import SpecError
from align.parse import parse_expression, parse_source
from align.pipeline import check
from align.render.json import mechanism_json
from align.render.text import mechanism_text
from align.resolve import resolve, walk
from align.rules import obligations
from align.span import Source
from align.unparse import unparse

from .conftest import corpus

pytestmark = pytest.mark.slow  # corpus-wide or statistical: `pytest -m "not slow"` skips it

TEXTS = [p.read_text() for p in corpus()]
VOCABULARY = ["{", "}", "(", ")", "[", "]", "'", "=", "==", "~", "..", "?", ":", ",", ";", "|", "+", "-", "*",
              "/", "^", "<=", "\n", " ", "0", "1.5", "out", "eta", "eta'", "q[i]", "q'[i]", "TOP", "BOT", "i",
              "for", "in", "if", "else", "break", "output", "let", "invariant", "while", "mechanism",
              "alignment", "adjacent", "privacy", "requires", "monotone", "sum", "not", "and", "is", "Lap(",
              "Exp(", "Gumbel(", "max(l not in I: ", "indices(out)", "len(q)", "#", "é", "\t", "$"]

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mutated_spec(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate-line", "swap-lines", "truncate"]))
        if kind == "delete" and text:
            start = draw(st.integers(0, len(text) - 1))
            text = text[:start] + text[start + draw(st.integers(1, 12)):]
        elif kind == "insert":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(VOCABULARY)) + text[at:]
        elif kind in ("duplicate-line", "swap-lines"):
            lines = text.split("\n")
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if kind == "duplicate-line":
                lines.insert(b, lines[a])
            else:
                lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif kind == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
    return text


@SETTINGS
@given(mutated_spec())
def test_mutated_specs_parse_or_give_located_diagnostics(text: str):
    source = Source("mutant.dp", text)
    try:
        spec = resolve(parse_source(source))
    except SpecError as error:
        assert error.diagnostics
        for d in error.diagnostics:
            assert d.message
            assert d.code != "internal-error"
            if d.span is not None:
                assert d.span.path == "mutant.dp" and d.span.line >= 1 and d.span.column >= 1
        return
    for mech in spec.mechanisms:
        obligations(mech)
        mechanism_text(check(mech))
        mechanism_json(check(mech))


def _strip(e: object) -> object:
    """A node with every span removed, for comparing structure."""
    if isinstance(e, tuple):
        return tuple(_strip(x) for x in e)
    if dataclasses.is_dataclass(e):
        return (type(e).__name__,) + tuple(
            _strip(getattr(e, f.name)) for f in dataclasses.fields(e) if "span" not in f.name)
    return e


def _corpus_expressions() -> list[n.Expr]:
    found = []
    for text in TEXTS:
        spec = parse_source(Source("x.dp", text))
        for mech in spec.mechanisms:
            found += [mech.privacy[0], *mech.requires]
        for alignment in spec.alignments:
            for item in alignment.items:
                found.append(item.value if isinstance(item, n.Let) else
                             item.rhs if isinstance(item, n.Shift) else item.condition)
    return [sub for e in found for sub in walk(e)]


EXPRESSIONS = _corpus_expressions()


@SETTINGS
@given(st.sampled_from(EXPRESSIONS))
def test_unparse_round_trips(e: n.Expr):
    if isinstance(e, n.Range):
        return  # a range is not an expression by itself; it appears after `in`
    assert _strip(parse_expression(unparse(e))) == _strip(e)


@SETTINGS
@given(st.recursive(
    st.sampled_from(["a", "b", "q[i]", "2", "0.5", "x'"]),
    lambda inner: st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "^"]), inner).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})") | inner.map(lambda x: f"-{x}"),
    max_leaves=8))
def test_unparse_keeps_the_meaning_of_arithmetic(text: str):
    e = parse_expression(text)
    assert _strip(parse_expression(unparse(e))) == _strip(e)
