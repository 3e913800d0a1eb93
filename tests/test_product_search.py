"""The product program's invariant found by Spacer (smt/chc.py, checker/induction.py `_Search`), statements after the
loop with their outputs as a prophecy (`_Exit`), and folds over the whole run as ghosts (`_Fold`): what they prove
for every length, and what they must not."""

from __future__ import annotations

from pathlib import Path

import z3

import align
from align.obligations import ObligationId
from align.smt import terms as zt
from align.smt.chc import find_invariant
from align.smt.solver import Limits
from align.status import Status

from .conftest import ROOT

PEERS = ROOT / "specs" / "peers"
EVERY = "for every input length"


def _written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _rewritten(tmp_path: Path, source: Path, replacements: tuple[tuple[str, str], ...], name: str) -> Path:
    """`source` with each text replaced (each must be there), written to tmp_path/name."""
    text = source.read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    return _written(tmp_path, name, text)


def _proved(spec: Path):
    """align's verdict on `spec`, asserted proved for every input length."""
    verdict = align.verify(str(spec))
    assert verdict.status is Status.PROVED and verdict.scope == EVERY, verdict
    return verdict


def _obligation(verdict, obligation: ObligationId):
    return next(v for v in verdict.verdicts if v.obligation.id == obligation)


def _counter(bound_of_bad: int):
    """x counts the iterations of `for i in 0 .. n` by 2: the search's clauses, with the bad state x > bound·n."""
    i, x, n = zt.Int("i"), zt.Int("x"), zt.Int("n")
    return find_invariant([i, x], [n], [n >= 0], [zt.IntVal(0), zt.IntVal(0)], [i >= 0, i < n], [i + 1, x + 2],
                          [[i <= n, x > bound_of_bad * n]], Limits())


def test_the_search_finds_an_invariant_that_rules_out_the_bad_states():
    with zt.fresh_context():
        found = _counter(2)
        assert found is not None
        i, x, n = zt.Int("i"), zt.Int("x"), zt.Int("n")
        # it is an invariant: it holds at entry, an iteration keeps it, and it excludes x > 2n where i <= n
        solver = z3.Solver(ctx=zt.current())
        step = z3.substitute(found, (i, i + 1), (x, x + 2))
        solver.add(z3.Or(z3.And(n >= 0, z3.Not(z3.substitute(found, (i, zt.IntVal(0)), (x, zt.IntVal(0))))),
                         z3.And(found, i >= 0, i < n, z3.Not(step)),
                         z3.And(found, i <= n, x > 2 * n)))
        assert solver.check() == z3.unsat


def test_the_search_finds_nothing_when_a_bad_state_is_reachable():
    with zt.fresh_context():
        assert _counter(1) is None  # x = 2n > n after n >= 1 iterations


def test_one_pass_noisy_max_with_its_output_after_the_loop_is_proved_for_every_length():
    # ShadowDP's noisymax.c: the alignment reads out[0], which the program outputs after the loop (a prophecy)
    verdict = _proved(PEERS / "shadowdp_noisymax.dp")
    c4a = _obligation(verdict, ObligationId.C4A)
    assert any("found by Spacer" in n for n in c4a.notes), c4a.notes
    assert any("out[0]" in n and "loop invariant" in n for n in c4a.notes), c4a.notes


def test_a_cost_that_needs_the_neighbours_direction_is_bounded_by_the_counters_template():
    # CheckDP's svt_increasing: each shift 1 + q[i] - q'[i] is at most 1 because q' >= q, the largest of its parts'
    # bounds (1 and 1) rather than their sum, a candidate that the iterations preserve
    verdict = _proved(PEERS / "checkdp_svt_increasing.dp")
    c4c = _obligation(verdict, ObligationId.C4C)
    assert any("(count - count at entry)·b, b = eps/(2*NN)" in n for n in c4c.notes), c4c.notes


