"""Interpreter (alignment check): test a randomness alignment by sampling.

For each sample: draw H and run ω = M(D, H); evaluate the alignment (its lets, then the shift ψ of every value of
H that the run drew) to get φ(H) = H + ψ; run M(D', φ(H)); then check, per sample,

- C4a: the aligned run gives the same output ω (discrete parts exactly, reals up to rounding: `Outputs.agree`)
  without a runtime error and without needing a value of H that the run on D did not draw;
- C2: with equal outputs, it also draws exactly the values of H that the run on D drew;
- C4c: the cost Σ c_i·|ψ_i| over the drawn values is at most the claim evaluated at ω (relative slack 1e-9 for
  the rounding of the sum);
- C4d: every aligned value lies in its distribution's support, and shifts are whole numbers where the
  distribution needs it (Geo, DLap, Bernoulli, Staircase; up to 1e-9 relative for float arithmetic);
- C3: a distribution that is not Lipschitz (Gumbel, Normal, Uniform, ...) is shifted by 0;
- C0: every value drawn in both runs was drawn with the same parameters (the same density; relative 1e-9 for
  the rounding of the two computations).

Any failing sample is a concrete counterexample (align/counterexample.py). A sampled check finds failures that
have noticeable probability; it proves nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..counterexample import Counterexample
from ..obligations import ONE_RUN, ObligationId, close, cost_within_claim
from ..resolve import ResolvedMechanism
from .errors import RunError
from .noise import cost_coefficient, in_support, is_whole, map_cost, root_sequence
from .outputs import Outputs
from .runner import DEFAULT_CHUNK, _seed_text, arg_trees, chunk_length, run_chunk
from .trees import Num, uniform
from .values import format_value
from .vector import GivenSource, Machine, SiteRecord, VectorRun

KINDS: tuple[ObligationId, ...] = (ObligationId.C4A, ObligationId.C2, ObligationId.C4C, ObligationId.C4D,
                                   ObligationId.C3, ObligationId.C0)
"""The obligations one sample can break (`obligations.ONE_RUN`), in the order a failing sample is attributed
to them: an output that is not preserved first, then a different number of draws, the cost, the supports."""
assert set(KINDS) == set(ONE_RUN), "the sampled check tests every obligation that one run can break"


@dataclass
class SiteShift:
    record: SiteRecord
    psi: np.ndarray
    """Same shape as record.values; 0 where not drawn."""
    aligned: np.ndarray
    cost: np.ndarray
    """c·|ψ| per value (0 where not drawn; 0 for non-Lipschitz sites, which are reported as C3 instead)."""
    support_ok: np.ndarray
    whole_ok: np.ndarray
    lipschitz_ok: np.ndarray


@dataclass
class ChunkCheck:
    """The alignment check of one chunk: one boolean per sample and kind, and what is needed to explain it."""

    start: int
    run: VectorRun
    aligned_run: VectorRun
    outputs: Outputs
    aligned_outputs: Outputs
    shifts: dict[str, SiteShift]
    cost: np.ndarray
    claim: np.ndarray
    failures: dict[ObligationId, np.ndarray]
    missing: np.ndarray
    """Lanes whose aligned run needed noise that the run on D did not draw."""


def evaluate_alignment(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any],
                       run: VectorRun) -> tuple[dict[str, SiteShift], np.ndarray]:
    """φ(H) for every lane of a run on D, and the claim at each lane's output."""
    assert mech.alignment is not None, "only a mechanism with an alignment has one to check"
    n = run.n
    m = Machine(mech, n, mode="raise")
    m.env.update(arg_trees(mech, args))
    primed = arg_trees(mech, {**args, **neighbour})
    for p in mech.params:
        if not p.public:
            m.env[f"{p.name}'"] = primed[p.name]
    for c in mech.constants:
        if c in run.env:
            m.env[c] = run.env[c]
    m.env["out"] = run.out
    for name, rec in run.records.items():
        if rec.family:
            m.families[name] = rec
        else:
            m.env[name] = Num(rec.values)
            if not rec.drawn.all():
                m.undefined[name] = (~rec.drawn, "noise-not-drawn")
    with np.errstate(all="ignore"):
        for let in mech.alignment.lets:
            m.env[let.name] = m.ev(let.value, None)
        shifts = {name: _shift(mech, m, rec) for name, rec in run.records.items()}
        claim = np.broadcast_to(np.asarray(m.num(mech.claim, None), dtype=float), (n,))
    return shifts, claim


