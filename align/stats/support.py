"""Statistics (support): prove with z3 that an output event is impossible on an input, P[M(D') in E] = 0.

A sampled support mismatch (E seen under D, never under D') only bounds eps by the sample size: with c2 = 0
the Clopper–Pearson upper bound on P2 is about ln(2/delta)/N2, so the bound ln lcb(P1) - ln ucb(P2) grows like
ln N2 and never reaches the true eps = inf (docs/testing.md §2). DP-Sniper and StatDP stop there. Here the
checker's symbolic execution (align/smt/encode.py) runs the mechanism on the concrete D' with symbolic
noise, and z3 is asked for noise that puts the output in E:

    requires(D') and noise in its support and out(D', noise) in E      unsat  =>  P[M(D') in E] = 0.

The query is exact (rational arithmetic; the event's float thresholds are exact rationals too), and it is
sound for every noise distribution: the only noise constraints used are supports (>= 0 for Exp, Geo, ...),
and the measure-zero assumption "no ties among continuously-noised values ranked by argmax/top-k", which
removes a set of probability 0. Functions z3 does not know (exp, ln) stay uninterpreted, and "no model for
any interpretation" includes the real one. Anything the encoding cannot express (list-valued outputs, the
privacy-loss column, a loop not fixed by the input) and every `unknown` answer leave the finding as it was.

Together with c1 > 0 samples of M(D) in E (hence P1 >= lcb(P1) > 0 at the finding's confidence), a proof
gives eps = inf: the pair (D, D') violates eps'-DP for every finite eps'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import z3

from ..interp.outputs import DISCRETE_KINDS, Outputs
from ..resolve import ResolvedMechanism
from ..smt import terms as zt
from ..smt.encode import Encoding, EncodingError, ExprEval, ListV, Run, TagV, TupV, num, tag_code
from ..smt.solver import Limits, Satisfiability, fresh_context, satisfiable
from ..smt.supports import noise_support
from ..types import BOOL, INT, REAL, ListType, TagType, TupleType, Type
from .events import Event

LIMITS = Limits(flatten=True)
"""One impossibility query: the checker's deterministic resource limit, on a preprocessed goal (fast on the
ground formulas of one concrete input); a query that reaches it comes back unknown (no claim)."""


class Unsupported(Exception):
    """The event or the mechanism is outside what the encoding expresses: no claim is made."""


def _inputs(enc: Encoding, args: Mapping[str, Any]) -> dict[str, Any]:
    """The concrete arguments as z3 constants: the run is then a formula over the noise alone, folded to
    constants wherever the inputs decide (far smaller than symbolic inputs with equations would leave it)."""
    values: dict[str, Any] = {}
    for p in enc.mech.params:
        value = args[p.name]
        if p.name in enc.structural:
            values[p.name] = enc.params[p.name]
        elif isinstance(p.type, ListType):
            values[p.name] = ListV(tuple(num(Fraction(v), p.type.elem == INT) for v in value))
        elif p.type == BOOL:
            values[p.name] = zt.BoolVal(bool(value))
        else:
            values[p.name] = num(Fraction(value), p.type == INT)
    return values


def _root_bounds(s: z3.ArithRef, x: z3.ExprRef) -> z3.BoolRef | None:
    """For s = sqrt(x) with x a rational constant: rational bounds lo <= s <= hi around the root (or s equal
    to it when x is a square). A relaxation of s*s = x: it keeps the query linear, and "no model" for it is
    "no model" for the exact root. None when x is not a constant."""
    if not z3.is_rational_value(x):
        return None
    value = Fraction(x.numerator_as_long(), x.denominator_as_long())
    if value < 0:
        return None
    scale = 10 ** 15
    # floor(sqrt(value) * scale) by integer square roots of numerator and denominator
    lo = Fraction(math.isqrt(value.numerator * scale * scale // value.denominator), scale)
    hi = lo + Fraction(1, scale)
    if lo * lo == value:
        return s == zt.RealVal(lo)
    return zt.And(s >= zt.RealVal(lo), s <= zt.RealVal(hi))


_INTERVAL_FUNCTIONS = ("exp", "ln", "normal_cdf", "normal_pdf")


class _Enclosure:
    """Replaces each noise-free term that applies exp, ln, normal_cdf or normal_pdf (uninterpreted in the
    encoding) to constants — `1 / (1 - exp(-1/2))` — by a fresh constant bounded by a rigorous interval
    (mpmath's interval arithmetic, 80 bits, outward rounding) that contains its true value.

    Why: with concrete inputs the encoding is linear in the noise except for such constants, which, left
    uninterpreted, make the query nonlinear (b0 = 1/(1 - e) with e free) and cost z3 more than its resource
    limit (Free Gap Algorithm 3 with geometric noise). The replacement is a relaxation, so "no model" for it
    is "no model" for the exact values, and an "impossible" answer stays sound; a model is only a witness
    that the relaxation allows (align test makes no claim from "possible").

    One enclosure serves the events of one run (`check_events`): what it has worked out of a term (its
    interval, whether it applies a function, its fresh constant) is kept by the term's id, with the term
    itself, since z3 gives the id of a term that is freed to the next one it makes."""

    def __init__(self) -> None:
        self.intervals: dict[int, tuple[z3.ExprRef, Any]] = {}
        self.contains: dict[int, tuple[z3.ExprRef, bool]] = {}
        self.fresh: dict[int, tuple[z3.ExprRef, z3.ArithRef, z3.BoolRef]] = {}

    def __call__(self, constraints: list[z3.BoolRef]) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
        """The constraints rewritten, and the bounds of the fresh constants they read."""
        # lazy: loads mpmath only when this runs (start-up; tests/test_layers.py)
        from mpmath import iv

        saved = iv.prec
        iv.prec = 80  # mpmath's interval context has no `workprec`; the precision is restored below
        try:
            return self._enclose(constraints, iv)
        finally:
            iv.prec = saved

    def _interval(self, term: z3.ExprRef, iv: Any) -> Any:
        """The interval of a noise-free term, or None."""
        key = term.get_id()
        if key in self.intervals:
            return self.intervals[key][1]
        self.intervals[key] = (term, None)
        result = self._compute(term, iv)
        if result is not None and not (math.isfinite(float(result.a)) and math.isfinite(float(result.b))):
            result = None
        self.intervals[key] = (term, result)
        return result

    def _compute(self, term: z3.ExprRef, iv: Any) -> Any:
        if z3.is_rational_value(term) or z3.is_int_value(term):
            value = term.as_fraction() if z3.is_rational_value(term) else Fraction(term.as_long())
            return iv.mpf(value.numerator) / iv.mpf(value.denominator)
        if not z3.is_app(term) or term.num_args() == 0:
            return None
        args = [self._interval(c, iv) for c in term.children()]
        if any(a is None for a in args):
            return None
        kind = term.decl().kind()
        try:
            if kind == z3.Z3_OP_ADD:
                return sum(args[1:], args[0])
            if kind == z3.Z3_OP_SUB:
                return args[0] - sum(args[1:], iv.mpf(0))
            if kind == z3.Z3_OP_MUL:
                result = args[0]
                for a in args[1:]:
                    result = result * a
                return result
            if kind == z3.Z3_OP_DIV and len(args) == 2:
                if args[1].a <= 0 <= args[1].b:
                    return None
                return args[0] / args[1]
            if kind == z3.Z3_OP_UMINUS:
                return -args[0]
            if kind in (z3.Z3_OP_TO_REAL,):
                return args[0]
            if kind == z3.Z3_OP_UNINTERPRETED and term.decl().name() in _INTERVAL_FUNCTIONS and len(args) == 1:
                x = args[0]
                name = term.decl().name()
                if name == "exp":
                    return iv.exp(x)
                if name == "ln":
                    return None if x.a <= 0 else iv.log(x)
                if name == "normal_cdf":
                    return (1 + iv.erf(x / iv.sqrt(2))) / 2
                return iv.exp(-x * x / 2) / iv.sqrt(2 * iv.pi)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return None

    def _has_function(self, term: z3.ExprRef) -> bool:
        """Whether term applies one of the functions (memoised: the terms share most of their subterms)."""
        key = term.get_id()
        if key not in self.contains:
            found = (z3.is_app(term) and term.decl().kind() == z3.Z3_OP_UNINTERPRETED and
                     term.decl().name() in _INTERVAL_FUNCTIONS) or \
                any(self._has_function(c) for c in term.children())
            self.contains[key] = (term, found)
        return self.contains[key][1]

    def _enclose(self, constraints: list[z3.BoolRef], iv: Any) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
        # lazy: loads mpmath only when this runs (start-up; tests/test_layers.py)
        from mpmath import libmp

        used: dict[int, tuple[z3.ExprRef, z3.ArithRef, z3.BoolRef]] = {}
        seen: set[int] = set()

        def visit(term: z3.ExprRef) -> None:
            key = term.get_id()
            if key in seen:
                return
            seen.add(key)
            if z3.is_arith(term) and not z3.is_int(term) and not z3.is_rational_value(term) and \
                    self._has_function(term):
                if key not in self.fresh:
                    enclosure = self._interval(term, iv)
                    if enclosure is not None:
                        fresh = zt.Real(f"%enclosed{len(self.fresh)}")
                        lo = Fraction(*libmp.to_rational(enclosure._mpi_[0]))
                        hi = Fraction(*libmp.to_rational(enclosure._mpi_[1]))
                        self.fresh[key] = (term, fresh, zt.And(fresh >= zt.RealVal(lo), fresh <= zt.RealVal(hi)))
                if key in self.fresh:
                    used[key] = self.fresh[key]
                    return
            for child in term.children():
                if self._has_function(child):
                    visit(child)

        for c in constraints:
            if self._has_function(c):
                visit(c)
        if not used:
            return constraints, []
        pairs = [(term, fresh) for term, fresh, _ in used.values()]
        return [z3.substitute(c, *pairs) for c in constraints], [bound for _, _, bound in used.values()]


def _encoding(mech: ResolvedMechanism, args: Mapping[str, Any]) -> Encoding:
    lengths = {p.name: len(args[p.name]) for p in mech.params if isinstance(p.type, ListType)}
    structural = {p.name: int(args[p.name]) for p in mech.params if p.type == INT}
    return Encoding(mech, lengths, structural)


def _flatten(v: Any, t: Type, name: str, valid: z3.BoolRef, enc: Encoding,
             out: dict[str, tuple[str, z3.ExprRef, z3.BoolRef]]) -> None:
    """The components of one output element, named and ordered as interp.outputs names its columns."""
    def sub(suffix: str) -> str:
        return f"{name}.{suffix}" if name else suffix

    if isinstance(t, TupleType):
        if not isinstance(v, TupV):
            raise Unsupported("a tuple output that is not a tuple value")
        for k, (x, it) in enumerate(zip(v.items, t.items)):
            _flatten(x, it, sub(str(k)), valid, enc, out)
        return
    if isinstance(t, TagType):
        if not isinstance(v, TagV):
            raise Unsupported("a tagged output that is not a tagged value")
        out[sub("tag")] = ("tag", v.code, valid)
        for tag, types in t.payloads:
            if not types:
                continue
            fields = v.fields(tag)
            has = zt.And(valid, v.code == tag_code(tag))
            for k, pt in enumerate(types):
                # a payload the value never carries: any value (the constraint only gets weaker)
                x = fields[k] if k < len(fields) else enc.fresh("payload", "int" if pt == INT else "real")
                _flatten(x, pt, sub(f"{tag}.{k}"), has, enc, out)
        return
    if isinstance(t, ListType):
        raise Unsupported("list-valued outputs")
    if t == REAL:
        out[name or "value"] = ("real", z3.ToReal(v) if z3.is_int(v) else v, valid)
    elif t == INT:
        out[name or "value"] = ("int", v, valid)
    elif t == BOOL:
        out[name or "value"] = ("bool", z3.If(v, zt.IntVal(1), zt.IntVal(0)), valid)
    else:
        raise Unsupported(f"outputs of type {t}")


def event_formula(mech: ResolvedMechanism, run: Run, event: Event, tag_names: tuple[str, ...]) -> z3.BoolRef:
    """"The output of `run` lies in `event`", with the event's key and real columns laid out as in
    events.Layout (the length, then each discrete column at each of `event.positions` positions; each real
    column at each position, then min, max and sum of the present ones)."""
    positions = event.positions
    if positions < 1:
        raise Unsupported("an event without its layout")
    t = mech.output_type
    columns = Outputs(np.zeros(1, dtype=np.int64), None, t, tag_names).columns(positions)
    slots, length = run.output.slots, run.output.length
    per_position = []
    for k in range(positions):
        comps: dict[str, tuple[str, z3.ExprRef, z3.BoolRef]] = {}
        if k < len(slots):
            _flatten(slots[k], t, "", length > k, run.enc, comps)
        per_position.append(comps)
    discrete = [c for c in columns if c.kind in DISCRETE_KINDS]
    reals = [c for c in columns if c.kind == "real"]
    # key column -> (kind, expr, valid) per position (None: the position has no slot, never valid)
    key_cols: list[tuple[str, Any] | None] = [("length", length)]
    for c in discrete:
        for k in range(positions):
            entry = per_position[k].get(c.name)
            key_cols.append((c.kind, entry) if entry is not None else None)
    real_cols: list[tuple[z3.ExprRef, z3.BoolRef] | None] = []
    for c in reals:
        for k in range(positions):
            entry = per_position[k].get(c.name)
            real_cols.append((entry[1], entry[2]) if entry is not None else None)

    def key_is(col: int, value: int) -> z3.BoolRef:
        if col >= len(key_cols):
            raise Unsupported("a key column outside the layout")
        spec = key_cols[col]
        if col == 0:
            return length == value
        if spec is None:
            return zt.BoolVal(value == -1)
        kind, (_, expr, valid) = spec
        if value == -1 and kind != "int":
            return z3.Not(valid)
        if kind == "tag":
            if not 0 <= value < len(tag_names):
                return zt.BoolVal(False)
            return zt.And(valid, expr == tag_code(tag_names[value]))
        hit = zt.And(valid, expr == value)
        return zt.Or(hit, z3.Not(valid)) if value == -1 else hit

    parts = []
    if event.score is not None:
        raise Unsupported("a score event")
    if event.key is not None:
        if len(event.key) != len(key_cols):
            raise Unsupported("a key of another layout")
        parts += [key_is(col, v) for col, v in enumerate(event.key)]
    if event.entry is not None:
        parts.append(key_is(event.entry, event.value))
    if event.real is not None:
        # the event on the column's value v: v <= t or v > t, and, for a bin, also v > lower
        sides = [(event.below, zt.RealVal(Fraction(event.threshold)))]
        if event.lower is not None:
            sides.append((False, zt.RealVal(Fraction(event.lower))))
        present = [rc for rc in real_cols if rc is not None]
        some = zt.Or([v for _, v in present]) if present else zt.BoolVal(False)
        r = event.real
        plain = len(real_cols)
        if r >= plain and not (plain > 1 and r < plain + 3):
            raise Unsupported("the privacy-loss column")
        for below, bound in sides:
            def side(x: z3.ArithRef, below: bool = below, bound: z3.ArithRef = bound) -> z3.BoolRef:
                return x <= bound if below else x > bound

            if r < plain:
                rc = real_cols[r]
                parts.append(zt.BoolVal(False) if rc is None else zt.And(rc[1], side(rc[0])))
                continue
            which = r - plain  # 0 min, 1 max, 2 sum of the present entries
            if which == 2:
                total = zt.Sum([z3.If(v, x, zt.RealVal(0)) for x, v in present]) if present else zt.RealVal(0)
                parts.append(zt.And(some, side(total)))
            elif (which == 0) == below:  # min <= t, max > t: some present entry is on that side
                parts.append(zt.Or([zt.And(v, side(x)) for x, v in present]) if present else zt.BoolVal(False))
            else:  # min > t, max <= t: every present entry is on that side, and one is present
                parts.append(zt.And(some, *[z3.Implies(v, side(x)) for x, v in present]))
    return zt.And(parts)


def check_event(mech: ResolvedMechanism, args: Mapping[str, Any], event: Event,
                limits: Limits = LIMITS) -> tuple[str, str]:
    """(status, detail): "impossible" (z3 proves P[M(args) in event] = 0; detail says why), "possible" (z3 has
    noise that gives an output in the event), "unknown" (z3 gave up) or "unsupported" (the encoding cannot
    express the mechanism or the event). `args`: every parameter's value, as prepared for the interpreter."""
    return check_events(mech, args, [event], limits)[0]


def check_events(mech: ResolvedMechanism, args: Mapping[str, Any], events: list[Event],
                 limits: Limits = LIMITS) -> list[tuple[str, str]]:
    """`check_event` of each event on the same arguments, the program encoded once (each query is still solved in a
    context of its own: `satisfiable`)."""
    if mech.release is not None:  # the encoding follows the body, whose `out` is not what is published
        return [("unsupported", "the event is on what the release block publishes, which the encoding does not "
                                "follow")] * len(events)
    with fresh_context():
        try:
            enc = _encoding(mech, args)
            inputs = _inputs(enc, args)
            run = Run(enc, inputs).execute()
            requires = [ExprEval(enc, inputs, {}).value(r) for r in mech.requires]
        except (Unsupported, EncodingError) as error:  # anything else is a bug, reported as one
            return [("unsupported", str(error))] * len(events)
        enclosure = _Enclosure()
        return [_check_event(enc, run, requires, enclosure, event, limits) for event in events]


def _check_event(enc: Encoding, run: Run, requires: list[z3.BoolRef], enclosure: _Enclosure, event: Event,
                 limits: Limits) -> tuple[str, str]:
    try:
        formula = event_formula(enc.mech, run, event, enc.mech.tags)
        roots = {side.get_id(): _root_bounds(s, z3.simplify(x)) for s, x, side in enc.roots}
        sides = [side if roots.get(side.get_id()) is None else roots[side.get_id()] for side in enc.side]
        raw = [z3.simplify(c) for c in (*requires, *sides, *noise_support(enc), formula)]
        enclosed, bounds = enclosure(raw) if enc.uninterpreted else (raw, [])
        context = [*enclosed[:-1], *bounds]
        constraints = [*context, enclosed[-1]]
    except (Unsupported, EncodingError) as error:  # anything else is a bug, reported as one
        return "unsupported", str(error)
    answer = satisfiable(constraints, limits)
    if answer.status == Satisfiability.SAT:
        return "possible", "z3 found noise that gives an output in the event"
    if answer.status == Satisfiability.UNKNOWN:
        return "unknown", answer.reason
    # Without the event the constraints must have a model: otherwise "no output in the event" is vacuous.
    some_run = satisfiable(context, limits)
    if some_run.status != Satisfiability.SAT:
        return "unknown", "no run of the mechanism satisfies the encoding's own constraints" \
            if some_run.status == Satisfiability.UNSAT else some_run.reason
    why = "z3: no noise in its support puts the output in the event, in exact arithmetic"
    if enc.assumptions:
        why += "; up to ties of continuous noise, which have probability 0"
    return "impossible", why


def impossible(mech: ResolvedMechanism, args: Mapping[str, Any], event: Event,
               limits: Limits = LIMITS) -> str | None:
    """Why P[M(args) in event] = 0 when z3 proves it; None otherwise (possible, unknown or unsupported)."""
    status, detail = check_event(mech, args, event, limits)
    return detail if status == "impossible" else None