def test_a_counter_of_the_answers_left_bounds_the_cost(tmp_path: Path):
    # Lyu et al.'s monotone Alg. 7 counting its answers down from c (`left`): the cost grows by at most b each time
    # left goes down by one, b the largest of each shift's parts' bounds (monotone queries)
    path = _rewritten(tmp_path, PEERS / "lyu_alg7_monotone.dp",
                      (("count = 0", "left = c"), ("if count >= c { break }", "if left <= 0 { break }"),
                       ("count = count + 1", "left = left - 1")), "counting_down.dp")
    verdict = _proved(path)
    c4c = _obligation(verdict, ObligationId.C4C)
    assert any("(left at entry - left)·b, b = (eps2 + eps3)/c" in n for n in c4c.notes), c4c.notes


def test_a_cost_is_bounded_by_the_searched_invariant():
    # DP-Sniper's SVT2: the conjuncts that bound the cost come from Spacer, relating W to the count of answers so
    # far (S0) and to c
    verdict = _proved(PEERS / "dpsniper_svt2.dp")
    c4c = _obligation(verdict, ObligationId.C4C)
    # (the searched conjuncts' spelling is Spacer's: only that W, the cost in units of one shift, is bounded)
    assert any("W = aligned_cost·" in n and "S0" in n for n in c4c.notes), c4c.notes


def _free_gap_noisy_max(name: str, body: str) -> str:
    """Report Noisy Max with Lap(2/eps) noise, written with `body`, and Free Gap's alignment (Equation (3), k = 1)."""
    return f"""\
mechanism {name}(q: real[], eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0, len(q) >= 2
  privacy eps
  example eps = 1, len(q) = 4
{{
{body}}}

alignment {name} {{
  let m = max(l not in [out[0]]: q[l] + eta[l])
  let m' = max(l not in [out[0]]: q'[l] + eta[l])
  eta[i]' = eta[i] + (i in [out[0]] ? q[i] - q'[i] + m' - m : 0)
}}
"""


ONE_PASS_FREE_GAP = _free_gap_noisy_max("one_pass", """\
  best = 0
  bv = 0
  for i in 0 .. len(q) {
    eta ~ Lap(2 / eps)
    if i == 0 or q[i] + eta > bv {  # align: accept-float-sensitive (a running maximum)
      best = i
      bv = q[i] + eta
    }
  }
  output best
""")


def test_free_gaps_alignment_of_a_one_pass_noisy_max_is_proved_for_every_length(tmp_path: Path):
    # the alignment reads two folds over the whole run (ghosts with a prophecy each), and C4a needs the ties of the
    # running maximum's comparison excluded (probability 0)
    verdict = _proved(_written(tmp_path, "one_pass.dp", ONE_PASS_FREE_GAP))
    notes = _obligation(verdict, ObligationId.C4A).notes
    assert any("exact ties of `q[i] + eta > bv`" in n and "for every length" in n for n in notes), notes
    assert any("G0 = `max(l in 0 .. len(q) if l not in [out[0]]: q[l] + eta[l])`" in n for n in notes), notes
    c4b = _obligation(verdict, ObligationId.C4B)
    assert any("Lemma 4" in n for n in c4b.notes), c4b.notes


def test_a_max_over_members_that_may_not_exist_is_not_proved(tmp_path: Path):
    # without `len(q) >= 2` the best loser is a max over nothing at length 1: the alignment is not defined there
    path = tmp_path / "one_pass_short.dp"
    path.write_text(ONE_PASS_FREE_GAP.replace("requires eps > 0, len(q) >= 2", "requires eps > 0"))
    verdict = align.verify(str(path))
    assert _obligation(verdict, ObligationId.C4A).status is Status.REFUTED, verdict


def test_a_loop_over_a_list_of_private_length_is_not_run_in_lockstep():
    verdict = align.verify(str(ROOT / "specs" / "incorrect" / "records_loop_outputs.dp"))
    assert _obligation(verdict, ObligationId.C4A).status is Status.REFUTED, verdict


