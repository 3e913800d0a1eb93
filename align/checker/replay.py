"""Confirm a refutation by running the counterexample through the reference interpreter.

The z3 model is exact; the interpreter evaluates in floating point, and treats exp and ln as the real
functions (the checker leaves them uninterpreted). A refutation that the replay reproduces is reported as
confirmed; one that relied on an uninterpreted function and does not reproduce is downgraded to unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..counterexample import Counterexample
from ..diagnostics import SpecError
from ..resolve import ResolvedMechanism


@dataclass(frozen=True)
class Replay:
    confirmed: bool
    detail: str


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str) and "/" in value:
        p, q = value.split("/")
        return float(Fraction(int(p), int(q)))
    if isinstance(value, dict):
        return value
    return value


def replay(mech: ResolvedMechanism, data: dict[str, Any]) -> Replay:
    """Evaluate the refuted obligation on the counterexample with the interpreter (plain float arithmetic)."""
    from ..interp.runner import prepare_arguments, prepare_neighbour
    from ..interp.scalar import Interpreter, NoiseValues, align

    obligation = data["obligation"]
    try:
        cex = Counterexample.from_json({k: v for k, v in data.items() if k in
                                        ("format", "spec", "mechanism", "obligation", "args", "neighbour", "noise",
                                         "note")})
        args = prepare_arguments(mech, cex.args)
        neighbour = prepare_neighbour(mech, args, cex.neighbour) if cex.neighbour or \
            any(not p.public for p in mech.params) else {}
        if obligation == "C0":
            return _replay_density(mech, data, args, neighbour, cex.noise)
        run = Interpreter(mech, NoiseValues(mech, cex.noise), trace=False).run(args)
        if obligation == "C2":
            return Replay(False, "C2 needs two runs; not replayed")
        if mech.alignment is None and obligation == "C4a":
            # no alignment block: φ is the identity, so the run on D' draws the same noise
            aligned = Interpreter(mech, NoiseValues(mech, cex.noise), trace=False).run({**args, **neighbour})
            same = _same(run.out, aligned.out)
            return Replay(not same, f"output on D {run.out!r}, on D' with the same noise {aligned.out!r}")
        if mech.alignment is None:
            return Replay(False, "no alignment to replay")
        try:
            alignment = align(mech, args, neighbour, run)
        except SpecError as error:
            # C4a includes that φ is defined on the run's output: an alignment that reads `out` past its end
            # has no value there
            undefined = obligation == "C4a" and any(d.code == "index-out-of-range" for d in error.diagnostics)
            return Replay(undefined, "the alignment cannot be evaluated on this output: " +
                          "; ".join(d.message for d in error.diagnostics))
        if obligation == "C4a":
            aligned = Interpreter(mech, NoiseValues(mech, alignment.noise(), aligned=True), trace=False) \
                .run({**args, **neighbour})
            same = _same(run.out, aligned.out)
            return Replay(not same, f"output on D {run.out!r}, aligned run on D' {aligned.out!r}")
        if obligation == "C4c":
            broken = alignment.cost > alignment.claim * (1 + 1e-12) + 1e-12
            return Replay(broken, f"cost {alignment.cost!r} vs claim {alignment.claim!r}")
        if obligation == "C4d":
            bad = [d for d in alignment.draws if not d.in_support or not d.whole]
            return Replay(bool(bad), "; ".join(f"{d.draw.display}' = {d.aligned!r}" for d in bad) or "all in support")
        if obligation == "C3":
            bad = [d for d in alignment.draws if d.coefficient is None and d.shift != 0]
            return Replay(bool(bad), "; ".join(f"{d.draw.display} shifted by {d.shift!r}" for d in bad) or "no shift")
        if obligation == "C4b":
            return Replay(False, "acyclicity is not a property of one run")
    except SpecError as error:
        return Replay(False, "replay failed: " + "; ".join(d.message for d in error.diagnostics))
    return Replay(False, "not replayable")


def _replay_density(mech: ResolvedMechanism, data: dict[str, Any], args: dict, neighbour: dict,
                    noise: dict) -> Replay:
    """C0: the interpreter refuses the parameters (not a density), or the site's parameters differ between
    the run on (D, H) and the aligned run on (D', φ(H))."""
    from ..interp.scalar import Interpreter, NoiseValues, align

    site = (data.get("parameters") or {}).get("site")
    try:
        run = Interpreter(mech, NoiseValues(mech, noise), trace=False).run(args)
    except SpecError as error:
        codes = {d.code for d in error.diagnostics}
        refused = codes & {"invalid-distribution-parameter", "division-by-zero", "math-domain"}
        return Replay(bool(refused), "the run on D stops: " + "; ".join(d.message for d in error.diagnostics))
    if mech.alignment is not None:
        aligned_noise = align(mech, args, neighbour, run).noise()
        aligned = True
    else:
        aligned_noise, aligned = noise, False
    try:
        other = Interpreter(mech, NoiseValues(mech, aligned_noise, aligned=aligned), trace=False) \
            .run({**args, **neighbour})
    except SpecError as error:
        codes = {d.code for d in error.diagnostics}
        refused = codes & {"invalid-distribution-parameter", "division-by-zero", "math-domain"}
        return Replay(bool(refused), "the aligned run on D' stops: " + "; ".join(d.message for d in error.diagnostics))
    there = {d.display: d.params for d in other.draws}
    for d in run.draws:
        if site is not None and d.display != site:
            continue
        if d.display in there and not _same(list(d.params), list(there[d.display])):
            name = d.site.distribution.name
            return Replay(True, f"{d.display} ~ {name}({', '.join(map(repr, d.params))}) on D, "
                                f"{name}({', '.join(map(repr, there[d.display]))}) in the aligned run on D'")
    return Replay(False, "the parameters agree in the interpreter's floating-point runs")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) <= 1e-9 * (1 + abs(float(a)) + abs(float(b)))
        except (TypeError, ValueError):
            return False
    if hasattr(a, "__dict__") and hasattr(b, "__dict__"):
        return type(a) is type(b) and _same(list(vars(a).values()), list(vars(b).values()))
    return a == b
