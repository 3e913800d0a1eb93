"""Shared fixtures: the spec corpus, the fast tier's sample of it, and the `--update-golden` flag that
regenerates golden outputs."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Collection, Iterable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
PEERS = SPECS / "peers"
"""Other projects' benchmark programs as they write them (issue 37): a benchmark of what align proves today, kept
out of the corpus, whose expectations the corpus-wide tests hold align to; tests/test_peers.py checks them."""


def corpus() -> list[Path]:
    return sorted(p for p in SPECS.rglob("*.dp") if PEERS not in p.parents)


def peers() -> list[Path]:
    return sorted(PEERS.glob("*.dp"))


# One spec per corpus folder, each quick to check: the fast tier (`pytest -m "not slow"`) runs every corpus-wide
# test on these; the rest of the corpus is marked slow per spec (`corpus_params`), and `.ci/run` runs it all.
SAMPLE = frozenset({
    "counting/noisy_count.dp",                # add/remove neighbours, proved for every input length
    "dworkroth/histogram.dp",                 # a loop over a private list under L1 adjacency, proved
    "freegap/example2_noisy_threshold.dp",    # a discrete output (TOP/BOT) and an alignment in two pieces, proved
    "incorrect/clipped_sum_unclipped.dp",     # refuted, with a counterexample the interpreter confirms; a violation
    "r2dp/point_mass.dp",                     # the R²DP mixture rule, proved
})


def in_sample(spec: Path | str, sample: Collection[str] = SAMPLE) -> bool:
    """Whether a corpus spec (its path, or its name under specs/) is one of the fast tier's SAMPLE."""
    path = Path(spec)
    return str(path.relative_to(SPECS) if path.is_absolute() else path) in sample


def corpus_params(values: Iterable[Any], spec: Callable[[Any], Path | str] = lambda v: v,
                  ids: Callable[[Any], str] = lambda p: str(Path(p).relative_to(SPECS)),
                  sample: Collection[str] = SAMPLE) -> list[Any]:
    """The parameters of a corpus-wide test: every value, marked slow unless its spec (`spec(value)`) is in
    `sample` (SAMPLE, or a part of it where a test takes seconds on some of SAMPLE)."""
    return [pytest.param(v, id=ids(v), marks=() if in_sample(spec(v), sample) else pytest.mark.slow) for v in values]


def load_bench(relative: str) -> ModuleType:
    """Import a script under bench/ (not a package) by path, registered under its stem so that xdist workers
    and pickling find it again; its own directory goes on sys.path for its sibling imports."""
    path = ROOT / "bench" / relative
    name = path.stem
    if name in sys.modules:
        return sys.modules[name]
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected outputs of golden tests from the current behaviour")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


SYNTHESIS = pytest.mark.xdist_group("synthesis")
"""The tests that synthesise a corpus spec's alignment (`synthesised`): on one worker, each search runs once."""


@cache
def synthesised(path: Path) -> tuple[Any, Any, Any]:
    """(mechanism, source, SynthesisOutcome) of `synthesise` on a spec at its example's arguments, the spec's own
    alignment ignored: tests/test_synthesis_corpus.py runs it on the whole corpus and tests/test_synthesis.py checks
    the alignments found for a subset, one search per spec in a worker (the search is deterministic)."""
    from align.checker.synthesis import synthesise
    from align.interp.values import example_arguments
    from align.parse import parse_source, read_source
    from align.resolve import resolve

    source = read_source(str(path))
    mech = resolve(parse_source(source)).mechanisms[0]
    return mech, source, synthesise(mech, source, example_arguments(mech.node))
