"""The paths of a program on concrete inputs, with its noise symbolic: what `align test --exact` integrates.

The reference interpreter runs the program with each draw an affine form (linear.py) instead of a number.
Where a branch compares forms, the `Explorer` decides the outcome from a prefix of choices and records the
condition; `paths` re-runs the program for every sequence of choices, depth first, so that each run follows one
path: its conditions (a conjunction of `form >= 0`), its outputs (numbers, tags and forms) and the law of each
draw. `max`/`min`/`argmax`/`argmin` over forms choose the winner (one choice per entry) with the conditions that
it beats every other entry, so a report-noisy-max path conditions each loser on the winner only. A choice that
contradicts what the path already knows of one draw (an interval) is not explored: that path has probability 0.

Everything else is the interpreter's: the same statements, the same arithmetic on the public data and the same
run-time errors. What a form cannot follow (linear.py) or a draw without a density (integer-valued noise:
boundaries would carry probability) ends the computation with `Outside`, located at the statement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import nodes as n
from ..distributions import Distribution
from ..interp.scalar import Interpreter
from ..interp.values import Tag
from ..resolve import ResolvedMechanism
from ..span import Span
from .linear import Constraint, Key, Linear, NotAffine

PATH_LIMIT = 4096
"""At most this many paths per input (a loop of n noisy branches has 2^n): beyond it, `Outside`."""


class Outside(Exception):
    """The program is outside what the exact computation follows; `reason` says why, `span` where."""

    def __init__(self, reason: str, span: Span | None = None):
        super().__init__(reason)
        self.reason = reason
        self.span = span


@dataclass(frozen=True)
class Draw:
    """One draw of a path: its distribution (compared by name) and numeric parameters."""

    name: str
    params: tuple[float, ...]
    distribution: Distribution = field(compare=False, repr=False)

    def law(self) -> Any:
        assert self.distribution.law is not None
        return self.distribution.law(self.params)


@dataclass(frozen=True)
class Path:
    constraints: tuple[Constraint, ...]
    out: tuple[Any, ...]
    """The outputs: numbers, tags, tuples and lists as the interpreter makes them, with forms for noisy values."""
    draws: Mapping[Key, Draw]


class _Dead(Exception):
    """The choices so far are contradictory: a path of probability 0."""


class _Link:
    """The decider of a path's forms: its explorer while the path runs, cut afterwards (the forms a path keeps
    do not keep its explorer alive, and a comparison after the run is a bug)."""

    __slots__ = ("explorer",)

    def __init__(self, explorer: Explorer):
        self.explorer: Explorer | None = explorer

    def decide(self, form: Linear) -> bool:
        assert self.explorer is not None, "a path's forms are compared after its run"
        return self.explorer.decide(form)


class Explorer(Interpreter):
    """One run along the path that `prefix` chooses (0 = the first outcome of each choice)."""

    def __init__(self, mech: ResolvedMechanism, prefix: list[int],
                 checked: dict[tuple[str, tuple[float, ...]], tuple[float, ...]]):
        super().__init__(mech, None, trace=False)
        self.decider = _Link(self)
        self.prefix = prefix
        self.checked = checked
        """Parameters that passed their distribution's requirements on an earlier path: (name, as written) ->
        in full."""
        self.choices: list[int] = []
        self.arity: list[int] = []
        self.constraints: list[Constraint] = []
        self.laws: dict[Key, Draw] = {}
        self.intervals: dict[Key, tuple[float, float]] = {}
        self.statement: n.Stmt | None = None
        """The statement running (the conditions it adds are located there)."""

    # -- choices ------------------------------------------------------------------------------------------
    def _choose(self, arity: int) -> int:
        i = len(self.choices)
        choice = self.prefix[i] if i < len(self.prefix) else 0
        self.choices.append(choice)
        self.arity.append(arity)
        return choice

    def _known(self, form: Linear) -> bool | None:
        """The outcome of `form >= 0` if the path's intervals decide it (one draw only), else None."""
        if len(form.terms) != 1:
            return None
        (key, a), = form.terms.items()
        lo, hi = self.intervals.get(key, (-float("inf"), float("inf")))
        at = (form.const + a * lo, form.const + a * hi)
        if min(at) >= 0:
            return True
        if max(at) <= 0:
            return False
        return None

    def _assume(self, form: Linear) -> None:
        """Record `form >= 0`; a one-draw condition narrows that draw's interval (an empty one: a dead path)."""
        self.constraints.append(Constraint(form, None if self.statement is None else self.statement.span))
        if len(form.terms) != 1:
            return
        (key, a), = form.terms.items()
        lo, hi = self.intervals.get(key, (-float("inf"), float("inf")))
        bound = -form.const / a
        lo, hi = (max(lo, bound), hi) if a > 0 else (lo, min(hi, bound))
        if lo >= hi:
            raise _Dead()
        self.intervals[key] = (lo, hi)

    def decide(self, form: Linear) -> bool:
        known = self._known(form)
        if known is not None:
            return known
        outcome = self._choose(2) == 0
        self._assume(form if outcome else -form)
        return outcome

    # -- what differs from the interpreter --------------------------------------------------------------------
    def block(self, body: tuple[n.Stmt, ...]) -> None:
        outer = self.statement
        for s in body:
            self.statement = s
            try:
                s.accept(self, None)
            except NotAffine as error:
                raise Outside(str(error), s.span) from None
            except TypeError as error:  # an integer operation, an index or a sort key given a form
                raise Outside(f"a value that depends on the noise where a number is needed ({error})", s.span) \
                    from None
        self.statement = outer

    def visit_sample(self, s: n.Sample, ctx: None = None) -> None:
        site = self.sites[s.var]
        values = [self.ev(a) for a in s.args]
        for a, v in zip(s.args, values):
            if isinstance(v, Linear):
                raise Outside(f"the parameters of {s.var} depend on other noise", a.span)
        given = tuple(float(v) for v in values)
        params = self.checked.get((site.distribution.name, given))
        if params is None:
            _, params = self.parameters(s, site)
            self.checked[(site.distribution.name, given)] = params
        if site.distribution.law is None or not site.distribution.continuous:
            raise Outside(f"{site.distribution.name} noise: the exact computation needs a distribution with a "
                          "density (docs/testing.md)", s.span)
        member = self.env[site.loop.var] if site.loop is not None else None
        key = (site.name, member)
        if key in self.laws:
            raise Outside(f"{s.var} is drawn twice for the same loop member", s.span)
        self.laws[key] = Draw(site.distribution.name, tuple(float(p) for p in params), site.distribution)
        self.env[s.var] = Linear.draw(key, self.decider)

    def _reduce(self, v: list, kind: str, listed: bool) -> Any:
        if not any(isinstance(x, Linear) for x in v):
            return super()._reduce(v, kind, listed)
        w = self._choose(len(v))
        larger = kind in ("max", "argmax")
        for other, x in enumerate(v):
            if other == w:
                continue
            difference = v[w] - x if larger else x - v[w]
            if isinstance(difference, Linear):
                known = self._known(difference)
                if known is False:
                    raise _Dead()
                if known is None:
                    self._assume(difference)
            elif difference < 0 or (difference == 0 and other < w):
                raise _Dead()  # ties go to the lower index
        return v[w] if kind in ("max", "min") else w


