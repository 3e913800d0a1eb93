"""What every reproduction under bench/papers/ shares: a measured value with its confidence interval, a row of
theory against measurement, the reproduction's table and verdict, its plot, and the command line.

A reproduction script defines `reproduce(trials, seed) -> Reproduction` (deterministic for a given seed) and
`plot(reproduction, path)`, and ends with `raise SystemExit(main(reproduce, plot, __doc__))`:

    python bench/papers/NAME.py [--trials N] [--seed S] [--plot PATH | --no-plot]

prints the table, writes the plot (default docs/reproductions/NAME.png) and exits 0 when the verdict is the one
recorded in the reproduction (`expected`), 1 otherwise — so a rerun says whether the documented verdict still
holds. tests/test_reproductions.py runs each with few trials and checks the same.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
PLOTS = ROOT / "docs" / "reproductions"

CONFIDENCE = 0.99
"""The level of each table's intervals taken together: a reproduction with m rows that state a theory shows
every interval at 1 − 0.01/m (Bonferroni), so that a right theory falls outside some row's interval with
probability at most 1 %, however many rows the table has."""


@dataclass(frozen=True)
class Estimate:
    """A measured quantity: the point estimate, a two-sided interval at `confidence`, and the trials behind it.
    `interval_at(confidence)` recomputes the interval at another level (None: the interval is fixed)."""

    value: float
    low: float
    high: float
    trials: int
    confidence: float = CONFIDENCE
    interval_at: Callable[[float], tuple[float, float]] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def normal(cls, value: float, standard_error: float, trials: int, confidence: float = CONFIDENCE) -> Estimate:
        """A value with an asymptotically normal error of the given standard error (a fit, a delta method)."""
        def interval(level: float) -> tuple[float, float]:
            half = stats.norm.ppf((1 + level) / 2) * standard_error
            return value - half, value + half

        return cls(value, *interval(confidence), trials, confidence, interval)

    @classmethod
    def mean(cls, samples: np.ndarray, confidence: float = CONFIDENCE) -> Estimate:
        """The sample mean with Student's t interval (the samples are i.i.d.; at these sizes the CLT applies)."""
        x = np.asarray(samples, dtype=float).ravel()
        n = x.size
        if n < 2:
            raise ValueError("a mean's interval needs at least two samples")
        m, sd = float(x.mean()), float(x.std(ddof=1))

        def interval(level: float) -> tuple[float, float]:
            half = float(stats.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
            return m - half, m + half

        return cls(m, *interval(confidence), n, confidence, interval)

    @classmethod
    def proportion(cls, successes: int, trials: int, confidence: float = CONFIDENCE) -> Estimate:
        """A frequency with its exact (Clopper–Pearson) interval."""
        test = stats.binomtest(int(successes), int(trials))

        def interval(level: float) -> tuple[float, float]:
            ci = test.proportion_ci(level, method="exact")
            return float(ci.low), float(ci.high)

        return cls(successes / trials, *interval(confidence), int(trials), confidence, interval)

    @classmethod
    def ratio_of_means(cls, numerator: np.ndarray, denominator: np.ndarray,
                       confidence: float = CONFIDENCE) -> Estimate:
        """E[X]/E[Y] from paired samples, with the delta-method interval (X and Y measured on the same trials)."""
        x = np.asarray(numerator, dtype=float).ravel()
        y = np.asarray(denominator, dtype=float).ravel()
        n = x.size
        if n < 2 or y.size != n:
            raise ValueError("a ratio needs two paired samples of the same size >= 2")
        mx, my = float(x.mean()), float(y.mean())
        r = mx / my
        cov = np.cov(x, y, ddof=1)
        var = (cov[0, 0] - 2 * r * cov[0, 1] + r * r * cov[1, 1]) / (my * my * n)
        return cls.normal(r, math.sqrt(max(float(var), 0.0)), n, confidence)

    @classmethod
    def exact(cls, value: float) -> Estimate:
        """A computed (not sampled) value: its interval is the point."""
        return cls(value, value, value, 0, 1.0)

    def at(self, confidence: float) -> Estimate:
        """The same estimate with its interval at another level (unchanged when the interval is fixed)."""
        if self.interval_at is None:
            return self
        low, high = self.interval_at(confidence)
        return dataclasses.replace(self, low=low, high=high, confidence=confidence)

    def covers(self, theory: float, tolerance: float = 0.0) -> bool:
        """Whether `theory` lies in the interval widened by `tolerance` (absolute) on each side."""
        return bool(self.low - tolerance <= theory <= self.high + tolerance)

    def text(self, digits: int = 4) -> str:
        if self.trials == 0:
            return f"{self.value:.{digits}g}"
        return f"{self.value:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}]"


class Bound(enum.Enum):
    """What a row's theory claims of the measured quantity: equal to it; strictly above it (a one-sided claim
    such as "more answers": the whole interval must lie above, beyond the tolerance); or at most it (a bound
    such as "the loss is at most ε": the whole interval, less the tolerance, must not exceed it)."""

    EQUALS = "="
    ABOVE = ">"
    AT_MOST = "<="


@dataclass(frozen=True)
class Row:
    """One line of a reproduction: what it is about (`label`: column → value), what the seed's theory says,
    what we measured, and the tolerance allowed beyond the interval (a stated modelling or numerical error,
    zero unless the reproduction says why)."""

    label: dict[str, object]
    theory: float | None
    measured: Estimate
    tolerance: float = 0.0
    bound: Bound = Bound.EQUALS

    @property
    def agrees(self) -> bool | None:
        """None when the seed states no number for this row (a measurement reported for its own sake)."""
        if self.theory is None:
            return None
        if self.bound is Bound.ABOVE:
            return bool(self.measured.low - self.tolerance > self.theory)
        if self.bound is Bound.AT_MOST:
            return bool(self.measured.high - self.tolerance <= self.theory)
        return self.measured.covers(self.theory, self.tolerance)


class Verdict(enum.Enum):
    AGREES = "agrees"
    DISAGREES = "disagrees"


@dataclass(frozen=True)
class Reproduction:
    """A seed's claim, where it is stated, the rows measured, and the verdict recorded in docs/reproductions.md
    (`expected`). `findings` are sentences a reader needs beside the table (a typo confirmed, a disagreement's
    size); they are printed under it."""

    name: str
    source: str
    claim: str
    rows: list[Row]
    expected: Verdict
    findings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", simultaneous(self.rows))

    @property
    def row_confidence(self) -> float:
        """The level of each row's interval (1 − 0.01/m for m rows with a theory)."""
        return row_confidence(self.rows)

    @property
    def verdict(self) -> Verdict:
        checked = [row.agrees for row in self.rows if row.agrees is not None]
        return Verdict.AGREES if checked and all(checked) else Verdict.DISAGREES

    def table(self) -> str:
        columns = list(self.rows[0].label) if self.rows else []
        header = [*columns, "theory", f"measured [{self.row_confidence:.4%} CI]", "trials", "agrees"]
        body = []
        for row in self.rows:
            body.append([*(_cell(row.label[c]) for c in columns),
                         "-" if row.theory is None else f"{'' if row.bound is Bound.EQUALS else row.bound.value}"
                                                        f"{row.theory:.4g}",
                         row.measured.text(), str(row.measured.trials),
                         {True: "yes", False: "NO", None: "-"}[row.agrees]])
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in body]
        return "\n".join(lines)

    def report(self) -> str:
        lines = [f"{self.name}: {self.source}", f"claim: {self.claim}", "", self.table(), ""]
        lines += [f"- {finding}" for finding in self.findings]
        agreeing = sum(1 for row in self.rows if row.agrees)
        checked = sum(1 for row in self.rows if row.agrees is not None)
        lines.append(f"verdict: {self.verdict.value} ({agreeing}/{checked} rows agree; intervals simultaneous at "
                     f"{CONFIDENCE:.0%}; recorded: {self.expected.value}) in {self.seconds:.1f} s")
        return "\n".join(lines)


