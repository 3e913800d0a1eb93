"""Interpreter (scalar evaluator): one execution of a resolved mechanism — the reference semantics.

It runs the program on Python values (values.py) with the noise given in advance (a replay: `--noise`, a
counterexample file, or one sample drawn by the vectorised evaluator), and records a trace: each sample drawn,
each branch taken, each loop iteration, `break` and output. Numbers follow the vectorised evaluator exactly:
reals are IEEE doubles, `/` is true division, and `^`, `sqrt`, `exp`, `ln`, `normal_cdf`, `floor`, `ceil` and
`round` go through the same numpy functions, so that the same noise gives bit-for-bit the same outputs in both.

The meaning of every construct (docs/interpreter.md, "Semantics"):

- `for i in a .. b` runs i = a, ..., b-1; `break` leaves the innermost loop.
- A sample inside a loop draws the family member x[i], keyed by the loop variable's value; reading the family
  variable in an iteration that did not draw it is `undefined-value`.
- `x[j] = e` replaces entry j (0 <= j < len) or appends (j == len); a larger j is `list-gap`.
- `top_k`, `top_k_with_gaps`, `argmax`, `argmin` and the comprehension forms break ties by the lower index.
- `and`, `or`, `?:` and comparison chains evaluate only what they need.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from .. import nodes as n
from ..builtins import implemented
from ..diagnostics import did_you_mean
from ..limits import MAX_LOOP_ITERATIONS
from ..operators import COMPARISONS, INTEGER_OPERATIONS, RING_OPERATIONS
from ..resolve import NoiseSite, ResolvedMechanism
from ..unparse import unparse
from ..visitor import IRVisitor, StmtVisitor
from .errors import RunError, clamp_domain, fail
from .noise import check_parameters, cost_coefficient, in_support, is_whole, map_cost
from .values import Tag, format_value

_SQRT_2PI = math.sqrt(2 * math.pi)


@dataclass(frozen=True)
class TraceEvent:
    kind: str
    """`sample`, `branch`, `iteration`, `break`, `output`, `release` (the start of a release block)."""
    line: int
    text: str
    depth: int
    """Loop nesting depth (for indentation)."""


@dataclass
class Draw:
    """One value of H used by the run: the site, the member (None for a scalar site), its value, its parameters."""

    site: NoiseSite
    member: int | None
    value: Any
    params: tuple

    @property
    def display(self) -> str:
        return self.site.name if self.member is None else f"{self.site.name}[{self.member}]"


@dataclass
class ScalarRun:
    out: list
    env: dict[str, Any]
    draws: list[Draw]
    trace: list[TraceEvent] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    """Replayed noise values that the run never asked for."""
    body_out: list | None = None
    """With a release block: the mechanism's `out`, from which the block computed `out` (what is published)."""


class _Break(Exception):
    pass


