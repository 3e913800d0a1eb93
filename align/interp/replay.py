"""Interpreter (replay): one execution with given noise H and, with the neighbour's values, the alignment φ(H),
the run on D' with it, and every obligation this one H breaks.

The one place a single H is checked in floating point: `align run --noise ... --aligned` prints it, the
Python API returns it (`align.replay`), and the checker confirms a refutation with it (checker/replay.py).
The conditions are the obligation table's (`obligations.ONE_RUN`) with its one tolerance; the sampled check
(interp/alignment.py) tests the same conditions on many H at once.
"""

from __future__ import annotations

from typing import Any

from ..obligations import ObligationId, close, cost_within_claim
from ..resolve import ResolvedMechanism
from ..results import Replay
from .errors import RunError
from .values import format_value

DENSITY_CODES = frozenset({"invalid-distribution-parameter", "division-by-zero", "math-domain"})
"""A run that stops with one of these drew from something that is not a density: C0 (`interp.scalar`)."""


def replay(mech: ResolvedMechanism, path: str, raw_args: dict[str, Any], noise: dict[str, Any],
           raw_neighbour: dict[str, Any] | None = None) -> Replay:
    """One execution on D with the noise H; with the private parameters' values on D', also φ(H) (the
    identity for a mechanism without an alignment) and the run on D' with it, and the obligations this H
    breaks. Arguments are checked (`requires`, adjacency); a run on D that stops raises its `RunError`."""
    # lazy: loads numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from .alignment import magnitude
    from .runner import prepare_arguments, prepare_neighbour
    from .scalar import Interpreter, NoiseValues, align

    values = prepare_arguments(mech, raw_args)
    if raw_neighbour is None:
        return Replay(path, mech, values, noise, Interpreter(mech, NoiseValues(mech, noise)).run(values))
    # an alignment maps runs with the same `out` (a release block is not run: the proof reaches it by post-processing)
    mech = mech.without_release()
    neighbour = prepare_neighbour(mech, values, raw_neighbour)
    run = Interpreter(mech, NoiseValues(mech, noise)).run(values)
    alignment = align(mech, values, neighbour, run)
    failures = [] if cost_within_claim(alignment.cost, alignment.claim) else [ObligationId.C4C]
    failures += [ObligationId.C3 for d in alignment.draws if d.coefficient is None and d.shift != 0]
    if any(not (d.in_support and d.whole) for d in alignment.draws):
        failures.append(ObligationId.C4D)
    aligned_values = {**values, **neighbour}
    try:
        aligned = Interpreter(mech, NoiseValues(mech, alignment.noise(), aligned=mech.alignment is not None)) \
            .run(aligned_values)
    except RunError as error:
        if error.diagnostic.code in DENSITY_CODES:
            failures.append(ObligationId.C0)
        failures.append(ObligationId.C4A)
        return Replay(path, mech, values, noise, run, neighbour, alignment, None, error.diagnostic, False,
                      tuple(dict.fromkeys(failures)))
    density = different_density(run, aligned)
    if density is not None:
        failures.append(ObligationId.C0)
    match = same_output(run.out, aligned.out, magnitude(values, neighbour))
    if match and aligned.unused:
        failures.append(ObligationId.C2)
    if not match:
        failures.append(ObligationId.C4A)
    return Replay(path, mech, values, noise, run, neighbour, alignment, aligned, None, match,
                  tuple(dict.fromkeys(failures)), density)


def different_density(run: Any, aligned: Any) -> str | None:
    """C0 on one H: a value drawn in both runs with other parameters, described; None if there is none."""
    there = {d.display: d.params for d in aligned.draws}
    for d in run.draws:
        other = there.get(d.display)
        if other is not None and not same_output(list(d.params), list(other), 0.0):
            name = d.site.distribution.name
            return (f"{d.display} ~ {name}({', '.join(format_value(p, digits=None) for p in d.params)}) on D, "
                    f"{name}({', '.join(format_value(p, digits=None) for p in other)}) in the aligned run on D'")
    return None


def same_output(a: Any, b: Any, scale: float) -> bool:
    """Two outputs equal: discrete parts exactly, real numbers up to rounding (`obligations.close`, relative to
    `scale`, the magnitude of the inputs)."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or \
                not isinstance(b, (int, float)):
            return False
        return bool(close(a, b, scale))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_output(p, q, scale) for p, q in zip(a, b))
    if hasattr(a, "payload") and hasattr(b, "payload"):
        return bool(a.name == b.name and same_output(list(a.payload), list(b.payload), scale))
    return bool(a == b)