def row_confidence(rows: Sequence[Row]) -> float:
    """1 − (1 − CONFIDENCE)/m for m rows that state a theory: each row's level, so that all m hold together."""
    checked = max(1, sum(1 for row in rows if row.theory is not None))
    return 1 - (1 - CONFIDENCE) / checked


def simultaneous(rows: Sequence[Row]) -> list[Row]:
    """The rows with every interval at `row_confidence(rows)` (Bonferroni). `Reproduction` applies it; a script
    that quotes intervals in its findings applies it first, so that the text and the table agree."""
    level = row_confidence(rows)
    return [dataclasses.replace(row, measured=row.measured.at(level)) for row in rows]


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main(reproduce: Callable[[int, int], Reproduction], plot: Callable[[Reproduction, Path], None],
         doc: str | None, default_trials: int, argv: Sequence[str] | None = None) -> int:
    """The command line shared by every reproduction script (see the module docstring)."""
    name = Path(reproduce.__code__.co_filename).stem
    parser = argparse.ArgumentParser(description=(doc or name).split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=default_trials, help=f"default {default_trials}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", type=Path, default=PLOTS / f"{name}.png")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = reproduce(args.trials, args.seed)
    result = dataclasses.replace(result, seconds=time.perf_counter() - started)
    print(result.report())
    if not args.no_plot:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        plot(result, args.plot)
        print(f"plot: {args.plot}")
    return 0 if result.verdict is result.expected else 1


def figure(width: float = 6.0, height: float = 3.6):
    """A matplotlib figure on the Agg backend (no display), sized for docs: PNGs of a few tens of kB."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), dpi=90)
    return fig, ax


def error_bars(rows: Sequence[Row], scale: float = 1.0) -> np.ndarray:
    """matplotlib's `yerr` (2 × n: below, above) for the rows' measured values and their intervals."""
    return scale * np.array([[row.measured.value - row.measured.low for row in rows],
                             [row.measured.high - row.measured.value for row in rows]])


def save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    import matplotlib.pyplot as plt

    plt.close(fig)
