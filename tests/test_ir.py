"""The resolved program is the typed IR: no name left to look up, every expression typed, tags coded once,
desugaring done, and the records that point into the body point at the body's own nodes."""

from __future__ import annotations

import dataclasses
import pickle
import re
from collections.abc import Iterator

import pytest

from align import nodes as n
from align.builtins import BUILTINS, COMPREHENSIONS, implemented
from align.parse import parse_source, read_source
from align.resolve import ResolvedMechanism, is_expr, resolve, walk, walk_statements
from align.types import UNKNOWN

from .conftest import ROOT, SPECS, corpus

FILES = corpus()
IDS = [str(p.relative_to(SPECS)) for p in FILES]


def _mechanisms() -> list[ResolvedMechanism]:
    return [m for path in FILES for m in resolve(parse_source(read_source(str(path)))).mechanisms]


def _expressions(mech: ResolvedMechanism) -> Iterator[n.Expr]:
    """Every expression of the resolved mechanism: body, requires, claim, sites, adjacency, alignment."""
    roots: list[n.Expr] = [mech.claim, *mech.requires]
    for s in walk_statements(mech.body):
        for f in dataclasses.fields(s):
            value = getattr(s, f.name)
            roots += [v for v in (value if isinstance(value, tuple) else (value,)) if is_expr(v)]
    for site in mech.noise:
        roots += [*site.args, *site.guards]
    for p in mech.params:
        roots += [a.bound for a in p.adjacency if a.bound is not None]
    if mech.alignment is not None:
        roots += [let.value for let in mech.alignment.lets] + [s.shift for s in mech.alignment.shifts]
        roots += [i.condition for i in mech.alignment.invariants]
    for root in roots:
        yield from walk(root)


MECHANISMS = _mechanisms()


@pytest.mark.parametrize("mech", MECHANISMS, ids=[m.name for m in MECHANISMS])
def test_every_name_is_a_reference_and_every_expression_is_typed(mech: ResolvedMechanism):
    seen = 0
    for e in _expressions(mech):
        seen += 1
        assert not isinstance(e, n.Name), f"{e.span}: `{e.text}` left unresolved"
        assert e.type is not None and e.type is not UNKNOWN, f"{e.span}: {type(e).__name__} without a type"
        if isinstance(e, (n.TagLit, n.TagCall)):
            assert mech.tags[e.code] == e.tag
        if isinstance(e, n.Call):
            assert e.func in BUILTINS
        if isinstance(e, n.NoiseRef | n.MemberRef):
            assert mech.site(e.id) is not None
        if isinstance(e, n.ParamRef):
            assert mech.param(e.id) is not None
    assert seen > 0


@pytest.mark.parametrize("mech", MECHANISMS, ids=[m.name for m in MECHANISMS])
def test_sites_point_into_the_body_and_alignments_are_desugared(mech: ResolvedMechanism):
    statements = list(walk_statements(mech.body))
    for site in mech.noise:
        assert any(s is site.stmt for s in statements), f"{site.name}: its statement is not the body's"
        assert site.args is site.stmt.args
        if site.loop is not None:
            assert any(s is site.loop for s in statements), f"{site.name}: its loop is not the body's"
    for e in _expressions(mech):
        if isinstance(e, n.Comprehension):
            assert e.domain is not None, f"{e.span}: the comprehension's universe was not made explicit"


def test_the_ir_pickles_to_an_equal_program():
    for mech in MECHANISMS:
        copy = pickle.loads(pickle.dumps(mech))
        assert copy == mech
        assert [e.type for e in _expressions(copy)] == [e.type for e in _expressions(mech)]


def test_references_say_what_a_name_is():
    text = """
    mechanism m(q: real[], eps: real)
      adjacent |q[i] - q'[i]| <= 1
      privacy eps
    {
      c = 2 / eps
      for i in 0 .. len(q) {
        eta ~ Lap(c)
        if q[i] + eta >= 0 { output TOP(q[i] + eta) } else { output BOT }
      }
    }
    alignment m {
      let d = q'[0] - q[0]
      let first = eta[0]
      eta[i]' = eta[i] + (out[i] is TOP ? d : 0)
    }
    """
    mech = resolve(parse_source(_source(text))).mechanisms[0]
    kinds = {(type(e).__name__, getattr(e, "text", None) or getattr(e, "tag", None)) for e in _expressions(mech)}
    assert {("ParamRef", "q"), ("ParamRef", "q'"), ("ParamRef", "eps"), ("VarRef", "c"), ("NoiseRef", "eta"),
            ("LocalRef", "i"), ("LetRef", "d"), ("OutRef", "out"), ("TagLit", "BOT"),
            ("TagCall", "TOP")} <= kinds
    assert mech.tags == ("BOT", "TOP")
    assert mech.alignment is not None
    first = mech.alignment.lets[1].value
    assert isinstance(first, n.MemberRef) and first.id == "eta" and isinstance(first.index, n.Number)
    assert any(isinstance(e, n.LetRef) for e in walk(mech.alignment.shifts[0].shift))


def _source(text: str):
    from align.span import Source

    return Source("t.dp", text)


def test_a_back_end_that_misses_a_builtin_fails_at_import():
    complete = dict.fromkeys(BUILTINS, None)
    assert implemented("test", complete) is complete
    with pytest.raises(AssertionError, match="missing \\['abs'\\]"):
        implemented("test", {k: v for k, v in complete.items() if k != "abs"})
    with pytest.raises(AssertionError, match="unknown \\['cube'\\]"):
        implemented("test", {**complete, "cube": None})


def test_the_language_reference_lists_every_builtin_and_comprehension():
    doc = (ROOT / "docs" / "language.md").read_text()
    section = doc[doc.index("## 8. Builtin functions"):doc.index("## 9.")]
    for name in BUILTINS:
        assert re.search(rf"`{name}\(", section), f"docs/language.md section 8 does not describe `{name}`"
    for name in COMPREHENSIONS:
        assert f"`{name}`" in section

