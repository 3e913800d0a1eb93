"""Distinct neighbours (obligation ADJ): a proof says something about privacy only if some pair D != D' satisfies its
assumptions — `requires`, the adjacency clauses, the types and the lengths — in the scope it covers; otherwise it is
vacuous (unknown, exit 3), whatever the scope (all inputs, every length, bounded). And a counterexample that any
strategy finds is the verdict, and the bounded check runs where `requires` admits an input (issue 35)."""

from __future__ import annotations

import io

import pytest

from align.checker import entries
from align.checker.strategies import prove_for_every_length
from align.checker.verify import Options, overall_scope, overall_status, strategy_context, verify_mechanism
from align.cli import main
from align.limits import MAX_BOUNDED_LENGTH
from align.obligations import ObligationId
from align.pipeline import load_mechanism, load_text
from align.results import vacuous

from .conftest import ROOT, SPECS

VACUOUS_SPECS = ("identity_adjacency_bound_zero.dp", "identity_adjacency_bound_required_zero.dp",
                 "identity_adjacency_both_sides.dp")


def _verified(text: str, max_length: int = 3):
    return verify_mechanism(load_text(text).mechanisms[0], Options(max_length=max_length))


def _adj(verdicts):
    """The ADJ verdict, or None: a check that holds is not shown (it would be a line in every report)."""
    found = [v for v in verdicts if v.obligation.id == ObligationId.ADJ]
    assert len(found) <= 1
    return found[0] if found else None


def _scalar(adjacent: str, requires: str = "eps > 0", params: str = "q: real, eps: real") -> str:
    return (f"mechanism m({params})\n  adjacent {adjacent}\n  requires {requires}\n  privacy eps\n{{\n"
            "  eta ~ Lap(1 / eps)\n  output q + eta\n}\n\nalignment m {\n  eta' = eta + q - q'\n}\n")


def _loop(adjacent: str, requires: str = "eps > 0", kind: str = "real", claim: str = "len(q) * eps") -> str:
    """The Laplace answers to every query, each with budget eps: len(q) * eps in all (eps for L1 neighbours)."""
    return (f"mechanism m(q: {kind}[], eps: real)\n  adjacent {adjacent}\n  requires {requires}\n"
            f"  privacy {claim}\n{{\n"
            "  for i in 0 .. len(q) {\n    x ~ Lap(1 / eps)\n    output q[i] + x\n  }\n}\n\n"
            "alignment m {\n  x[i]' = x[i] + q[i] - q'[i]\n}\n")


@pytest.mark.parametrize("name", VACUOUS_SPECS)
def test_the_identity_under_a_relation_without_distinct_pairs_is_vacuous(name: str):
    mech = load_mechanism(str(SPECS / "incorrect" / name))
    verdicts = verify_mechanism(mech, Options(max_length=3))
    assert overall_status(verdicts) == "unknown" and vacuous(verdicts)
    adj = _adj(verdicts)
    assert adj is not None and adj.status == "unknown" and adj.vacuous and adj.reason.startswith("vacuous: ")
    # located at the adjacency clause
    assert adj.obligation.span.line == mech.node.adjacency[0].span.line
    # the other obligations still hold (of D = D'): the verdict line, not they, says that this proves nothing
    assert all(v.status == "proved" for v in verdicts if v is not adj)