def _shift(mech: ResolvedMechanism, m: Machine, rec: SiteRecord) -> SiteShift:
    site = rec.site
    assert mech.alignment is not None, "only a mechanism with an alignment has one to check"
    shift = mech.alignment.shift_of(site.name)
    values, drawn = rec.values, rec.drawn
    psi = np.zeros(values.shape, dtype=values.dtype)
    if shift is not None:
        if not site.family:
            if drawn.any():
                psi = _merge(psi, m.num(shift.shift, drawn if not drawn.all() else None), drawn)
        else:
            index_var = shift.index_var
            assert index_var is not None, "a family's shift is written x[i]' (resolve/check.py)"
            for col in range(values.shape[1]):
                lanes = drawn[:, col]
                if not lanes.any():
                    continue
                m.env[index_var] = Num(uniform(rec.offset + col, np.int64))
                value = m.num(shift.shift, lanes if not lanes.all() else None)
                psi = psi.astype(np.result_type(psi.dtype, value.dtype), copy=False)
                psi[:, col] = np.where(lanes, value, 0)
            m.env.pop(index_var, None)
    aligned = values + psi
    dist = site.distribution
    written = rec.params[: len(site.args)]
    c = cost_coefficient(dist, written)
    moved = drawn & (psi != 0)
    if dist.masses is not None and shift is not None:
        # wherever drawn: a map that leaves b where it is may still merge another value onto it (b' = 1 at b = 1)
        cost = np.where(drawn, _map_cost(m, rec, shift.shift, shift.index_var, aligned), 0.0)
        lipschitz_ok = np.ones(values.shape, dtype=bool)
    elif c is None:
        cost = np.zeros(values.shape)
        lipschitz_ok = ~moved
    else:
        with np.errstate(all="ignore"):
            cost = np.where(moved, np.broadcast_to(c, values.shape) * np.abs(psi), 0.0)
        lipschitz_ok = np.ones(values.shape, dtype=bool)
    support_ok = ~drawn | in_support(dist, tuple(rec.params), aligned)
    whole_ok = ~drawn | is_whole(psi) if dist.integer_shifts else np.ones(values.shape, dtype=bool)
    return SiteShift(rec, psi, aligned, cost, support_ok, whole_ok, lipschitz_ok)


def _map_cost(m: Machine, rec: SiteRecord, shift: Any, index_var: str | None, aligned: np.ndarray) -> np.ndarray:
    """`noise.map_cost` per drawn value: g(v) is ψ evaluated with v for the value b (of its own member, for a
    family) and everything else as drawn."""
    masses = rec.site.distribution.masses
    assert masses is not None, "only noise with finitely many values is mapped"
    values = rec.values
    images = []
    with np.errstate(all="ignore"):
        for v, _ in masses(tuple(rec.params)):
            if not rec.family:
                saved = m.env[rec.site.name]
                m.env[rec.site.name] = Num(np.broadcast_to(np.asarray(v, dtype=values.dtype), values.shape).copy())
                images.append(np.broadcast_to(np.asarray(v) + m.num(shift, None), values.shape))
                m.env[rec.site.name] = saved
                continue
            assert index_var is not None, "a family's shift is written x[i]' (resolve/check.py)"
            columns = np.zeros(values.shape)
            member = copy.copy(rec)  # the member at `col` set to v in turn, the others as drawn
            member.values = values.copy()
            m.families[rec.site.name] = member
            for col in range(values.shape[1]):
                member.values[:, col] = np.broadcast_to(np.asarray(v), values[:, col].shape)
                m.env[index_var] = Num(uniform(rec.offset + col, np.int64))
                columns[:, col] = np.broadcast_to(np.asarray(v) + m.num(shift, None), values[:, col].shape)
                member.values[:, col] = values[:, col]
            m.families[rec.site.name] = rec
            m.env.pop(index_var, None)
            images.append(columns)
    return map_cost(rec.site.distribution, rec.params, aligned, images)


