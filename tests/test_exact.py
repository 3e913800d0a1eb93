"""`align test --exact` (align/exact): the brackets contain the probabilities — against closed forms, against
scipy's quadrature and against the reference interpreter's samples — no correct spec is reported broken, the
published variants are, and programs outside the class get a located diagnostic.

The sampled comparisons use fixed seeds; each compares a count with a bracket at 5 standard deviations (a false
failure with probability below 10^-6 per comparison on a correct implementation).
"""

from __future__ import annotations

import io
import json
import math
import operator
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from align.cli import main
from align.distributions import DISTRIBUTIONS
from align.exact.integrate import Bracket, Integrator, mass, tails
from align.exact.linear import Constraint, Linear
from align.exact.paths import Draw, Slot, paths, shape
from align.exact.search import Event, compute
from align.expectations import read_expectations
from align.interp.runner import prepare_arguments, sample
from align.interp.values import Tag, example_arguments, example_length
from align.parse import read_source
from align.pipeline import checker_pairs, load_mechanism
from align.report import jupyter

from .conftest import corpus

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


def _mech(rel: str):
    return load_mechanism(str(SPECS / rel))


def _lap(b: float) -> Draw:
    return Draw("Lap", (b,), DISTRIBUTIONS["Lap"])


class _Never:
    def decide(self, form: Linear) -> bool:
        raise AssertionError("no comparison expected")


# ------------------------------------------------------------------------------------------------ the laws


@pytest.mark.parametrize("name", sorted(d.name for d in DISTRIBUTIONS.values() if d.law is not None))
def test_each_law_is_the_distribution_its_sampler_draws(name):
    """The scipy law a distribution declares is the one its sampler draws (Kolmogorov–Smirnov, 20,000 draws,
    seed 0; a false failure has probability 10^-6)."""
    dist = DISTRIBUTIONS[name]
    params = {"Uniform": (-1.0, 2.0), "TruncNormal": (0.5, 2.0, -1.0, 3.0), "Gamma": (2.5, 1.5)}.get(
        name, dist.full_params(dist.defaults[:dist.required]))
    draws = dist.draw(np.random.default_rng(0), tuple(np.float64(p) for p in params), 20_000)
    assert stats.kstest(draws, dist.law(params).cdf).pvalue > 1e-6


@pytest.mark.parametrize("law", [stats.laplace(scale=2.0), stats.laplace(loc=-1.5, scale=0.3),
                                 stats.expon(scale=3.0), stats.expon(scale=0.1), stats.norm(1.0, 2.0)],
                         ids=["lap", "lap-shifted", "exp", "exp-narrow", "normal"])
def test_the_closed_form_tails_are_scipys(law):
    t = tails(law)
    m = t.median
    x = np.concatenate([np.linspace(-60, 60, 2001), [m, np.inf, -np.inf]])
    assert m == pytest.approx(law.median())
    np.testing.assert_allclose(t.tail(x), np.where(x <= m, law.cdf(x), law.sf(x)), rtol=1e-12, atol=1e-300)


def test_mass_is_accurate_in_both_tails():
    law = tails(stats.laplace(scale=2.0))
    # far right: sf differences, where cdf(b) - cdf(a) would cancel to 0
    assert mass(law, 80.0, 90.0) == pytest.approx(0.5 * (math.exp(-40) - math.exp(-45)), rel=1e-12)
    assert mass(law, -90.0, -80.0) == pytest.approx(0.5 * (math.exp(-40) - math.exp(-45)), rel=1e-12)
    assert mass(law, -1.0, 3.0) == pytest.approx(law.law.cdf(3.0) - law.law.cdf(-1.0), rel=1e-14)
    assert mass(law, 3.0, -1.0) == 0.0


# --------------------------------------------------------------------------------------------- the brackets


def _svt_path(q: list[float], answers: str, b_rho: float, b_nu: float) -> tuple[list[Constraint], dict]:
    """A Sparse-Vector path: q[i] + nu_i >= rho (TOP) or < rho (BOT), threshold 0."""
    decider = _Never()
    rho = Linear.draw(("rho", None), decider)
    cons, draws = [], {("rho", None): _lap(b_rho)}
    for i, (qi, a) in enumerate(zip(q, answers)):
        nu = Linear.draw(("nu", i), decider)
        draws[("nu", i)] = _lap(b_nu)
        form = nu + qi - rho
        cons.append(Constraint(form if a == "T" else -form))
    return cons, draws


