"""Verdicts do not depend on the machine: z3's deterministic resource limit binds, never the wall clock, and
nothing in the process's history changes a model (docs/checker.md, "Limits and determinism").

The test loads every core with busy processes and checks that hard queries of the corpus — Free Gap Algorithm 5
(the largest bounded queries; here up to length 2), Algorithm 3 with geometric noise (the support query that
used to time out on a loaded machine) and a refuted spec's counterexamples — come out exactly as on a quiet
machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from align.checker.verify import Options, verify_mechanism
from align.interp.runner import prepare_arguments
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.stats.events import Event
from align.stats.support import check_event

pytestmark = pytest.mark.slow  # corpus-wide or statistical: `pytest -m "not slow"` skips it

ROOT = Path(__file__).resolve().parent.parent
SPECS = {"specs/freegap/alg5_hybrid_identity.dp": 2, "specs/freegap/alg3_adaptive_svt_gap_geo.dp": 3,
         "specs/incorrect/noisy_max_value_exp.dp": 3}
"""spec -> the bounded check's max length"""


@contextmanager
def busy_cpus() -> Iterator[None]:
    """One busy process per core (twice the cores: the test's own process competes with all of them)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 2))]
    try:
        yield
    finally:
        for p in burners:
            p.kill()
        for p in burners:
            p.wait()


def _mech(path: str):
    return resolve(parse_source(read_source(str(ROOT / path)))).mechanisms[0]


def _verdicts(path: str) -> list[tuple]:
    result = []
    for v in verify_mechanism(_mech(path), Options(max_length=SPECS[path])):
        cex = v.counterexample.to_json() if v.counterexample is not None else {}
        result.append((v.obligation.id, v.obligation.site, str(v.status), v.scope, v.reason,
                       cex.get("args"), cex.get("neighbour"), cex.get("noise")))
    return result


def _support() -> tuple[str, str]:
    """The support query of `align test` on Algorithm 3 (geometric): BOT first, at a threshold of the first
    query's gap that a sample reached."""
    mech = _mech("specs/freegap/alg3_adaptive_svt_gap_geo.dp")
    args = prepare_arguments(mech, {"q": [0, 1, 2, 1, 0], "T": 1, "k": 2, "eps": 1, "theta": 0.5})
    return check_event(mech, args, Event(key=None, real=0, threshold=2.0, below=True, positions=5))


def test_verdicts_and_counterexamples_do_not_depend_on_the_load_of_the_machine():
    quiet = {path: _verdicts(path) for path in SPECS}
    quiet_support = _support()
    with busy_cpus():
        loaded = {path: _verdicts(path) for path in SPECS}
        loaded_support = _support()
    assert loaded == quiet
    assert loaded_support == quiet_support
    assert quiet_support[0] in ("possible", "impossible"), quiet_support  # z3 decides it, within its rlimit
