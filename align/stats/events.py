"""Statistics (events): candidate output events built from samples, and their membership on other samples.

An event is a set of outputs described in the spec's own terms (`out[2] is TOP`, `len(out) = 3`,
`out = [BOT, BOT, TOP(·)] and out[2] TOP payload <= -0.41`). Candidates come from a *selection* sample of M(D)
and of M(D'), never from the sample they are tested on:

- each discrete output (the discrete part of the whole output: lengths, tags, ints, bools; reals hidden);
- discrete projections: the output length, and each discrete entry at each position (`out[j] is TAG`);
- for each real entry (a real output, a tag's real payload, a tuple's real component, at position j), and for
  the min, max and sum of the real entries present (joint events: all released values high, ...):
  threshold events `x <= t` and `x > t`, t on a quantile grid of the pooled selection values (dense in both
  tails, where privacy losses are largest), alone and conditioned on each of the most frequent discrete
  outputs.

Every candidate is scored in both directions (P[M(D) in E] against P[M(D') in E] and the reverse) on the
selection sample, by the p-value of the claim and by a Clopper–Pearson lower bound on the loss; the best few by
each go on to the test.
Events are small frozen dataclasses, so they travel to worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..interp.outputs import DISCRETE_KINDS, DiscreteKeys, Outputs
from .bounds import epsilon_lower_bound

SELECTION_DELTA = 0.1
"""Level of the Clopper–Pearson bounds that rank candidates on the selection sample (not a reported level)."""

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

    @staticmethod
    def of(outputs: Outputs, positions: int) -> "Layout":
        keys, reals = ["len(out)"], []
        for c in outputs.columns(positions):
            width = int(np.prod(c.data.shape[1:])) if c.data.ndim > 1 else 1
            names = [_entry_name(c.name, j) for j in range(positions)] if c.data.ndim == 2 else \
                [f"{c.name}#{k}" for k in range(width)]
            (keys if c.kind in DISCRETE_KINDS else reals).extend(names)
        if len(reals) > 1:
            reals += ["min of the real entries", "max of the real entries", "sum of the real entries"]
        return Layout(positions, tuple(keys), tuple(reals))

    def keys(self, outputs: Outputs) -> np.ndarray:
        return outputs.discrete_keys(self.positions)

    def reals(self, outputs: Outputs) -> np.ndarray:
        """The real entries, then (when there are several) their min, max and sum over the present ones:
        joint events such as "every released value is high" see the loss of all entries at once."""
        x = outputs.real_values(self.positions)
        if x.shape[1] <= 1:
            return x
        present = ~np.isnan(x)
        some = present.any(axis=1)
        low = np.where(some, np.where(present, x, np.inf).min(axis=1), np.nan)
        high = np.where(some, np.where(present, x, -np.inf).max(axis=1), np.nan)
        total = np.where(some, np.where(present, x, 0.0).sum(axis=1), np.nan)
        return np.concatenate([x, low[:, None], high[:, None], total[:, None]], axis=1)


def _entry_name(column: str, j: int) -> str:
    if column == "value":
        return f"out[{j}]"
    if column == "tag":
        return f"out[{j}] is"
    parts = column.split(".")
    if len(parts) == 2 and not parts[0].isdigit():  # TAG.k: a payload
        return f"out[{j}] {parts[0]} payload" + (f"[{parts[1]}]" if parts[1] != "0" else "")
    return f"out[{j}]" + "".join(f"[{p}]" for p in parts)


@dataclass(frozen=True)
class Event:
    """A set of outputs: an optional discrete output, an optional discrete entry, an optional real threshold."""

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
    text: str = ""
    """The event in the spec's terms."""

    def contains(self, keys: np.ndarray, reals: np.ndarray) -> np.ndarray:
        mask = np.ones(keys.shape[0], dtype=bool)
        if self.key is not None:
            mask &= (keys == np.asarray(self.key, dtype=np.int64)).all(axis=1)
        if self.entry is not None:
            mask &= keys[:, self.entry] == self.value
        if self.real is not None:
            x = reals[:, self.real]
            with np.errstate(invalid="ignore"):
                mask &= (x <= self.threshold) if self.below else (x > self.threshold)
        return mask


@dataclass(frozen=True)
class Candidate:
    """An event with the direction it is tested in and its selection counts."""

    event: Event
    forward: bool
    """True: P[M(D) in E] > e^eps P[M(D') in E] is tested; False: the reverse."""
    score: float
    """Clopper–Pearson lower bound on the loss, on the selection sample."""


