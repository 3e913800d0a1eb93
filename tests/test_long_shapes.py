"""The bounded check's first pass for long input shapes (docs/checker.md, "Long inputs"): its encodings are
equisatisfiable with the usual ones, its case split proves only what holds, and its verdicts are the usual ones."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import z3

from align.checker.options import Options
from align.checker.verify import overall_status, verify_mechanism
from align.interp.replay import replay
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.smt import encode
from align.smt import terms as zt
from align.smt.solver import Limits, Validity, check_valid
from align.span import Source
from align.types import ListType

from .conftest import ROOT

LIMITS = Limits()


def _relational():
    """What `_fold` and `_ranked` read of an Encoding in the relational mode."""
    enc = SimpleNamespace(relational=True, side=[], counter=0)

    def fresh(base: str, sort: str = "real") -> z3.ArithRef:
        enc.counter += 1
        return zt.Int(f"%{base}{enc.counter}") if sort == "int" else zt.Real(f"%{base}{enc.counter}")

    enc.fresh = fresh
    return enc


def test_relational_extrema_are_the_if_chains():
    with zt.fresh_context():
        xs = [zt.Real(f"x{k}") for k in range(4)]
        gs = [zt.Bool(f"g{k}") for k in range(4)]
        results = [(g, zt.IntVal(k), x) for k, (g, x) in enumerate(zip(gs, xs))]
        for func in ("max", "min", "argmax", "argmin"):
            enc = _relational()
            symbol = encode._fold(func, results, enc)
            chain = encode._fold(func, results)
            # the defining facts make the symbol the chain's value, whatever the guards and values (ties included)
            assert check_valid(enc.side, symbol == chain, LIMITS).status == Validity.PROVED, func


def test_relational_ranking_is_the_if_chain():
    with zt.fresh_context():
        xs = tuple(zt.Real(f"x{k}") for k in range(4))
        enc = _relational()
        symbols = encode._ranked(xs, 3, enc)
        chain = encode._ranked(xs, 3)
        same = zt.And([zt.And(i == j, encode._real(w) == encode._real(v)) for (i, w), (j, v) in zip(symbols, chain)])
        assert check_valid(enc.side, same, LIMITS).status == Validity.PROVED


def test_case_split_proves_only_what_holds():
    split = Limits(by_cases=True)
    with zt.fresh_context():
        a, b, c = zt.Int("a"), zt.Int("b"), zt.Int("c")
        renaming = zt.Or(zt.And(a == b), zt.And(a == c))
        assert check_valid([renaming, b == 1, c == 1], a == 1, split).status == Validity.PROVED
        # one case breaks the claim: no proof (and the model comes from the query as it stands)
        assert check_valid([renaming, b == 1, c == 2], a == 1, split).status == Validity.REFUTED


def test_long_shapes_keep_the_verdicts():
    """A refuted spec stays refuted past the first pass's threshold, a proved one bounded."""
    for spec, expected in (("specs/incorrect/cumulative_record_histogram.dp", "refuted"),
                           ("specs/counting/record_histogram.dp", "bounded")):
        mech = resolve(parse_source(read_source(str(ROOT / spec)))).mechanisms[0]
        verdicts = verify_mechanism(mech, Options(max_length=4, bounded_only=True, every_obligation=True))
        assert overall_status(verdicts).value == expected, spec


def _mech(path: str):
    return resolve(parse_source(read_source(str(ROOT / path)))).mechanisms[0]


def test_the_common_factor_of_the_cost_coefficients():
    from align.checker.checks import common_factor

    # numeric sparse: 4 eps/(9c), 2 eps/(9c), eps/(9c) and claim eps: m = eps/c, a linear query
    m, coefficients, claim = common_factor(_mech("specs/dworkroth/numeric_sparse.dp"))
    assert (str(m), str(claim)) == ("eps/c", "c")
    assert {k: str(v) for k, v in coefficients.items()} == {"rho0": "4/9", "nu": "2/9", "upsilon": "1/9",
                                                             "rho": "4/9"}
    # Free Gap Algorithm 2: theta eps and (1 - theta) eps/(2k): eps alone
    m, coefficients, claim = common_factor(_mech("specs/freegap/alg2_svt_gap.dp"))
    assert (str(m), str(claim)) == ("eps", "1")
    # a claim that reads the output is not a formula of the parameters: none
    assert common_factor(_mech("specs/freegap/alg6_hybrid_estimates.dp")) is None