def test_a_ghost_never_stands_for_a_comprehension_that_reads_the_shifts_index(tmp_path: Path):
    # found by an adversarial search: the ghost evaluates the body once per iteration at l = i, so a body reading the
    # shift's own index i was taken as f(l, l). The shift below is 2 only where the winner's index is below 4, so the
    # alignment fails past the bounded check's lengths; the proof for every length must decline it
    text = (PEERS / "shadowdp_noisymax.dp").read_text()
    written = "eta[i]' = eta[i] + (i == out[0] ? 2 : 0)"
    assert written in text
    path = tmp_path / "reads_i.dp"
    path.write_text(text.replace(written, "eta[i]' = eta[i] + (i == out[0] ? "
                                          "sum(l in 0 .. len(q): (l == 0 ? (i < 4 ? 2 : 0) : 0)) : 0)"))
    verdict = align.verify(str(path))
    assert verdict.status is Status.BOUNDED, verdict
    notes = _obligation(verdict, ObligationId.C4A).notes
    assert any("reads `i`, an index other than its own" in n for n in notes), notes
    # the same for SmartSum's window ghost
    text = (ROOT / "specs" / "counting" / "smart_sum.dp").read_text()
    window = "eta1[i]' = eta1[i] + sum(l in i + 1 - M .. i + 1: q[l] - q'[l])"
    assert window in text
    path = tmp_path / "window_reads_i.dp"
    path.write_text(text.replace(window, "eta1[i]' = eta1[i] + "
                                         "sum(l in i + 1 - M .. i + 1: (l == i or i < 6 ? q[l] - q'[l] : 0))"))
    verdict = align.verify(str(path))
    assert verdict.status is Status.BOUNDED, verdict


def test_the_outputs_after_the_loop_are_read_only_at_a_number_below_their_count(tmp_path: Path):
    text = (PEERS / "shadowdp_noisymax.dp").read_text()
    written = "eta[i]' = eta[i] + (i == out[0] ? 2 : 0)"
    path = tmp_path / "past_end.dp"
    path.write_text(text.replace(written, "eta[i]' = eta[i] + (i == out[0] ? 2 + "
                                          "sum(l in 0 .. len(q): (out[l] > 100 ? 1 : 0)) : 0)"))
    verdict = align.verify(str(path))
    c4a = _obligation(verdict, ObligationId.C4A)
    assert c4a.status is not Status.PROVED, c4a


def test_a_count_over_the_iterations_so_far_is_a_ghost_of_the_loop(tmp_path: Path):
    # Sparse with numeric answers 1 and 0 and its alignment counting them: `count(l in 0 .. i + 1: out[l] == 1)`
    # is f summed over the iterations so far (the tag counters' generalisation); Houdini finds count = that ghost
    path = _rewritten(tmp_path, ROOT / "specs" / "dworkroth" / "sparse.dp",
                      (("output TOP", "output 1"), ("output BOT", "output 0"), ("out[i] is TOP", "out[i] == 1"),
                       ("out[l] is TOP", "out[l] == 1")), "sparse_numeric.dp")
    text = path.read_text()
    verdict = _proved(path)
    c4c = _obligation(verdict, ObligationId.C4C)
    assert any("count = `count(l in 0 .. i + 1: out[l] == 1)` so far" in n for n in c4c.notes), c4c.notes
    # counting the wrong answers instead makes the threshold's shift wrong: not proved
    path.write_text(text.replace("count(l in 0 .. i + 1: out[l] == 1)", "count(l in 0 .. i + 1: out[l] == 0)"))
    assert align.verify(str(path)).status is not Status.PROVED


def test_a_failed_proof_names_a_state_the_invariant_allows_and_the_obligation_does_not(tmp_path: Path):
    # Lyu et al.'s monotone Alg. 7 counting its answers in steps of two: the counter's template is too weak (it
    # counts each answer twice), and the search's W is not linear (the three noise families' cost ratios are
    # parameters); the note shows a loop head's state (both runs' variables, the aligned cost) that an
    # `invariant` clause would have to rule out
    path = _rewritten(tmp_path, PEERS / "lyu_alg7_monotone.dp",
                      (("if count >= c { break }", "if count >= 2 * c { break }"),
                       ("count = count + 1", "count = count + 2")), "counting_by_two.dp")
    verdict = align.verify(str(path), max_length=2)
    c4c = _obligation(verdict, ObligationId.C4C)
    note = next(n for n in c4c.notes if "no proof for every length" in n)
    assert "at the loop head i = " in note and "aligned_cost = " in note and "`invariant` clause" in note, note


