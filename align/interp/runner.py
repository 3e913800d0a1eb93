"""Interpreter (runner): arguments and preconditions, chunked runs of many samples, and their summary.

A run of N samples with seed S is cut into chunks of `chunk_size` samples, rounded up to a whole number of
seeding blocks (`noise.BLOCK` = 16384 samples); the noise of sample s never depends on the chunking (see
noise.py), so the same seed gives the same samples for every chunk size. Only one chunk's arrays are alive at a
time: memory is bounded by the chunk size, not by N.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from ..adjacency import PythonOps
from ..resolve import ResolvedMechanism
from ..unparse import clause_text, unparse
from .errors import RunError, fail
from .noise import BLOCK, root_sequence
from .outputs import DiscreteKeys, Outputs
from .scalar import Interpreter
from .values import convert_arguments, format_value
from .vector import Machine, RandomSource, VectorRun, arg_tree

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

DEFAULT_CHUNK = 8 * BLOCK
"""131072 samples: an SVT over 100 queries then needs a few hundred MB at most."""


def chunk_length(chunk_size: int) -> int:
    """The chunk size actually used: a positive multiple of the seeding block."""
    return max(1, -(-max(1, chunk_size) // BLOCK)) * BLOCK


# ------------------------------------------------------------------------------------------ arguments


def prepare_arguments(mech: ResolvedMechanism, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Typed argument values for every parameter, after checking them against the `requires` clause."""
    args = convert_arguments(mech.name, mech.params, dict(raw), span=mech.node.name_span)
    check_requires(mech, args)
    return args


def check_requires(mech: ResolvedMechanism, args: Mapping[str, Any]) -> None:
    it = Interpreter(mech, trace=False)
    it.env = dict(args)
    for r in mech.requires:
        if not it.ev(r):
            raise fail("requires-violated", r.span, clause=unparse(r))
    check_domains(it, args)


def check_domains(it: Interpreter, values: Mapping[str, Any], primed: bool = False) -> None:
    """Each of `values` (the arguments, or the neighbour's values with `primed`) within its parameter's declared
    domain, whose ends the arguments in `it.env` decide."""
    for p in it.mech.params:
        if p.domain is None or p.name not in values:
            continue
        lo, hi = int(it.ev(p.domain.lo)), int(it.ev(p.domain.hi))
        value = values[p.name]
        entries = list(enumerate(value)) if isinstance(value, (list, tuple)) else [(None, value)]
        for k, v in entries:
            if not all(p.domain_facts(PythonOps(), [v], lo, hi)):
                at = f"[{k}]" if k is not None else ""
                name = p.name + ("'" if primed else "")
                raise fail("outside-domain", p.domain.span, value=f"{name}{at} = {format_value(v)}",
                           name=p.name, domain=f"{format_value(lo)} .. {format_value(hi)}")


def prepare_neighbour(mech: ResolvedMechanism, args: Mapping[str, Any], raw: Mapping[str, Any]) -> dict[str, Any]:
    """Typed neighbour values for the private parameters, checked against the adjacency clauses."""
    private = {p.name for p in mech.params if not p.public}
    neighbour = convert_arguments(mech.name, mech.params, dict(raw), option="--neighbour", only=private,
                                  span=mech.node.name_span)
    it = Interpreter(mech, trace=False)
    it.env = dict(args)
    check_domains(it, neighbour, primed=True)
    for p in mech.params:
        if p.public:
            continue
        x, y = args[p.name], neighbour[p.name]
        for adj in p.adjacency:
            text = clause_text(adj)
            bound = float(it.ev(adj.bound)) if adj.bound is not None else None
            slack = 1e-9 * (1 + abs(bound)) if bound is not None else 0.0
            problem = adj.rule.violation(PythonOps(slack), x, y, bound)
            if problem is not None:
                raise fail("not-adjacent", adj.span, clause=text,
                           detail=": " + problem.describe(p.name, format_value,
                                                             format_value(bound) if bound is not None else ""))
    return neighbour


def arg_trees(mech: ResolvedMechanism, args: Mapping[str, Any]) -> dict[str, Any]:
    return {p.name: arg_tree(args[p.name], p.type) for p in mech.params}


# --------------------------------------------------------------------------------------------- running


@dataclass
class Chunk:
    start: int
    """Number of the chunk's first sample in the run."""
    run: VectorRun
    outputs: Outputs


def run_chunk(mech: ResolvedMechanism, args: Mapping[str, Any], seed: int | np.random.SeedSequence, start: int,
              n: int) -> Chunk:
    """Samples start .. start + n - 1 of the run seeded with `seed` (start a multiple of BLOCK)."""
    machine = Machine(mech, n)
    try:
        run = machine.run(arg_trees(mech, args), RandomSource(root_sequence(seed), start, n))
    except RunError as error:
        raise error.at_sample(start + (error.lane or 0), _seed_text(seed)) from None
    return Chunk(start, run, Outputs.from_run(run.out, mech.published_type, mech.tags))