class NoiseValues:
    """Noise for a replay: {scalar name: value, family name: [value or None per loop index]}.

    Values of integer-valued distributions must be integers, except in an aligned replay (`aligned=True`),
    where a non-whole aligned value is the C4d failure being shown.
    """

    def __init__(self, mech: ResolvedMechanism, values: Mapping[str, Any], aligned: bool = False):
        self.values = dict(values)
        self.used: set[tuple[str, int | None]] = set()
        sites = {s.name: s for s in mech.noise}
        for name, value in self.values.items():
            if name not in sites:
                raise fail("unknown-noise", None, name=name, mechanism=mech.name, hint=did_you_mean(name, sites))
            site = sites[name]
            if site.family and not isinstance(value, list):
                raise fail("invalid-noise", site.span, name=name,
                           reason="it is a family: give a list with a value (or null) per loop index")
            if not site.family and isinstance(value, list):
                raise fail("invalid-noise", site.span, name=name,
                           reason="it is a scalar noise variable: give one number")
            for k, x in enumerate(value if isinstance(value, list) else [value]):
                if x is None and site.family:
                    continue
                label = f"{name}[{k}]" if site.family else name
                if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)):
                    raise fail("invalid-noise", site.span, name=label, reason=f"{x!r} is not a number")
                if site.distribution.integer and not aligned and not (isinstance(x, int) or float(x).is_integer()):
                    raise fail("invalid-noise", site.span, name=label,
                               reason=f"{site.distribution.name} noise is an integer, not {x}")

    def get(self, site: NoiseSite, member: int | None) -> Any:
        value = self.values.get(site.name)
        if site.family:
            if value is None or member is None or not 0 <= member < len(value) or value[member] is None:
                raise fail("missing-noise", site.stmt.var_span, name=f"{site.name}[{member}]")
            x = value[member]
        else:
            if value is None:
                raise fail("missing-noise", site.stmt.var_span, name=site.name)
            x = value
        self.used.add((site.name, member))
        return int(x) if site.distribution.integer and float(x).is_integer() else float(x)

    def unused(self) -> list[str]:
        result = []
        for name, value in self.values.items():
            if isinstance(value, list):
                result += [f"{name}[{k}]" for k, x in enumerate(value) if x is not None and (name, k) not in self.used]
            elif (name, None) not in self.used:
                result.append(name)
        return result


