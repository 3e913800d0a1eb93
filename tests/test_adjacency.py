"""The neighbouring relations (align/adjacency.py): one record per kind, read the same way by every layer."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import z3

from align.adjacency import ADJACENCY, AdjacencyKind, PythonOps
from align.diagnostics import SpecError
from align.interp.outputs import DiscreteKeys
from align.interp.runner import prepare_arguments, prepare_neighbour, sample
from align.parse import parse_source
from align.resolve import resolve
from align.smt import terms as zt
from align.smt.encode import Z3_OPS, Z3_SPLIT_OPS
from align.span import Source
from align.stats.events import Layout, candidates
from align.unparse import unparse_adjacency

CLAUSE = {
    AdjacencyKind.POINTWISE: "|q[i] - q'[i]| <= 1",
    AdjacencyKind.L1: "sum |q[i] - q'[i]| <= 1",
    AdjacencyKind.COUNT: "count q[i] != q'[i] <= 1",
    AdjacencyKind.SCALAR: "|x - x'| <= 1",
    AdjacencyKind.MONOTONE: "monotone q",
    AdjacencyKind.INCREASING: "q'[i] >= q[i]",
    AdjacencyKind.DECREASING: "q'[i] <= q[i]",
    AdjacencyKind.ADD_REMOVE: "len(q') = len(q) ± 1",
    AdjacencyKind.ADD: "len(q') = len(q) + 1",
    AdjacencyKind.REMOVE: "len(q') = len(q) - 1",
}


def _mechanism(clauses: str):
    text = f"mechanism m(q: real[], x: real, eps: real)\n  adjacent {clauses}\n  privacy eps\n{{\n  output len(q)\n}}\n"
    return resolve(parse_source(Source("m.dp", text))).mechanisms[0]


def _mechanism_text(text: str):
    return resolve(parse_source(Source("m.dp", text))).mechanisms[0]


def test_every_kind_has_a_record_and_a_syntax_that_parses_back():
    assert set(ADJACENCY) == set(AdjacencyKind) == set(CLAUSE)
    for kind, clause in CLAUSE.items():
        mech = _mechanism(clause)
        (adj,) = mech.node.adjacency
        assert adj.kind == kind
        assert unparse_adjacency(adj) == clause == adj.rule.text(adj.var, "1" if adj.rule.has_bound else "")


def _z3_holds(kind: AdjacencyKind, ops, here, there, bound) -> bool:
    """In the current z3 context (the caller opens one for all its cases: a context costs more than a query)."""
    rule = ADJACENCY[kind]
    a = [zt.RealVal(v) for v in here]
    b = [zt.RealVal(v) for v in there]
    c = zt.RealVal(bound)
    up = zt.Bool("up")
    parts = []
    if rule.changes_length:
        parts.append(rule.one_record_apart(ops, a, b))
    if rule.entry is not None:
        parts += [rule.entry(ops, x, y, c, up) for x, y in zip(a, b)]
    if rule.measure is not None:
        parts.append(zt.Sum([rule.measure(ops, x, y) for x, y in zip(a, b)] or [zt.IntVal(0)]) <= c)
    solver = z3.Solver(ctx=zt.current())
    solver.add(zt.And(parts))
    return solver.check() == z3.sat  # `up` is existential: some direction fits


@pytest.mark.slow
@pytest.mark.parametrize("kind", [k for k in AdjacencyKind if ADJACENCY[k].on_list])
def test_z3_and_python_readings_agree(kind: AdjacencyKind):
    """The checker's z3 relation and the interpreter's check admit exactly the same pairs (both spellings of
    the distance), on every pair of small lists of length <= 3 with entries in {0, 1, 2} and bounds 0..2."""
    rule = ADJACENCY[kind]
    rng = random.Random(0)
    values = (0, 1, 2)
    changes = rule.length_changes or (0,)
    cases = [(list(h), list(t), c) for n in range(4) for h in itertools.product(values, repeat=n)
             for d in (*changes, 0) if n + d >= 0
             for t in itertools.product(values, repeat=n + d) for c in (0, 1, 2)]
    with zt.fresh_context():
        for here, there, bound in rng.sample(cases, 300) + [([0, 0], [1, 0], 1), ([0, 1], [1, 0], 1)]:
            admitted = rule.violation(PythonOps(), here, there, bound) is None
            for ops in (Z3_OPS, Z3_SPLIT_OPS):
                assert _z3_holds(kind, ops, here, there, bound) == admitted, (kind, here, there, bound)


@pytest.mark.parametrize("clauses,neighbour,detail", [
    ("count q[i] != q'[i] <= 1", [2, 3, 3], "count q[i] != q'[i] = 2 > 1"),
    ("q'[i] >= q[i]", [1, 1, 3], "q'[1] = 1 < q[1] = 2"),
    ("q'[i] <= q[i]", [1, 2, 4], "q'[2] = 4 > q[2] = 3"),
    ("sum |q[i] - q'[i]| <= 1", [2, 3, 3], "sum |q[i] - q'[i]| = 2 > 1"),
    ("|q[i] - q'[i]| <= 1", [3, 2, 3], "|q[0] - q'[0]| = 2 > 1"),
    ("monotone q", [2, 1, 3], "neither everywhere >= nor everywhere <="),
    ("|q[i] - q'[i]| <= 1", [1, 2], "len(q') = 2 but len(q) = 3 (lengths are public)"),
    ("len(q') = len(q) ± 1", [1, 3], ""),  # a record removed from the middle: inside
    ("len(q') = len(q) ± 1", [3, 1], "q' (length 2) is not q (length 3) with one record added or one record "
                                     "removed"),
    ("len(q') = len(q) ± 1", [1, 2, 3, 4, 5], "q' (length 5) is not q (length 3)"),
    ("len(q') = len(q) + 1", [1, 2], "q' (length 2) is not q (length 3) with one record added"),
    ("len(q') = len(q) - 1", [0, 1, 2, 3], "q' (length 4) is not q (length 3) with one record removed"),
])
def test_a_neighbour_outside_the_relation_is_refused_with_the_clause_and_the_reason(clauses, neighbour, detail):
    mech = _mechanism(clauses)
    args = prepare_arguments(mech, {"q": [1, 2, 3], "x": 0, "eps": 1})
    if not detail:
        assert prepare_neighbour(mech, args, {"q": neighbour}) == {"q": [float(v) for v in neighbour]}
        return
    with pytest.raises(SpecError) as info:
        prepare_neighbour(mech, args, {"q": neighbour})
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.code == "not-adjacent" and detail in diagnostic.message, diagnostic.message


def test_a_neighbour_inside_every_clause_is_accepted():
    mech = _mechanism("|q[i] - q'[i]| <= 1, count q[i] != q'[i] <= 1, q'[i] <= q[i]")
    args = prepare_arguments(mech, {"q": [1, 2, 3], "x": 0, "eps": 1})
    assert prepare_neighbour(mech, args, {"q": [1, 1, 3]}) == {"q": [1.0, 1.0, 3.0]}
    assert mech.one_sided and not _mechanism("monotone q").one_sided


def test_a_one_sided_relation_is_tested_in_its_own_direction_only():
    """events.candidates with both_directions=False never proposes the reverse direction, even where the
    reverse has the strongest evidence."""
    mech = resolve(parse_source(Source("h.dp", (
        "mechanism h(q: real[], eps: real)\n  adjacent |q[i] - q'[i]| <= 1, q'[i] <= q[i]\n  privacy eps\n"
        "{\n  for i in 0 .. len(q) {\n    eta ~ Exp(1 / eps)\n    output q[i] + eta\n  }\n}\n"
        "alignment h {\n  eta[i]' = eta[i] + (q[i] - q'[i])\n}\n")))).mechanisms[0]
    # D' below D, as the relation admits: only the reverse direction (P[M(D') in E] against P[M(D) in E],
    # E = outputs below 1) has a loss, and the relation does not claim that direction.
    d, d_prime = {"q": [1.0], "eps": 1.0}, {"q": [0.0], "eps": 1.0}
    s1 = sample(mech, d, 4000, np.random.SeedSequence(1))
    s2 = sample(mech, d_prime, 4000, np.random.SeedSequence(2))
    layout = Layout.of(s1, max(1, s1.positions, s2.positions), None)
    describe = DiscreteKeys(mech.output_type, mech.tags)
    args = (layout, describe, layout.keys(s1), layout.reals(s1), layout.keys(s2), layout.reals(s2), 10, 1.0)
    both = candidates(*args)
    assert any(not c.forward for c in both)
    assert all(c.forward for c in candidates(*args, both_directions=False))


@pytest.mark.parametrize("spec,swap", [
    # With the two one-sided records swapped, the checker assumes the wrong side and "proves" the spec that is
    # broken on its own side: the incorrect spec guards the direction of the entry relation.
    ("incorrect/one_sided_histogram_wrong_side.dp", {AdjacencyKind.INCREASING: AdjacencyKind.DECREASING}),
])
def test_the_incorrect_specs_guard_the_hypotheses_they_stand_for(spec, swap, monkeypatch):
    import dataclasses
    from pathlib import Path

    from align import adjacency
    from align.checker.verify import overall_status, verify_mechanism
    from align.parse import read_source
    from align.status import Status

    mech = resolve(parse_source(read_source(str(Path(__file__).parent.parent / "specs" / spec)))).mechanisms[0]
    assert overall_status(verify_mechanism(mech)) == Status.REFUTED
    for kind, other in swap.items():
        swapped = dataclasses.replace(ADJACENCY[kind], entry=ADJACENCY[other].entry)
        monkeypatch.setitem(adjacency.ADJACENCY, kind, swapped)
    assert overall_status(verify_mechanism(mech)) == Status.PROVED


def test_a_count_bound_read_as_one_would_prove_the_histogram_that_ignores_m(monkeypatch):
    """partition_histogram_ignores_partitions is refuted because m entries may change; a checker that took the
    count clause's bound for 1 would prove it (its cost is then eps, one entry's)."""
    from pathlib import Path

    from align.checker.verify import overall_status, verify_mechanism
    from align.parse import read_source
    from align.status import Status

    path = Path(__file__).parent.parent / "specs" / "incorrect" / "partition_histogram_ignores_partitions.dp"
    text = read_source(str(path)).text
    assert overall_status(verify_mechanism(resolve(parse_source(read_source(str(path)))).mechanisms[0])) == \
        Status.REFUTED
    one = text.replace("count q[i] != q'[i] <= m", "count q[i] != q'[i] <= 1")
    assert one != text
    mech = resolve(parse_source(Source(str(path), one))).mechanisms[0]
    assert overall_status(verify_mechanism(mech)) == Status.PROVED


def _verify(path_or_text, monkeypatch=None):
    from pathlib import Path

    from align.checker.verify import verify_mechanism
    from align.parse import read_source

    path = Path(__file__).parent.parent / "specs" / path_or_text
    return verify_mechanism(resolve(parse_source(read_source(str(path)))).mechanisms[0])


def test_a_record_inserted_anywhere_refutes_the_mechanism_that_reads_records_by_position(monkeypatch):
    """record_difference_insertion is refuted by a record inserted in front; a checker that added and removed
    records at the end only would find its cost within eps at every length (bounded)."""
    from align.adjacency import AdjacencyRule
    from align.checker.verify import overall_status
    from align.status import Status

    spec = "incorrect/record_difference_insertion.dp"
    assert overall_status(_verify(spec)) == Status.REFUTED

    def at_the_end(self, ops, here, there):
        short, long = (here, there) if len(here) < len(there) else (there, here)
        return ops.all_of([ops.same(a, b) for a, b in zip(short, long)])

    monkeypatch.setattr(AdjacencyRule, "one_record_apart", at_the_end)
    assert overall_status(_verify(spec)) == Status.BOUNDED


def test_the_samples_of_a_longer_input_are_compared_across_the_two_runs(monkeypatch):
    """shifted_draw_only_on_neighbour draws b only where x[i] >= 1: C2 is refuted only by comparing the draws of
    the runs on D and on D' (the self-composition on one D agrees with itself). (noise_per_record, one sample per
    record, was the subject before issue 37: its outputs on D and D' agree only when the extra sample is exactly
    0, an event of probability 0, so C2 holds almost surely there and C4a refutes it.)"""
    from align.checker import checks
    from align.status import Status

    def c2(verdicts):
        return next(v for v in verdicts if v.obligation.id == "C2").status

    spec = "incorrect/shifted_draw_only_on_neighbour.dp"
    assert c2(_verify(spec)) == Status.REFUTED
    monkeypatch.setattr(checks, "_same_draws_across_runs",
                        lambda q: checks._samples_determined(q.mech, q.enc, q.limits))
    assert c2(_verify(spec)) != Status.REFUTED


def test_a_sample_drawn_only_by_the_aligned_run_is_compared_by_both_back_ends(monkeypatch):
    """shifted_draw_only_on_neighbour shifts a sample that only the run on D' draws (the cost counts the first
    run's samples): the bounded check refutes C2 at length 1 and the induction does not prove it. Without the
    comparison in the induction the spec is `proved` for every length; without it in the bounded check only,
    `bounded` (the induction still fails and nothing refutes)."""
    from align.checker import checks, induction
    from align.checker.verify import overall_status
    from align.status import Status

    spec = "incorrect/shifted_draw_only_on_neighbour.dp"
    c2 = next(v for v in _verify(spec) if v.obligation.id == "C2")
    assert c2.status == Status.REFUTED
    with monkeypatch.context() as m:
        m.setattr(induction, "_same_draws_across_runs", lambda *args: None)
        assert overall_status(_verify(spec)) == Status.PROVED
    monkeypatch.setattr(checks, "_same_draws_across_runs",
                        lambda q: checks._samples_determined(q.mech, q.enc, q.limits))
    assert overall_status(_verify(spec)) == Status.BOUNDED


@pytest.mark.parametrize("clause,longer", [("len(q') = len(q) ± 1", True), ("len(q') = len(q) + 1", True),
                                           ("len(q') = len(q) - 1", False)])
def test_align_test_offers_neighbours_with_one_record_more_or_less(clause, longer):
    from align.stats.lrtest import input_pairs, valid_pairs

    mech = _mechanism(clause)
    pairs = valid_pairs(mech, {"x": 0.0, "eps": 1.0}, input_pairs(mech, {"x": 0.0, "eps": 1.0}, 4))
    assert len(pairs) >= 3
    for pair in pairs:
        assert len(pair.d_prime["q"]) == len(pair.d["q"]) + (1 if longer else -1)
        assert len(min(pair.d["q"], pair.d_prime["q"], key=len)) == 4 - (0 if longer else 1)


def test_folds_over_the_records_are_proved_for_every_length():
    """noisy_count and clipped_sum read the records only through len(q) and a sum over all of them: proved for
    every length (checker/records.py); a loop over the records (noise per record) or a read by position
    (record_difference_insertion) is not encoded there and stays with the bounded check, which refutes them."""
    from align.checker.verify import overall_status
    from align.status import Status

    for spec in ("counting/noisy_count.dp", "counting/clipped_sum.dp"):
        verdicts = _verify(spec)
        assert overall_status(verdicts) == Status.PROVED
        assert all(v.scope in ("for every input length", "by construction") for v in verdicts)
    for spec in ("incorrect/noise_per_record.dp", "incorrect/record_difference_insertion.dp",
                 "incorrect/clipped_sum_unclipped.dp", "incorrect/noisy_count_scale_reads_length.dp"):
        assert overall_status(_verify(spec)) == Status.REFUTED


def test_the_record_term_of_a_fold_is_what_the_proof_for_every_length_rests_on(monkeypatch):
    """Without the record's term in the fact relating a fold over q' to the fold over q (as if q and q' had
    the same records), the unclipped sum — whose records move the sum without bound — is "proved"."""
    import z3

    from align.checker.verify import overall_status
    from align.smt.encode import Encoding
    from align.status import Status

    spec = "incorrect/clipped_sum_unclipped.dp"
    assert overall_status(_verify(spec)) == Status.REFUTED

    def without_the_record(self, func, over, body):
        key = (func, over.name, (z3.If(body, 1, 0) if func == "count" else body).sexpr())
        if key not in self.summaries:
            here, there = zt.Real(f"%s{len(self.summaries)}"), zt.Real(f"%s{len(self.summaries)}'")
            self.summaries[key] = here, there
            self.side.append(there == here)
        return self.summaries[key][1 if over.primed else 0]

    monkeypatch.setattr(Encoding, "summary", without_the_record)
    assert overall_status(_verify(spec)) == Status.PROVED


def test_a_fold_whose_body_reads_its_index_is_not_summarised():
    """sum(l in 0 .. len(q): l * q[l]) depends on where the record sits: not a fold over the records."""
    from align.checker.verify import overall_status
    from align.status import Status

    mech = _mechanism_text("""