def test_a_cost_divided_by_its_common_factor_keeps_each_answer():
    """At a long shape (the first pass's encoding), C4c divided by m is proved where the query as written is, and
    refuted where it is: the mutant with half the threshold noise of numeric sparse costs more than its claim."""
    from align.checker.checks import aligned_cost, aligned_runs, scaled_cost

    text = (ROOT / "specs" / "dworkroth" / "numeric_sparse.dp").read_text()
    half = text.replace("rho0 ~ Lap(sigma1)", "rho0 ~ Lap(sigma1 / 2)")
    assert half != text
    for source, expected in ((text, Validity.PROVED), (half, Validity.REFUTED)):
        mech = resolve(parse_source(Source("n.dp", source))).mechanisms[0]
        with zt.fresh_context():
            enc = encode.Encoding(mech, {"q": 3}, {}, {}, relational=True)
            run1, align, _ = aligned_runs(enc)
            cost, _ = aligned_cost(enc, run1, align)
            scaled = scaled_cost(enc, run1, align, LIMITS)
            assert scaled is not None
            facts = [enc.requires(), enc.adjacency()]
            assert check_valid([*facts, *scaled[2]], scaled[0] <= scaled[1], LIMITS).status == expected
            assert check_valid(facts, cost <= align.claim(), LIMITS).status == expected


class _EverySlot(encode.Run):
    """The run written without `Run.here`: each output goes to each slot k under "len(out) = k"."""

    def visit_output(self, s, ctx=None):
        self.here = None
        super().visit_output(s, ctx)


_OUTPUTS = """
mechanism m(q: real[], T: real, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
{
  rho ~ Lap(2 / eps)
  for i in 0 .. len(q) {
    nu ~ Lap(4 / eps)
    if q[i] + nu >= T + rho {
      output TOP
      if q[i] > T { break }
      output MID
    } else if q[i] + nu >= T {
      for j in 0 .. 2 {
        output LOW
        if q[j] + nu > T + j { break }
      }
    }
  }
  output DONE
}
"""

_AFTER_BREAK = """
mechanism m(q: real[], T: real, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
{
  for i in 0 .. len(q) {
    nu ~ Lap(2 / eps)
    output q[i] + nu
    if q[i] + nu > T { break }
  }
  output 7
}
"""


def test_a_value_written_to_the_one_slot_it_can_be_in_is_the_same_output():
    """`Run.here` writes an output to slot j when every active path has output j values: the output (length and
    slots) is the one written to each slot under "len(out) = k", on SVT-like loops with breaks, branches that
    output differently, a nested loop that breaks, and outputs after a loop; and the SVT loops do use it (one
    slot per iteration)."""
    sources = [Source("outputs.dp", _OUTPUTS), Source("after_break.dp", _AFTER_BREAK)] + [
        read_source(str(ROOT / p)) for p in ("specs/dworkroth/sparse.dp", "specs/freegap/alg1_adaptive_svt_gap.dp",
                                             "specs/dworkroth/numeric_sparse.dp", "specs/freegap/noisy_max.dp",
                                             "specs/counting/histogram_then_above_threshold.dp")]
    used = 0
    for source in sources:
        mech = resolve(parse_source(source)).mechanisms[0]
        for n in (1, 3):
            with zt.fresh_context():
                lengths = {p.name: n for p in mech.params if isinstance(p.type, ListType)}
                enc = encode.Encoding(mech, lengths, {}, {})
                here = encode.Run(enc, enc.params).execute()
                everywhere = _EverySlot(enc, enc.params).execute()
                same = here.output.equal(everywhere.output)
                answer = check_valid([enc.requires()], same, LIMITS, vacuity=False)
                assert answer.status == Validity.PROVED, (source.path, n)
                used += len(here.slots) < len(everywhere.slots)
    assert used >= 4