class Interpreter(IRVisitor[Any, None], StmtVisitor[None, None]):
    """One execution with a trace."""

    def __init__(self, mech: ResolvedMechanism, noise: NoiseValues | None = None, trace: bool = True):
        self.mech = mech
        self.release = mech.release
        """The release block run after the body (`ResolvedMechanism.release`); an alignment's replay runs
        `mech.without_release()`."""
        self.noise = noise
        self.tracing = trace
        self.env: dict[str, Any] = {}
        self.families: dict[str, dict[int, Any]] = {}
        """Noise families readable as `x[e]` (alignment expressions): member -> value."""
        self.out: list = []
        self.draws: list[Draw] = []
        self.trace: list[TraceEvent] = []
        self.depth = 0
        self.sites = {s.name: s for s in mech.noise}
        self.loop_of_family = {s.name: s.loop for s in mech.noise if s.family}
        self.iterations = 0
        """Loop iterations run so far, all loops together (at most MAX_LOOP_ITERATIONS, as the vector run)."""
        self.out_name = "out"
        """What the trace calls the output sequence: `out`, or `published` in a release block."""

    def emit(self, kind: str, line: int, text: str) -> None:
        if self.tracing:
            self.trace.append(TraceEvent(kind, line, text, self.depth))

    def run(self, args: Mapping[str, Any]) -> ScalarRun:
        self.env.update(args)
        with np.errstate(all="ignore"):
            self.block(self.mech.body)
        unused = self.noise.unused() if self.noise else []
        if self.release is None:
            return ScalarRun(self.out, self.env, self.draws, self.trace, unused)
        post = Interpreter(self.release, trace=self.tracing)
        post.iterations, post.out_name = self.iterations, "published"
        node = self.release.release_node
        if node is not None:
            self.emit("release", node.span.line, f"release {node.name}: out = {format_value(self.out)}")
        post.run({**{p.name: args[p.name] for p in self.release.params if p.name in args}, "out": self.out})
        return ScalarRun(post.out, self.env, self.draws, self.trace + post.trace, unused, self.out)

    # -- statements ----------------------------------------------------------------------------------
    def block(self, body: tuple[n.Stmt, ...]) -> None:
        for s in body:
            s.accept(self, None)

    def visit_assign(self, s: n.Assign, ctx: None = None) -> None:
        value = self.ev(s.value)
        if s.index is None:
            self.env[s.target] = value
            return
        j = self.ev(s.index)
        old = self.env.get(s.target)
        lst = list(old) if old is not None else []
        if not 0 <= j <= len(lst):
            raise fail("list-gap", s.index.span, name=s.target, index=j, length=len(lst))
        if j == len(lst):
            lst.append(value)
        else:
            lst[j] = value
        self.env[s.target] = lst

    def parameters(self, s: n.Sample, site: NoiseSite) -> tuple[list[float], tuple[float, ...]]:
        """The parameters as written and in full (defaults filled in), checked against the requirements."""
        given = [float(self.ev(a)) for a in s.args]
        params = site.distribution.full_params(given)
        problem = check_parameters(site.distribution, tuple(np.asarray([p], dtype=np.float64) for p in params), None)
        if problem is not None:
            span = s.args[problem.param].span if problem.param < len(s.args) else s.span
            raise fail("invalid-distribution-parameter", span, dist=site.distribution.name,
                       param=site.distribution.params[problem.param], requirement=problem.requirement,
                       value=format_value(problem.value))
        return given, params

    def visit_sample(self, s: n.Sample, ctx: None = None) -> None:
        site = self.sites[s.var]
        given, params = self.parameters(s, site)
        member = self.env[site.loop.var] if site.loop is not None else None
        if self.noise is None:
            raise fail("missing-noise", s.var_span, name=s.var)
        value = self.noise.get(site, member)
        self.draws.append(Draw(site, member, value, tuple(params)))
        self.env[s.var] = value
        label = s.var if member is None else f"{s.var}[{member}]"
        dist = f"{site.distribution.name}({', '.join(format_value(p) for p in given)})"
        note = "" if in_support(site.distribution, tuple(params), np.asarray([value]))[0] \
            else f"  (outside the support {site.distribution.support})"
        self.emit("sample", s.span.line, f"{label} ~ {dist} = {format_value(value)}{note}")

    def visit_if(self, s: n.If, ctx: None = None) -> None:
        c = self.ev(s.condition)
        if self.tracing:
            self.emit("branch", s.span.line, f"if {unparse(s.condition)}: {'true' if c else 'false'}")
        self.block(s.then if c else s.orelse)

    def visit_for(self, s: n.For, ctx: None = None) -> None:
        lo, hi = self.ev(s.lo), self.ev(s.hi)
        if max(0, hi - lo) > MAX_LOOP_ITERATIONS - self.iterations:
            raise fail("loop-too-long", s.span, count=max(0, hi - lo), limit=MAX_LOOP_ITERATIONS)
        self.iterations += max(0, hi - lo)
        families = [name for name, loop in self.loop_of_family.items() if loop is s]
        if self.tracing:
            self.emit("iteration", s.span.line, f"for {s.var} in {lo} .. {hi}")
        self.depth += 1
        try:
            for v in range(lo, hi):
                self.env[s.var] = v
                for name in families:
                    self.env.pop(name, None)
                if self.tracing:
                    self.emit("iteration", s.span.line, f"{s.var} = {v}")
                self.block(s.body)
        except _Break:
            pass
        finally:
            self.depth -= 1
            self.env.pop(s.var, None)

    def visit_break(self, s: n.Break, ctx: None = None) -> None:
        self.emit("break", s.span.line, "break")
        raise _Break()

    def visit_output(self, s: n.Output, ctx: None = None) -> None:
        value = self.ev(s.value)
        if self.tracing:
            self.emit("output", s.span.line, f"{self.out_name}[{len(self.out)}] = {format_value(value)}")
        self.out.append(value)

    def visit_while(self, s: n.While, ctx: None = None) -> None:
        raise AssertionError("`while` is rejected by resolution")

    # -- expressions ---------------------------------------------------------------------------------
    def ev(self, e: n.Expr) -> Any:
        return e.accept(self, None)

    def visit_number(self, e: n.Number, ctx: None = None) -> Any:
        return int(e.value) if e.is_integer else float(e.value)

    def visit_bool_lit(self, e: n.BoolLit, ctx: None = None) -> Any:
        return e.value

    def read(self, e: n.Ref, ctx: None = None) -> Any:
        """The value of a name in the environment (a variable or noise that has none on this path: an error)."""
        if e.text in self.env:
            return self.env[e.text]
        if isinstance(e, (n.VarRef, n.NoiseRef)):
            raise fail("undefined-value", e.span, name=e.text)
        raise AssertionError(f"unbound name {e.text} at {e.span}")

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_let_ref = visit_local_ref = visit_out_ref = read

    def visit_aligned_cost_ref(self, e: n.AlignedCostRef, ctx: None = None) -> Any:
        raise AssertionError("`aligned_cost` exists in invariants only, which the interpreter never runs")

    def visit_member_ref(self, e: n.MemberRef, ctx: None = None) -> Any:
        j = self.ev(e.index)
        members = self.families[e.id]
        if j not in members:
            raise fail("noise-not-drawn", e.span, name=f"{e.id}[{j}]")
        return members[j]

    def visit_tag_lit(self, e: n.TagLit, ctx: None = None) -> Any:
        return Tag(e.tag, ())

    def visit_tag_call(self, e: n.TagCall, ctx: None = None) -> Any:
        return Tag(e.tag, tuple(self.ev(a) for a in e.args))

    def visit_range(self, e: n.Range, ctx: None = None) -> Any:
        return range(self.ev(e.lo), self.ev(e.hi))

    def visit_tuple_lit(self, e: n.TupleLit, ctx: None = None) -> Any:
        return tuple(self.ev(x) for x in e.items)

    def visit_list_lit(self, e: n.ListLit, ctx: None = None) -> Any:
        return [self.ev(x) for x in e.items]

    def visit_unary(self, e: n.Unary, ctx: None = None) -> Any:
        x = self.ev(e.operand)
        if e.op == "not":
            return not x
        return self._integer(-int(x), e, f"`{unparse(e)}` of {x}") if _is_int(x) else -x

    def visit_binary(self, e: n.Binary, ctx: None = None) -> Any:
        a, b = self.ev(e.left), self.ev(e.right)
        if e.op in RING_OPERATIONS:
            if _is_int(a) and _is_int(b):
                exact = RING_OPERATIONS[e.op](int(a), int(b))
                return self._integer(exact, e, f"`{unparse(e)}` with {a} {e.op} {b}")
            return RING_OPERATIONS[e.op](a, b)
        if e.op == "/" or e.op in INTEGER_OPERATIONS:
            if b == 0:
                raise fail("division-by-zero", e.span,
                           detail=f"`{unparse(e)}` with {unparse(e.right)} = 0")
            if e.op == "/":
                return a / b
            exact = INTEGER_OPERATIONS[e.op](int(a), int(b))
            return self._integer(exact, e, f"`{unparse(e)}` with {a} {e.op} {b}")
        fa, fb = float(a), float(b)
        if fa == 0 and fb < 0:
            raise fail("math-domain", e.span, operation="`^`", detail=f"0 ^ {format_value(fb)} divides by zero")
        if fa < 0 and not fb.is_integer():
            raise fail("math-domain", e.span, operation="`^`",
                       detail=f"a negative base {format_value(fa)} needs a whole exponent, not {format_value(fb)}")
        return _np(np.power, fa, fb)

    @staticmethod
    def _integer(value: int, e: n.Expr, what: str) -> int:
        """Exact integers, within the 64-bit range the vectorised interpreter computes in (never wrapped)."""
        if not -2 ** 63 <= value < 2 ** 63:
            raise fail("integer-overflow", e.span, detail=f"{what} is outside the 64-bit range")
        return value

    def visit_compare(self, e: n.Compare, ctx: None = None) -> Any:
        left = self.ev(e.operands[0])
        for op, right_e in zip(e.ops, e.operands[1:]):
            right = self.ev(right_e)
            if not COMPARISONS[op](left, right):
                return False
            left = right
        return True

    def visit_bool_op(self, e: n.BoolOp, ctx: None = None) -> Any:
        a = self.ev(e.left)
        if e.op == "and":
            return bool(a) and bool(self.ev(e.right))
        return bool(a) or bool(self.ev(e.right))

    def visit_conditional(self, e: n.Conditional, ctx: None = None) -> Any:
        return self.ev(e.then) if self.ev(e.condition) else self.ev(e.orelse)

    def visit_tag_test(self, e: n.TagTest, ctx: None = None) -> Any:
        return self.ev(e.value).name == e.tag

    def visit_member(self, e: n.Member, ctx: None = None) -> Any:
        x = self.ev(e.element)
        inside = x in _members(self.ev(e.collection))
        return not inside if e.negated else inside

    def visit_index(self, e: n.Index, ctx: None = None) -> Any:
        base = e.base
        b = self.ev(base)
        if isinstance(b, tuple):
            assert isinstance(e.index, n.Number), "resolution guarantees an integer literal"
            return b[int(e.index.value)]
        j = self.ev(e.index)
        if not 0 <= j < len(b):
            raise fail("index-out-of-range", e.index.span, index=j, what=f"`{unparse(base)}`", length=len(b))
        return b[j]

    # -- calls ------------------------------------------------------------------------------------------
    def visit_call(self, e: n.Call, ctx: None = None) -> Any:
        return _BUILTINS[e.func](self, e)

    def _b_len(self, e):
        return len(self.ev(e.args[0]))

    def _b_abs(self, e):
        x = self.ev(e.args[0])
        return self._integer(abs(int(x)), e, f"`{unparse(e)}` of {x}") if _is_int(x) else abs(x)

    def _extreme(self, e, kind: str):
        if len(e.args) > 1:
            return self._reduce([self.ev(a) for a in e.args], kind, listed=False)
        v = self.ev(e.args[0])
        if not v:
            raise fail("empty-reduction", e.span, func=e.func, what="list")
        return self._reduce(v, kind, listed=True)

    def _reduce(self, v: list, kind: str, listed: bool) -> Any:
        """`max`, `min` (of several arguments, or of a list when `listed`), `argmax`, `argmin` (of a list)."""
        if not listed:
            if all(isinstance(x, int) for x in v):
                return max(v) if kind == "max" else min(v)
            result = v[0]
            for x in v[1:]:
                result = _np(np.maximum if kind == "max" else np.minimum, result, x)
            return result
        if kind == "max":
            return max(v)
        if kind == "min":
            return min(v)
        positions = range(len(v))
        return max(positions, key=lambda k: v[k]) if kind == "argmax" else min(positions, key=lambda k: v[k])

    def _b_max(self, e):
        return self._extreme(e, "max")

    def _b_min(self, e):
        return self._extreme(e, "min")

    def _b_argmax(self, e):
        return self._extreme(e, "argmax")

    def _b_argmin(self, e):
        return self._extreme(e, "argmin")

    def _b_sqrt(self, e):
        x = self.ev(e.args[0])
        if x < 0:
            raise fail("math-domain", e.span, operation=f"`{unparse(e)}`",
                       detail=f"sqrt needs a number >= 0, but {unparse(e.args[0])} = {format_value(x)}")
        return _np(np.sqrt, float(x))

    def _b_exp(self, e):
        return _np(np.exp, float(self.ev(e.args[0])))

    def _b_ln(self, e):
        x = self.ev(e.args[0])
        if x <= 0:
            raise fail("math-domain", e.span, operation=f"`{unparse(e)}`",
                       detail=f"ln needs a number > 0, but {unparse(e.args[0])} = {format_value(x)}")
        return _np(np.log, float(x))

    def _b_normal_cdf(self, e):
        return _np(special.ndtr, float(self.ev(e.args[0])))

    def _b_normal_pdf(self, e):
        x = np.asarray([float(self.ev(e.args[0]))])
        return float((np.exp(-(x * x) / 2) / _SQRT_2PI)[0])

    def _to_integer(self, e, rounding) -> int:
        """floor, ceil, round (`rounding`: np.floor, np.ceil, np.rint, which rounds a tie to even): an int is its
        own value; a real is rounded in the vectorised evaluator's numpy loop, and its integer must be one of the
        64-bit integers the interpreter computes in."""
        x = self.ev(e.args[0])
        if _is_int(x):
            return int(x)
        whole = _np(rounding, float(x))
        if not -2.0 ** 63 <= whole < 2.0 ** 63:  # also false for inf and nan
            raise fail("integer-overflow", e.span,
                       detail=f"`{unparse(e)}` with {unparse(e.args[0])} = {format_value(x)} is outside the 64-bit "
                              "range")
        return int(whole)

    def _b_floor(self, e):
        return self._to_integer(e, np.floor)

    def _b_ceil(self, e):
        return self._to_integer(e, np.ceil)

    def _b_round(self, e):
        return self._to_integer(e, np.rint)

    def _b_clamp(self, e):
        x, lo, hi = (self.ev(a) for a in e.args)
        if lo > hi:
            raise fail("math-domain", e.span, operation=f"`{unparse(e)}`",
                       detail=clamp_domain(e, format_value(lo), format_value(hi)))
        return self._reduce([self._reduce([x, lo], "max", listed=False), hi], "min", listed=False)

    def _order(self, e, gaps: bool) -> tuple[list, list[int], int]:
        v, k = self.ev(e.args[0]), self.ev(e.args[1])
        if k < 0 or (k >= len(v) if gaps else k > len(v)):
            need = "0 <= k < len(v) (the k largest and the next one)" if gaps else "0 <= k <= len(v)"
            raise fail("too-few-entries", e.span, func=e.func, need=need, k=k, length=len(v))
        order = sorted(range(len(v)), key=lambda j: (-float(v[j]), j))
        return v, order, k

    def _b_top_k(self, e):
        _, order, k = self._order(e, gaps=False)
        return order[:k]

    def _b_top_k_with_gaps(self, e):
        v, order, k = self._order(e, gaps=True)
        return [(order[i], float(v[order[i]]) - float(v[order[i + 1]])) for i in range(k)]

    def _b_indices(self, e):
        return frozenset(x[0] for x in self.ev(e.args[0]))

    def _b_payload(self, e):
        tag = e.args[1]
        assert isinstance(tag, n.TagLit), "resolution guarantees a tag"
        v = self.ev(e.args[0])
        if v.name != tag.tag:
            return self.ev(e.args[2])
        return v.payload[0] if len(v.payload) == 1 else tuple(v.payload)

    def _b_count(self, e):
        tag = e.args[1]
        assert isinstance(tag, n.TagLit), "resolution guarantees a tag"
        return sum(1 for x in self.ev(e.args[0]) if x.name == tag.tag)

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None) -> Any:
        assert e.domain is not None, "resolution makes every comprehension's domain explicit"
        domain = _members(self.ev(e.domain))
        excluded = _members(self.ev(e.excluded)) if e.excluded is not None else ()
        saved = self.env.get(e.var, _MISSING)
        f = e.func
        acc: Any = None
        best: Any = None
        arg: Any = None
        try:
            for v in sorted(domain) if not isinstance(domain, range) else domain:
                if v in excluded:
                    continue
                self.env[e.var] = v
                if e.condition is not None and not self.ev(e.condition):
                    continue
                body = self.ev(e.body)
                if f == "sum":  # a fold of `+`: each partial sum of integers within 64 bits, as `+` is
                    if acc is not None and _is_int(acc) and _is_int(body):
                        acc = self._integer(int(acc) + int(body), e, f"the `sum` of `{unparse(e)}` reaching "
                                                                        f"{acc} + {body}")
                    else:
                        acc = body if acc is None else acc + body
                elif f == "count":
                    acc = (acc or 0) + (1 if body else 0)
                elif f == "all":
                    acc = (True if acc is None else acc) and bool(body)
                elif f == "any":
                    acc = (False if acc is None else acc) or bool(body)
                elif best is None or (body > best if f in ("max", "argmax") else body < best):
                    best, arg = body, v
        finally:
            if saved is _MISSING:
                self.env.pop(e.var, None)
            else:
                self.env[e.var] = saved
        if f in ("sum", "count", "all", "any"):
            return acc if acc is not None else {"sum": 0, "count": 0, "all": True, "any": False}[f]
        if best is None:
            raise fail("empty-reduction", e.span, func=f, what="comprehension")
        return arg if f in ("argmax", "argmin") else best


