"""docs/tutorial.md stays true: every exercise's hole, answer, solution file and verdicts are as it states.

The conventions are the tutorial's ("How the exercises work"): each `## Exercise N: title` section has one
```dp block with one hole `???`, a line **Expect:** `VERDICT`, and in its solution a `- solution:` file, an
`- answer:` and `- wrong answer: `TEXT` gives `VERDICT`` lines. A verdict is `proved`, `bounded` (proved for
lengths <= 3 only) or `refuted C4a[, C4c...]` (exactly these obligations refuted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import align
from align.diagnostics import SpecError
from align.expectations import read_expectations
from align.results import MechanismVerdict
from align.span import Source
from align.status import Status

from .conftest import ROOT

DOC = ROOT / "docs" / "tutorial.md"
SOLUTIONS = ROOT / "docs" / "tutorial" / "solutions"
HOLE = "???"


@dataclass(frozen=True)
class Exercise:
    number: int
    title: str
    hole: str
    """The spec with the hole, as the tutorial prints it."""
    expect: str
    solution: Path
    answer: str
    wrong: tuple[tuple[str, str], ...]
    """(wrong answer, the verdict it gets)."""

    def filled(self, answer: str) -> str:
        return self.hole.replace(HOLE, answer)


def _one(pattern: str, text: str, what: str) -> str:
    found = re.findall(pattern, text, flags=re.M | re.S)
    assert len(found) == 1, f"{what}: {len(found)} matches of {pattern!r}"
    return str(found[0])


def read_exercises() -> list[Exercise]:
    parts = re.split(r"^## Exercise (\d+): (.+)$", DOC.read_text(), flags=re.M)
    result = []
    for number, title, body in zip(parts[1::3], parts[2::3], parts[3::3]):
        what = f"exercise {number}"
        result.append(Exercise(
            number=int(number), title=title,
            hole=_one(r"^```dp\n(.*?)^```$", body, what),
            expect=_one(r"^\*\*Expect:\*\* `([^`]+)`$", body, what),
            solution=ROOT / _one(r"^- solution: `([^`]+)`$", body, what),
            answer=_one(r"^- answer: `([^`]+)`$", body, what),
            wrong=tuple(re.findall(r"^- wrong answer: `([^`]+)` gives `([^`]+)`$", body, flags=re.M))))
    return result


EXERCISES = read_exercises()
IDS = [f"exercise{e.number}" for e in EXERCISES]


def assert_verdict(result: MechanismVerdict, expected: str, what: str) -> None:
    kind, _, obligations = expected.partition(" ")
    summary = {v.obligation.name: v.status.value for v in result.verdicts}
    if kind == "proved":
        assert result.status == Status.PROVED, f"{what}: {result.status}, {summary}"
    elif kind == "bounded":
        assert result.status == Status.BOUNDED, f"{what}: {result.status}, {summary}"
        assert result.scope == "for lengths <= 3", what
    elif kind == "refuted":
        refuted = {str(v.obligation.id) for v in result.verdicts if v.status == Status.REFUTED}
        assert refuted == {o.strip() for o in obligations.split(",")}, f"{what}: {summary}"
    else:
        raise AssertionError(f"{what}: unknown verdict {expected!r}")


def test_the_tutorial_has_five_to_seven_exercises_each_with_a_solution_file():
    assert 5 <= len(EXERCISES) <= 7
    assert [e.number for e in EXERCISES] == list(range(1, len(EXERCISES) + 1))
    assert {e.solution for e in EXERCISES} == set(SOLUTIONS.glob("*.dp")), "a solution file without exercise"
    assert all(e.wrong for e in EXERCISES), "every exercise names a plausible wrong answer"


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_hole_is_a_located_syntax_error(exercise: Exercise):
    assert exercise.hole.count(HOLE) == 1
    before = exercise.hole[:exercise.hole.index(HOLE)]
    line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
    with pytest.raises(SpecError) as info:
        align.check(exercise.hole)
    first = info.value.diagnostics[0]
    assert first.code == "unexpected-token"
    assert first.span is not None and (first.span.line, first.span.column) == (line, column)


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_answer_fills_the_hole_into_the_solution_file(exercise: Exercise):
    text = exercise.solution.read_text()
    header, blank, mechanism = text.partition("\n\n")
    assert blank and all(line.startswith("#") for line in header.splitlines()), "a header comment, a blank line"
    assert f"Tutorial exercise {exercise.number} (docs/tutorial.md)" in header
    assert mechanism == exercise.filled(exercise.answer)
    assert HOLE not in text


@pytest.mark.slow
@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_solution_gets_the_expected_verdict(exercise: Exercise):
    result = align.verify(exercise.solution)
    assert_verdict(result, exercise.expect, str(exercise.solution.relative_to(ROOT)))
    # The header's `# expect:` line (the corpus convention) agrees with the tutorial.
    kinds = {e.kind for e in read_expectations(Source(str(exercise.solution), exercise.solution.read_text()))}
    assert kinds in ({exercise.expect}, {"mixture-rule"}), kinds
    if kinds == {"mixture-rule"}:
        (mix,) = (v for v in result.verdicts if v.obligation.id == "MIX")
        assert mix.status == Status.PROVED and mix.scope.startswith("exactly")


@pytest.mark.slow
@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_each_wrong_answer_gets_its_verdict(exercise: Exercise):
    for answer, verdict in exercise.wrong:
        assert verdict != exercise.expect
        assert_verdict(align.verify(exercise.filled(answer)), verdict, f"exercise {exercise.number}, {answer!r}")
