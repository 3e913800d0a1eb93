"""Statistics (the figure of `align test --plot FILE.png`): matplotlib, an optional extra (`align[plot]`).

Left panel (as StatDP draws it): for each test epsilon on a grid from 0 to beyond the claim (and beyond the
strongest lower bound), the smallest Bonferroni-adjusted p-value over the tested (pair, event) findings of
H0: P[M(D) in E] <= e^eps P[M(D') in E], with the counts the search measured; the level alpha and the claimed
epsilon are marked. A claim is rejected where the curve is below alpha; the curve rises through alpha near
the true loss of the best event, exactly at the largest epsilon lower bound (each bound is its finding's test
inverted, bounds.py: p-value(eps) <= alpha / tests exactly when eps <= the bound). Right panel: the strongest
epsilon lower bound (simultaneous, at level alpha) per input pair, with the claimed epsilon marked; a bar is red
when a finding of that pair rejects its claim.
"""

from __future__ import annotations

import io
import math
import os
from typing import Any, BinaryIO

import numpy as np

from ..files import open_output


def available() -> bool:
    try:
        # lazy: loads matplotlib only when this runs (start-up; tests/test_layers.py)
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


_NEEDS_LATEX = {"pgf"}
"""matplotlib's formats that run a LaTeX installation to write the figure."""


def formats() -> list[str]:
    """The file suffixes (without the dot) that `write_plot` writes: matplotlib's formats."""
    # lazy: loads matplotlib only when this runs (start-up; tests/test_layers.py)
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(set(FigureCanvasBase.get_supported_filetypes()) - _NEEDS_LATEX)


def plot_format(path: str) -> str | None:
    """The format of the figure file `path`: its suffix's (`.svg`: svg), PNG for a name without one (`/dev/stdout`);
    None when matplotlib writes no format of that suffix."""
    suffix = os.path.splitext(path)[1].lower().removeprefix(".")
    if not suffix:
        return "png"
    return suffix if suffix in formats() else None


def epsilon_grid(result: Any, points: int = 101) -> np.ndarray:
    """0 .. max(2 x claim, 1.5 x the strongest finite bound, 1)."""
    top = max(2 * result.claimed_epsilon, 1.0)
    s = result.strongest
    if s is not None and math.isfinite(s.epsilon_lower_bound):
        top = max(top, 1.5 * s.epsilon_lower_bound)
    return np.linspace(0.0, top, points)


def p_curve(result: Any, grid: np.ndarray) -> np.ndarray:
    """The smallest adjusted p-value over the findings at each test epsilon of `grid`."""
    best = np.ones(len(grid))
    for f in result.findings:
        if f.c1 <= 0:
            continue
        p = np.array([min(1.0, f.p_value_at(float(e)) * result.tests) for e in grid])
        best = np.minimum(best, p)
    return best


def pairs_rejecting(result: Any) -> set[int]:
    """The input pairs (indices into `result.pairs`) with a finding that rejects its own claim
    (Finding.rejects): the same decision as the verdict, also for a claim that reads the output, where each
    event has its own claim."""
    return {f.pair_index for f in result.findings if f.rejects}


def bounds_per_pair(result: Any) -> list[tuple[str, float]]:
    """(pair label, strongest epsilon lower bound over its findings), one row per pair in the search's order;
    inf for a pair with a support mismatch proved by z3 (Finding.epsilon_bound). Rows are per pair, not per
    name (two refuted obligations can give two checker pairs of one name); a repeated name is numbered, and a
    pattern of a longer length than the first is labelled with it."""
    best = [-math.inf] * len(result.pairs)
    for f in result.findings:
        best[f.pair_index] = max(best[f.pair_index], f.epsilon_bound)
    first = (getattr(result, "lengths", None) or [None])[0]
    # the patterns of a longer length the search escalated to say so
    names = [p.name if getattr(p, "length", None) in (None, first) else f"{p.name} (length {p.length})"
             for p in result.pairs]
    labels = [f"{name} ({names[:k].count(name) + 1})" if names.count(name) > 1 else name
              for k, name in enumerate(names)]
    return list(zip(labels, best))


def write_plot(path: str | BinaryIO, mechanism: str, result: Any) -> None:
    """Draw both panels into the file `path`, in the format of its suffix (`plot_format`; ValueError for another),
    or as PNG into a binary stream, with the Agg backend. The file is exactly `path` (matplotlib itself would
    add `.png` to a name without a suffix) and a failed write raises OSError (on a full disk too)."""
    if isinstance(path, str):
        fmt = plot_format(path)
        if fmt is None:
            raise ValueError(f"matplotlib writes no format of the suffix of {path}")
        drawn = io.BytesIO()
        _draw(drawn, fmt, mechanism, result)

        with open_output(path) as handle:
            handle.write(drawn.getvalue())
    else:
        _draw(path, "png", mechanism, result)


def _draw(stream: BinaryIO, fmt: str, mechanism: str, result: Any) -> None:
    # lazy: loads matplotlib only when this runs (start-up; tests/test_layers.py)
    import matplotlib

    matplotlib.use("Agg")
    # lazy: loads matplotlib only when this runs (start-up; tests/test_layers.py)
    from matplotlib.figure import Figure

    grid = epsilon_grid(result)
    curve = p_curve(result, grid)
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(3, 2))
    left.plot(grid, curve, color="tab:blue", label="smallest adjusted p-value")
    left.axhline(result.alpha, color="tab:red", linestyle="--", label=f"alpha = {result.alpha:g}")
    left.axvline(result.claimed_epsilon, color="black", linestyle=":",
                 label=f"claimed eps = {result.claimed_epsilon:.4g}")
    left.set_xlim(grid[0], grid[-1])
    left.set_ylim(-0.02, 1.02)
    left.set_xlabel("test eps")
    left.set_ylabel("p-value (Bonferroni-adjusted)")
    verdict = "violation confirmed" if result.violation else "no violation found"
    left.set_title(f"{mechanism}: {verdict}")
    left.legend(loc="center right", fontsize="small")

    rows = bounds_per_pair(result)
    names = [name for name, _ in rows]
    finite = [b for _, b in rows if math.isfinite(b)]
    # a proved support mismatch (eps = inf) is drawn past the largest finite bar and labelled
    reach = max([result.claimed_epsilon, *finite]) * 1.25 or 1.0
    values = [reach if b == math.inf else b if math.isfinite(b) else 0.0 for _, b in rows]
    y = np.arange(len(rows))
    rejecting = pairs_rejecting(result)
    colors = ["tab:red" if k in rejecting else "tab:gray" for k in range(len(rows))]
    right.barh(y, values, color=colors)
    proved = [k for k, (_, b) in enumerate(rows) if b == math.inf]
    for k in proved:
        right.text(reach, k, " inf (proved)", va="center", fontsize="small")
    if proved:
        right.set_xlim(0, reach * 1.45)  # room for the labels
    right.set_yticks(y, names, fontsize="small")
    right.invert_yaxis()
    right.axvline(result.claimed_epsilon, color="black", linestyle=":", label="claimed eps")
    right.set_xlabel(f"eps lower bound ({1 - result.alpha:.0%}, simultaneous)")
    right.set_title("eps lower bound per input pair")
    right.legend(loc="lower right", fontsize="small")
    fig.savefig(stream, dpi=100, format=fmt)