def _svt_quadrature(q: list[float], answers: str, b_rho: float, b_nu: float) -> float:
    rho, nu = stats.laplace(scale=b_rho), stats.laplace(scale=b_nu)

    def f(x: float) -> float:
        p = rho.pdf(x)
        for qi, a in zip(q, answers):
            p *= nu.sf(x - qi) if a == "T" else nu.cdf(x - qi)
        return p

    return integrate.quad(f, -np.inf, np.inf, epsabs=0, epsrel=1e-12, limit=500)[0]


@pytest.mark.parametrize("q, answers, b_rho, b_nu", [
    ([0.0, 1.0, 0.0], "BBT", 2.0, 4.0),
    ([1.0, 1.0, 1.0, 1.0, 1.0, 0.0], "BBBBBT", 40.0, 13.3),
    ([0.0] * 5 + [1.0] * 5, "BBBBBTTTTT", 20.0, 20.0),
    ([3.0, -2.0, 0.5], "TBT", 1.0, 0.5),
])
def test_a_star_bracket_contains_the_quadrature(q, answers, b_rho, b_nu):
    cons, draws = _svt_path(q, answers, b_rho, b_nu)
    truth = _svt_quadrature(q, answers, b_rho, b_nu)
    coarse = Integrator(1 << 11).probability(cons, draws)
    fine = Integrator(1 << 11, 1 << 16).probability(cons, draws)
    for bracket, width in ((coarse, 0.25), (fine, 2e-3)):  # the coarse pass only ranks events
        assert bracket.lower <= truth <= bracket.upper
        assert bracket.upper - bracket.lower <= width * truth  # and it is narrow


def test_a_family_gives_what_each_threshold_gives_alone():
    """Thresholds computed at once (a column of constants) equal the same events one at a time."""
    from align.exact.integrate import Family

    cons, draws = _svt_path([0.0, 1.0, 0.0], "BBT", 2.0, 4.0)
    value = Linear.draw(("nu", 2), _Never()) + 0.0
    ts = np.array([-3.0, 0.0, 2.5, 7.0])
    integ = Integrator(1 << 11)
    together = integ.probability(cons, draws, Family(value, ts, True))
    for j, t in enumerate(ts):
        alone = Integrator(1 << 11).probability(cons + [Constraint(t - value)], draws)
        assert together.at(j).lower == pytest.approx(alone.lower, rel=1e-12)
        assert together.at(j).upper == pytest.approx(alone.upper, rel=1e-12)


def test_report_noisy_max_value_matches_its_closed_form():
    """noisy_max_value_laplace's header: q = (0, 0, 0), q' = (1, 1, 1), the event {j = 0, v < 0} has probability
    exactly 1/24 on D and e^(-3 eps/2)/24 on D' (eps = 1: Lap(2))."""
    mech = _mech("incorrect/noisy_max_value_laplace.dp")
    for q, truth in (([0.0] * 3, 1 / 24), ([1.0] * 3, math.exp(-1.5) / 24)):
        found = paths(mech, prepare_arguments(mech, {"eps": 1.0, "q": q}))
        event = [p for p in found if p.out[0][0] == 0]
        assert len(found) == 3 and len(event) == 1
        (path,) = event
        value = path.out[0][1]
        b = Integrator(1 << 11, 1 << 16).probability(path.constraints + (Constraint(0.0 - value),), path.draws)
        assert b.lower <= truth <= b.upper and b.upper - b.lower < 1e-4 * truth


