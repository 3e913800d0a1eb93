"""Statistics (events): candidate output events built from samples, and their membership on other samples.

An event is a set of outputs described in the spec's own terms (`out[2] is TOP`, `len(out) = 3`,
`out = [BOT, BOT, TOP(·)] and out[2] TOP payload <= -0.41`). Candidates come from a *selection* sample of M(D)
and of M(D'), never from the sample they are tested on:

- each discrete output (the discrete part of the whole output: lengths, tags, ints, bools; reals hidden);
- discrete projections: the output length, and each discrete entry at each position (`out[j] is TAG`);
- thresholds on a naive-Bayes score of the discrete entries (`Score`: per entry value, the log ratio of its
  selection counts on D and D'), which join the outputs whose loss adds up over many positions;
- for each real entry (a real output, a tag's real payload, a tuple's real component, at position j), and for
  the min, max and sum of the real entries present (joint events: all released values high, ...):
  threshold events `x <= t` and `x > t`, t on a quantile grid of the pooled selection values (dense in both
  tails, where privacy losses are largest), and the bins `t_i < x <= t_(i+1)` between consecutive ones, alone
  and conditioned on each of the most frequent discrete outputs;
- when the mechanism adds noise of a known density or mass function (Lap, Normal, Logistic, Gumbel,
  Staircase, Exp, Geo, DLap, Uniform) to noise-free values, one draw per real (or, under integer noise, int)
  output (`AdditiveNoise`, found by replaying the interpreter), the exact privacy loss ln p_D(out)/p_D'(out)
  as one more real column, with the same threshold events; where the noise has a boundary or a lattice the
  loss can be +-inf (a support mismatch), and the grid has a threshold that isolates those samples.

Every candidate is scored in both directions (P[M(D) in E] against P[M(D') in E] and the reverse) on the
selection sample, by the p-value of the claim and by a Clopper–Pearson lower bound on the loss; the best few by
each go on to the test.
Events are small frozen dataclasses, so they travel to worker processes.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats

from ..diagnostics import SpecError
from ..distributions import DISTRIBUTIONS
from ..interp.outputs import DISCRETE_KINDS, DiscreteKeys, Outputs
from ..interp.scalar import Interpreter, NoiseValues
from .bounds import separate_epsilon_lower_bound

SELECTION_DELTA = 0.1
"""Level of the Clopper–Pearson bounds that rank candidates on the selection sample (not a reported level),
simultaneous over the candidates (divided by their number, both directions counted): among thousands of rare
outputs one has a few samples on D and none on D' by chance, and a per-event level let it outrank events with
the evidence of many samples (Chen's SVT at length 20: a single output seen 17 vs 11 times was tested instead
of a score tail that gives eps >= 0.285 in the same round)."""

TAIL_GRID = np.unique(np.r_[np.geomspace(1e-4, 0.5, 30), 1 - np.geomspace(1e-4, 0.5, 30)])
"""Quantile levels of the threshold grid: dense in both tails."""

CONDITION_KEYS = 8
"""Threshold events are also conditioned on this many most frequent discrete outputs."""


@dataclass(frozen=True)
class Layout:
    """How a chunk's outputs are laid out as key and real matrices: a fixed number of positions."""

    positions: int
    key_names: tuple[str, ...]
    """One name per column of the key matrix (the length first)."""
    real_names: tuple[str, ...]
    loss: AdditiveNoise | None = None
    """When the densities are known: the last real column is the exact privacy loss L(out) (see below)."""

    @staticmethod
    def of(outputs: Outputs, positions: int, loss: AdditiveNoise | None = None) -> Layout:
        keys: list[str] = ["len(out)"]
        reals: list[str] = []
        for c in outputs.columns(positions):
            width = int(np.prod(c.data.shape[1:])) if c.data.ndim > 1 else 1
            names = [_entry_name(c.name, j) for j in range(positions)] if c.data.ndim == 2 else \
                [f"{c.name}#{k}" for k in range(width)]
            (keys if c.kind in DISCRETE_KINDS else reals).extend(names)
        if len(reals) > 1:
            reals += ["min of the real entries", "max of the real entries", "sum of the real entries"]
        if loss is not None and len(loss.mu) <= positions and _values(outputs, positions) is not None:
            reals.append(loss.name)
        else:
            loss = None
        return Layout(positions, tuple(keys), tuple(reals), loss)

    def keys(self, outputs: Outputs) -> np.ndarray:
        return outputs.discrete_keys(self.positions)

    def reals(self, outputs: Outputs) -> np.ndarray:
        """The real entries, then (when there are several) their min, max and sum over the present ones:
        joint events such as "every released value is high" see the loss of all entries at once. Last, when
        the densities are known, the privacy loss (of real outputs, or of int outputs with integer noise:
        those have no real entries, and the loss is their only threshold event)."""
        x = outputs.real_values(self.positions)
        loss = []
        if self.loss is not None:
            values = _values(outputs, self.positions)
            assert values is not None, "the layout's loss column needs outputs of type real or int"
            loss = [self.loss.loss(values)[:, None]]
        if x.shape[1] <= 1:
            return np.concatenate([x, *loss], axis=1) if loss else x
        present = ~np.isnan(x)
        some = present.any(axis=1)
        low = np.where(some, np.where(present, x, np.inf).min(axis=1), np.nan)
        high = np.where(some, np.where(present, x, -np.inf).max(axis=1), np.nan)
        total = np.where(some, np.where(present, x, 0.0).sum(axis=1), np.nan)
        return np.concatenate([x, low[:, None], high[:, None], total[:, None], *loss], axis=1)


