"""Benchmark: the reference interpreter against the hand-written numpy implementations (mechanisms/), one process.

    python bench/interp.py [--samples N] [--chunk-size C] [--min-seconds S]

Two mechanisms on 100 queries, the same parameters for both implementations:

- SVT with Gap (specs/freegap/alg2_svt_gap.dp, `mechanisms.SVTWithGap`): q_i = i mod 10, T = 60, eps = 1,
  theta = 0.5, k = 8 (query noise Lap(32): about 9 answers above the threshold per 100 queries, so about half
  the samples halt before the end of the stream). k = 8 keeps eps1 = 1/16 a binary fraction, so the spec's
  float64 stopping rule and the implementation's exact count agree (k = 10 would be a float trap, see
  tests/test_conformance.py).
- Noisy Top-K with Gap (specs/freegap/alg4_noisy_top_k_gap.dp, `mechanisms.NoisyTopKWithGap`): the same q,
  k = 3, eps = 1.

Both produce N samples in chunks of C samples (default: the interpreter's default chunk, 131,072), so both
hold the same amount at a time: the interpreter through `runner.chunks` (outputs built, no summary), the
implementation by calling `m(q, C, rng)` per chunk. Each row is timed after a warm-up chunk; a run shorter than
--min-seconds is repeated (with fresh seeds) until it lasts that long, and the row reports every sample drawn.
Two more rows give the raw Laplace draws per second of the interpreter's sampler (`noise.draw_block_values`:
one keyed PCG64 stream per 16,384-sample block) and of numpy's own `Generator.laplace` on one stream (the
ceiling). Then the peak resident set size, after the interpreter's rows and at the end, and last
`interp/numpy throughput ratio: R`, the smaller of the two mechanisms' interpreter/numpy samples-per-second
ratios. Target: R >= 0.5.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from align.distributions import DISTRIBUTIONS
from align.interp import runner
from align.interp.noise import BLOCK, draw_block_values
from align.parse import parse_source, read_source
from align.resolve import resolve
from mechanisms import NoisyTopKWithGap, SVTWithGap

QUERIES = [float(i % 10) for i in range(100)]
SVT = {"q": QUERIES, "T": 60, "k": 8, "eps": 1, "theta": 0.5}
TOPK = {"q": QUERIES, "k": 3, "eps": 1}


def timed(run: Callable[[int], int], min_seconds: float) -> tuple[int, float]:
    """(samples, seconds) of repeated calls run(repetition) -> samples, until min_seconds have passed."""
    total, start, repetition = 0, time.perf_counter(), 0
    while True:
        total += run(repetition)
        repetition += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return total, elapsed


def interpreter(spec: str, raw: dict, samples: int, chunk: int) -> Callable[[int], int]:
    mech = resolve(parse_source(read_source(str(ROOT / "specs" / spec)))).mechanisms[0]
    args = runner.prepare_arguments(mech, raw)

    def run(repetition: int) -> int:
        done = 0
        for c in runner.chunks(mech, args, samples, np.random.SeedSequence([7, repetition]), chunk):
            done += c.outputs.n
        return done

    for _ in runner.chunks(mech, args, min(samples, chunk), np.random.SeedSequence(1), chunk):
        pass  # warm-up
    return run


def implementation(mech, q: list[float], samples: int, chunk: int) -> Callable[[int], int]:
    def run(repetition: int) -> int:
        rng = np.random.default_rng(np.random.SeedSequence([7, repetition]))
        for start in range(0, samples, chunk):
            mech.m(q, min(chunk, samples - start), rng)
        return samples

    mech.m(q, min(chunk, samples), np.random.default_rng(1))
    return run


def interpreter_draws(count: int) -> Callable[[int], int]:
    """The interpreter's Laplace sampler: `count` values of one noise site member, block by block."""
    sampler, root = DISTRIBUTIONS["Lap"], np.random.SeedSequence(11)
    count = -(-count // BLOCK) * BLOCK

    def run(repetition: int) -> int:
        draw_block_values(sampler, root, 0, repetition, 0, count, (2.0,))
        return count

    run(-1)
    return run


def numpy_draws(count: int) -> Callable[[int], int]:
    rng = np.random.default_rng(11)

    def run(repetition: int) -> int:
        rng.laplace(0.0, 2.0, count)
        return count

    run(-1)
    return run


def peak_mb() -> float:
    # ru_maxrss is in kilobytes on Linux (bytes on macOS).
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 2 ** 20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10 ** 6)
    parser.add_argument("--chunk-size", type=int, default=runner.DEFAULT_CHUNK)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    options = parser.parse_args()
    n, chunk, least = options.samples, runner.chunk_length(options.chunk_size), options.min_seconds

    def measure(mechanism: str, impl: str, run: Callable[[int], int]) -> float:
        count, seconds = timed(run, least)
        print(f"{mechanism:22} {impl:22} {count:>12,} {seconds:9.2f} {count / seconds:>14,.0f}", flush=True)
        return count / seconds

    header = f"{'mechanism':22} {'implementation':22} {'samples':>12} {'seconds':>9} {'samples/s':>14}"
    print(header)
    print("-" * len(header))
    svt_interp = measure("SVT with Gap", "interpreter", interpreter("freegap/alg2_svt_gap.dp", SVT, n, chunk))
    topk_interp = measure("Noisy Top-K with Gap", "interpreter",
                          interpreter("freegap/alg4_noisy_top_k_gap.dp", TOPK, n, chunk))
    after_interpreter = peak_mb()
    svt_numpy = measure("SVT with Gap", "numpy (mechanisms/)",
                        implementation(SVTWithGap(SVT["eps"], SVT["k"], SVT["theta"], SVT["T"]), QUERIES, n, chunk))
    topk_numpy = measure("Noisy Top-K with Gap", "numpy (mechanisms/)",
                         implementation(NoisyTopKWithGap(TOPK["eps"], TOPK["k"]), QUERIES, n, chunk))
    interp_draws = measure("Lap(2) draws (noise)", "interpreter sampler", interpreter_draws(chunk))
    ceiling = measure("Lap(2) draws (noise)", "numpy rng.laplace", numpy_draws(chunk))
    print("(noise rows: a sample is one value drawn)")
    print()
    print(f"SVT with Gap: interpreter/numpy {svt_interp / svt_numpy:.3f}; "
          f"Noisy Top-K with Gap: interpreter/numpy {topk_interp / topk_numpy:.3f}")
    print(f"noise draws: interpreter sampler / numpy rng.laplace {interp_draws / ceiling:.2f} "
          f"({1e9 / interp_draws:.1f} ns vs {1e9 / ceiling:.1f} ns per value)")
    print(f"peak resident set: {after_interpreter:.0f} MB after the interpreter rows, {peak_mb():.0f} MB at the end "
          f"(chunks of {chunk:,} samples)")
    print(f"interp/numpy throughput ratio: {min(svt_interp / svt_numpy, topk_interp / topk_numpy):.3f}")


if __name__ == "__main__":
    main()