def test_chen_svt_matches_its_quadrature():
    """svt_chen_no_cutoff's header: T = 0, eps = 1, m = 3, q = (0^3, 1^3) vs (1^3, 0^3), BOT^3 TOP^3:
    0.02060 on D, 0.001966 on D' (loss 2.35), by quadrature."""
    mech = _mech("incorrect/svt_chen_no_cutoff.dp")
    bot, top = Tag("BOT"), Tag("TOP")
    got = []
    for q in ([0.0] * 3 + [1.0] * 3, [1.0] * 3 + [0.0] * 3):
        found = paths(mech, prepare_arguments(mech, {"T": 0.0, "eps": 1.0, "q": q}))
        assert len(found) == 64
        (path,) = [p for p in found if p.out == (bot, bot, bot, top, top, top)]
        got.append(Integrator(1 << 11, 1 << 16).probability(path.constraints, path.draws))
    assert got[0].lower <= 0.020605 and got[0].upper >= 0.020595
    assert got[1].lower <= 0.0019665 and got[1].upper >= 0.0019655
    assert math.log(got[0].lower / got[1].upper) == pytest.approx(2.35, abs=0.01)


def test_bad_adaptive_svt_matches_its_quadrature():
    """adaptive_svt_checkdp_top_branch_noisy_query's header: NN = 1, T = 0, eps = 1, q = (1^7) vs (2^7), the event
    "BOT x 6 then TOP2(v), v <= 18.5": 4.15e-5 on D and 1.07e-5 on D' by quadrature."""
    from align.exact.search import _side

    mech = _mech("incorrect/adaptive_svt_checkdp_top_branch_noisy_query.dp")
    event = Event((Tag("BOT"),) * 6 + (Tag("TOP2", (Slot(0),)),), 0, 18.5, True)
    got = []
    for q in ([1.0] * 7, [2.0] * 7):
        side, _ = _side(mech, prepare_arguments(mech, {"T": 0.0, "NN": 1, "eps": 1.0, "q": q}))
        got.append(side.probability(event, Integrator(1 << 11, 1 << 16)))
    assert got[0].lower <= 4.155e-5 and got[0].upper >= 4.145e-5
    assert got[1].lower <= 1.075e-5 and got[1].upper >= 1.065e-5


# ------------------------------------------------------------------------------- against the interpreter


def _sampled_shape(value, slots: list):
    if isinstance(value, float):
        slots.append(value)
        return Slot(len(slots) - 1)
    if isinstance(value, Tag):
        return Tag(value.name, tuple(_sampled_shape(x, slots) for x in value.payload))
    if isinstance(value, (tuple, list)):
        return tuple(_sampled_shape(x, slots) for x in value)
    return value


CROSS = [
    ("dworkroth/above_threshold.dp", {"T": 0.5, "eps": 1.0}, [0.0, 1.0, 0.0]),
    ("dworkroth/numeric_sparse.dp", None, [0.0, 1.0, 0.0, 2.0]),
    ("incorrect/svt_roth_noisy_value.dp", {"T": 0.0, "c": 1, "eps": 1.0}, [0.0, 1.0, 0.0]),
    ("incorrect/svt_lee_clifton.dp", {"T": 0.0, "c": 2, "eps": 1.0}, [1.0, 0.0, 1.0]),
    ("incorrect/noisy_max_value_laplace.dp", {"eps": 1.0}, [0.0, 1.0, 0.5]),
    ("freegap/alg2_svt_gap.dp", None, [0.0, 2.0, 0.0, 1.0]),
    ("freegap/noisy_min.dp", None, [0.0, 1.0, 0.5]),
]


# The fast tier keeps noisy min (a fraction of a second); the SVT variants take seconds each.
@pytest.mark.parametrize("rel, public, q", [
    pytest.param(*c, id=c[0], marks=() if c[0] == "freegap/noisy_min.dp" else pytest.mark.slow) for c in CROSS])