def paths(mech: ResolvedMechanism, args: Mapping[str, Any], limit: int = PATH_LIMIT) -> list[Path]:
    """Every path of the mechanism on `args` (prepared as for the interpreter) with positive probability
    (up to those whose conditions contradict each other across several draws, which integrate to 0)."""
    found: list[Path] = []
    prefix: list[int] = []
    checked: dict[tuple[str, tuple[float, ...]], tuple[float, ...]] = {}
    while True:
        explorer = Explorer(mech, prefix, checked)
        try:
            run = explorer.run(args)
            found.append(Path(tuple(explorer.constraints), tuple(run.out), dict(explorer.laws)))
        except _Dead:
            pass
        finally:
            explorer.decider.explorer = None
        if len(found) > limit:
            raise Outside(f"more than {limit} paths on one input", mech.node.name_span)
        for i in reversed(range(len(explorer.choices))):
            if explorer.choices[i] + 1 < explorer.arity[i]:
                prefix = explorer.choices[:i] + [explorer.choices[i] + 1]
                break
        else:
            return found


def shape(value: Any, slots: list[Linear]) -> Any:
    """The discrete part of an output: forms become `Slot`s numbered in order (appended to `slots`)."""
    if isinstance(value, Linear):
        slots.append(value)
        return Slot(len(slots) - 1)
    if isinstance(value, Tag):
        return Tag(value.name, tuple(shape(x, slots) for x in value.payload))
    if isinstance(value, (tuple, list)):
        return tuple(shape(x, slots) for x in value)
    return value


@dataclass(frozen=True)
class Slot:
    """A noisy value in the discrete shape of an output."""

    index: int

    def __repr__(self) -> str:
        return f"v{self.index}"
