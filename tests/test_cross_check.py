"""The ranking strategy, a fast path, cross-checked against the general engine (issue 37).

`ranking.py` proves mechanisms that release `argmax`/`argmin` of a list with a quantified encoding of the ranking
(milliseconds). The same mechanism written as one pass that keeps the best value and its index (as CheckDP and
ShadowDP write noisy max; bench/rewrites.py's `argmax-running`) is a loop for the general engine — the product
program, its invariant searched by Houdini and Spacer, the outputs after the loop as a prophecy, the whole-run
folds of the alignment as ghosts (induction.py) — once the normal form that hands such a loop back to the ranking
(`running.rank`) is left out. For every spec of the corpus and of specs/peers/ that expects `proved`, has a ranking
that variant rewrites and is not declined by the ranking (add/remove-one-record neighbours are the records'
strategy's), both must prove the same obligations for every length.
"""

from __future__ import annotations

import pytest

from align.checker import induction, ranking, running
from align.checker.options import Options
from align.checker.strategies import Engines, prove_for_every_length
from align.checker.verify import strategy_context
from align.expectations import read_expectations
from align.parse import Source, parse_source, read_source
from align.resolve import resolve
from align.smt import terms as zt

from .conftest import ROOT, load_bench

rewrites = load_bench("rewrites.py")


def _ranked_specs() -> list[str]:
    found = []
    for p in sorted((ROOT / "specs").rglob("*.dp")):
        if "incorrect" in p.parts:
            continue
        relative = str(p.relative_to(ROOT))
        text = p.read_text()
        if ("argmax(" not in text and "argmin(" not in text) or \
                not any(e.kind == "proved" for e in read_expectations(read_source(relative))):
            continue
        mech = resolve(parse_source(read_source(relative))).mechanisms[0]
        fast_path = next(s for s in Engines().strategies if s.name == ranking.NAME)
        if fast_path.declines(mech) is None and rewrites.argmax_running(rewrites.load_subject(relative)) is not None:
            found.append(relative)
    return found


RANKED = _ranked_specs()


def _proved(mech, engines: Engines) -> dict[str, bool]:
    """Each obligation (by id and site) and whether the proof for every length holds it."""
    with zt.fresh_context():
        result, reasons = prove_for_every_length(mech, strategy_context(Options()), engines)
    assert result is not None, reasons
    return {f"{key[0].value} {key[1] or ''}".strip(): why is None for key, why in result.proved.items()}


def test_the_cross_check_covers_the_rankings_of_the_corpus_and_the_peers():
    assert {"specs/freegap/noisy_max.dp", "specs/freegap/noisy_min.dp", "specs/dworkroth/noisy_max_counting_add.dp",
            "specs/dworkroth/noisy_max_counting_remove.dp", "specs/peers/statdp_noisy_max_v1a.dp",
            "specs/peers/statdp_noisy_max_v2a.dp"} <= set(RANKED)


@pytest.mark.slow
@pytest.mark.parametrize("relative", RANKED)
def test_the_ranking_and_the_general_engine_prove_the_same(relative: str):
    written = resolve(parse_source(read_source(relative))).mechanisms[0]
    fast = _proved(written, Engines().only(ranking.NAME))
    variant = rewrites.argmax_running(rewrites.load_subject(relative))
    one_pass = resolve(parse_source(Source("one_pass.dp", rewrites.unparse_spec(variant.spec)))).mechanisms[0]
    general = _proved(one_pass, Engines().only(induction.NAME, without=(running.rank,)))
    assert all(fast.values()), fast
    assert general == fast