def test_brackets_agree_with_the_interpreters_samples(rel, public, q):
    """Every output shape's bracket, and "shape, first noisy value <= its median", against 200,000 runs of the
    reference interpreter on the same input (seed 0)."""
    mech = _mech(rel)
    args = prepare_arguments(mech, {**(public or example_arguments(mech.node)), "q": q})
    n = 200_000
    outputs = sample(mech, args, n, 0)
    counts: dict = {}
    values: dict = {}
    for i in range(n):
        slots: list = []
        key = tuple(_sampled_shape(x, slots) for x in outputs.value(i))
        counts[key] = counts.get(key, 0) + 1
        if slots:
            values.setdefault(key, []).append(slots[0])
    from align.exact.search import _side

    side, _ = _side(mech, args)
    assert set(counts) <= set(side.groups)  # every sampled output is a path's
    fine = Integrator(1 << 11, 1 << 14)
    checked = 0
    for key in side.groups:
        b = side.probability(Event(key), fine)
        c = counts.get(key, 0)
        sigma = math.sqrt(n * b.upper * (1 - b.lower)) + 1
        assert n * b.lower - 5 * sigma <= c <= n * b.upper + 5 * sigma, (key, c, b)
        if key in values and len(values[key]) > 200:
            t = float(np.median(values[key]))
            below = sum(1 for v in values[key] if v <= t)
            b = side.probability(Event(key, 0, t, True), fine)
            sigma = math.sqrt(n * b.upper * (1 - b.lower)) + 1
            assert n * b.lower - 5 * sigma <= below <= n * b.upper + 5 * sigma, (key, t, below, b)
        checked += 1
    assert checked >= 3


# ------------------------------------------------------------------------------------------- the corpus


def _expect_proved(path: Path) -> bool:
    return any(e.kind == "proved" for e in read_expectations(read_source(str(path))))


CORRECT = sorted(p for p in corpus() if p.parent.name != "incorrect" and _expect_proved(p))


@pytest.mark.slow
@pytest.mark.parametrize("path", CORRECT, ids=[f"{p.parent.name}/{p.stem}" for p in CORRECT])
def test_no_correct_spec_is_reported_broken(path):
    """Every correct corpus spec in the exact class, at length 3 (or its example's length, where `requires` needs
    longer lists) with its example's public values: the strongest
    bound stays below the claim (a bound at or above it would be a false alarm with no level to blame)."""
    from align.diagnostics import SpecError

    mech = load_mechanism(str(path))
    try:
        try:
            result = compute(mech, example_arguments(mech.node), length=3)
        except SpecError as error:  # `requires` may need the example's longer lists
            if error.diagnostics[0].code != "no-input-pair":
                raise
            result = compute(mech, example_arguments(mech.node), length=example_length(mech.node))
    except SpecError as error:
        assert error.diagnostics[0].code == "exact-outside"
        return
    assert not result.violation
    assert result.strongest is None or result.strongest.epsilon < result.claimed_epsilon


PUBLISHED = [
    # (spec, public values, length, least bound): the true losses are Lyu, Su & Li's (PVLDB 2017), at these sizes
    ("svt_lee_clifton", {"T": 0.0, "c": 1, "eps": 1.0}, 10, 1.74),  # (1 + 6c)/4 eps = 1.75
    ("noisy_max_value_laplace", {"eps": 1.0}, 5, 2.49),  # n eps / 2 = 2.5
    ("svt_chen_no_cutoff", {"T": 0.0, "eps": 1.0}, 6, 2.3),
    ("svt_roth_noisy_value", {"T": 0.0, "c": 1, "eps": 1.0}, 6, 2.4),
    ("adaptive_svt_checkdp_top_branch_noisy_query", None, 7, 1.6),  # the sampling search misses it
]