def _values(outputs: Outputs, positions: int) -> np.ndarray | None:
    """(n, positions) float64: the outputs themselves when the output type is `real` or `int` (NaN where
    absent); None for any other output type (the additive model has one number per output)."""
    for c in outputs.columns(positions):
        if c.name == "value" and c.kind in ("real", "int") and c.data.ndim == 2:
            return np.where(c.valid, c.data.astype(float), np.nan)
    return None


# -------------------------------------------------------------------------- events from the exact privacy loss


WHOLE_TOLERANCE = 1e-9
"""Relative tolerance within which x - mu counts as an integer for integer-valued noise (see noise_offsets)."""


def noise_offsets(dist: str, x: np.ndarray, mu: float) -> np.ndarray:
    """z = x - mu, the noise an output x means under mean mu; for integer-valued noise snapped to the nearest
    integer when within WHOLE_TOLERANCE * max(1, |x|, |mu|) of it (else left as it is, off the lattice).

    Why a tolerance: for integer outputs x - mu is exact, but a real output is x = fl(mu + eta), and
    fl(x - mu) can miss the integer eta by an ulp of the operands ((1.1 + 3) - 1.1 = 2.9999999999999996), so
    an exact test would call a sample of M(D) impossible under D: a false support mismatch. The error is
    relative to the operands' size, not to the difference's, hence the scale (as in the interpreter's
    `is_whole` and `Outputs.agree`). An offset that really is off the lattice (a real query that moves by 1/2
    under integer noise) stays off it, and its density is 0: a true support mismatch. The price: the test
    cannot see offsets from the lattice smaller than 1e-9 of the magnitudes (at |x| >= 5e8 every offset snaps),
    far below anything a spec's queries do at the magnitudes of counts.
    Continuous supports are tested exactly: x = fl(mu + eta) >= mu when eta >= 0 (rounding is monotone), so
    Exp's boundary is exact, and elsewhere a misclassified sample needs eta within a few ulps of a boundary
    (probability about 1e-16 per sample)."""
    with np.errstate(invalid="ignore"):
        z = x - mu
        if not DISTRIBUTIONS[dist].integer:
            return z
        whole = np.round(z)
        near = np.abs(z - whole) <= WHOLE_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(x), abs(mu)))
        return np.where(near, whole, z)