def _merge(psi: np.ndarray, value: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    value = np.broadcast_to(value, psi.shape)
    return np.where(drawn, value, 0).astype(np.result_type(psi.dtype, value.dtype), copy=False)


def _lanes(x: np.ndarray) -> np.ndarray:
    """Per lane: all over the member axis (families) or the value itself (scalar sites)."""
    return np.all(x, axis=1) if x.ndim == 2 else x


def check_chunk(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any],
                seed: int | np.random.SeedSequence, start: int, n: int,
                scale: float | None = None) -> ChunkCheck:
    mech = mech.without_release()  # the alignment keeps `out`; a release block is post-processing of it
    chunk = run_chunk(mech, args, seed, start, n)
    run = chunk.run
    try:
        shifts, claim = evaluate_alignment(mech, args, neighbour, run)
    except RunError as error:
        raise error.at_sample(start + (error.lane or 0), _seed_text(seed), "evaluating the alignment") from None
    given = {name: (s.aligned, s.record.drawn, s.record.offset) for name, s in shifts.items()}
    source = GivenSource(given, n)
    machine = Machine(mech, n, mode="collect")
    aligned_run = machine.run(arg_trees(mech, {**args, **neighbour}), source)
    outputs = chunk.outputs
    aligned_outputs = Outputs.from_run(aligned_run.out, mech.output_type, mech.tags)
    if scale is None:
        scale = magnitude(args, neighbour)
    agree = outputs.agree(aligned_outputs, scale)
    dead = aligned_run.dead if aligned_run.dead is not None else np.zeros(n, dtype=bool)
    c4a = ~agree | dead | source.missing
    same_draws = np.ones(n, dtype=bool)
    for name, rec in run.records.items():
        same_draws &= _same_drawn(rec, aligned_run.records[name])
    cost = np.zeros(n)
    for s in shifts.values():
        cost = cost + (s.cost.sum(axis=1) if s.cost.ndim == 2 else s.cost)
    with np.errstate(invalid="ignore"):
        c4c = ~cost_within_claim(cost, claim)
    c4d = np.zeros(n, dtype=bool)
    c3 = np.zeros(n, dtype=bool)
    for s in shifts.values():
        c4d |= ~_lanes(s.support_ok & s.whole_ok)
        c3 |= ~_lanes(s.lipschitz_ok)
    c0 = np.zeros(n, dtype=bool)
    for name, rec in run.records.items():
        c0 |= ~_same_params(rec, aligned_run.records[name], n)
    failures = {ObligationId.C4A: c4a, ObligationId.C2: ~c4a & ~same_draws, ObligationId.C4C: c4c,
                ObligationId.C4D: c4d, ObligationId.C3: c3, ObligationId.C0: c0}
    return ChunkCheck(start, run, aligned_run, outputs, aligned_outputs, shifts, cost, claim, failures,
                      source.missing)


def _same_params(a: SiteRecord, b: SiteRecord, n: int) -> np.ndarray:
    """Per lane: every value drawn in both runs has the same parameters in both (C0)."""
    if not a.family:
        both = a.drawn & b.drawn
        same = np.ones(n, dtype=bool)
        for pa, pb in zip(a.params, b.params):
            same &= _close(np.broadcast_to(pa, (n,)), np.broadcast_to(pb, (n,)))
        return ~both | same
    lo = max(a.offset, b.offset)
    hi = min(a.offset + a.drawn.shape[1], b.offset + b.drawn.shape[1])
    if hi <= lo:
        return np.ones(n, dtype=bool)
    ca, cb = slice(lo - a.offset, hi - a.offset), slice(lo - b.offset, hi - b.offset)
    both = a.drawn[:, ca] & b.drawn[:, cb]
    same = np.ones(both.shape, dtype=bool)
    for pa, pb in zip(a.params, b.params):
        same &= _close(np.broadcast_to(pa, (pa.shape[0], a.drawn.shape[1]))[:, ca],
                       np.broadcast_to(pb, (pb.shape[0], b.drawn.shape[1]))[:, cb])
    return (~both | same).all(axis=1)


