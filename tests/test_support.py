"""Proved support mismatches (align/stats/support.py): z3 proves P[M(D') in E] = 0 exactly where the specs'
headers say so, and never for an event that a sample of the interpreter falls in (soundness against the
reference semantics, over every spec with an `example` clause)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from align.expectations import read_expectations
from align.interp.runner import prepare_arguments, sample
from align.interp.values import example_arguments, example_length
from align.parse import parse_source, read_source
from align.pipeline import load_mechanism
from align.resolve import resolve
from align.stats.events import Event, Layout
from align.stats.lrtest import input_pairs, search, valid_pairs
from align.stats.support import check_event, check_events, impossible

from .conftest import SAMPLE, corpus, corpus_params

ROOT = Path(__file__).resolve().parent.parent


def _runnable(path: Path) -> bool:
    """Specs that run on their example values: every expected-proved, bounded or violating one (the others with
    an `example` clause show a mechanism the interpreter refuses there: a negative scale, eps1 = 0, no
    neighbour)."""
    kinds = {e.kind for e in read_expectations(read_source(str(path)))}
    return bool(load_mechanism(str(path)).node.examples) and bool(kinds & {"proved", "bounded", "violation"})


SPECS = sorted(p for p in corpus() if _runnable(p))


def _mech(path: Path):
    spec = resolve(parse_source(read_source(str(path))))
    return spec.mechanisms[0]


def _key_event(mech, tags: list[str]) -> Event:
    names = mech.tags
    return Event(key=(len(tags), *[names.index(t) for t in tags]), text=str(tags), positions=len(tags))


def test_stoddard_bot_then_top_is_impossible_when_the_answers_decrease():
    # the spec's header: q' = (1, 0) cannot give BOT then TOP (it needs 1 < T + rho <= 0)
    mech = _mech(ROOT / "specs/incorrect/svt_stoddard_no_query_noise.dp")
    event = _key_event(mech, ["BOT", "TOP"])
    d_prime = prepare_arguments(mech, {"q": [1.0, 0.0], "T": 0.5, "eps": 1.0})
    d = prepare_arguments(mech, {"q": [0.0, 1.0], "T": 0.5, "eps": 1.0})
    assert impossible(mech, d_prime, event)
    assert impossible(mech, d, event) is None  # 0 < T + rho <= 1: probability > 0
    # equal answers are always answered alike
    same = prepare_arguments(mech, {"q": [0.0, 0.0], "T": 0.5, "eps": 1.0})
    assert impossible(mech, same, _key_event(mech, ["TOP", "BOT"]))
    assert impossible(mech, same, _key_event(mech, ["TOP", "TOP"])) is None


def test_exp_noise_keeps_the_noisy_maximum_above_every_answer():
    # the spec's header: v >= q_j, so v < 1 is impossible on q' = (1, 1) and possible on q = (0, 0)
    mech = _mech(ROOT / "specs/incorrect/noisy_max_value_exp.dp")
    out = sample(mech, prepare_arguments(mech, {"q": [0.0, 0.0], "eps": 0.5}), 10, np.random.SeedSequence(0))
    layout = Layout.of(out, 1)
    value = layout.real_names.index("out[0][1]")
    below = Event(real=value, threshold=0.999999, below=True, text="out[0][1] <= 0.999999", positions=1)
    assert impossible(mech, prepare_arguments(mech, {"q": [1.0, 1.0], "eps": 0.5}), below)
    assert impossible(mech, prepare_arguments(mech, {"q": [0.0, 0.0], "eps": 0.5}), below) is None
    # v <= 1 on (1, 1) needs eta_0 = eta_1 = 0, a tie of probability 0: also proved (ties are excluded)
    at_one = Event(real=value, threshold=1.0, below=True, text="out[0][1] <= 1", positions=1)
    assert impossible(mech, prepare_arguments(mech, {"q": [1.0, 1.0], "eps": 0.5}), at_one)
    higher = Event(real=value, threshold=1.5, below=True, text="out[0][1] <= 1.5", positions=1)
    assert impossible(mech, prepare_arguments(mech, {"q": [1.0, 1.0], "eps": 0.5}), higher) is None
    above = Event(real=value, threshold=1.0, below=False, text="out[0][1] > 1", positions=1)
    assert impossible(mech, prepare_arguments(mech, {"q": [1.0, 1.0], "eps": 0.5}), above) is None


def test_events_checked_together_are_answered_as_one_at_a_time():
    """`check_events` encodes the run once for all its events (its enclosure of exp and ln keeps what it worked out
    of each term): every answer is the one `check_event` gives alone, impossible or possible, in any order."""
    mech = _mech(ROOT / "specs/incorrect/noisy_max_value_exp.dp")
    out = sample(mech, prepare_arguments(mech, {"q": [0.0, 0.0], "eps": 0.5}), 10, np.random.SeedSequence(0))
    value = Layout.of(out, 1).real_names.index("out[0][1]")
    events = [Event(real=value, threshold=t, below=below, text=f"{t} {below}", positions=1)
              for t, below in ((0.999999, True), (1.0, True), (1.5, True), (1.0, False), (0.5, False))]
    args = prepare_arguments(mech, {"q": [1.0, 1.0], "eps": 0.5})
    alone = [check_event(mech, args, e) for e in events]
    assert [status for status, _ in alone] == ["impossible", "impossible", "possible", "possible", "possible"]
    assert check_events(mech, args, events) == alone
    assert check_events(mech, args, events[::-1]) == alone[::-1]
    geo = _mech(ROOT / "specs/freegap/alg3_adaptive_svt_gap_geo.dp")  # exp(...) in its constants: enclosed
    public = example_arguments(geo.node)
    args = prepare_arguments(geo, {**public, "q": [0, 1, 2]})
    outputs = sample(geo, args, 20, np.random.SeedSequence(1))
    held = [e for e, _ in _events_holding(geo, outputs, max(1, outputs.positions), np.random.default_rng(3), 2)]
    assert check_events(geo, args, held) == [check_event(geo, args, e) for e in held]


def test_full_support_noise_is_never_proved_impossible():
    mech = _mech(ROOT / "specs/incorrect/histogram_lap_eps.dp")
    args = prepare_arguments(mech, {"q": [0.0, 0.0], "eps": 0.5})
    out = sample(mech, args, 10, np.random.SeedSequence(0))
    layout = Layout.of(out, 2)
    for col in range(len(layout.real_names)):
        for below in (True, False):
            event = Event(real=col, threshold=-1e6 if below else 1e6, below=below, positions=2)
            assert impossible(mech, args, event) is None


def _events_holding(mech, outputs, positions: int, rng: np.random.Generator, count: int) -> list[tuple[Event, int]]:
    """Events that contain a given sample: its whole discrete output, one discrete entry, and thresholds just
    on its side of each real column (with a relative margin of 1e-6, so that float rounding cannot move it out),
    alone and together with its discrete output."""
    layout = Layout.of(outputs, positions)
    keys, reals = layout.keys(outputs), layout.reals(outputs)
    events = []
    for i in rng.choice(outputs.n, size=min(count, outputs.n), replace=False):
        key = tuple(int(x) for x in keys[i])
        events.append((Event(key=key, positions=positions), i))
        col = int(rng.integers(keys.shape[1]))
        events.append((Event(entry=col, value=key[col], positions=positions), i))
        for r in range(reals.shape[1]):
            x = reals[i, r]
            if np.isnan(x):
                continue
            below = bool(rng.integers(2))
            margin = 1e-6 * (1 + abs(x))
            t = x + margin if below else x - margin
            events.append((Event(key=key if rng.integers(2) else None, real=r, threshold=float(t), below=below,
                                 positions=positions), i))
            events.append((Event(key=key if rng.integers(2) else None, real=r, threshold=float(x + margin),
                                 lower=float(x - margin), positions=positions), i))  # a bin around it
    # every event really holds the sample it was built from
    for e, i in events:
        assert e.contains(keys[i:i + 1], reals[i:i + 1])[0]
    return events


# The fast tier: the sample but the histogram (its events take seconds to decide).
@pytest.mark.parametrize("path", corpus_params(SPECS, ids=lambda p: f"{p.parent.name}/{p.stem}",
                                               sample=SAMPLE - {"dworkroth/histogram.dp"}))
def test_an_event_a_sample_falls_in_is_never_proved_impossible(path):
    mech = _mech(path)
    public = example_arguments(mech.node)
    # lengths up to 4 keep z3's queries small; a spec whose `requires` needs longer lists takes its own length
    pairs = valid_pairs(mech, public, input_pairs(mech, public, min(example_length(mech.node), 4))) or \
        valid_pairs(mech, public, input_pairs(mech, public, example_length(mech.node)))
    rng = np.random.default_rng(20261129)
    checked = 0
    for pair in (pairs[0], pairs[-1]):
        args = prepare_arguments(mech, {**public, **pair.d_prime})
        outputs = sample(mech, args, 300, np.random.SeedSequence([7, checked]))
        positions = max(1, outputs.positions)
        events = [event for event, _ in _events_holding(mech, outputs, positions, rng, 4)]
        # one encoding of the run for all of them (`check_events`); the first alone, as `check_event` asks it
        answers = [check_event(mech, args, events[0]), *check_events(mech, args, events[1:])]
        for event, (status, detail) in zip(events, answers):
            assert status != "impossible", f"{path.name}: {event} holds a sample of {args}"
            # z3 answers (a witness noise), so the test checks the encoding, not an early exit
            assert status == "possible", f"{path.name}: {status}: {detail}"
            checked += 1
    assert checked >= 8


@pytest.mark.slow
def test_search_marks_the_stoddard_witness_infinite():
    path = ROOT / "specs/incorrect/svt_stoddard_no_query_noise.dp"
    result = search(load_mechanism(str(path), "svt_stoddard_no_query_noise"), {"T": 0.5, "eps": 1}, length=5, seed=0)
    s = result.strongest
    assert result.violation and s.epsilon_bound == float("inf") and s.c2 == 0 and s.impossible
    assert np.isfinite(s.epsilon_lower_bound)  # the sampling bound stays what it was
    from align.stats.plot import bounds_per_pair

    assert float("inf") in [b for _, b in bounds_per_pair(result)]  # drawn as "inf (proved)"
    # and a correct spec never gets one (its events all have positive probability on both inputs)
    path = ROOT / "specs/dworkroth/above_threshold.dp"
    correct = search(load_mechanism(str(path), "above_threshold"),
                     {"T": 1, "eps": 1}, length=5, samples=2000, seed=0)
    assert all(f.epsilon_bound < float("inf") for f in correct.findings)
