"""Printing whole files (`align.unparse.unparse_spec`): what it prints parses back to the same tree.

bench/soundness.py rewrites spec trees and writes them back as files; a printer that lost a parenthesis, a
prime, an `else if` or the type of a literal (`2.0` is real, `2` int) would test a different mechanism than
the one the mutation describes. The corpus and tests/ hold every construct of the language.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest

from align import nodes as n
from align.diagnostics import SpecError
from align.parse import parse_expression, parse_source, read_source
from align.span import Source, Span
from align.unparse import (
    exact_number,
    format_number,
    unparse,
    unparse_source,
    unparse_spec,
)

from .conftest import ROOT, corpus


def without_spans(node: object) -> object:
    """The tree as nested tuples with every span (and the source text) left out, for comparison."""
    if isinstance(node, (Span, Source)):
        return None
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__,) + tuple(
            (f.name, without_spans(getattr(node, f.name))) for f in dataclasses.fields(node)
            if not f.name.endswith("span") and f.name != "source")
    if isinstance(node, (tuple, list)):
        return tuple(without_spans(x) for x in node)
    return node


def _parseable_files() -> list[Path]:
    """Every spec of the corpus and every test input that parses (golden diagnostics include syntax errors)."""
    files = corpus() + sorted((ROOT / "tests").rglob("*.dp"))
    return [path for path in files if _parses(path)]


def _parses(path: Path) -> bool:
    try:
        parse_source(read_source(str(path)))
    except SpecError:  # a golden syntax-error input: nothing to print
        return False
    return True


@pytest.mark.parametrize("path", _parseable_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_printed_file_parses_to_the_same_tree(path: Path):
    tree = parse_source(read_source(str(path)))
    text = unparse_spec(tree)
    again = parse_source(Source(str(path), text))
    assert without_spans(again) == without_spans(tree)
    assert unparse_spec(again) == text, "printing is a fixed point after one round"


def test_the_corpus_round_trip_covers_the_whole_corpus():
    # Every spec of specs/ parses, so none is skipped by the filter above.
    assert set(corpus()) <= set(_parseable_files())


def test_a_header_becomes_comments_and_changes_nothing_else():
    tree = parse_source(read_source(str(ROOT / "specs/freegap/example1_laplace.dp")))
    text = unparse_spec(tree, header="expect: proved\nmutation: none")
    assert text.startswith("# expect: proved\n# mutation: none\n\nmechanism laplace_salary_sum(")
    assert "\n  example eps = 1\n" in text
    assert without_spans(parse_source(Source("x.dp", text))) == without_spans(tree)


@pytest.mark.parametrize("value, is_integer, text", [
    (Fraction(2), True, "2"), (Fraction(2), False, "2.0"), (Fraction(1, 10), False, "0.1"),
    (Fraction(-3, 4), False, "-0.75"), (Fraction(1, 1024), False, "0.0009765625"),
    (Fraction(1, 3), False, "(1.0 / 3)"), (Fraction(-1, 3), False, "-(1.0 / 3)"),
])
def test_exact_numbers_keep_their_value_and_type(value: Fraction, is_integer: bool, text: str):
    assert exact_number(value, is_integer) == text
    parsed = parse_expression(text)
    if isinstance(parsed, n.Number):
        assert (parsed.value, parsed.is_integer) == (value, is_integer)


def test_numbers_made_by_a_rewrite_print_as_the_same_value():
    # A halved constant that is not a finite decimal stays exact, inside any expression.
    span = Span("x", 1, 1, 1, 2)
    e = n.Binary("^", n.Number(Fraction(1, 3), False, span), n.Number(Fraction(-2), True, span), span)
    assert unparse_source(e) == "(1.0 / 3)^-2"
    assert unparse(e) == f"{format_number(Fraction(1, 3))}^-2", "report printing is unchanged"