_MISSING = object()



def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _np(f, *args) -> float:
    """f on one-element float64 arrays: the same numpy loop as the vectorised evaluator."""
    result = f(*(np.asarray([a], dtype=np.float64) for a in args))
    return float(result[0])


def _members(coll: Any) -> Any:
    """A range, an index set (frozenset) or an int list (the set of its entries), ready for `in` and iteration."""
    if isinstance(coll, list):
        return frozenset(coll)
    return coll


# ---------------------------------------------------------------------------------------- one alignment


@dataclass
class AlignedDraw:
    """One value of H, its shift ψ and aligned value η + ψ, and what it costs."""

    draw: Draw
    shift: float
    aligned: Any
    cost: float
    """c·|ψ| (inf for a non-Lipschitz distribution shifted by a non-zero amount)."""
    coefficient: float | None
    in_support: bool
    whole: bool
    """The shift is a whole number where the distribution needs one (Geo, DLap, Bernoulli, Staircase)."""


@dataclass
class ScalarAlignment:
    draws: list[AlignedDraw]
    lets: dict[str, Any]
    claim: float

    @property
    def cost(self) -> float:
        return sum(d.cost for d in self.draws)

    def noise(self) -> dict[str, Any]:
        """φ(H) in the replay format."""
        result: dict[str, Any] = {}
        for d in self.draws:
            site, member = d.draw.site, d.draw.member
            if member is not None:  # a family member
                members = result.setdefault(site.name, [])
                members.extend([None] * (member + 1 - len(members)))
                members[member] = d.aligned
            else:
                result[site.name] = d.aligned
        return result


