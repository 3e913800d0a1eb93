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
"""Two-sided level of every interval in the tables (a row's theory falls outside it with probability 1 %
when the theory is right; a reproduction with r rows therefore states its family-wise rate, r %)."""


@dataclass(frozen=True)
class Estimate:
    """A measured quantity: the point estimate, a two-sided interval at `confidence`, and the trials behind it."""

    value: float
    low: float
    high: float
    trials: int
    confidence: float = CONFIDENCE

    @classmethod
    def mean(cls, samples: np.ndarray, confidence: float = CONFIDENCE) -> Estimate:
        """The sample mean with Student's t interval (the samples are i.i.d.; at these sizes the CLT applies)."""
        x = np.asarray(samples, dtype=float).ravel()
        n = x.size
        if n < 2:
            raise ValueError("a mean's interval needs at least two samples")
        half = stats.t.ppf((1 + confidence) / 2, n - 1) * x.std(ddof=1) / math.sqrt(n)
        m = float(x.mean())
        return cls(m, m - half, m + half, n, confidence)

    @classmethod
    def proportion(cls, successes: int, trials: int, confidence: float = CONFIDENCE) -> Estimate:
        """A frequency with its exact (Clopper–Pearson) interval."""
        ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence, method="exact")
        return cls(successes / trials, float(ci.low), float(ci.high), int(trials), confidence)

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
        half = stats.norm.ppf((1 + confidence) / 2) * math.sqrt(max(var, 0.0))
        return cls(r, r - half, r + half, n, confidence)

    @classmethod
    def exact(cls, value: float) -> Estimate:
        """A computed (not sampled) value: its interval is the point."""
        return cls(value, value, value, 0, 1.0)

    def covers(self, theory: float, tolerance: float = 0.0) -> bool:
        """Whether `theory` lies in the interval widened by `tolerance` (absolute) on each side."""
        return self.low - tolerance <= theory <= self.high + tolerance

    def text(self, digits: int = 4) -> str:
        if self.trials == 0:
            return f"{self.value:.{digits}g}"
        return f"{self.value:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}]"


@dataclass(frozen=True)
class Row:
    """One line of a reproduction: what it is about (`label`: column → value), what the seed's theory says,
    what we measured, and the tolerance allowed beyond the interval (a stated modelling or numerical error,
    zero unless the reproduction says why)."""

    label: dict[str, object]
    theory: float | None
    measured: Estimate
    tolerance: float = 0.0

    @property
    def agrees(self) -> bool | None:
        """None when the seed states no number for this row (a measurement reported for its own sake)."""
        if self.theory is None:
            return None
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

    @property
    def verdict(self) -> Verdict:
        checked = [row.agrees for row in self.rows if row.agrees is not None]
        return Verdict.AGREES if checked and all(checked) else Verdict.DISAGREES

    def table(self) -> str:
        columns = list(self.rows[0].label) if self.rows else []
        header = [*columns, "theory", "measured [99% CI]", "trials", "agrees"]
        body = []
        for row in self.rows:
            body.append([*(_cell(row.label[c]) for c in columns),
                         "-" if row.theory is None else f"{row.theory:.4g}",
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
        lines.append(f"verdict: {self.verdict.value} ({agreeing}/{checked} rows within the interval; "
                     f"recorded: {self.expected.value}) in {self.seconds:.1f} s")
        return "\n".join(lines)


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
    result = Reproduction(**{**result.__dict__, "seconds": time.perf_counter() - started})
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


def save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    import matplotlib.pyplot as plt

    plt.close(fig)