@dataclass(frozen=True)
class AdditiveNoise:
    """A mechanism that outputs out[j] = mu_j + eta_j, j < m, with independent noises eta_j of known density
    (the same on D and D'), mu_j (D) and mu'_j (D') not depending on the noise: then the densities of M(D)
    and M(D') are known and the privacy loss of an output x is

        L(x) = ln p_D(x) / p_D'(x) = sum_j ln f_j(x_j - mu_j) - ln f_j(x_j - mu'_j).

    The events {L > t} (and {L <= t}) are the Neyman–Pearson optimal ones: every loss, however it is spread
    over the coordinates, is seen at once. With noise of bounded or lattice support (Exp, Geo, Uniform; DLap
    when mu - mu' is not an integer) L can be +inf (x possible under D only: a support mismatch), -inf (under
    D' only) or NaN (impossible under both: a sample never has it, but a wrong model could give it);
    candidates() keeps the infinite values in their threshold events and NaN in none."""

    dists: tuple[str, ...]
    params: tuple[tuple[float, ...], ...]
    mu: tuple[float, ...]
    mu_prime: tuple[float, ...]

    @property
    def name(self) -> str:
        def v(xs):
            return "(" + ", ".join(f"{x:.4g}" for x in xs) + ")"

        dist = "/".join(sorted(set(self.dists)))
        return f"privacy loss ln f(out - {v(self.mu)}) / f(out - {v(self.mu_prime)}) ({dist} noise)"

    def loss(self, x: np.ndarray) -> np.ndarray:
        """L(x) for each row of x (n, >= m); NaN where an entry is absent, or where both densities are 0."""
        total = np.zeros(x.shape[0])
        for j, (dist, p, a, b) in enumerate(zip(self.dists, self.params, self.mu, self.mu_prime)):
            f = DISTRIBUTIONS[dist].log_density
            assert f is not None, dist  # additive_noise admits only noise with a log density
            xj = x[:, j]
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                # -inf - -inf (both impossible) is NaN, and NaN stays NaN through the sum and the rounding
                total += f(noise_offsets(dist, xj, a), p) - f(noise_offsets(dist, xj, b), p)
            total[np.isnan(xj)] = np.nan
        # Rounded to 9 decimals: the loss has atoms (e.g. exactly +-|mu - mu'|/b where the Laplace terms are
        # flat), and the float samples of mu + eta sit on different ulp grids under D and D' (Mironov, CCS
        # 2012), so the unrounded float loss splits an atom by rounding in a way that tells D from D': a real
        # property of the floating-point sampler, not of the spec, and a false alarm on correct specs.
        # (np.round keeps +-inf and NaN.)
        return np.round(total, 9)


def _replay(mech: Any, args: Mapping[str, Any], noise: Mapping[tuple[str, int | None], float],
            family_length: int) -> tuple[list, list] | None:
    values: dict[str, Any] = {}
    for site in mech.noise:
        if site.family:
            values[site.name] = [noise.get((site.name, k), 0.0) for k in range(family_length)]
        else:
            values[site.name] = noise.get((site.name, None), 0.0)
    try:
        run = Interpreter(mech, NoiseValues(mech, values), trace=False).run(dict(args))
    except SpecError:  # the run stops (a loop longer than family_length, a parameter out of range): no model
        return None
    return run.out, run.draws


def _number(x: Any) -> bool:
    """A real or integer output value (not a bool, a tuple, a tag)."""
    return not isinstance(x, bool) and isinstance(x, (int, float, Fraction))


def replay_noise(dist: str, params: tuple[float, ...], scale: float, rng: np.random.Generator) -> int | float:
    """A random value in the support of the noise, for the model check of `additive_noise`: Laplace at
    `scale` for full-support noise; its absolute value for non-negative noise (Exp, Geo); a non-zero integer
    (1 + the floor of it, with its sign where negative values exist) for integer noise (Geo, DLap); uniform
    between the bounds for noise bounded on both sides (Uniform(a, b); an integer for integer noise). A value
    off the support would test the mechanism where it never runs (a branch on `eta >= 0` that Exp noise always
    takes), and the replay refuses non-integer integer noise."""
    d = DISTRIBUTIONS[dist]
    bounds = d.values.bounds(params)
    if len(bounds) == 2:  # bounded on both sides (Uniform(a, b)): a value between the bounds
        (lo, _), (hi, _) = bounds
        return int(rng.integers(math.ceil(lo), math.floor(hi) + 1)) if d.integer else float(rng.uniform(lo, hi))
    z = float(rng.laplace(0.0, scale))
    if d.nonnegative:
        z = abs(z)
    if d.integer:
        return int(math.copysign(math.floor(abs(z)) + 1, z))
    return z