def alignment_env(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any],
                  run: ScalarRun) -> tuple[dict[str, Any], dict[str, dict[int, Any]]]:
    """What an alignment reads: parameters, primed private parameters, constants, `out`, noise."""
    env: dict[str, Any] = dict(args)
    env.update({f"{name}'": value for name, value in neighbour.items()})
    env.update({c: run.env[c] for c in mech.constants if c in run.env})
    env["out"] = run.out
    families: dict[str, dict[int, Any]] = {s.name: {} for s in mech.noise if s.family}
    for d in run.draws:
        if d.member is None:
            env[d.site.name] = d.value
        else:
            families[d.site.name][d.member] = d.value
    return env, families


def align(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any],
          run: ScalarRun) -> ScalarAlignment:
    """φ(H) for one run on D: the lets, each drawn value's shift, cost and support, and the claim at ω."""
    with np.errstate(all="ignore"):
        return _align(mech, args, neighbour, run)


def _align(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any],
           run: ScalarRun) -> ScalarAlignment:
    # without an alignment block φ is the identity (the R²DP rule's mechanisms, and `align verify`'s C4a for them)
    it = Interpreter(mech, trace=False)
    env, families = alignment_env(mech, args, neighbour, run)
    it.env, it.families = env, families
    scalar_noise = {s.name for s in mech.noise if not s.family}
    lets = {}
    for let in mech.alignment.lets if mech.alignment is not None else ():
        value = _with_undrawn(it, let.value, scalar_noise)
        it.env[let.name] = value
        lets[let.name] = value
    result = []
    for d in run.draws:
        shift = mech.alignment.shift_of(d.site.name) if mech.alignment is not None else None
        psi: Any = 0
        if shift is not None:
            saved = it.env.get(shift.index_var, _MISSING) if shift.index_var else _MISSING
            if shift.index_var:
                it.env[shift.index_var] = d.member
            psi = _with_undrawn(it, shift.shift, scalar_noise)
            if shift.index_var:
                if saved is _MISSING:
                    it.env.pop(shift.index_var, None)
                else:
                    it.env[shift.index_var] = saved
        aligned = d.value + psi
        c = cost_coefficient(d.site.distribution, d.params[: len(d.site.args)])
        coefficient = None if c is None else float(c)
        if shift is not None and d.site.distribution.masses is not None:
            # ψ = 0 here does not make it free: a map that leaves b where it is may merge another value onto it
            cost = float(map_cost(d.site.distribution, d.params, np.asarray([aligned]),
                                  [np.asarray([v + _image_shift(it, d, shift, v, scalar_noise)])
                                   for v, _ in d.site.distribution.masses(tuple(d.params))])[0])
        else:
            cost = (0.0 if psi == 0 else math.inf) if c is None else float(coefficient * abs(psi))
        ok = bool(in_support(d.site.distribution, d.params, np.asarray([aligned]))[0])
        whole = bool(is_whole(np.asarray([psi]))[0]) if d.site.distribution.integer_shifts else True
        result.append(AlignedDraw(d, psi, aligned, cost, coefficient, ok, whole))
    claim_it = Interpreter(mech, trace=False)
    claim_it.env = dict(env)
    claim = float(claim_it.ev(mech.claim))
    return ScalarAlignment(result, lets, claim)