def _close(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.asarray(close(x, y))


def _same_drawn(a: SiteRecord, b: SiteRecord) -> np.ndarray:
    if not a.family:
        return a.drawn == b.drawn
    lo = min(a.offset, b.offset)
    hi = max(a.offset + a.drawn.shape[1], b.offset + b.drawn.shape[1])

    def widen(r: SiteRecord) -> np.ndarray:
        out = np.zeros((r.drawn.shape[0], hi - lo), dtype=bool)
        out[:, r.offset - lo: r.offset - lo + r.drawn.shape[1]] = r.drawn
        return out
    return (widen(a) == widen(b)).all(axis=1)


def magnitude(args: Mapping[str, Any], neighbour: Mapping[str, Any]) -> float:
    """The largest absolute value among the numeric inputs (sets the rounding tolerance of real outputs)."""
    values: list[float] = []
    for v in list(args.values()) + list(neighbour.values()):
        for x in (v if isinstance(v, list) else [v]):
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                values.append(abs(float(x)))
    return max(values, default=0.0)


# ------------------------------------------------------------------------------------------ whole runs


@dataclass
class AlignmentReport:
    spec: str
    mechanism: str
    samples: int
    seed: Any
    failures: dict[ObligationId, int]
    failed_samples: int
    counterexamples: list[Counterexample] = field(default_factory=list)
    max_cost: float = 0.0
    max_cost_over_claim: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed_samples == 0




def check_alignment(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any], samples: int,
                    seed: int = 0, chunk_size: int = DEFAULT_CHUNK, spec: str = "",
                    examples_per_kind: int = 2) -> AlignmentReport:
    """Sample the alignment of `mech` on (D, D') = (args, neighbour), both already checked (runner.prepare_*)."""
    root = root_sequence(seed)
    scale = magnitude(args, neighbour)
    size = chunk_length(chunk_size)
    counts = dict.fromkeys(KINDS, 0)
    failed = 0
    examples: list[Counterexample] = []
    max_cost, max_ratio = 0.0, 0.0
    for start in range(0, samples, size):
        n = min(size, samples - start)
        chunk = check_chunk(mech, args, neighbour, root, start, n, scale)
        any_fail = np.zeros(n, dtype=bool)
        for kind in KINDS:
            mask = chunk.failures[kind]
            counts[kind] += int(mask.sum())
            any_fail |= mask
            have = sum(1 for c in examples if c.obligation == kind)
            for lane in np.flatnonzero(mask)[: max(0, examples_per_kind - have)]:
                examples.append(counterexample(mech, spec, kind, args, neighbour, chunk, int(lane), seed))
        failed += int(any_fail.sum())
        if n:
            max_cost = max(max_cost, float(np.max(chunk.cost)))
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(chunk.claim > 0, chunk.cost / chunk.claim, np.where(chunk.cost > 0, np.inf, 0.0))
            max_ratio = max(max_ratio, float(np.max(ratio)))
    return AlignmentReport(spec, mech.name, samples, seed if not isinstance(seed, np.random.SeedSequence)
                           else _seed_text(seed), dict(counts), failed, examples,
                           max_cost, max_ratio)


def lane_noise(run: VectorRun, lane: int) -> dict[str, Any]:
    """The noise one lane drew, in the replay format: scalars, and families as lists indexed by member."""
    noise: dict[str, Any] = {}
    for name, rec in run.records.items():
        if not rec.family:
            if rec.drawn[lane]:
                noise[name] = rec.values[lane].item()
            continue
        cols = np.flatnonzero(rec.drawn[lane])
        if not cols.size:
            continue
        members = rec.offset + cols
        if members.min() < 0:
            continue  # negative loop indices have no place in the list format
        values: list[Any] = [None] * (int(members.max()) + 1)
        for col, member in zip(cols, members):
            values[int(member)] = rec.values[lane, col].item()
        noise[name] = values
    return noise


def counterexample(mech: ResolvedMechanism, spec: str, kind: ObligationId, args: Mapping[str, Any],
                   neighbour: Mapping[str, Any], chunk: ChunkCheck, lane: int, seed: Any) -> Counterexample:
    return Counterexample(spec=spec, mechanism=mech.name, obligation=kind, args=dict(args), neighbour=dict(neighbour),
                          noise=lane_noise(chunk.run, lane), note=explain(mech, kind, chunk, lane, seed))


def explain(mech: ResolvedMechanism, kind: ObligationId, chunk: ChunkCheck, lane: int, seed: Any) -> str:
    """One sentence on why a sample fails, in the spec's own names."""
    return EXPLAIN[kind](chunk, lane, f"sample {chunk.start + lane} (seed {_seed_text(seed)})")


def _outputs(chunk: ChunkCheck, lane: int, where: str) -> str:
    if chunk.aligned_run.dead is not None and chunk.aligned_run.dead[lane]:
        error = chunk.aligned_run.errors.get(lane)
        why = error.diagnostic.message if error else "a runtime error"
        return f"{where}: the run on D' with φ(H) fails: {why}; on D the output is {chunk.outputs.text(lane)}"
    if chunk.missing[lane]:
        return (f"{where}: the run on D' with φ(H) draws noise that the run on D did not draw "
                f"(control flow differs); on D the output is {chunk.outputs.text(lane)}")
    return f"{where}: output on D {chunk.outputs.text(lane)}, on D' with φ(H) {chunk.aligned_outputs.text(lane)}"