def key_text(layout: Layout, describe: DiscreteKeys, row: np.ndarray) -> str:
    """The discrete output of a key row, with reals as `·` (e.g. `[BOT, TOP(·)]`)."""
    length = int(row[0])
    p = layout.positions
    ncols = (row.size - 1) // p if p else 0
    entries = [int(row[1 + c * p + j]) for j in range(min(length, p)) for c in range(ncols)]
    data = np.asarray([length] + entries, dtype=np.int64).tobytes()
    try:
        return "out = " + describe.text(data)
    except Exception:  # an output type whose keys DiscreteKeys cannot spell: fall back to the raw key
        return f"discrete output {tuple(int(x) for x in row)}"


def candidates(layout: Layout, describe: DiscreteKeys, keys1: np.ndarray, reals1: np.ndarray,
               keys2: np.ndarray, reals2: np.ndarray, top: int, eps: float) -> list[Candidate]:
    """The `top` best candidates (by selection score, both directions) from selection samples of D and D'."""
    n1, n2 = keys1.shape[0], keys2.shape[0]
    events: list[Event] = []
    c1: list[np.ndarray] = []
    c2: list[np.ndarray] = []

    # whole discrete outputs
    both = np.concatenate([keys1, keys2])
    rows, inverse, total = np.unique(both, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    k1 = np.bincount(inverse[:n1], minlength=len(rows))
    k2 = np.bincount(inverse[n1:], minlength=len(rows))
    texts = {}
    for r in range(len(rows)):
        texts[r] = key_text(layout, describe, rows[r])
        events.append(Event(key=tuple(int(x) for x in rows[r]), text=texts[r]))
    c1.append(k1)
    c2.append(k2)

    # discrete projections: length and each entry
    for col in range(keys1.shape[1]):
        values = np.unique(both[:, col])
        values = values[values >= 0] if col else values
        if col and len(values) <= 1 and len(rows) <= 1:
            continue
        name = layout.key_names[col]
        for v in values:
            if col == 0:
                text = f"len(out) = {int(v)}"
            elif name.endswith(" is"):
                text = f"{name} {describe.tag_names[int(v)]}"
            else:
                text = f"{name} = {int(v)}"
            events.append(Event(entry=col, value=int(v), text=text))
        c1.append((keys1[:, col][:, None] == values[None, :]).sum(axis=0))
        c2.append((keys2[:, col][:, None] == values[None, :]).sum(axis=0))

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
            grid = np.unique(np.quantile(np.concatenate([a, b]), TAIL_GRID))
            a.sort()
            b.sort()
            below1 = np.searchsorted(a, grid, side="right")
            below2 = np.searchsorted(b, grid, side="right")
            where = "" if r is None else f"{texts[r]} and "
            key = None if r is None else tuple(int(x) for x in rows[r])
            name = layout.real_names[col]
            for t in grid:
                events.append(Event(key=key, real=col, threshold=float(t), below=True,
                                    text=f"{where}{name} <= {t:.6g}"))
            for t in grid:
                events.append(Event(key=key, real=col, threshold=float(t), below=False,
                                    text=f"{where}{name} > {t:.6g}"))
            c1.extend([below1, a.size - below1])
            c2.extend([below2, b.size - below2])

    c1a = np.concatenate(c1).astype(float)
    c2a = np.concatenate(c2).astype(float)
    forward = epsilon_lower_bound(c1a, n1, c2a, n2, SELECTION_DELTA)
    backward = epsilon_lower_bound(c2a, n2, c1a, n1, SELECTION_DELTA)
    bounds = np.concatenate([forward, backward])
    # the p-value at the claimed eps finds events whose loss exceeds the claim; the bound finds the strongest
    # loss (often a rarer event): both kinds are kept
    pvalues = np.concatenate([p_values(c1a, n1, c2a, n2, eps), p_values(c2a, n2, c1a, n1, eps)])
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
            e, fwd = int(idx % len(events)), bool(idx < len(events))
            chosen.append(Candidate(events[e], fwd, float(bounds[idx])))
    return chosen


def p_values(c1: np.ndarray, n1: float, c2: np.ndarray, n2: float, eps: float) -> np.ndarray:
    """The exact p-values of bounds.p_value, vectorised (on selection counts: a ranking, not a test)."""
    from scipy import stats

    p0 = 1.0 / (1.0 + np.exp(-min(eps, 700.0)) * n2 / n1)
    return np.where(c1 > 0, stats.binom.sf(c1 - 1, c1 + c2, p0), 1.0)