def additive_noise(mech: Any, args: Mapping[str, Any], args_prime: Mapping[str, Any]) -> AdditiveNoise | None:
    """The mechanism's AdditiveNoise model on (D, D'), or None when it does not have that form.

    Found by replaying the reference interpreter (align/interp/scalar.py) with chosen noise: with all noise 0
    the outputs are mu; with random noise z in each noise's support (several draws, at the scale of the
    outputs: `replay_noise`) every output must be a number (real, or int under integer noise) equal to
    mu_j + z_j, one draw per output, in order, with the same distributions and parameters on D and D'.
    This is a check at a few points, not a proof: a wrong model only makes the event less powerful, never
    the test invalid (the event is still chosen on the selection sample and tested on a fresh one).
    """
    if not mech.noise or any(site.distribution.log_density is None for site in mech.noise):
        return None
    lengths = [len(v) for a in (args, args_prime) for v in a.values() if isinstance(v, (list, tuple))]
    family_length = 4 * (max(lengths, default=0) + 1)
    rng = np.random.default_rng(20181015)
    model = []
    for a in (args, args_prime):
        base = _replay(mech, a, {}, family_length)
        if base is None:
            return None
        out0, draws0 = base
        if not out0 or len(out0) != len(draws0) or not all(_number(x) for x in out0):
            return None
        mu = [float(x) for x in out0]
        for _ in range(3):
            z = {(d.site.name, d.member): replay_noise(d.site.distribution.name, tuple(float(p) for p in d.params),
                                                       1.0 + abs(mu[j]), rng)
                 for j, d in enumerate(draws0)}
            again = _replay(mech, a, z, family_length)
            if again is None:
                return None
            out, draws = again
            if len(out) != len(mu) or len(draws) != len(draws0):
                return None
            for j, (x, d, d0) in enumerate(zip(out, draws, draws0)):
                if (d.site.name, d.member) != (d0.site.name, d0.member) or d.params != d0.params:
                    return None
                if not _number(x):
                    return None
                if not math.isclose(float(x), mu[j] + float(d.value), rel_tol=1e-9, abs_tol=1e-9):
                    return None
        model.append((tuple(d.site.distribution.name for d in draws0),
                      tuple(tuple(float(p) for p in d.params) for d in draws0), tuple(mu)))
    (dists, params, mu1), (dists2, params2, mu2) = model
    if dists != dists2 or params != params2:
        return None
    return AdditiveNoise(dists, params, mu1, mu2)


def _entry_name(column: str, j: int) -> str:
    if column == "value":
        return f"out[{j}]"
    if column == "tag":
        return f"out[{j}] is"
    parts = column.split(".")
    if len(parts) == 2 and not parts[0].isdigit():  # TAG.k: a payload
        return f"out[{j}] {parts[0]} payload" + (f"[{parts[1]}]" if parts[1] != "0" else "")
    return f"out[{j}]" + "".join(f"[{p}]" for p in parts)


SCORE_VALUES = 8
"""A discrete column takes part in the score only with at most this many distinct values in the selection (tags,
bools, small ints: a weight per value of a wide int column would fit the selection's noise; an int output with
additive noise has its exact privacy loss instead)."""
SCORE_TABLE = 1024
"""A score column whose values span at most this many integers is scored by table lookup (`Score.of`)."""


@dataclass(frozen=True)
class Score:
    """A naive-Bayes score of the discrete part of an output: the sum over key columns (the length, each
    discrete entry at each position) of a weight per value, ln((c1 + 1/2) / (c2 + 1/2)) of the value's counts in
    the selection samples of D and D'. Threshold events on it join outputs whose loss adds up over positions
    (Chen's SVT: many TOPs where D's queries are higher), which no single output or entry shows as strongly.
    The weights are fixed by the selection sample; the events are tested on fresh ones like every other."""

    columns: tuple[int, ...]
    values: tuple[tuple[int, ...], ...]
    """Per column, its values in increasing order."""
    weights: tuple[tuple[float, ...], ...]

    @staticmethod
    def fit(counts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]) -> Score | None:
        """The score of the selection samples from each key column's (column, values in increasing order, their
        counts on D, on D'); None when fewer than two columns have two to SCORE_VALUES values (the entry events
        already test a single column)."""
        kept = [(col, v, c1, c2) for col, v, c1, c2 in counts if 2 <= len(v) <= SCORE_VALUES]
        if len(kept) < 2:
            return None
        return Score(tuple(col for col, _, _, _ in kept), tuple(tuple(int(x) for x in v) for _, v, _, _ in kept),
                     tuple(tuple(float(w) for w in np.log((c1 + 0.5) / (c2 + 0.5))) for _, _, c1, c2 in kept))

    def of(self, keys: np.ndarray) -> np.ndarray:
        """The score of each row of a key matrix (a value not seen in the selection weighs 0). Each column's
        weight is looked up in a table indexed by value - smallest value (one slot past the end holds the 0 of
        unseen values, which a negative offset reaches as a huge unsigned one); a column whose values span more
        than SCORE_TABLE is searched instead. The columns are added in order, as one sum."""
        total = np.zeros(keys.shape[0])
        columns = np.ascontiguousarray(keys[:, list(self.columns)].T, dtype=np.int64)
        for x, vals, ws, (lowest, table) in zip(columns, self.values, self.weights, self._tables):
            if table is None:
                v, w = np.asarray(vals), np.asarray(ws)
                at = np.minimum(np.searchsorted(v, x), len(v) - 1)
                total += np.where(v[at] == x, w[at], 0.0)
            else:
                total += table[np.minimum((x - lowest).view(np.uint64), len(table) - 1)]
        return total

    @functools.cached_property
    def _tables(self) -> tuple[tuple[int, np.ndarray | None], ...]:
        tables: list[tuple[int, np.ndarray | None]] = []
        for vals, ws in zip(self.values, self.weights):
            span = vals[-1] - vals[0] + 1
            if span > SCORE_TABLE:
                tables.append((vals[0], None))
                continue
            table = np.zeros(span + 1)
            table[np.asarray(vals) - vals[0]] = ws
            tables.append((vals[0], table))
        return tuple(tables)

    def text(self, layout: Layout, describe: DiscreteKeys) -> str:
        """The weights in the spec's terms, a few columns spelled out."""
        parts = []
        for col, vals, ws in list(zip(self.columns, self.values, self.weights))[:3]:
            name = layout.key_names[col]
            spelled = [describe.tag_names[v] if name.endswith(" is") and 0 <= v < len(describe.tag_names)
                       else str(v) for v in vals]
            parts.append(f"{name} " + "/".join(f"{x} {w:+.3g}" for x, w in zip(spelled, ws)))
        more = f", … ({len(self.columns)} columns)" if len(self.columns) > 3 else ""
        return "score(out) = Σ weight of each discrete entry (" + "; ".join(parts) + more + ")"


