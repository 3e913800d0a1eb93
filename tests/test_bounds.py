"""checker/bounds.py: loop bounds read through names the parameters fix are written out before the proofs for every
length (issue 37: `n = len(q); for i in 0 .. n` is the same loop as `for i in 0 .. len(q)`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import align
from align import nodes as n
from align.checker.bounds import inline_bounds
from align.parse import parse_source
from align.resolve import resolve, walk_statements
from align.span import Source
from align.status import Status
from align.unparse import unparse

from .conftest import ROOT

HEADER = """mechanism m(q: real[], eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
{
"""


def _mech(body: str):
    return resolve(parse_source(Source("<bounds>", HEADER + body + "}\n"))).mechanisms[0]


def _bounds(body: str) -> list[str] | None:
    rewritten = inline_bounds(_mech(body))
    if rewritten is None:
        return None
    return [f"{unparse(s.lo)} .. {unparse(s.hi)}" for s in walk_statements(rewritten.mechanism.body)
            if isinstance(s, n.For)]


@pytest.mark.parametrize(("body", "expected"), [
    # a parameter-derived constant
    ("  n = len(q)\n  for i in 0 .. n { output q[i] }\n", ["0 .. len(q)"]),
    # through another constant
    ("  n = len(q)\n  m = n - 1\n  for i in 0 .. m + 1 { output q[i] }\n", ["0 .. len(q) - 1 + 1"]),
    # assigned before a nested loop, the same expression every time
    ("  for i in 0 .. len(q) {\n    n = len(q)\n    for l in 0 .. n { output l }\n  }\n",
     ["0 .. len(q)", "0 .. len(q)"]),
    # assigned only under a branch: the loop may start with n unassigned (the interpreter stops), not written out
    ("  if eps > 1 { n = len(q) }\n  for j in 0 .. n { output 1 }\n", None),
    # assigned two different values
    ("  n = len(q)\n  for i in 0 .. n { output 1 }\n  n = 2\n", None),
    # assigned from noise
    ("  eta ~ Lap(1 / eps)\n  n = len(q) + eta\n  for i in 0 .. 3 { output n }\n", None),
])
def test_which_bounds_are_written_out(body: str, expected: list[str] | None):
    assert _bounds(body) == expected


def test_a_bound_named_before_its_loop_is_proved_for_every_length(tmp_path: Path):
    text = (ROOT / "specs" / "dworkroth" / "above_threshold.dp").read_text()
    assert "for i in 0 .. len(q) {" in text
    path = tmp_path / "named_bound.dp"
    path.write_text(text.replace("for i in 0 .. len(q) {", "n = len(q)\n  for i in 0 .. n {", 1))
    verdict = align.verify(str(path))
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict
    notes = [note for v in verdict.verdicts for note in v.notes]
    assert any("loop bounds read through" in note for note in notes), notes
