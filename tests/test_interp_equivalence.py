"""The two evaluators agree: noise drawn by the vectorised evaluator, replayed sample by sample through the
scalar (reference) evaluator, gives identical outputs — for every spec of the corpus and for two specs written to
exercise the interpreter's corners (tests/interp/*.dp).

Identical means equal Python values, reals bit for bit: both evaluators do the same IEEE operations in the same
order. Each spec (and each argument set of the two test specs) runs SAMPLES samples with seed 5.
"""

from __future__ import annotations

import pytest

from align.diagnostics import SpecError
from align.interp.alignment import lane_noise
from align.interp.outputs import normalize_scalar_output
from align.interp.runner import chunks, prepare_arguments
from align.interp.scalar import Interpreter, NoiseValues
from align.parse import parse_source, read_source
from align.resolve import resolve

from .conftest import SPECS, corpus, in_sample
from .test_interp_alignment import CASES, _typed

SAMPLES = 400

ARGS: dict[str, dict] = {relative: cases[0][0] for relative, cases in CASES.items()}
ARGS.update({
    "r2dp/bernoulli.dp": {"q": 1, "p": 0.3, "b0": 1, "b1": 2, "dq": 1},
    "r2dp/ensemble.dp": {"q": 1},
    "r2dp/gamma.dp": {"q": 1, "k": 2, "theta": 0.5, "dq": 1},
    "r2dp/point_mass.dp": {"q": 1, "b0": 1, "dq": 1},
    "r2dp/trunc_gaussian.dp": {"q": 1, "mu": 1, "sigma": 0.5, "a": 0, "b": 3, "dq": 1},
    "r2dp/uniform.dp": {"q": 1, "a": 0.5, "b": 2, "dq": 1},
    "incorrect/dead_branch_sqrt_negative.dp": {"q": 1, "T": 0, "eps": 1},
    "incorrect/argmax_of_constant_noise.dp": {"q": 1, "eps": 1},
    "incorrect/vacuous_adjacency.dp": {"q": 1, "eps": 1},
    "incorrect/identity_adjacency_bound_zero.dp": {"q": 1, "eps": 1},
    "incorrect/identity_adjacency_bound_required_zero.dp": {"q": 1, "c": 0, "eps": 1},
    "incorrect/r2dp_scale_reads_data.dp": {"q": 1, "k": 1, "theta": 1, "dq": 4},
    # Lap(-1/eps) is no density: both evaluators refuse it, with the same diagnostic
    "incorrect/laplace_negative_scale.dp": {"q": 1, "eps": 1},
})
REFUSED = {"incorrect/laplace_negative_scale.dp": "invalid-distribution-parameter",
           "incorrect/svt_gap_theta_closed.dp": "division-by-zero"}  # theta = 0: Lap(1 / eps0), eps0 = 0
EXTRA = {
    "interp/stress_control.dp": [{"q": [3, 5, 5, 4, 1, 0], "k": 2, "eps": 1}, {"q": [1, 1, 1, 1], "k": 1, "eps": 0.3}],
    "interp/stress_values.dp": [{"q": [3, 5, 5, 4], "eps": 1}, {"q": [0, 0, 0, 0, 0], "eps": 2}],
    "interp/stress_tags.dp": [{"q": [1, -1, 0.5]}, {"q": [0, 0, 0, 0]}],
    "interp/stress_release.dp": [{"q": [3, 5, 5, 4, 1, 0], "k": 2, "eps": 1}, {"q": [0, 0, 0], "k": 1, "eps": 3}],
}


def _specs() -> list[tuple[str, dict]]:
    cases = [(str(p.relative_to(SPECS)), ARGS[str(p.relative_to(SPECS))]) for p in corpus()]
    for relative, arg_list in EXTRA.items():
        cases += [(f"../tests/{relative}", a) for a in arg_list]
    return cases


def test_every_corpus_spec_has_arguments():
    assert {str(p.relative_to(SPECS)) for p in corpus()} == set(ARGS)


# The fast tier replays the corpus sample, the refused densities and the specs written for the interpreter's corners.
@pytest.mark.parametrize("relative,raw", [
    pytest.param(r, raw, id=f"{r}-{k}",
                 marks=() if in_sample(r) or r in REFUSED or r.startswith("../tests/") else pytest.mark.slow)
    for k, (r, raw) in enumerate(_specs())])
def test_scalar_replay_of_vector_samples_is_identical(relative: str, raw: dict):
    path = (SPECS / relative).resolve()
    mech = resolve(parse_source(read_source(str(path)))).mechanisms[0]
    args = prepare_arguments(mech, _typed(mech, raw))
    compared = 0
    if relative in REFUSED:
        for run in (lambda: list(chunks(mech, args, SAMPLES, seed=5)),
                    lambda: Interpreter(mech, NoiseValues(mech, {"eta": 0.0}), trace=False).run(args)):
            with pytest.raises(SpecError) as info:
                run()
            assert [d.code for d in info.value.diagnostics] == [REFUSED[relative]]
        return
    for chunk in chunks(mech, args, SAMPLES, seed=5):
        for lane in range(chunk.outputs.n):
            noise = lane_noise(chunk.run, lane)
            replay = Interpreter(mech, NoiseValues(mech, noise), trace=False).run(args)
            assert normalize_scalar_output(replay.out, mech.published_type) == chunk.outputs.value(lane), (
                f"sample {lane}: noise {noise}")
            assert not replay.unused, "every value the vectorised run drew is used by the replay"
            compared += 1
    assert compared == SAMPLES