def test_a_loop_over_a_public_bound_may_read_a_fixed_entry_that_is_always_there(tmp_path: Path):
    # DP-Sniper's LaplaceParallel: n_parallel Laplace answers of a[0], len(a) == 1 required
    _proved(PEERS / "dpsniper_laplace_parallel.dp")
    # a[1] is past the end of a one-entry list: no proof for every length reads it
    text = (PEERS / "dpsniper_laplace_parallel.dp").read_text()
    assert "output a[0] + eta" in text and "(a[0] - a'[0])" in text
    path = tmp_path / "past_the_end.dp"
    path.write_text(text.replace("output a[0] + eta", "output a[1] + eta").replace("(a[0] - a'[0])",
                                                                                   "(a[1] - a'[1])"))
    assert align.verify(str(path)).status is not Status.PROVED


RUNNING_ARGMAX = _free_gap_noisy_max("running", """\
  for i in 0 .. len(q) {
    eta ~ Lap(2 / eps)
    noisy[i] = q[i] + eta
  }
  best = 0
  for l in 1 .. len(noisy) {
    if noisy[l] > noisy[best] {  # align: accept-float-sensitive (a running maximum)
      best = l
    }
  }
  output best
""")


def test_a_loop_that_keeps_the_best_index_is_the_ranking_it_computes(tmp_path: Path):
    verdict = _proved(_written(tmp_path, "running.dp", RUNNING_ARGMAX))
    notes = _obligation(verdict, ObligationId.C4C).notes
    assert any("best = argmax(noisy)" in n for n in notes), notes


def test_a_running_ranking_that_keeps_the_later_index_or_may_be_empty_is_not_rewritten():
    from align.checker import running
    from align.parse import parse_source
    from align.resolve import resolve
    from align.span import Source

    def rewritten(text: str):
        return running.rank(resolve(parse_source(Source("r.dp", text))).mechanisms[0])

    assert rewritten(RUNNING_ARGMAX) is not None
    # `>=` keeps the later of two equal entries; argmax the earlier
    assert rewritten(RUNNING_ARGMAX.replace("noisy[l] > noisy[best]", "noisy[l] >= noisy[best]")) is None
    # without len(q) >= 1 the list may be empty: argmax is not defined there, the loop leaves 0
    assert rewritten(RUNNING_ARGMAX.replace("requires eps > 0, len(q) >= 2", "requires eps > 0")) is None
    # the kept index must start at 0
    assert rewritten(RUNNING_ARGMAX.replace("  best = 0\n", "  best = 1\n")) is None


def test_fixed_entries_of_a_filled_list_read_after_the_loop_are_kept_as_variables(tmp_path: Path):
    # StatDP's histogram releases noisy_array[0] after the loop that fills it
    _proved(PEERS / "statdp_histogram.dp")
    from align.checker import kept_entries
    from align.parse import parse_source
    from align.resolve import resolve
    from align.span import Source

    text = (PEERS / "statdp_histogram.dp").read_text()

    def kept(changed: str):
        return kept_entries.keep_entries(resolve(parse_source(Source("h.dp", changed))).mechanisms[0])

    assert kept(text) is not None
    # an entry the loop may not reach: len(q) >= 1 does not cover noisy_array[1]
    assert kept(text.replace("output noisy_array[0]", "output noisy_array[1]")) is None
    # the list read in the loop, or as a whole after it
    assert kept(text.replace("output noisy_array[0]", "output noisy_array[0] + sum(l in 0 .. len(q): "
                                                      "noisy_array[l])")) is None


def test_the_output_decides_a_condition_that_counts_earlier_members_by_a_searched_invariant():
    # DP-Sniper's NumericalSVT: a shift's condition reads `count(l in 0 .. i: a[l] + rho2[l] >= t + rho1) < c`,
    # earlier members of rho2. Two runs on D with the same output have the same count while neither has aborted,
    # and both have aborted (the count reached c) otherwise: an invariant of the self-composition with each run's
    # ghost of the count, found by Spacer
    verdict = _proved(PEERS / "dpsniper_numerical_svt.dp")
    notes = _obligation(verdict, ObligationId.C4B).notes
    assert any("two runs on D with independent noise and the same output" in n and "S0@A" in n and "S0@B" in n
               for n in notes), notes
