"""Fixed entries (align/checker/entries.py): a program without a loop that reads its lists only at fixed positions,
and not their length, is proved for every length by the bounded check of the short lengths; each hypothesis is
checked, and each guard spec stays bounded."""

from __future__ import annotations

import pytest

from align.checker import entries
from align.checker.verify import Options, overall_scope, overall_status, strategy_context, verify_mechanism
from align.pipeline import load_mechanism, load_text

from .conftest import SPECS


def _mech(body: str, header: str = "adjacent |q[i] - q'[i]| <= 1\n  requires eps > 0, len(q) >= 3",
          alignment: str = "eta' = eta + q[0] - q'[0]"):
    text = (f"mechanism m(q: real[], k: int, eps: real)\n  {header}\n  privacy eps\n{{\n  {body}\n}}\n\n"
            f"alignment m {{\n  {alignment}\n}}\n")
    return load_text(text).mechanisms[0]


def test_a_program_reading_fixed_entries_is_proved_for_every_length():
    mech = load_mechanism(str(SPECS / "dworkroth" / "laplace_first_two.dp"))
    assert entries.covering_length(mech) == 2
    verdicts = verify_mechanism(mech, Options(max_length=3))
    assert overall_status(verdicts) == "proved" and overall_scope(verdicts) == "for every input length"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert any("fixed entries: the program reads only the first 2 entries" in note for note in c4c.notes), c4c.notes


def test_the_covering_length_is_the_longest_entry_read_or_the_shortest_length_required():
    assert entries.covering_length(_mech("eta ~ Lap(1 / eps)\n  output q[0] + eta")) == 3  # len(q) >= 3
    assert entries.covering_length(_mech("eta ~ Lap(1 / eps)\n  output q[0] + eta",
                                         "adjacent |q[i] - q'[i]| <= 1\n  requires eps > 0, 4 < len(q)")) == 5
    assert entries.covering_length(_mech("eta ~ Lap(1 / eps)\n  output q[0] + q[6] + eta",
                                         alignment="eta' = eta + q[0] - q'[0] + q[6] - q'[6]")) == 7


@pytest.mark.parametrize("body,header,alignment,reason", [
    ("eta ~ Lap(1 / eps)\n  output q[k] + eta", None, "eta' = eta + q[k] - q'[k]", "reads `q` other than at a fixed"),
    ("eta ~ Lap(1 / eps)\n  output q[0] + eta", "adjacent |q[i] - q'[i]| <= 1\n  requires eps > 0, len(q) != 4",
     None, "reads `q` other than at a fixed entry"),
    ("eta ~ Lap(len(q) / eps)\n  output q[0] + eta", None, None, "reads `q` other than at a fixed entry"),
    ("eta ~ Lap(1 / eps)\n  output len(q) + eta", "adjacent len(q') = len(q) ± 1\n  requires eps > 0", None,
     "changes more than a prefix"),
    ("eta ~ Lap(1 / eps)\n  for i in 0 .. 2 { output q[0] + eta }", None, None, "the program has a loop"),
    # the adjacency bound is read like the program (found by an adversarial search: a bound len(q) was proved
    # from length 1 alone)
    ("eta ~ Lap(1 / eps)\n  output q[0] + eta", "adjacent |q[i] - q'[i]| <= len(q)\n  requires eps > 0, len(q) >= 1",
     None, "reads `q` other than at a fixed entry"),
])
def test_each_hypothesis_is_checked(body, header, alignment, reason):
    kwargs = {k: v for k, v in (("header", header), ("alignment", alignment)) if v is not None}
    with pytest.raises(entries.NotFixed, match=reason):
        entries.covering_length(_mech(body, **kwargs))


def _reading(position: int, shortest: int):
    return load_text(f"mechanism m(q: real[], eps: real)\n  adjacent |q[i] - q'[i]| <= 1\n  requires eps > 0, "
                     f"len(q) >= {shortest}\n  privacy eps\n{{\n  eta ~ Lap(1 / eps)\n  output q[{position}] + eta\n}}"
                     f"\n\nalignment m {{\n  eta' = eta + q[{position}] - q'[{position}]\n}}\n").mechanisms[0]


def test_the_proof_checks_the_lengths_it_needs_whatever_max_length_is():
    """The bounded check runs to the covering length t, past `--max-length` if need be; beyond entries.LONGEST it
    declines, and the verdict is the bounded one."""
    verdicts = verify_mechanism(_reading(5, 6), Options(max_length=2))
    assert overall_status(verdicts) == "proved" and overall_scope(verdicts) == "for every input length"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert any("first 6 entries" in note and "every length <= 6 checked" in note for note in c4c.notes)
    far = _reading(entries.LONGEST, entries.LONGEST + 1)
    with pytest.raises(entries.NotFixed, match="too many input shapes"):
        entries.prove(far, strategy_context(Options()))
    verdicts = verify_mechanism(far, Options(max_length=3))
    assert overall_status(verdicts) != "proved"
    assert any("too many input shapes" in note for v in verdicts for note in v.notes)


def test_an_obligation_that_fails_at_a_short_length_is_not_proved():
    text = load_text("mechanism m(q: real[], eps: real)\n  adjacent |q[i] - q'[i]| <= 1\n  requires eps > 0, "
                     "len(q) >= 2\n  privacy eps / 2\n{\n  eta ~ Lap(1 / eps)\n  output q[1] + eta\n}\n\n"
                     "alignment m {\n  eta' = eta + q[1] - q'[1]\n}\n").mechanisms[0]
    result = entries.prove(text, strategy_context(Options()))
    failed = {key[0].value for key, reason in result.proved.items() if reason is not None}
    assert failed == {"C4c"}
    verdicts = verify_mechanism(text, Options(max_length=3))
    assert overall_status(verdicts) == "refuted"


@pytest.mark.parametrize("name,line,status", [("fixed_entries_sum_of_every_entry.dp", 18, "bounded"),
                                              ("fixed_entries_scale_reads_length.dp", 16, "bounded"),
                                              ("fixed_entries_adjacency_reads_length.dp", 13, "refuted")])
def test_the_guards_are_not_proved_and_say_why(name, line, status):
    mech = load_mechanism(str(SPECS / "incorrect" / name))
    verdicts = verify_mechanism(mech, Options(max_length=3))
    assert overall_status(verdicts) == status
    notes = [note for v in verdicts for note in v.notes]
    assert any(f"fixed entries: line {line} reads `q` other than at a fixed entry" in note for note in notes), notes