def test_nlsat_on_the_whole_query_proves_only_what_holds():
    """`Limits.nlsat_tactic` (the first pass's C4c): a nonlinear claim that holds is proved, one that does not is
    refuted by the default solver afterwards (the tactic's answer is taken only when it is unsat), and a linear
    query is not given to the tactic at all."""
    from align.smt.solver import _unsat_by_nlsat

    tactic = Limits(nlsat_tactic=True)
    with zt.fresh_context():
        theta, x = zt.Real("theta"), zt.Real("x")
        k = zt.Int("k")
        facts = [theta > 0, theta < 1, k >= 1, x >= 0, x <= 2 * k]
        cost = theta + (1 - theta) * x / (2 * z3.ToReal(k))
        assert _unsat_by_nlsat([*facts, z3.Not(cost <= 1)], tactic)
        assert check_valid(facts, cost <= 1, tactic).status == Validity.PROVED
        assert check_valid(facts, cost <= theta + (1 - theta) / 2, tactic).status == Validity.REFUTED
        assert not _unsat_by_nlsat([x >= 0, x <= 2, z3.Not(x <= 2)], tactic)  # linear: the default solver's


_PATH_LISTS = """
mechanism m(q: real[], T: real, N: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0, N >= 1
  privacy eps
{
  both = []
  seen = []
  c = 0
  best = []
  for i in 0 .. len(q) {
    nu ~ Lap(1 / eps)
    best[i] = q[i] + nu
    if q[i] + nu >= T {
      both[i] = 1
      seen[i] = q[i] + nu
      c = c + 1
      if c >= N { break }
    } else {
      both[i] = 0
      if q[i] + nu >= T - 1 {
        seen[i] = 0
      } else {
        seen[i] = -1
      }
    }
  }
  output len(both)
  output count(l in 0 .. len(both): both[l] == 0)
  output len(seen) == 0 ? -5 : seen[len(seen) - 1]
  output sum(l in 0 .. len(seen): seen[l])
  output max(best)
  output argmax(best)
  output top_k(best, 1)[0]
}
"""


def test_a_list_whose_length_depends_on_the_path_is_the_interpreters():
    """A list appended to in both branches of an `if` and cut short by a `break` (`PathList`): its length, a count
    over it, its last element, a sum over it, and of a list appended to in every iteration until the break its
    largest element, the index of it and top-k's first index are, on 60 noise vectors, what the interpreter
    computes."""
    mech = resolve(parse_source(Source("path_lists.dp", _PATH_LISTS))).mechanisms[0]
    rng = np.random.default_rng(7)
    n = 4
    q = [0.5, -1.0, 2.0, 0.25]
    params = {"q": q, "T": 1.0, "N": 1, "eps": 1.0}
    lengths = set()
    with zt.fresh_context():
        enc = encode.Encoding(mech, {"q": n}, {"N": 1}, {})
        run = encode.Run(enc, enc.params).execute()
        assert any(isinstance(v, encode.PathList) for v in run.vars.values())
        symbols = {str(x): x for x in enc.params["q"].items}
        fixed = [(symbols[f"q[{k}]"], zt.RealVal(q[k])) for k in range(n)] + \
            [(enc.params["T"], zt.RealVal(1)), (enc.params["eps"], zt.RealVal(1))]
        for _ in range(60):
            nu = [float(x) for x in np.round(rng.uniform(-3, 3, n), 2)]
            noise = [(enc.noise[("nu", k)], zt.RealVal(str(nu[k]))) for k in range(n) if ("nu", k) in enc.noise]
            interpreted = replay(mech, "path_lists.dp", params, {"nu": nu}).run.out

            def value(term, noise=noise):
                v = z3.simplify(z3.substitute(term, *fixed, *noise))
                return v.as_long() if z3.is_int_value(v) else float(v.as_fraction())

            assert value(run.output.length) == len(interpreted) == 7
            encoded = [value(run.output.select(zt.IntVal(k))) for k in range(7)]
            assert encoded == pytest.approx([float(x) for x in interpreted], abs=1e-9), nu
            lengths.add(encoded[0])
    assert lengths == {1, 2, 3, 4}  # the first answer above T ends the loop