@pytest.mark.parametrize("name", VACUOUS_SPECS)
def test_a_vacuous_verdict_says_so_and_exits_3(name: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    assert main(["verify", f"specs/incorrect/{name}"], out, io.StringIO()) == 3
    text = out.getvalue()
    verdict = next(line for line in text.splitlines() if line.startswith("  verdict"))
    assert "unknown — vacuous: " in verdict, verdict
    assert "synthesis" not in text, "no alignment to look for when no two inputs differ"
    assert "  ADJ        unknown vacuous: " in text
    out = io.StringIO()
    assert main(["verify", "--output-format", "github", f"specs/incorrect/{name}"], out, io.StringIO()) == 3
    assert "vacuous" in out.getvalue()


def test_a_relation_with_distinct_pairs_is_not_vacuous_and_the_check_is_not_shown():
    for text in (_scalar("|q - q'| <= 1"), _loop("sum |q[i] - q'[i]| <= 1", claim="eps")):
        verdicts = _verified(text)
        assert overall_status(verdicts) == "proved" and _adj(verdicts) is None and not vacuous(verdicts)


@pytest.mark.parametrize("adjacent,params,requires,distinct", [
    # scalars, and the bound's type: two ints never differ by 1/2
    ("|q - q'| <= 0", "q: real, eps: real", "eps > 0", False),
    ("|q - q'| <= -1", "q: real, eps: real", "eps > 0", False),
    ("|q - q'| <= 1", "q: int, eps: real", "eps > 0", True),
    ("|q - q'| <= 1/2", "q: int, eps: real", "eps > 0", False),
    # a public bound that `requires` constrains
    ("|q - q'| <= c", "q: real, c: real, eps: real", "eps > 0, c >= 0, c <= 0", False),
    ("|q - q'| <= c", "q: real, c: real, eps: real", "eps > 0, c >= 0", True),
    # several private parameters: one that may differ is enough
    ("|q - q'| <= 0, |r - r'| <= 1", "q: real, r: real, eps: real", "eps > 0", True),
    ("|q - q'| <= 0, |r - r'| <= 0", "q: real, r: real, eps: real", "eps > 0", False),
])
def test_distinct_scalar_neighbours(adjacent: str, params: str, requires: str, distinct: bool):
    verdicts = _verified(_scalar(adjacent, requires, params))
    assert vacuous(verdicts) is (not distinct), [(v.obligation.name, v.status, v.reason) for v in verdicts]
    if not distinct:
        adj = _adj(verdicts)
        assert adj is not None and "whatever the public parameters" in adj.reason
        assert overall_status(verdicts) == "unknown"


@pytest.mark.parametrize("adjacent,kind,distinct", [
    ("|q[i] - q'[i]| <= 0", "real", False),
    ("|q[i] - q'[i]| <= 1/2", "int", False),
    ("sum |q[i] - q'[i]| <= 0", "real", False),
    ("sum |q[i] - q'[i]| <= 1", "real", True),
    ("count q[i] != q'[i] <= 0", "real", False),
    ("|q[i] - q'[i]| <= 1, count q[i] != q'[i] <= 1", "real", True),
    ("q'[i] >= q[i]", "real", True),
    ("q'[i] >= q[i], q'[i] <= q[i]", "real", False),
    ("|q[i] - q'[i]| <= 1, monotone q", "real", True),
    ("len(q') = len(q) ± 1", "real", True),
])
def test_distinct_list_neighbours_for_every_kind_of_clause(adjacent: str, kind: str, distinct: bool):
    text = _loop(adjacent, kind=kind)
    if "len(q')" in adjacent:  # the add/remove records: a noisy count
        text = ("mechanism m(q: real[], eps: real)\n  adjacent len(q') = len(q) ± 1\n  requires eps > 0\n"
                "  privacy eps\n{\n  eta ~ Lap(1 / eps)\n  output count(l in 0 .. len(q): q[l] > 0) + eta\n}\n\n"
                "alignment m {\n  eta' = eta + count(l in 0 .. len(q): q[l] > 0) - "
                "count(l in 0 .. len(q'): q'[l] > 0)\n}\n")
    verdicts = _verified(text)
    assert vacuous(verdicts) is (not distinct), [(v.obligation.name, v.status, v.reason) for v in verdicts]
    if not distinct:
        adj = _adj(verdicts)
        assert adj is not None and f"at any length <= {MAX_BOUNDED_LENGTH}" in adj.reason


def test_distinct_neighbours_at_long_lengths_only_are_found_and_the_bounded_check_goes_there():
    # The bound is 0 up to length 4 (D = D' only): distinct neighbours from length 5 on. Proved for every length (the
    # induction): a model at length 5 is enough.
    relation = "sum |q[i] - q'[i]| <= max(len(q) - 4, 0)"
    verdicts = _verified(_loop(relation))
    assert overall_status(verdicts) == "proved" and not vacuous(verdicts) and _adj(verdicts) is None
    # A bounded check at lengths <= 3 would be about D = D' alone: it runs up to 5, and says why.
    bounded = (f"mechanism m(q: real[], eps: real)\n  adjacent {relation}\n  requires eps > 0\n"
               "  privacy len(q) * eps\n{\n  eta ~ Lap(1 / eps)\n  output sum(l in 0 .. len(q): q[l]) + eta\n}\n\n"
               "alignment m {\n  eta' = eta + sum(l in 0 .. len(q): q[l]) - sum(l in 0 .. len(q'): q'[l])\n}\n")
    verdicts = _verified(bounded)
    assert not vacuous(verdicts)
    scopes = {v.scope for v in verdicts if v.status == "bounded"}
    assert scopes == {"for lengths <= 5"}, [(v.obligation.name, v.status, v.scope, v.reason) for v in verdicts]
    notes = [note for v in verdicts for note in v.notes]
    assert any(note.startswith("no two distinct neighbours at lengths <= 3: the bounded check runs on to lengths "
                               "<= 5") for note in notes), notes
    # Below length 4 the bound is negative: no pair at all, and those shapes are skipped (nothing to check there).
    verdicts = _verified(bounded.replace("max(len(q) - 4, 0)", "len(q) - 4"))
    assert not vacuous(verdicts) and {v.scope for v in verdicts if v.status == "bounded"} == {"for lengths <= 5"}
    notes = [note for v in verdicts for note in v.notes]
    assert any(note.startswith("`requires` and the adjacency clauses admit no pair of inputs at lengths <= 3")
               for note in notes), notes


def test_a_bounded_proof_without_distinct_neighbours_is_vacuous_too():
    # No proof for every length (a sum over a symbolic range): bounded for lengths <= 3, and about D = D' alone.
    text = ("mechanism m(q: real[], eps: real)\n  adjacent |q[i] - q'[i]| <= 0\n  requires eps > 0\n"
            "  privacy eps\n{\n  eta ~ Lap(1 / eps)\n  output sum(l in 0 .. len(q): q[l]) + eta\n}\n\n"
            "alignment m {\n  eta' = eta\n}\n")
    verdicts = _verified(text)
    assert vacuous(verdicts) and overall_status(verdicts) == "unknown"
    assert {v.scope for v in verdicts if v.status == "bounded"} == {"for lengths <= 3"}
    assert not vacuous(_verified(text.replace("<= 0", "<= 1").replace("privacy eps", "privacy len(q) * eps")
                                 .replace("eta' = eta", "eta' = eta + sum(l in 0 .. len(q): q[l] - q'[l])")))


def test_no_distinct_neighbours_up_to_the_longest_searched_length_is_unknown_and_says_where():
    verdicts = _verified(_loop("|q[i] - q'[i]| <= 1", f"eps > 0, len(q) >= {MAX_BOUNDED_LENGTH + 1}"))
    adj = _adj(verdicts)
    assert adj is not None and adj.status == "unknown" and adj.vacuous
    assert f"at any length <= {MAX_BOUNDED_LENGTH}" in adj.reason and "longer lengths were not searched" in adj.reason


def test_a_mechanism_without_a_private_parameter_is_vacuous():
    text = ("mechanism m(q: real, eps: real)\n  requires eps > 0\n  privacy eps\n{\n  eta ~ Lap(1 / eps)\n"
            "  output q + eta\n}\n\nalignment m {\n  eta' = eta\n}\n")
    verdicts = _verified(text)
    adj = _adj(verdicts)
    assert adj is not None and adj.vacuous and "no private parameter" in adj.reason


def test_the_mixture_rule_needs_distinct_neighbours_too():
    text = (SPECS / "r2dp" / "point_mass.dp").read_text()
    assert "adjacent |q - q'| <= dq" in text
    vacuous_text = text.replace("adjacent |q - q'| <= dq", "adjacent |q - q'| <= 0 * dq")
    verdicts = _verified(vacuous_text)
    assert vacuous(verdicts) and overall_status(verdicts) == "unknown"
    assert not vacuous(_verified(text))


# ----------------------------------------------------------------------------------- dropped counterexamples

LONG = "incorrect/fixed_entries_long_input_too_little_noise.dp"


def test_a_counterexample_found_by_the_fixed_entries_proof_is_the_verdict():
    mech = load_mechanism(str(SPECS / LONG))
    result, _ = prove_for_every_length(mech, strategy_context(Options()))
    assert result is not None
    (refuted,) = result.refuted.values()
    assert refuted.obligation.id == "C4c" and refuted.counterexample is not None
    assert refuted.counterexample.length == 6
    verdicts = verify_mechanism(mech, Options(max_length=3))
    assert overall_status(verdicts) == "refuted"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert c4c.status == "refuted" and c4c.counterexample is not None and c4c.counterexample.length == 6
    assert c4c.counterexample.replay is not None and c4c.counterexample.replay["confirmed"]
    assert any(note.startswith(f"{entries.NAME}: refuted at length 6") for note in c4c.notes), c4c.notes
    # the other obligations are proved for every length, by the same check
    assert {v.scope for v in verdicts if v.status == "proved"} == {"by construction", "for every input length"}


def test_the_strategy_counterexample_is_reported_even_where_the_bounded_check_has_nothing_to_check(
        monkeypatch: pytest.MonkeyPatch):
    # Without the bounded check's own way to length 6 (below), the fixed-entries refutation alone is the verdict.
    from align.checker import verify

    monkeypatch.setattr(verify, "_least_reach", lambda *args, **kwargs: None)
    verdicts = verify_mechanism(load_mechanism(str(SPECS / LONG)), Options(max_length=3))
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert c4c.status == "refuted" and c4c.counterexample is not None and c4c.counterexample.length == 6


def test_the_cli_reports_the_refutation_with_its_replay(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    assert main(["verify", f"specs/{LONG}"], out, io.StringIO()) == 1
    text = out.getvalue()
    assert "C4c        refuted" in text and "confirmed by replaying the counterexample" in text
    assert "length 6" in text


def _requires_long(claim: str) -> str:
    return (f"mechanism m(q: real[], eps: real)\n  adjacent |q[i] - q'[i]| <= 1\n  requires eps > 0, len(q) >= 5\n"
            f"  privacy {claim}\n{{\n  for i in 0 .. len(q) {{\n    x ~ Lap(1 / eps)\n    output q[i] + x\n  }}\n}}\n\n"
            "alignment m {\n  x[i]' = x[i] + q[i] - q'[i]\n}\n")


def test_the_bounded_check_runs_at_the_least_length_requires_admits():
    # n answers cost n * eps: not proved for every length. --max-length 3 admits no input of `requires len(q) >= 5`.
    verdicts = _verified(_requires_long("4 * eps"))
    assert overall_status(verdicts) == "refuted"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert c4c.counterexample is not None and c4c.counterexample.length == 5
    verdicts = _verified(_requires_long("5 * eps"))
    assert overall_status(verdicts) == "bounded" and overall_scope(verdicts) == "for lengths <= 5"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert any(note.startswith("`requires` and the adjacency clauses admit no pair of inputs at lengths <= 3: the "
                               "bounded check runs on to lengths <= 5") for note in c4c.notes), c4c.notes