def _image_shift(it: Interpreter, d: Any, shift: Any, v: Any, scalar_noise: set[str]) -> Any:
    """ψ of a value map at the value v of the draw d (everything else as drawn): g(v) - v."""
    saved_index = it.env.get(shift.index_var, _MISSING) if shift.index_var else _MISSING
    if shift.index_var:
        it.env[shift.index_var] = d.member
    if d.site.family:
        saved = it.families[d.site.name][d.member]
        it.families[d.site.name][d.member] = v
    else:
        saved = it.env[d.site.name]
        it.env[d.site.name] = v
    try:
        return _with_undrawn(it, shift.shift, scalar_noise)
    finally:
        if d.site.family:
            it.families[d.site.name][d.member] = saved
        else:
            it.env[d.site.name] = saved
        if shift.index_var:
            if saved_index is _MISSING:
                it.env.pop(shift.index_var, None)
            else:
                it.env[shift.index_var] = saved_index


def _with_undrawn(it: Interpreter, e: n.Expr, scalar_noise: set[str]) -> Any:
    """Evaluate an alignment expression; reading a scalar noise variable the run did not draw is noise-not-drawn."""
    try:
        return it.ev(e)
    except RunError as error:
        d = error.diagnostic
        if d.code == "undefined-value" and d.args.get("name") in scalar_noise:
            raise fail("noise-not-drawn", d.span, name=d.args["name"]) from None
        raise


_BUILTINS: Mapping[str, Callable[[Interpreter, n.Call], Any]] = implemented("scalar interpreter", {
    "len": Interpreter._b_len, "abs": Interpreter._b_abs, "min": Interpreter._b_min, "max": Interpreter._b_max,
    "argmax": Interpreter._b_argmax, "argmin": Interpreter._b_argmin, "sqrt": Interpreter._b_sqrt,
    "exp": Interpreter._b_exp, "ln": Interpreter._b_ln, "normal_cdf": Interpreter._b_normal_cdf,
    "normal_pdf": Interpreter._b_normal_pdf, "floor": Interpreter._b_floor, "ceil": Interpreter._b_ceil,
    "round": Interpreter._b_round, "clamp": Interpreter._b_clamp, "top_k": Interpreter._b_top_k,
    "top_k_with_gaps": Interpreter._b_top_k_with_gaps, "indices": Interpreter._b_indices,
    "count": Interpreter._b_count, "payload": Interpreter._b_payload,
})