def test_a_write_past_the_end_on_some_paths_is_not_encoded():
    """A list written at i only where q[i] > 0 has a gap at i = 1 on the paths where q[0] <= 0: the interpreter stops
    there (`list-gap`) and the bounded check, which does not model that error, says so (unknown) rather than
    encode the paths that run (specs/incorrect/fused_loops_list_with_gaps.dp is such a mechanism). Written in both
    branches, the same list has one length on every path."""
    gap = """
mechanism m(q: real[], eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
{
  y = []
  for i in 0 .. len(q) {
    nu ~ Lap(1 / eps)
    if q[i] + nu > 0 {
      y[i] = 1
    }
  }
  output len(y)
}
"""
    both = gap.replace("      y[i] = 1\n    }", "      y[i] = 1\n    } else {\n      y[i] = 0\n    }")
    assert both != gap
    for source, fails in ((gap, True), (both, False)):
        mech = resolve(parse_source(Source("gap.dp", source))).mechanisms[0]
        with zt.fresh_context():
            enc = encode.Encoding(mech, {"q": 3}, {}, {})
            try:
                run = encode.Run(enc, enc.params).execute()
            except encode.EncodingError as error:
                assert fails and "assigns y[1] where the list's length depends on the path" in str(error)
                continue
            assert not fails
            assert isinstance(run.vars["y"], encode.ListV) and len(run.vars["y"].items) == 3


def test_what_counts_as_nonlinear():
    """`solver._nonlinear`, which decides whether a query goes to the nlsat tactic: a product of two terms that are
    not numbers, or a division by one (numbers seen through to_real/to_int and algebraic numbers included)."""
    from align.smt.solver import _nonlinear

    with zt.fresh_context():
        x, y = zt.Real("x"), zt.Real("y")
        i, j = zt.Int("i"), zt.Int("j")
        c = zt.Bool("c")
        two = zt.RealVal(2)
        root = z3.simplify(z3.Sqrt(two), algebraic_number_evaluator=True)
        assert z3.is_algebraic_value(root)
        cases = [
            (x + y > 1, False), (2 * x > 1, False), (x * y > 1, True), (x / 2 > 1, False), (x / y > 1, True),
            (z3.ToReal(i) * x > 1, True), (z3.ToReal(zt.IntVal(2)) * x > 1, False),
            (z3.If(c, x * y, x) > 1, True), (x / z3.ToReal(zt.IntVal(3)) > 1, False), (i / j > 0, True),
            (root * x > 1, False),
        ]
        for term, expected in cases:
            assert _nonlinear([term]) is expected, term
        assert _nonlinear([x > 0, x * y > 1]) and not _nonlinear([]) and not _nonlinear([x > 0, y < 2 * x])


def test_a_clamped_index_is_bounded_by_the_conditions_of_its_ifs():
    """`int_bounds` reads an If's condition in its branches: clamp(x, 0, 2) is between 0 and 2 whatever x is (the
    encoder then writes a list at that index in place); a bound the conditions do not give stays unknown."""
    with zt.fresh_context():
        x = zt.Int("x")
        clamp = z3.If(x < 0, 0, z3.If(x > 2, 2, x))
        assert encode.int_bounds(clamp) == (0, 2)
        assert encode.int_bounds(z3.simplify(clamp)) == (0, 2)  # as the encoder sees it: If(0 <= x, ...)
        assert encode.int_bounds(clamp + 1) == (1, 3)
        assert encode.int_bounds(z3.If(x <= 5, z3.If(x >= 3, x - 3, 0), 2)) == (0, 2)
        assert encode.int_bounds(z3.If(x < 0, 0, x)) is None          # no upper bound
        assert encode.int_bounds(z3.If(x < 0, x, 0)) is None          # no lower bound
        assert encode.int_bounds(z3.If(zt.Int("y") < 0, 0, z3.If(x > 2, 2, x))) is None  # another term's bound