def _draws(chunk: ChunkCheck, lane: int, where: str) -> str:
    return f"{where}: same output {chunk.outputs.text(lane)}, but the run on D' with φ(H) draws different noise"


def _cost(chunk: ChunkCheck, lane: int, where: str) -> str:
    terms = []
    for name, s in chunk.shifts.items():
        rec = s.record
        for member, col in _drawn_members(rec, lane):
            cost = s.cost[lane, col] if rec.family else s.cost[lane]
            if cost:
                psi = s.psi[lane, col] if rec.family else s.psi[lane]
                label = f"{name}[{member}]" if rec.family else name
                terms.append(f"{label}: |ψ| = {format_value(abs(psi.item()))}, cost {format_value(float(cost))}")
    shown = "; ".join(terms[:6]) + ("; ..." if len(terms) > 6 else "")
    return (f"{where}: alignment cost {format_value(float(chunk.cost[lane]))} > claim "
            f"{format_value(float(chunk.claim[lane]))} at ω = {chunk.outputs.text(lane)} ({shown})")


def _support(chunk: ChunkCheck, lane: int, where: str) -> str:
    for name, s in chunk.shifts.items():
        rec = s.record
        for member, col in _drawn_members(rec, lane):
            at = (lane, col) if rec.family else lane
            if not (s.support_ok[at] and s.whole_ok[at]):
                label = f"{name}[{member}]" if rec.family else name
                value, psi = rec.values[at].item(), s.psi[at].item()
                dist = rec.site.distribution
                text = f"{where}: {label}' = {label} + ψ = {format_value(value)} + {format_value(psi)} = " \
                       f"{format_value(value + psi)}"
                if not s.support_ok[at]:
                    return f"{text}, outside the support {dist.support} of {dist.name}"
                return f"{text}: the shift is not a whole number, which {dist.name} needs"
    return f"{where}: aligned noise outside its support"


def _density(chunk: ChunkCheck, lane: int, where: str) -> str:
    for name, rec in chunk.run.records.items():
        other = chunk.aligned_run.records[name]
        if _same_params(rec, other, chunk.run.n)[lane]:
            continue
        dist = rec.site.distribution
        here = [format_value(float(np.broadcast_to(p, (chunk.run.n,) + p.shape[1:])[lane].flat[0]))
                for p in rec.params]
        there = [format_value(float(np.broadcast_to(p, (chunk.run.n,) + p.shape[1:])[lane].flat[0]))
                 for p in other.params]
        return (f"{where}: {name} ~ {dist.name}({', '.join(here)}) on D, but {dist.name}({', '.join(there)}) "
                "in the aligned run on D' (Lemma 1 needs one density per noise variable)")
    return f"{where}: a noise value is drawn with other parameters on D'"


def _lipschitz(chunk: ChunkCheck, lane: int, where: str) -> str:
    for name, s in chunk.shifts.items():
        rec = s.record
        for member, col in _drawn_members(rec, lane):
            ok = s.lipschitz_ok[lane, col] if rec.family else s.lipschitz_ok[lane]
            if not ok:
                label = f"{name}[{member}]" if rec.family else name
                psi = (s.psi[lane, col] if rec.family else s.psi[lane]).item()
                return (f"{where}: {label} ~ {rec.site.distribution.name} is not Lipschitz, but its shift is "
                        f"{format_value(psi)} (Lemma 1 condition 3 allows only 0)")
    return f"{where}: a non-Lipschitz noise value is shifted"


EXPLAIN: dict[ObligationId, Callable[[ChunkCheck, int, str], str]] = {
    ObligationId.C4A: _outputs,
    ObligationId.C2: _draws,
    ObligationId.C4C: _cost,
    ObligationId.C4D: _support,
    ObligationId.C0: _density,
    ObligationId.C3: _lipschitz,
}
"""Why one sample breaks each obligation the sampled check tests (`KINDS`), given `where` (the sample, the seed)."""
assert set(EXPLAIN) == set(KINDS), "an obligation the sampled check tests has no explanation"


def _drawn_members(rec: SiteRecord, lane: int):
    if not rec.family:
        if rec.drawn[lane]:
            yield None, None
        return
    for col in np.flatnonzero(rec.drawn[lane]):
        yield rec.offset + int(col), int(col)

