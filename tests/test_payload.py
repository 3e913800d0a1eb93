"""`payload(v, TAG, d)` (docs/language.md, section 7): the payload of v if it carries TAG, else d — the same in
both interpreters, lane by lane in the vectorised one, and in the checker (the corpus spec that reads it in its
alignment is proved, and refuted when the levels are swapped)."""

from __future__ import annotations

from pathlib import Path

from align.checker.verify import overall_status, verify_mechanism
from align.interp.runner import prepare_arguments, sample
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.span import Source
from align.status import Status

from .test_interp_semantics import both, mechanism

SPEC = Path(__file__).resolve().parent.parent / "specs" / "freegap" / "alg1_adaptive_svt_gap_tuples.dp"


def test_the_payload_or_the_default_in_both_interpreters():
    mech = mechanism("t = a > 0 ? TOP(a, 2.5) : BOT\n"
                     "output (payload(t, TOP, (0, 0.0)), payload(t, TOP, (-1, 0.0))[0])", "a: int")
    assert both(mech, {"a": 3}) == [((3, 2.5), 3)]
    assert both(mech, {"a": -1}) == [((0, 0.0), -1)]
    single = mechanism("t = a > 0 ? MID(a) : BOT\noutput payload(t, MID, 7)", "a: int")
    assert both(single, {"a": 5}) == [5] and both(single, {"a": 0}) == [7]


def test_each_lane_reads_its_own_tag():
    mech = mechanism("eta ~ Lap(1)\nt = eta > 0 ? TOP(1) : MID(2)\n"
                     "output (eta > 0, payload(t, TOP, -1), payload(t, MID, -5))")
    out = sample(mech, prepare_arguments(mech, {}), 400, seed=3)
    values = [out.value(i)[0] for i in range(400)]  # each run outputs one tuple
    assert {v[0] for v in values} == {True, False}
    assert all(v[1:] == ((1, -5) if v[0] else (-1, 2)) for v in values)


def test_the_checker_reads_the_payload_the_alignment_names():
    mech = resolve(parse_source(read_source(str(SPEC)))).mechanisms[0]
    assert overall_status(verify_mechanism(mech)) == Status.PROVED
    text = read_source(str(SPEC)).text
    swapped = text.replace("[1] == 2 ? 1 + q", "[1] == 1 ? 1 + q", 1)
    assert swapped != text
    wrong = resolve(parse_source(Source(str(SPEC), swapped))).mechanisms[0]
    assert overall_status(verify_mechanism(wrong)) == Status.REFUTED
