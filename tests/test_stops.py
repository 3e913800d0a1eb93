"""Runtime errors of the body that private data or noise may decide (checker/stops.py): C4a is unknown there, with the
place named; errors that only a set of probability 0 of noise causes, or that public values decide alike on both
neighbours, leave the proof as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

import align
from align.checker.options import Options
from align.checker.stops import hazards
from align.checker.verify import verify_mechanism
from align.obligations import ObligationId
from align.pipeline import load_text
from align.status import Status

from .test_adjacency import STUDENT_HISTOGRAM

TEMPLATE = """mechanism m({private}, k: int, eps: real)
  adjacent {adjacent}
  requires eps > 0, k >= 1
  privacy eps
{{
  eta ~ Lap(1 / eps)
  {line}
  output eta
}}

alignment m {{
  eta' = eta
}}
"""
BODY = TEMPLATE.replace("{private}", "x: int").replace("{adjacent}", "|x - x'| <= 1")
LISTS = TEMPLATE.replace("{private}", "q: real[]")
"""The same mechanism with a private list q, its neighbours `{adjacent}`."""


def _hazards(line: str) -> list[str]:
    return [h.text for h in hazards(load_text(BODY.format(line=line)).mechanisms[0])]


@pytest.mark.parametrize("line,what", [
    ("y = 1 / x", "`1 / x` may divide by zero"),
    ("y = 7 % (x + 1)", "`7 % (x + 1)` may divide by zero"),
    ("y = ln(x)", "`ln(x)` may be outside the domain of `ln`"),
    ("y = clamp(0, eps, x)", "`clamp(0, eps, x)` may have lo > hi"),
    ("z = x\n  y = 2 ^ (z - 1)", "may be outside the domain of `^`"),
    ("if x > 0 { z = 1 }\n  y = z", "`z` may have no value here"),
    ("for i in 0 .. k { if x > i { z = 1 } }\n  y = z", "`z` may have no value here"),
    ("g ~ Lap(1)\n  if g > 0 { z = 1 }\n  y = z", "`z` may have no value here"),
    # found by a second adversarial search
    ("if x > 0 { z = 1 }\n  g ~ Lap(z / eps)", "`z` may have no value here"),       # in a noise parameter
    ("g ~ Lap(1 / eps + 0 * (x * 4611686018427387904))", "may leave the 64-bit range"),
    ("y = floor(x * 1.5)", "`floor(x * 1.5)` may leave the 64-bit range"),
    ("y = x // -1", "`x // -1` may leave the 64-bit range"),
    ("y = -x", "`-x` may leave the 64-bit range"),
    ("w = 2\n  if k > 3 { w = 0.5 }\n  y = w * x", "`w * x` may leave the 64-bit range"),  # 2 * x in integers
    ("if x > 0 { L[0] = 1 }\n  y = len(L)", "`L` may have no value here"),
    ("y = sum(l in 0 .. x: 1 / (l - 1))", "`1 / (l - 1)` may divide by zero"),
    # public values under a private branch: `requires` (k >= 1) does not rule out k = 1
    ("if x > 0 { y = 1 / (k - 1) }", "`1 / (k - 1)` may divide by zero, on one neighbour only: it runs under"),
    ("y = sum(l in 0 .. k if l < x: 1 / (l - 1))", "`1 / (l - 1)` may divide by zero"),
    ("for i in 0 .. 3 { if x > i { y = sqrt(k - 2) } }", "`sqrt(k - 2)` may be outside the domain of `sqrt`"),
    ("if x > 0 { y = 1 / (1 - exp(eps - eps)) }", "`1 / (1 - exp(eps - eps))` may divide by zero"),
    # integers past 64 bits by `+`, `-`, `abs` and `sum`, which the interpreter stops on as on `*`
    ("y = x + 1", "`x + 1` may leave the 64-bit range"),
    ("y = 0 - x", "`0 - x` may leave the 64-bit range"),
    ("y = abs(x)", "`abs(x)` may leave the 64-bit range"),       # |-2^63|
    ("y = sum(l in 0 .. 2: x)", "may leave the 64-bit range of integers (a partial sum)"),
    ("c = 0\n  for i in 0 .. 3 { c = c + x }\n  y = c", "`c + x` may leave the 64-bit range"),
    ("c = x\n  for i in 0 .. 3 { c = c + 1 }", "`c + 1` may leave the 64-bit range"),  # a count from x
    ("y = (x + 1) + eta", "`x + 1` may leave the 64-bit range"),   # before the noise is added
    ("y = sum(l in 0 .. 3: l < x ? x : 0)", "(a partial sum)"),
])
def test_a_stop_that_private_data_or_noise_decides_is_found(line: str, what: str):
    found = _hazards(line)
    assert found and what in found[0], found


@pytest.mark.parametrize("line", [
    "y = 1 / k",                      # public: both neighbours stop alike, or neither
    "y = 1 / eta",                    # 0 with probability 0 (a density)
    "g ~ Gamma(2, 1)\n  y = ln(g)",   # its support is (0, inf)
    "z = 0\n  if x > 0 { z = 1 }\n  y = z",
    "if x > 0 { z = 1 } else { z = 2 }\n  y = z",
    "if k > 1 { z = 1 }\n  y = z",    # a public branch
    "u ~ Uniform(0, 1)\n  y = ln(u)",   # its support is [0, 1], and 0 has probability 0
    "y = 1 / (1 + abs(x / 2))",      # (x / 2: a double; abs of an int may overflow)
    "y = ln(1 + exp(x))",
    "y = sqrt(abs(x / 2) + 1.5)",
    "y = (x / 2 + 1) ^ 2",
    "if x > 0 { if k > 1 { y = 1 / (k - 1) } }",   # public, under a private branch, where the public one holds
    "g ~ Geo(0.5)\n  y = 1 / (g + 1)",
    "for i in 0 .. k { L[i] = 1 }\n  if x > 0 { L[0] = 2 }\n  y = len(L)",  # L exists wherever the loop ran
    "if x > 0 { y = 1 / k }",          # requires k >= 1
    "if x > 0 { y = ln(eps) + sqrt(k - 1) }",
    "for i in 0 .. k { if x > i { y = 1 / (i + 1) } }",  # i >= 0 in its loop
    # a constant of Free Gap Algorithm 3 (geometric), inlined in its loop by bench/rewrites.py: exp(-eps) < 1
    "if x > 0 { y = 1 / (1 - exp(-(eps / k))) }",
    # integers that stay within 64 bits whatever the inputs: counts and lengths (at most 10^5 loop iterations in
    # all, and fewer than 2^40 entries in a list), a clamp between numbers, loop indices
    "c = 0\n  for i in 0 .. k { if x > i { c = c + 1 } }\n  y = c * 2 - 7",
    "h = [0, 0, 0]\n  for i in 0 .. k { h[clamp(x, 0, 2)] = h[clamp(x, 0, 2)] + 1 }\n  y = h[0] + h[1]",
    "y = clamp(x, -5, 5) + 3 * clamp(x, 0, 9)",
    "y = count(l in 0 .. 5: l < x) + 1",
    "for i in 0 .. k { if x > i { y = i + 1 } }",
    "y = x + 0.5",                     # a double: no integer overflow
    "g ~ Geo(0.5)\n  y = x + g",       # noise flows into the sum (docs/checker.md: not found yet)
    "y = sum(l in 0 .. 3: l < x ? x / 2 : 0)",   # an integer only where it is 0 (bench/rewrites.py's clipped sum)
])
def test_what_cannot_stop_on_one_neighbour_alone_is_not(line: str):
    assert _hazards(line) == []


REPLACE = "|q[i] - q'[i]| <= 1"
RECORDS = "len(q') = len(q) \u00b1 1"


def _list_hazards(line: str, adjacent: str = REPLACE) -> list[str]:
    return [h.text for h in hazards(load_text(LISTS.format(line=line, adjacent=adjacent)).mechanisms[0])]


@pytest.mark.parametrize("line,adjacent", [
    ("j = q[0] > 0 ? 3 : 0\n  y = q[j]", REPLACE),                    # the index: specs/incorrect/runtime_error_*
    ("y = q[0]", RECORDS),                                               # a private length: q = [] on one side
    ("y = q[len(q) - 1]", RECORDS),
    ("for i in 0 .. len(q) { if q[i] > 0 { L[i] = 1 } }\n  y = L[0]", REPLACE),  # written on some paths only
    ("L[0] = 1\n  if q[0] > 0 { L[1] = 2 }\n  y = L[1]", REPLACE),
    ("for i in 0 .. len(q) { L[i] = 1 }\n  y = L[0]", RECORDS),          # filled to a private length
    ("L = top_k(q, k)\n  if q[0] > 0 { L[k] = 0 }\n  y = L[k]", REPLACE),  # past its k entries
    ("for i in 0 .. k { if q[0] + eta > i { L[i] = 1 } else { M[i] = 1 } }\n  y = L[0]", REPLACE),
    # found by an adversarial search (2026-12-07): reads that run on one side only, lists made in the expression
    ("if q[0] > 0 { y = q[3] }", REPLACE),
    ("y = q[0] > 0 ? q[3] : 0", REPLACE),
    ("b = q[0] > 0 and q[3] > 0", REPLACE),
    ("for i in 0 .. len(q) { y = [1, 2, 3][3] }", RECORDS),              # the loop runs on one side only
    ("if q[0] > 0 { L = [1] } else { L = [1, 2, 3] }\n  y = L[2]", REPLACE),
    ("L = [1, 2, 3]\n  if q[0] > 0 { L = [1] }\n  y = L[2]", REPLACE),
    ("j = q[0] > 0 ? 3 : 0\n  y = [1, 2, 3][j]", REPLACE),
    ("y = (q[0] > 0 ? [1] : [1, 2, 3])[2]", REPLACE),
    ("j = q[0] > 0 ? 3 : 0\n  y = top_k(q, 3)[j]", REPLACE),
    # a fill loop that also writes past its bound: not k entries
    ("for i in 0 .. k { L[i] = 1\n  L[i + 1] = 2 }\n  j = q[0] > 0 ? k : 0\n  y = L[j]", REPLACE),
    ("L = [1, 2, 3]\n  for i in 0 .. len(L) { if q[0] > 0 { L = [1] }\n  y = L[i] }", REPLACE),  # made shorter
    # a branch's condition is a fact only where it holds, and only while what it reads keeps its value
    ("for i in 0 .. len(q) { if i >= 1 { y = 0 } else { y = q[i - 1] } }", RECORDS),
    ("for i in 0 .. len(q) { b = i >= 1 or q[i - 1] > 0 }", RECORDS),
    ("for i in 0 .. len(q) { if q[0] > 0 or i >= 2 { y = q[i - 2] } }", RECORDS),
    ("if len(q) > 3 or k > 2 { y = q[2] }", RECORDS),
    ("L = [1]\n  if q[0] > 0 { if len(L) >= 1 { L = [0]\n  y = L[1] } }", REPLACE),
    ("j = 1\n  if q[0] > 0 { if j >= 1 { j = 0 - 5\n  y = q[j] } }", REPLACE),
    # found by a third adversarial search (2026-12-07): sizes and ranges that a loop's body makes stale
    ("L = [0, 0]\n  for i in len(L) .. len(q) { L[len(L)] = 0\n  if q[0] > 0 { y = q[i - 3] } }", REPLACE),
    ("L = [0, 0, 0, 0, 0]\n  for i in 0 .. len(L) { L = [0]\n  if q[0] > 0 { y = q[i] } }", REPLACE),
    ("L = [0]\n  for i in 0 .. k { if q[0] > 0 { y = q[len(L)] }\n  L[len(L)] = 0 }", REPLACE),
    ("A = [0, 0, 0]\n  B = [0, 0]\n  C = [0]\n  for i in 0 .. k { if q[0] > 0 { y = A[1] }\n  T = A\n  A = B\n  B = C\n"
     "  C = T }", REPLACE),
    ("A = [0, 0, 0]\n  B = [0]\n  for i in 0 .. k { T = A\n  A = B\n  B = T }\n  if q[0] > 0 { y = A[2] }", REPLACE),
    ("L = [0]\n  for i in 0 .. k { if len(L) == 3 and q[0] > 0 { y = q[i + 1] }\n  L[len(L)] = 0 }", REPLACE),
    # a clamp or a remainder that may still reach past the end
    ("j = q[0] > 0 ? 5 : 0 - 3\n  y = q[clamp(j, 0, len(q))]", REPLACE),
    ("j = q[0] > 0 ? 5 : 0 - 3\n  y = q[j % (len(q) + 1)]", REPLACE),
    ("j = q[0] > 0 ? 5 : 0 - 3\n  y = q[j % (0 - len(q))]", REPLACE),       # the divisor's sign: at most 0
])
def test_a_read_past_the_end_that_private_data_or_noise_decides_is_found(line: str, adjacent: str):
    found = _list_hazards(line, adjacent)  # (a write that may leave a gap before it stops first)
    assert any("may read past the end of" in h or "may write past the end of" in h for h in found), found


@pytest.mark.parametrize("line,found", [
    ("for i in 0 .. len(q) { if q[i] > 0 { L[i] = 1 } }", True),  # L[1] after a skipped L[0]: a gap
    ("j = q[0] > 0 ? 2 : 0\n  L[j] = 1", True),
    ("L[0] = 1\n  if q[0] > 0 { L[1] = 2 }", False),                 # an append, on one side only: a length
    ("for i in 0 .. len(q) { if q[i] > 0 { L[i] = 1 } else { L[i] = 0 } }", False),
    ("L = []\n  for i in 0 .. k { L[i] = q[0]\n  if q[0] > 0 { L[i] = 2 } }", False),  # appends, overwrites
])
def test_a_write_that_may_leave_a_gap_on_one_neighbour_is_a_stop(line: str, found: bool):
    assert any("may write past the end of" in h for h in _list_hazards(line)) == found


@pytest.mark.parametrize("line,adjacent", [
    ("y = q[0]", REPLACE),                                               # public: both stop alike, or neither
    ("y = sum(l in 0 .. len(q): q[l])", RECORDS),                        # its own range
    ("y = sum(l in 0 .. min(len(q), 2): q[l])", RECORDS),
    ("y = sum(l in 1 .. len(q) - 1: q[l])", RECORDS),
    ("for i in 0 .. len(q) { L[i] = q[i] + eta }\n  for i in 0 .. len(q) { if L[i] > 0 { L[i] = 0 } }\n"
     "  y = sum(l in 0 .. len(q): L[l])", REPLACE),                     # filled, then overwritten in place
    ("for i in 0 .. len(q) { L[i] = q[i] + eta }\n  j = argmax(L)\n  y = L[j]", REPLACE),  # an index of L
    ("j = argmax(l in 0 .. len(q): q[l] + eta)\n  y = q[j]", REPLACE),
    ("L = top_k(q, k)\n  for i in 0 .. k { j = L[i]\n  y = q[j] }", REPLACE),  # k entries, each an index of q
    ("for i in 0 .. len(q) { if q[i] > 0 { L[i] = 1 } else { L[i] = 0 } }\n  y = L[0]", REPLACE),  # both branches
    ("L = [1, 2, 3]\n  j = q[0] > 0 ? 1 : 0\n  y = L[j]", REPLACE),  # either way inside
    # filled from 1, then read after a private break (bench/rewrites.py's loop-offset of AboveThreshold)
    ("for i in 1 .. len(q) + 1 { L[i - 1] = q[i - 1] + eta }\n  for j in 1 .. len(q) + 1 { if L[j - 1] > 0 { break } }",
     REPLACE),
    ("L = [1, 2, 3]\n  j = min(argmax(q), 2)\n  y = L[j]", REPLACE),
    # the branch's condition holds where the read runs (a difference of consecutive entries)
    ("for i in 0 .. len(q) { if i >= 1 { y = q[i] - q[i - 1] } }", RECORDS),
    ("for i in 0 .. len(q) { if i < 1 { y = 0 } else { y = q[i - 1] } }", RECORDS),
    ("for i in 0 .. len(q) { y = i >= 1 ? q[i - 1] : 0 }", RECORDS),
    ("for i in 0 .. len(q) { b = i >= 1 and q[i - 1] > 0 }", RECORDS),
    ("for i in 0 .. len(q) { b = i < 1 or q[i - 1] > 0 }", RECORDS),
    ("for i in 0 .. len(q) { if q[i] + eta > 0 and i >= 2 { y = q[i - 2] } }", RECORDS),
    ("for i in 0 .. len(q) { if not (q[i] > 0 or i < 2) { y = q[i - 2] } }", RECORDS),
    ("if len(q) >= 3 { y = q[2] }", RECORDS),
    ("y = sum(j in 0 .. len(q) if j >= 1: q[j - 1])", RECORDS),       # a comprehension's filter
    ("j = q[0] > 0 ? 5 : 0 - 3\n  y = q[clamp(j, 0, len(q) - 1)]", REPLACE),  # clamped into the list
    ("j = q[0] > 0 ? 5 : 0 - 3\n  y = q[j % len(q)]", REPLACE),               # a remainder of its length
])
def test_a_read_that_cannot_fail_on_one_neighbour_alone_is_not_a_stop(line: str, adjacent: str):
    assert _list_hazards(line, adjacent) == []


@pytest.mark.parametrize("line,adjacent,found", [
    ("t = top_k(q, k)", RECORDS, True),                             # q has k - 1 entries on one neighbour
    ("if q[0] > 0 { t = top_k(q, 2) }", REPLACE, True),             # it runs on one neighbour only
    ("j = q[0] > 0 ? 5 : 1\n  t = top_k(q, j)", REPLACE, True),     # private data decides k
    ("if len(q) >= k { t = top_k_with_gaps(q, k) }", RECORDS, True),  # the gaps need k + 1 entries
    ("t = top_k(q, k)", REPLACE, False),                            # public: both stop alike, or neither
    ("if len(q) >= k { t = top_k(q, k) }", RECORDS, False),
    ("if len(q) > k { t = top_k_with_gaps(q, k) }", RECORDS, False),
    ("j = q[0] > 0 ? 2 : 1\n  t = top_k([1, 2, 3], j)", REPLACE, False),
    ("t = top_k(q, 0)", RECORDS, False),
])
def test_a_top_k_over_too_few_entries_on_one_neighbour_is_a_stop(line: str, adjacent: str, found: bool):
    assert any("may have too few entries to rank" in h for h in _list_hazards(line, adjacent)) == found


@pytest.mark.parametrize("line,adjacent,found", [
    ("y = max(q)", RECORDS, True),                                  # q = [] on one neighbour
    ("y = argmax(l in 0 .. len(q): q[l])", RECORDS, True),
    ("y = min(l in 0 .. len(q) - 1: q[l])", RECORDS, True),
    ("y = max(l in 0 .. k if q[0] > l: l)", REPLACE, True),         # the filter decides
    ("y = max(q)", REPLACE, False),                                 # a public length: both stop alike, or neither
    ("y = max(l in 0 .. k: q[0] + l)", REPLACE, False),
    ("y = sum(l in 0 .. len(q): q[l])", RECORDS, False),            # a sum of nothing is 0
])
def test_an_extremum_over_entries_that_private_data_counts_is_a_stop(line: str, adjacent: str, found: bool):
    assert any("may be over no entries" in h for h in _list_hazards(line, adjacent)) == found


@pytest.mark.parametrize("line,found", [
    # a private length as the operand: in its domain where the enclosing loops and branches say so
    ("for i in 0 .. len(q) { y = q[i] / len(q) }", False),     # len(q) >= 1 in a loop over it
    ("for i in 1 .. len(q) { y = 1 / (len(q) - 1) }", False),
    ("if len(q) > 2 { y = sqrt(len(q) - 3) + ln(len(q) - 2) }", False),
    ("y = len(q) >= 1 ? 7 % len(q) : 0", False),
    ("y = 1 / len(q)", True),                                   # q = [] on one neighbour
    ("for i in 0 .. len(q) { y = 1 / (len(q) - 1) }", True),     # one entry
    ("if len(q) > 2 { y = sqrt(len(q) - 4) }", True),
    ("for i in 0 .. len(q) { y = ln(len(q) - i - 1) }", True),   # 0 at the last i
    ("n = len(q)\n  for i in 0 .. n { if i == 0 { n = 0 } }\n  y = 1 / n", True),
])
def test_an_operand_that_private_data_decides_is_in_its_domain_where_the_facts_prove_it(line: str, found: bool):
    assert bool(_list_hazards(line, RECORDS)) == found, _list_hazards(line, RECORDS)


@pytest.mark.parametrize("line,found", [
    # a histogram as a student writes it: the bin a variable of the loop's body, clamped into the list
    ("h = [0, 0, 0]\n  for i in 0 .. k { j = clamp(x, 0, 2)\n  h[j] = h[j] + 1 }\n  y = h[0] + h[1]", False),
    ("h = [0, 0, 0]\n  j = 0\n  for i in 0 .. k { h[j] = h[j] + 1\n  j = clamp(x, 0, 2) }\n  y = h[0]", False),
    ("h = [0, 0, 0]\n  j = 5\n  for i in 0 .. k { h[j] = h[j] + 1\n  j = clamp(x, 0, 2) }\n  y = h[0]", True),
    ("h = [0, 0, 0]\n  for i in 0 .. k { j = clamp(x, 0, 3)\n  h[j] = h[j] + 1 }\n  y = h[0]", True),  # appends
    ("h = [0, 0, 0]\n  for i in 0 .. k { j = clamp(x, 0, 2)\n  if x > 1 { j = j + 1 }\n  h[j] = 1 }\n  y = h[0]",
     True),
])
def test_an_index_variable_the_loop_assigns_keeps_the_list_length_when_each_value_is_inside(line: str, found: bool):
    assert bool(_hazards(line)) == found, _hazards(line)


def test_a_histogram_written_with_a_loop_is_checked_by_the_bounded_check():
    """The bins filled by `h[clamp(q[i], 0, 2)] + 1` in a loop: the encoder bounds the clamped index by its If's
    conditions (`encode.int_bounds`), so the write is an overwrite inside the list, and the bounded check runs
    (it said unknown: "an index that is not a number and may be past the end"); no hazard either. (For every length
    the loop folds into one count per bin: tests/test_adjacency.py.)"""
    mech = load_text(STUDENT_HISTOGRAM).mechanisms[0]
    assert hazards(mech) == []
    verdicts = verify_mechanism(mech, Options(max_length=2, bounded_only=True))
    assert {v.obligation.name: v.status for v in verdicts if v.obligation.name in ("C2", "C4a", "C4c")} == \
        {"C2": Status.BOUNDED, "C4a": Status.BOUNDED, "C4c": Status.BOUNDED}


def test_the_verdict_is_unknown_with_the_place(tmp_path: Path):
    path = tmp_path / "m.dp"
    path.write_text(BODY.format(line="y = sqrt(x)"))
    verdict = align.verify(path)
    c4a = next(v for v in verdict.verdicts if v.obligation.id == ObligationId.C4A)
    assert verdict.status == "unknown" and c4a.status is Status.UNKNOWN
    assert "`sqrt(x)` may be outside the domain of `sqrt`" in c4a.reason and "(line 7)" in c4a.reason
    path.write_text(BODY.format(line="y = sqrt(k)"))
    assert align.verify(path).status == "proved"