@dataclass(frozen=True)
class Event:
    """A set of outputs: an optional discrete output, an optional discrete entry, an optional real threshold
    or bin."""

    key: tuple[int, ...] | None = None
    """The whole discrete part of the output (a row of the key matrix), or None."""
    entry: int | None = None
    """A column of the key matrix that must equal `value` (0 is the length), or None."""
    value: int = 0
    real: int | None = None
    """A column of the real matrix compared with `threshold`, or None."""
    threshold: float = 0.0
    below: bool = True
    """`x <= threshold` (True) or `x > threshold`."""
    lower: float | None = None
    """With `below`: a bin, `lower < x <= threshold`."""
    text: str = ""
    """The event in the spec's terms."""
    positions: int = 0
    """The layout's number of output positions (the key and real columns are laid out for this many)."""
    score: Score | None = None
    """With `below`: the event `score(out) <= threshold` (or `>`) on the discrete part, instead of a real column."""

    def contains(self, keys: np.ndarray, reals: np.ndarray) -> np.ndarray:
        mask = np.ones(keys.shape[0], dtype=bool)
        if self.score is not None:
            x = self.score.of(keys)
            mask &= (x <= self.threshold) if self.below else (x > self.threshold)
        if self.key is not None:
            mask &= (keys == np.asarray(self.key, dtype=np.int64)).all(axis=1)
        if self.entry is not None:
            mask &= keys[:, self.entry] == self.value
        if self.real is not None:
            x = reals[:, self.real]
            with np.errstate(invalid="ignore"):
                mask &= (x <= self.threshold) if self.below else (x > self.threshold)
                if self.lower is not None:
                    mask &= x > self.lower
        return mask


@dataclass(frozen=True)
class Candidate:
    """An event with the direction it is tested in and its selection counts."""

    event: Event
    forward: bool
    """True: P[M(D) in E] > e^eps P[M(D') in E] is tested; False: the reverse."""
    score: float
    """Clopper–Pearson lower bound on the loss, on the selection sample, at level `level`."""
    eps: float | None = None
    """For a claim that reads the output: the largest claim over the selection samples in the event."""
    level: float = SELECTION_DELTA
    """The level of `score`: SELECTION_DELTA over the number of candidates ranked with it."""


def key_text(layout: Layout, describe: DiscreteKeys, row: np.ndarray) -> str:
    """The discrete output of a key row, with reals as `·` (e.g. `[BOT, TOP(·)]`)."""
    length = int(row[0])
    p = layout.positions
    ncols = (row.size - 1) // p if p else 0
    entries = [int(row[1 + c * p + j]) for j in range(min(length, p)) for c in range(ncols)]
    data = np.asarray([length] + entries, dtype=np.int64).tobytes()
    try:
        return "out = " + describe.text(data)
    # an output type whose keys DiscreteKeys cannot spell: fall back to the raw key
    except (KeyError, IndexError, ValueError):
        return f"discrete output {tuple(int(x) for x in row)}"