mechanism weighted(q: real[], eps: real)
  adjacent len(q') = len(q) ± 1
  requires eps > 0
  privacy eps
{
  s = sum(l in 0 .. len(q): min(max(l * q[l], 0), 1))
  eta ~ Lap(1 / eps)
  output s + eta
}

alignment weighted {
  eta' = eta + sum(l in 0 .. len(q): min(max(l * q[l], 0), 1)) - sum(l in 0 .. len(q'): min(max(l * q'[l], 0), 1))
}
""")
    from align.checker.verify import verify_mechanism

    verdicts = verify_mechanism(mech)
    assert overall_status(verdicts) != Status.PROVED
    assert any("reads its index" in note for v in verdicts for note in v.notes)


def test_a_histogram_of_records_over_public_bins_is_proved_for_every_length():
    """record_histogram: a loop over the public number of bins B whose iteration counts the records in its
    bin. The induction summarises the folds and spends the record's budget of 1 over the bins, after z3
    proves that the record counts in at most one bin; proved for every length and every B. With cumulative
    bins (`q[l] <= j`) the record counts in every bin from its own on: the lemma fails and the bounded check
    refutes C4c."""
    from align.checker.verify import overall_status
    from align.status import Status

    verdicts = _verify("counting/record_histogram.dp")
    assert overall_status(verdicts) == Status.PROVED
    assert all(v.scope in ("for every input length", "by construction") for v in verdicts)
    c4c = next(v for v in verdicts if v.obligation.id == "C4c")
    assert any("at most one iteration" in note for note in c4c.notes)
    cumulative = _verify("incorrect/cumulative_record_histogram.dp")
    assert overall_status(cumulative) == Status.REFUTED
    assert next(v for v in cumulative if v.obligation.id == "C4c").status == Status.REFUTED


def test_a_histogram_of_records_clamped_into_bins_is_proved_for_every_length():
    """The records clamped into three bins, `count(l in 0 .. len(q): clamp(q[l], 0, 2) == b)`: one fold per bin
    on every evaluation (a clamp between numbers has no value outside its domain, so no fresh symbol per
    evaluation: each made the body's fold and the alignment's two folds, and the records strategy said "not shown
    with the records summarised"). Clamped into 0 .. 3 over three bins, a record may count in none: still proved;
    the cumulative bins (`<= b`) are refuted."""
    from align.checker.verify import overall_status, verify_mechanism
    from align.status import Status

    def histogram(test: str) -> str:
        here, there = test.format(x="q[l]"), test.format(x="q'[l]")
        return f"""
mechanism clamped_histogram(q: int[], eps: real)
  adjacent len(q') = len(q) \u00b1 1
  requires eps > 0
  privacy eps
{{
  for b in 0 .. 3 {{
    eta ~ Lap(1 / eps)
    output count(l in 0 .. len(q): {here}) + eta
  }}
}}

alignment clamped_histogram {{
  eta[b]' = eta[b] + count(l in 0 .. len(q): {here}) - count(l in 0 .. len(q'): {there})
}}
"""
    for test in ("clamp({x}, 0, 2) == b", "clamp({x}, 0, 3) == b"):
        verdicts = verify_mechanism(_mechanism_text(histogram(test)))
        assert overall_status(verdicts) == Status.PROVED, [(v.obligation.name, v.status, v.notes) for v in verdicts]
        assert all(v.scope in ("for every input length", "by construction") for v in verdicts)
    cumulative = verify_mechanism(_mechanism_text(histogram("clamp({x}, 0, 2) <= b")))
    assert overall_status(cumulative) == Status.REFUTED


STUDENT_HISTOGRAM = """
mechanism student_histogram(q: int[], eps: real)
  adjacent len(q') = len(q) \u00b1 1
  requires eps > 0
  privacy eps
{
  h = [0, 0, 0]
  for i in 0 .. len(q) {
    j = clamp(q[i], 0, 2)
    h[j] = h[j] + 1
  }
  for b in 0 .. 3 {
    eta ~ Lap(1 / eps)
    output h[b] + eta
  }
}

alignment student_histogram {
  eta[b]' = eta[b] + count(l in 0 .. len(q): clamp(q[l], 0, 2) == b) - count(l in 0 .. len(q'): clamp(q'[l], 0, 2) == b)
}
"""


def test_a_histogram_counted_in_a_loop_is_proved_for_every_length_through_its_folds():
    """The bins counted in a loop as a student writes them (a temporary bin index, `h[j] = h[j] + 1`): the loop
    folds into one count per bin (checker/folds.py, hypotheses 4 and 5), which the records' summaries prove; it was
    unknown at every length, then bounded."""
    from align.checker.verify import overall_status, verify_mechanism
    from align.status import Status

    verdicts = verify_mechanism(_mechanism_text(STUDENT_HISTOGRAM))
    assert overall_status(verdicts) == Status.PROVED
    assert all(v.scope in ("for every input length", "by construction") for v in verdicts)
    c4c = next(v for v in verdicts if v.obligation.id == "C4c")
    assert any("h[2] = h[2] + count(i in 0 .. len(q): clamp(q[i], 0, 2) == 2)" in note for note in c4c.notes)


def test_a_bin_index_that_may_leave_the_list_is_not_folded(monkeypatch):
    """incorrect/fold_bin_past_the_end: records clamped into 0 .. 3 over three bins, a run that stops on a record of
    3. The stops' rule makes it unknown; without that rule the folds' hypothesis 4 still keeps it from a proof, and
    without both it is "proved" (the folds would drop the records of bin 3)."""
    from align.checker import folds
    from align.checker import verify as checker
    from align.checker.verify import overall_status
    from align.status import Status

    spec = "incorrect/fold_bin_past_the_end.dp"
    assert overall_status(_verify(spec)) == Status.UNKNOWN
    monkeypatch.setattr(checker, "hazards", lambda mech: [])
    assert overall_status(_verify(spec)) != Status.PROVED
    monkeypatch.setattr(folds, "_bin_index", lambda e, m: True)
    assert overall_status(_verify(spec)) == Status.PROVED


def test_the_records_budget_rests_on_the_at_most_one_iteration_lemma(monkeypatch):
    """Taking the lemma for granted (every share counted once) "proves" the cumulative histogram, which is
    (B eps)-DP only: the lemma is what the proof for every length rests on."""
    from align.checker import induction
    from align.checker.verify import overall_status
    from align.status import Status

    monkeypatch.setattr(induction, "_counts_once", lambda *args: True)
    assert overall_status(_verify("incorrect/cumulative_record_histogram.dp")) == Status.PROVED


def test_a_share_that_reads_the_loop_state_is_not_a_budget(monkeypatch):
    """A bin chosen through a loop-carried counter (`q[l] == j - k`, k = j at every head) is the same bin 0
    at every iteration, although the share s(i) = [r = i - k] looks like a different bin at each index when
    k is taken as fixed: `_moves` sees the head state in the share, and no budget is spent. (Here the lemma
    would fail without `_moves` too — the two runs' counters are separate symbols — so this checks the
    classification, not a verdict.)"""

    from align.checker import induction

    mech = _mechanism_text("""
mechanism counter_bins(q: int[], eps: real, B: int)
  adjacent len(q') = len(q) ± 1
  requires eps > 0, B >= 1
  privacy eps
{
  k = 0
  for j in 0 .. B {
    eta ~ Lap(1 / eps)
    output count(l in 0 .. len(q): q[l] == j - k) + eta
    k = k + 1
  }
}

alignment counter_bins {
  eta[j]' = eta[j] + count(l in 0 .. len(q): q[l] == 0) - count(l in 0 .. len(q'): q'[l] == 0)
}
""")
    moves, budgets = [], []
    original_moves, original_budget = induction._moves, induction._record_budget

    def spy_moves(product, term):
        moves.append(original_moves(product, term))
        return moves[-1]

    def spy_budget(*args):
        budgets.append(original_budget(*args))
        return budgets[-1]

    from align.checker.verify import verify_mechanism

    monkeypatch.setattr(induction, "_moves", spy_moves)
    monkeypatch.setattr(induction, "_record_budget", spy_budget)
    verify_mechanism(mech)
    assert moves and all(moves) and budgets and all(budget is None for budget in budgets)