def chunks(mech: ResolvedMechanism, args: Mapping[str, Any], samples: int, seed: int | np.random.SeedSequence,
           chunk_size: int = DEFAULT_CHUNK) -> Iterator[Chunk]:
    """The run of `samples` samples, one chunk at a time."""
    size = chunk_length(chunk_size)
    root = root_sequence(seed)
    for start in range(0, samples, size):
        yield run_chunk(mech, args, root, start, min(size, samples - start))


@dataclass(frozen=True)
class Sampling:
    """`align run`'s samples, drawn chunk by chunk each time they are read (`results.SampleRun.sampler`): a
    renderer streams a million outputs without holding them."""

    mechanism: ResolvedMechanism
    args: Mapping[str, Any]
    samples: int
    seed: int
    chunk_size: int = DEFAULT_CHUNK

    def outputs(self) -> Iterator[list[Any]]:
        for chunk in chunks(self.mechanism, self.args, self.samples, self.seed, self.chunk_size):
            for i in range(chunk.outputs.n):
                yield chunk.outputs.value(i)

    def summary(self) -> Summary:
        summary = Summary.of(self.mechanism)
        for chunk in chunks(self.mechanism, self.args, self.samples, self.seed, self.chunk_size):
            summary.add(chunk.outputs)
        return summary


def sample(mech: ResolvedMechanism, args: Mapping[str, Any], samples: int, seed: int | np.random.SeedSequence,
           chunk_size: int = DEFAULT_CHUNK) -> Outputs:
    """All outputs of a run, concatenated (for runs that fit in memory; `chunks` streams them)."""
    parts = [c.outputs for c in chunks(mech, args, samples, seed, chunk_size)]
    if not parts:
        return Outputs(np.zeros(0, dtype=np.int64), None, mech.published_type, mech.tags)
    return parts[0] if len(parts) == 1 else Outputs.concatenate(parts)


def _seed_text(seed: Any) -> str:
    if isinstance(seed, np.random.SeedSequence):
        return str(seed.entropy) + (f", spawn key {tuple(seed.spawn_key)}" if seed.spawn_key else "")
    return str(seed)


# -------------------------------------------------------------------------------------------- summary


QUANTILES = (0.01, 0.25, 0.5, 0.75, 0.99)


class _SummaryOptions(TypedDict, total=False):
    """The settings `Summary.of` may pass on to the fields of that name."""

    quantile_samples: int
    max_keys: int


@dataclass
class Summary:
    """Frequencies of the discrete outputs and quantiles of the real parts, accumulated chunk by chunk.

    Discrete outputs are counted exactly over every sample, for up to `max_keys` distinct ones; samples whose
    discrete output is not among the first `max_keys` distinct ones seen are counted together as `untracked`
    (memory stays bounded however many distinct outputs a long run produces; frequent outputs appear early).
    Quantiles use the real values of the first `quantile_samples` samples only (samples are independent, so
    these are a random subsample).
    """

    keys: DiscreteKeys
    quantile_samples: int = 100_000
    max_keys: int = 100_000
    samples: int = 0
    counts: dict = field(default_factory=dict)
    """Samples per discrete output, by key (see outputs.DiscreteKeys)."""
    untracked: int = 0
    lengths: dict[int, int] = field(default_factory=dict)
    reals: dict[str, list[np.ndarray]] = field(default_factory=dict)
    real_kept: int = 0

    @classmethod
    def of(cls, mech: ResolvedMechanism, **options: Unpack[_SummaryOptions]) -> Summary:
        return cls(DiscreteKeys(mech.published_type, mech.tags), **options)

    def add(self, outputs: Outputs) -> None:
        for key, c in self.keys.count(outputs).items():
            if key in self.counts:
                self.counts[key] += c
            elif len(self.counts) < self.max_keys:
                self.counts[key] = c
            else:
                self.untracked += c
        values, lens = np.unique(outputs.length, return_counts=True)
        for v, c in zip(values, lens):
            self.lengths[int(v)] = self.lengths.get(int(v), 0) + int(c)
        take = min(outputs.n, self.quantile_samples - self.real_kept)
        if take > 0:
            part = outputs.take(np.arange(take))
            for col in part.columns():
                if col.kind == "real":
                    self.reals.setdefault(col.name, []).append(col.data[col.valid].ravel())
            self.real_kept += take
        self.samples += outputs.n

    def quantiles(self) -> dict[str, tuple[int, list[float], float]]:
        """Per real component: (count, quantiles at QUANTILES, mean), over the kept samples."""
        result = {}
        for name, parts in self.reals.items():
            values = np.concatenate(parts) if parts else np.zeros(0)
            if values.size:
                result[name] = (int(values.size), [float(x) for x in np.quantile(values, QUANTILES)],
                                float(values.mean()))
            else:
                result[name] = (0, [], float("nan"))
        return result