@pytest.mark.slow
@pytest.mark.parametrize("spec, public, length, least", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_published_violations_are_computed(spec, public, length, least):
    mech = _mech(f"incorrect/{spec}.dp")
    result = compute(mech, public or example_arguments(mech.node), length=length)
    assert result.violation and result.strongest is not None and result.strongest.epsilon >= least


def test_an_output_no_path_of_the_neighbour_gives_is_infinite():
    mech = _mech("incorrect/svt_stoddard_no_query_noise.dp")
    result = compute(mech, {"T": 0.5, "eps": 1.0}, length=3)
    assert result.strongest is not None and result.strongest.epsilon == math.inf
    assert result.strongest.p_prime.upper == 0.0


def test_a_one_sided_relation_is_tested_one_way():
    """one_sided_histogram is private for its one direction; the other direction's loss is infinite."""
    assert not compute(_mech("counting/one_sided_histogram.dp"), {"eps": 1.0}, length=3).violation
    assert compute(_mech("incorrect/one_sided_histogram_wrong_side.dp"), {"eps": 1.0}, length=3).violation


# ------------------------------------------------------------------------------------------ the command


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_the_command_reports_a_computed_violation():
    code, out, _ = _run("test", "--exact", str(SPECS / "incorrect/svt_lee_clifton.dp"))
    assert code == 1
    assert "privacy violation: eps >= 1.746 >= claimed 1" in out
    assert "event:  out = [BOT, BOT, BOT, BOT, BOT, TOP]" in out
    code, out, _ = _run("test", "--exact", "--output-format", "json", str(SPECS / "incorrect/svt_lee_clifton.dp"))
    doc = json.loads(out)
    assert code == 1 and doc["mode"] == "exact" and doc["violation"] is True
    s = doc["strongest"]
    assert s["p"][0] <= s["p"][1] and s["p_prime"][0] <= s["p_prime"][1]
    assert s["epsilon_lower_bound"] == pytest.approx(math.log(s["p"][0] / s["p_prime"][1]))


@pytest.mark.slow
def test_the_command_finds_no_violation_in_above_threshold():
    code, out, _ = _run("test", "--exact", str(SPECS / "dworkroth/above_threshold.dp"), "--length", "4")
    assert code == 0 and "no violation" in out and "this is not a proof" in out


@pytest.mark.parametrize("rel, fragment, statement", [
    ("incorrect/geometric_counting_queries.dp", "DLap noise", "~ DLap"),
    ("incorrect/noisy_max_running_value_checkdp.dp", "conditions that chain draws", "if q[i] + eta > bq"),
    ("r2dp/gamma.dp", "a division by a value that depends on the noise", "~ Lap(1 / u)"),
])
def test_a_program_outside_the_class_gets_a_located_diagnostic(rel, fragment, statement):
    """At the statement that leaves the class: the draw, the division, or the comparison whose condition the
    integration cannot follow (not the mechanism's name)."""
    path = str(SPECS / rel)
    code, out, err = _run("test", "--exact", path)
    assert code == 2 and out == ""
    assert "exact-outside" in err and fragment in err
    assert err.startswith(path + ":")  # path:line:col
    line = int(err.split(":")[1])
    assert statement in (SPECS / rel).read_text().splitlines()[line - 1]


def test_too_many_paths_is_outside():
    mech = _mech("incorrect/svt_chen_no_cutoff.dp")
    from align.exact.paths import Outside

    with pytest.raises(Outside, match="more than 64 paths"):
        paths(mech, prepare_arguments(mech, {"T": 0.0, "eps": 1.0, "q": [0.0] * 7}), limit=64)


def test_sampling_options_do_not_mix_with_exact():
    code, _, err = _run("test", "--exact", "--sharpen", str(SPECS / "incorrect/svt_lee_clifton.dp"))
    assert code == 2 and "--exact computes instead of sampling" in err


def test_shape_numbers_noisy_values_in_output_order():
    d = _Never()
    x, y = Linear.draw(("x", None), d), Linear.draw(("y", None), d)
    slots: list = []
    assert shape((Tag("TOP", (x + 1.0,)), 3, (y, 2.5)), slots) == (Tag("TOP", (Slot(0),)), 3, (Slot(1), 2.5))
    assert [s.terms for s in slots] == [{("x", None): 1.0}, {("y", None): 1.0}]


def test_brackets_are_ordered_and_add():
    a, b = Bracket(0.1, 0.2), Bracket(0.3, 0.5)
    assert (a + b).lower == pytest.approx(0.4) and (a * b).upper == pytest.approx(0.1)


def test_a_form_equals_itself_and_differs_from_other_noise():
    d = _Never()
    x, y = Linear.draw(("x", None), d), Linear.draw(("y", None), d)
    assert x == x + 0.0 and operator.ne(x, x) is False and (x + 1.0) - 1.0 == x
    assert operator.eq(x, y) is False and x != y and operator.eq(x, 0.0) is False and x != 1.0


def test_an_equality_test_on_the_same_noise_takes_its_true_branch(tmp_path):
    """`if v == nu` with v = nu is true on every run (the interpreter's semantics); a path that takes the false
    branch would give an output no run gives, and a loss of infinity against a neighbour."""
    spec = tmp_path / "same.dp"
    spec.write_text("""mechanism same(x: real, eps: real)
  adjacent |x - x'| <= 1
  requires eps > 0
  privacy eps
{
  nu ~ Lap(1 / eps)
  v = nu
  if v == nu {
    output x + nu
  } else {
    output 0
  }
}
""")
    mech = load_mechanism(str(spec))
    found = paths(mech, prepare_arguments(mech, {"x": 0.0, "eps": 1.0}))
    assert len(found) == 1 and isinstance(found[0].out[0], Linear)
    result = compute(mech, {"eps": 1.0}, length=1)
    assert not result.violation and result.strongest is not None and result.strongest.epsilon <= 1.0


@pytest.mark.slow
def test_the_library_call_is_the_command():
    import align

    report = align.compute(SPECS / "incorrect/svt_lee_clifton.dp", {"T": 0, "c": 1, "eps": 1.0}, length=6)
    assert report.violation and report.exit_code == 1
    assert report.result.strongest is not None and report.result.strongest.epsilon > 1.5
    assert "privacy violation: eps >=" in jupyter.markdown(report)
    tested = align.test(SPECS / "dworkroth/above_threshold.dp", {"T": 0.5, "eps": 1.0}, length=3, samples=4000)
    assert not tested.violation and tested.computed is not None and not tested.computed.violation


def test_a_value_on_many_draws_leaves_out_only_its_thresholds():
    """Partial sums release values on three draws or more: their threshold events cannot be integrated, so they are
    left out, and the shapes and the one-draw values are still computed."""
    result = compute(_mech("counting/partial_sums.dp"), {"eps": 1.0}, length=4)
    assert not result.violation and result.findings
    assert {f.event.slot for f in result.findings} == {None, 0, 1}  # the first two partial sums: one and two draws
    broken = compute(_mech("incorrect/noise_per_record.dp"), {"eps": 1.0}, length=2,
                     extra_pairs=checker_pairs(_mech("incorrect/noise_per_record.dp")))  # q = [] vs [r]
    assert broken.violation and broken.strongest is not None and broken.strongest.epsilon == math.inf


DATA = Path(__file__).resolve().parent / "data" / "exact"


def test_a_strict_comparison_of_a_form_with_itself_is_false():
    """`nu > nu` is false on every run (the interpreter's semantics): the program is the Laplace mechanism. Taking
    it as `>=` gave the shape `out = [q]` probability 1 and an infinite loss (found by an adversarial search)."""
    d = _Never()
    x = Linear.draw(("x", None), d)
    assert (x > x) is False and (x < x) is False and (x >= x) is True and (x + 1.0 > x) is True
    code, out, _ = _run("test", "--exact", str(DATA / "gt_self.dp"))
    assert code == 0 and "no violation" in out


@pytest.mark.parametrize("w, t", [(1e-13, 3.0), (1e-10, 1.7), (3e-11, 3.0), (1e-12, 3.0)])
def test_a_thin_interval_far_out_does_not_raise_a_false_alarm(w, t):
    """Whether q + Lap(1/eps) falls in [T, T + w] is post-processing of the Laplace mechanism (true loss exactly
    eps for T above both inputs). For tiny w the two tails cancel and the rounding of T + w moves the interval
    by a share of its width: without the tails' accuracy and the rounding of the ends in the brackets, the bound
    came out 1.002 > 1 (found by an adversarial search)."""
    result = compute(load_mechanism(str(DATA / "thin_band.dp")), {"T": t, "w": w, "eps": 1.0}, length=1)
    assert not result.violation


def test_thin_intervals_still_give_their_loss_where_it_is_resolved():
    """The widening is relative to the magnitudes (2^-40): a band 10^-3 wide at T = 3 keeps a bound within 10^-3
    of the true loss eps = 1 and below it."""
    result = compute(load_mechanism(str(DATA / "thin_band.dp")), {"T": 3.0, "w": 1e-3, "eps": 1.0}, length=1)
    assert result.strongest is not None and 0.999 <= result.strongest.epsilon < 1.0