def candidates(layout: Layout, describe: DiscreteKeys, keys1: np.ndarray, reals1: np.ndarray,
               keys2: np.ndarray, reals2: np.ndarray, top: int, eps: float,
               claim1: np.ndarray | None = None, claim2: np.ndarray | None = None,
               both_directions: bool = True) -> list[Candidate]:
    """The `top` best candidates (by selection score, both directions) from selection samples of D and D'.

    `claim1`, `claim2`: for a claim that reads the output, the claim at each selection sample's output; each
    event is then ranked against (and its Candidate carries) the largest claim over the samples in it.
    `both_directions=False`: only P[M(D) in E] > e^eps P[M(D') in E] is a violation (a one-sided neighbouring
    relation claims nothing about the reverse)."""
    n1, n2 = keys1.shape[0], keys2.shape[0]
    positions = layout.positions
    # Events are built only when chosen: a selection sample has tens of thousands of candidates (every
    # threshold of every real column under every condition, every distinct discrete output), and making each
    # an Event with its text cost more than counting them. A block is (first index, builder of its i-th event).
    blocks: list[tuple[int, Callable[[int], Event]]] = []
    size = 0
    c1: list[np.ndarray] = []
    c2: list[np.ndarray] = []
    varying = claim1 is not None and claim2 is not None
    e_both = np.concatenate([claim1, claim2]).astype(float) if varying else np.zeros(n1 + n2)
    ev_eps: list[np.ndarray] = []

    def block(count: int, builder: Callable[[int], Event]) -> None:
        nonlocal size
        blocks.append((size, builder))
        size += count

    # whole discrete outputs
    both = np.concatenate([keys1, keys2])
    rows, inverse, total = unique_rows(both)
    k1 = np.bincount(inverse[:n1], minlength=len(rows))
    k2 = np.bincount(inverse[n1:], minlength=len(rows))

    def row_key(r: int) -> tuple[int, ...]:
        return tuple(int(x) for x in rows[r])

    def row_text(r: int) -> str:
        return key_text(layout, describe, rows[r])

    block(len(rows), lambda r: Event(key=row_key(r), text=row_text(r), positions=positions))
    c1.append(k1)
    c2.append(k2)
    if varying:
        row_eps = np.full(len(rows), -np.inf)
        np.maximum.at(row_eps, inverse, e_both)
        ev_eps.append(row_eps)

    # discrete projections: length and each entry (their counts also weigh the score below)
    column_counts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for col in range(keys1.shape[1]):
        values = np.unique(both[:, col])
        values = values[values >= 0] if col else values
        if col and len(values) <= 1 and len(rows) <= 1:
            continue

        def entry(i: int, col: int = col, values: np.ndarray = values) -> Event:
            v, name = int(values[i]), layout.key_names[col]
            if col == 0:
                text = f"len(out) = {v}"
            elif name.endswith(" is"):
                text = f"{name} {describe.tag_names[v]}"
            else:
                text = f"{name} = {v}"
            return Event(entry=col, value=v, text=text, positions=positions)

        block(len(values), entry)
        c1.append((keys1[:, col][:, None] == values[None, :]).sum(axis=0))
        c2.append((keys2[:, col][:, None] == values[None, :]).sum(axis=0))
        column_counts.append((col, values, c1[-1], c2[-1]))
        if varying:
            ev_eps.append(np.where(both[:, col][:, None] == values[None, :], e_both[:, None], -np.inf)
                          .max(axis=0, initial=-np.inf))

    # thresholds on the naive-Bayes score of the discrete entries (a claim that reads the output is evaluated
    # per event below; the score is left out there)
    score = None if varying else Score.fit(column_counts)
    if score is not None:
        z1, z2 = np.sort(score.of(keys1)), np.sort(score.of(keys2))
        z_grid = threshold_grid(np.concatenate([z1, z2]))

        def scored(i: int, grid: np.ndarray = z_grid, score: Score = score) -> Event:
            below, t = i < len(grid), float(grid[i % len(grid)])
            return Event(threshold=t, below=below, score=score, positions=positions,
                         text=f"score(out) {'<=' if below else '>'} {t:.6g}, {score.text(layout, describe)}")

        block(2 * len(z_grid), scored)
        s1, s2 = np.searchsorted(z1, z_grid, side="right"), np.searchsorted(z2, z_grid, side="right")
        c1.extend([s1, n1 - s1])
        c2.extend([s2, n2 - s2])

    # thresholds on real entries, alone and within frequent discrete outputs
    frequent = np.argsort(-total, kind="stable")[:CONDITION_KEYS]
    conditions: list[tuple[int | None, np.ndarray, np.ndarray]] = [(None, np.ones(n1, bool), np.ones(n2, bool))]
    for r in frequent:
        conditions.append((int(r), inverse[:n1] == r, inverse[n1:] == r))
    for col in range(reals1.shape[1]):
        x1, x2 = reals1[:, col], reals2[:, col]
        for r, m1, m2 in conditions:
            a, b = x1[m1 & ~np.isnan(x1)], x2[m2 & ~np.isnan(x2)]
            if a.size + b.size < 2:
                continue
            sa, sb = np.sort(a), np.sort(b)  # a, b keep the samples' order for the claims below
            grid = threshold_grid(np.concatenate([sa, sb]))
            if varying:
                # the largest claim among the pooled samples with x <= t (prefix max) and with x > t (suffix max)
                xs = np.concatenate([a, b])
                es = np.concatenate([e_both[:n1][m1 & ~np.isnan(x1)], e_both[n1:][m2 & ~np.isnan(x2)]])
                order = np.argsort(xs, kind="stable")
                xs, es = xs[order], es[order]
                prefix = np.r_[-np.inf, np.maximum.accumulate(es)]
                suffix = np.r_[np.maximum.accumulate(es[::-1])[::-1], -np.inf]
                at = np.searchsorted(xs, grid, side="right")
                # bins (grid[i], grid[i+1]] hold the sorted samples at[i] .. at[i+1] - 1
                segment = np.maximum.reduceat(np.r_[es, -np.inf], at)[:-1]
                ev_eps.extend([prefix[at], suffix[at], np.where(at[1:] > at[:-1], segment, -np.inf)])
            below1 = np.searchsorted(sa, grid, side="right")
            below2 = np.searchsorted(sb, grid, side="right")

            def threshold(i: int, r: int | None = r, col: int = col, grid: np.ndarray = grid) -> Event:
                below, t = i < len(grid), float(grid[i % len(grid)])
                where = "" if r is None else f"{row_text(r)} and "
                text = f"{where}{layout.real_names[col]} {'<=' if below else '>'} {t:.6g}"
                return Event(key=None if r is None else row_key(r), real=col, threshold=t, below=below, text=text,
                             positions=positions)

            block(2 * len(grid), threshold)
            c1.extend([below1, a.size - below1])
            c2.extend([below2, b.size - below2])

            # bins between consecutive thresholds: a loss concentrated in the middle of the range (neither
            # tail) shows in them
            def bin_(i: int, r: int | None = r, col: int = col, grid: np.ndarray = grid) -> Event:
                lo, t = float(grid[i]), float(grid[i + 1])
                where = "" if r is None else f"{row_text(r)} and "
                text = f"{where}{lo:.6g} < {layout.real_names[col]} <= {t:.6g}"
                return Event(key=None if r is None else row_key(r), real=col, threshold=t, below=True, lower=lo,
                             text=text, positions=positions)

            block(len(grid) - 1, bin_)
            c1.append(np.diff(below1))
            c2.append(np.diff(below2))

    starts = [start for start, _ in blocks]

    def event_at(index: int) -> Event:
        start, builder = blocks[bisect.bisect_right(starts, index) - 1]
        return builder(index - start)

    c1a = np.concatenate(c1).astype(float)
    c2a = np.concatenate(c2).astype(float)
    if varying:
        eps_arr = np.concatenate(ev_eps)
        # an event with no selection sample: the largest claim seen (its p-value is 1 anyway)
        eps_arr = np.where(np.isfinite(eps_arr), eps_arr, e_both.max(initial=0.0))
        eps = eps_arr  # type: ignore[assignment]
    # a ranking on fixed-size selection samples, never reported: the reported bound is the test's own
    # (bounds.epsilon_lower_bound, on the fresh Poissonised sample)
    level = SELECTION_DELTA / (2 * max(size, 1))
    forward = separate_epsilon_lower_bound(c1a, n1, c2a, n2, level)
    backward = separate_epsilon_lower_bound(c2a, n2, c1a, n1, level)
    bounds = np.concatenate([forward, backward if both_directions else np.full_like(backward, -np.inf)])
    # the p-value at the claimed eps finds events whose loss exceeds the claim; the bound finds the strongest
    # loss (often a rarer event): both kinds are kept
    reverse = p_values(c2a, n2, c1a, n1, eps) if both_directions else np.ones(size)
    pvalues = np.concatenate([p_values(c1a, n1, c2a, n2, eps), reverse])
    by_p = np.lexsort((-bounds, pvalues))
    by_bound = np.argsort(-bounds, kind="stable")
    chosen: list[Candidate] = []
    seen: set[int] = set()
    for order, quota in ((by_p, top - top // 3), (by_bound, top)):
        for idx in order:
            if len(chosen) >= quota or not np.isfinite(bounds[idx]):
                break
            if int(idx) in seen:
                continue
            seen.add(int(idx))
            e, fwd = int(idx % size), bool(idx < size)
            chosen.append(Candidate(event_at(e), fwd, float(bounds[idx]), float(eps_arr[e]) if varying else None,
                                    level))
    return chosen


def unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(keys, axis=0, return_inverse=True, return_counts=True), with a flat inverse, in the same
    (lexicographic) order, but fast: the rows of small integers are packed into one int64 per row (mixed radix,
    the first column most significant, which keeps the order), so the sort is of plain integers instead of
    row records (about 25 ms against 360 ms for 130,000 rows of 13 columns). Falls back to numpy's row
    unique when the ranges do not fit in 62 bits."""
    if keys.shape[0] == 0 or keys.shape[1] == 0:
        rows, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        return rows, inverse.ravel(), counts
    low = keys.min(axis=0)
    spans = (keys.max(axis=0) - low + 1).astype(object)  # Python ints: the product must not overflow
    total = 1
    for span in spans:
        total *= int(span)
    if total >= 2 ** 62:
        rows, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        return rows, inverse.ravel(), counts
    packed = np.zeros(keys.shape[0], dtype=np.int64)
    for c in range(keys.shape[1]):
        packed = packed * np.int64(spans[c]) + (keys[:, c] - low[c])
    _, first, inverse, counts = np.unique(packed, return_index=True, return_inverse=True, return_counts=True)
    return keys[first], inverse.ravel(), counts


def threshold_grid(values: np.ndarray) -> np.ndarray:
    """The thresholds t of the events `x <= t` and `x > t` on pooled selection values (NaN removed): the
    TAIL_GRID quantiles of the finite values, and, where there are infinite values (the privacy loss of
    noise with a boundary or a lattice: +inf is an output possible under D only, -inf under D' only), a
    threshold that isolates them: the largest finite value (`x > t` is then exactly the +inf samples: a
    support mismatch is an event) and one below the smallest (`x <= t` is exactly the -inf samples).
    The thresholds themselves are always finite (support.py reads them as exact rationals)."""
    finite = np.sort(values[np.isfinite(values)])  # already sorted, in candidates: then nearly free
    grid: list[np.ndarray] = [sorted_quantiles(finite, TAIL_GRID)] if finite.size else []
    if np.isposinf(values).any():
        grid.append(np.array([finite[-1] if finite.size else 0.0]))
    if np.isneginf(values).any():
        grid.append(np.array([finite[0] - 1.0 if finite.size else 0.0]))
    return np.unique(np.concatenate(grid)) if grid else np.zeros(0)


def sorted_quantiles(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """np.quantile(x, q) (its default, linear method, with numpy's own interpolation formula: the same floats)
    of a sorted, non-empty x, by indexing instead of numpy's partitions: candidates takes thousands per unit,
    where the partitions cost six times as much as reading the sorted values (tests/test_loss_events.py
    compares the two)."""
    virtual = (x.size - 1) * q
    below = np.floor(virtual)
    gamma = virtual - below
    lo = np.clip(below.astype(np.intp), 0, x.size - 1)
    a, b = x[lo], x[np.minimum(lo + 1, x.size - 1)]
    step = b - a
    return np.where(gamma >= 0.5, b - step * (1 - gamma), a + step * gamma)


def p_values(c1: np.ndarray, n1: float, c2: np.ndarray, n2: float, eps: float | np.ndarray) -> np.ndarray:
    """The exact p-values of bounds.p_value, vectorised (on selection counts: a ranking, not a test); `eps`
    may be one number or one per event."""
    p0 = 1.0 / (1.0 + np.exp(-np.minimum(eps, 700.0)) * n2 / n1)
    return np.where(c1 > 0, stats.binom.sf(c1 - 1, c1 + c2, p0), 1.0)
