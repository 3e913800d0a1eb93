"""Loops that only accumulate become folds: a deterministic loop nested in the main loop (or in the prefix),
which adds to running totals and does nothing else, is rewritten into `sum`/`count` comprehensions, which the
induction (`induction.py`) and the records' summaries (`records.py`) know how to prove for every length.

    c = 0                                                  c = 0
    for l in 0 .. len(q) {                          ⟶      c = c + count(l in 0 .. len(q): q[l] >= t[i])
      if q[l] >= t[i] { c = c + 1 }
    }

The rewritten program computes the same values as the written one, draws the same noise and outputs the same,
so a proof of either is a proof of both. Hypotheses, each checked here (the reason is reported otherwise, and
the loop stays as written):

1. The loop draws no noise, outputs nothing, does not `break` and holds no loop: it is a deterministic
   computation, and the only trace it leaves is the variables it assigns (its index is not visible after it).
2. Every assignment in it is an update `x = x + e` or `x = x - e` of a scalar variable x (an accumulator),
   possibly under `if` conditions; no list is written.
3. No condition, no added term and no bound reads a variable that the loop assigns, the accumulator itself
   included.
   Then iteration l adds to x exactly d_x(l) = Σ over its updates of (conditions ? ±e : 0), a function of l and
   of values that the loop does not change, so after the loop x = x + Σ_{l in lo .. hi} d_x(l): the sum the
   comprehension computes. The bounds are evaluated once, before the first iteration, in both programs; an
   empty range (hi ≤ lo) adds nothing in both. The conditional `c ? e : 0` evaluates e only where c holds, as
   the loop does, so the rewritten program fails (an index out of range, a division by zero) exactly where the
   written one does.

Bins (a histogram counted in a loop, `j = clamp(q[i], 0, 2)` then `h[j] = h[j] + 1`): an update of a list entry
`h[e] = h[e] + t` folds into one fold per bin, `h[b] = h[b] + sum(l in lo .. hi: e(l) == b ? t : 0)` for b = 0 ..
m - 1, under two more hypotheses:

4. h is assigned whole once in the program, a list literal of m <= MAX_BINS entries, and every write of an entry of
   h anywhere is at an index that lies in 0 .. m - 1 whatever the inputs (a number, or `clamp(x, a, b)` between
   numbers 0 <= a <= b < m): h has m entries wherever it exists, each update overwrites one, and the iteration's
   update goes to exactly the bin b with e(l) == b.
5. A temporary `j = e` at the top of the loop's body (assigned nowhere else, read nowhere outside the loop, and
   before its first read in the body) is e wherever the body reads it: e reads nothing the loop assigns
   (hypothesis 3), so it has the same value there.

Without hypothesis 4, `specs/incorrect/fold_bin_past_the_end.dp` (`clamp(q[i], 0, 3)` into three bins, where a
record of 3 or more stops the run, on one neighbour) would become three folds that drop those records. Without
hypothesis 3, `specs/incorrect/fold_reads_its_accumulator.dp` (a loop whose term reads the running total: x doubles
on every record, so one record more changes the count released by up to 2^len(q)) would become a sum of terms
evaluated with the total before the loop: the sensitivity-1 count that the alignment pays for.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from .. import nodes as n
from ..resolve import ResolvedMechanism, free_names, rewrite, statement_exprs, walk_statements
from ..types import BOOL, INT, RANGE, REAL, Scalar, Type
from ..unparse import unparse
from .rewrites import NotRewritable, Rewritten


class NotFoldable(NotRewritable):
    """A nested loop that is not a fold (the message says which hypothesis fails)."""


Folded = Rewritten


@dataclass(frozen=True)
class _Update:
    guards: tuple[n.Expr, ...]
    term: n.Expr
    sign: int


def fold(mech: ResolvedMechanism) -> Folded | None:
    """The mechanism with every loop nested in another loop, and every loop of the prefix that writes no list,
    rewritten into folds; None when there is no such loop. Raises NotFoldable when a nested loop is not a fold."""
    rewritten: list[str] = []
    loops: dict[int, n.For] = {}  # id of a rebuilt outer loop -> the rebuilt loop
    sizes = _bins(mech)

    def block(body: tuple[n.Stmt, ...], nested: bool) -> tuple[n.Stmt, ...]:
        out: list[n.Stmt] = []
        for st in body:
            if isinstance(st, n.For) and (nested or _candidate(st, sizes)):
                folds = _fold_loop(st, sizes, mech)
                out += folds
                rewritten.append(f"line {st.span.line}: " + "; ".join(unparse_assign(a) for a in folds))
            elif isinstance(st, n.For):
                inner = block(st.body, True)
                if inner != st.body:
                    new = dataclasses.replace(st, body=inner)
                    loops[id(st)] = new
                    st = new
                out.append(st)
            elif isinstance(st, n.If):
                then, orelse = block(st.then, nested), block(st.orelse, nested)
                out.append(st if (then, orelse) == (st.then, st.orelse)
                           else dataclasses.replace(st, then=then, orelse=orelse))
            else:
                out.append(st)
        return tuple(out)

    body = block(mech.body, False)
    if not rewritten:
        return None
    noise = tuple(dataclasses.replace(site, loop=loops.get(id(site.loop), site.loop)) for site in mech.noise)
    folded = dataclasses.replace(mech, body=body, noise=noise)
    note = ("loops that only accumulate were rewritten into folds, which compute the same values ("
            + "; ".join(rewritten) + ")")
    return Folded(folded, note)


def unparse_assign(a: n.Assign) -> str:
    target = a.target if a.index is None else f"{a.target}[{unparse(a.index)}]"
    return f"{target} = {unparse(a.value)}"


MAX_BINS = 64
"""The most bins a list-entry update folds into (one fold each)."""


def _bins(mech: ResolvedMechanism) -> dict[str, int]:
    """Hypothesis 4: the lists of m <= MAX_BINS entries, assigned whole once (a list literal), every entry write of
    which is at an index in 0 .. m - 1 whatever the inputs."""
    whole: dict[str, list[n.Stmt]] = {}  # (a name a draw or a loop binds is assigned otherwise)
    entries: dict[str, list[n.Assign]] = {}
    for st in walk_statements(mech.body):
        if isinstance(st, n.Assign):
            (whole if st.index is None else entries).setdefault(st.target, []).append(st)
        elif isinstance(st, (n.Sample, n.For)):
            whole.setdefault(st.var, []).append(st)
    def value(e: n.Expr) -> n.Expr:  # a variable assigned once is its value (a temporary, hypothesis 5)
        made = whole.get(e.id, []) if isinstance(e, n.VarRef) and not e.primed else []
        return made[0].value if len(made) == 1 and isinstance(made[0], n.Assign) else e

    sizes = {}
    for name, writes in entries.items():
        made = whole.get(name, [])
        if len(made) != 1 or not isinstance(made[0], n.Assign) or not isinstance(made[0].value, n.ListLit):
            continue
        m = len(made[0].value.items)
        if 0 < m <= MAX_BINS and all(_bin_index(value(w.index), m) for w in writes if w.index is not None):
            sizes[name] = m
    return sizes


def _bin_index(e: n.Expr, m: int) -> bool:
    """e lies in 0 .. m - 1 whatever the inputs: a whole number there, or `clamp(x, a, b)` between such numbers."""
    def whole(x: n.Expr) -> Fraction | None:
        value = n.literal_number(x)
        return value if value is not None and value.denominator == 1 and 0 <= value < m else None
    if isinstance(e, n.Call) and e.func == "clamp" and len(e.args) == 3:
        lo, hi = whole(e.args[1]), whole(e.args[2])
        return lo is not None and hi is not None and lo <= hi
    return whole(e) is not None


def _candidate(loop: n.For, sizes: dict[str, int]) -> bool:
    """A loop of the prefix (not nested) is folded only when it looks like a fold: it draws nothing, outputs
    nothing and writes no list but bins (a map loop or the main loop is not one, and keeps its own proof)."""
    for st in walk_statements(loop.body):
        if isinstance(st, (n.Sample, n.Output, n.Break, n.For, n.While)):
            return False
        if isinstance(st, n.Assign) and st.index is not None and st.target not in sizes:
            return False
    return True


def _temporaries(loop: n.For, mech: ResolvedMechanism) -> tuple[tuple[n.Stmt, ...], set[str]]:
    """Hypothesis 5: the loop's body with each temporary `j = e` at its top replaced by e where the body reads j,
    and the temporaries' names."""
    assigned: dict[str, int] = {}
    for st in walk_statements(mech.body):
        if isinstance(st, n.Assign):
            assigned[st.target] = assigned.get(st.target, 0) + 1
    inside = {id(st) for st in walk_statements(loop.body)}
    read_outside = set()
    for st in walk_statements(mech.body):
        if id(st) not in inside and st is not loop:
            for e in _expressions_of(st):
                read_outside |= free_names(e)
    body = list(loop.body)
    names: set[str] = set()
    k = 0
    while k < len(body):
        st = body[k]
        if not (isinstance(st, n.Assign) and st.index is None and assigned.get(st.target) == 1
                and st.target not in read_outside and st.target not in free_names(st.value)
                and _increment(st) is None):
            k += 1
            continue
        name, value = st.target, st.value
        if any(name in free_names(e) for earlier in body[:k] for x in walk_statements((earlier,))
               for e in _expressions_of(x)):
            k += 1
            continue

        def put(e: n.Expr, name: str = name, value: n.Expr = value) -> n.Expr | None:
            return value if isinstance(e, n.VarRef) and e.id == name and not e.primed else None

        body = body[:k] + [_substituted(x, put) for x in body[k + 1:]]
        names.add(name)
    return tuple(body), names


def _expressions_of(st: n.Stmt) -> list[n.Expr]:
    """What the statement reads itself, a loop's bounds included."""
    return [*statement_exprs(st), *((st.lo, st.hi) if isinstance(st, n.For) else ())]


def _substituted(st: n.Stmt, f) -> n.Stmt:
    """The statement with `rewrite(e, f)` applied to its expressions (and to those of the statements it holds)."""
    if isinstance(st, n.Assign):
        return dataclasses.replace(st, value=rewrite(st.value, f),
                                   index=None if st.index is None else rewrite(st.index, f))
    if isinstance(st, n.If):
        return dataclasses.replace(st, condition=rewrite(st.condition, f),
                                   then=tuple(_substituted(x, f) for x in st.then),
                                   orelse=tuple(_substituted(x, f) for x in st.orelse))
    return st


def _fold_loop(loop: n.For, sizes: dict[str, int], mech: ResolvedMechanism) -> list[n.Assign]:
    updates: dict[str, list[_Update]] = {}
    bins: dict[str, list[tuple[_Update, n.Expr]]] = {}
    first: dict[str, n.Assign] = {}
    body, temporaries = _temporaries(loop, mech)

    def visit(body: tuple[n.Stmt, ...], guards: tuple[n.Expr, ...]) -> None:
        for st in body:
            if isinstance(st, n.If):
                visit(st.then, (*guards, st.condition))
                visit(st.orelse, (*guards, n.Unary("not", st.condition, st.condition.span, type=BOOL)))
            elif isinstance(st, n.Assign):
                if st.index is not None:
                    entry = _entry_increment(st) if st.target in sizes else None
                    if entry is None:
                        raise NotFoldable(f"the loop at line {loop.span.line} writes the list `{st.target}` other "
                                          f"than by `{st.target}[e] = {st.target}[e] + t` into bins")
                    first.setdefault(st.target, st)
                    bins.setdefault(st.target, []).append((_Update(guards, entry[0], entry[1]), st.index))
                    continue
                term = _increment(st)
                if term is None:
                    raise NotFoldable(f"the loop at line {loop.span.line} assigns `{st.target}` other than by "
                                      f"`{st.target} = {st.target} + e` (line {st.span.line})")
                first.setdefault(st.target, st)
                updates.setdefault(st.target, []).append(_Update(guards, *term))
            else:
                what = {n.Sample: "draws noise", n.Output: "outputs", n.Break: "breaks", n.For: "holds a loop",
                        n.While: "holds a loop"}.get(type(st), "does more than accumulate")
                raise NotFoldable(f"the nested loop at line {loop.span.line} {what} (line {st.span.line})")

    visit(body, ())
    _reads_nothing_written(loop, updates, bins, temporaries)
    folds = [_accumulate(loop, name, ups, first[name]) for name, ups in updates.items()]
    for name, ups in bins.items():
        for b in range(sizes[name]):
            span = first[name].span
            at = n.Number(Fraction(b), True, span, type=INT)
            binned = [_Update((*up.guards, n.Compare(("==",), (index, at), span, type=BOOL)), up.term, up.sign)
                      for up, index in ups]
            fold = _accumulate(loop, name, binned, first[name], entry=at)
            folds.append(fold)
    return folds


def _entry_increment(st: n.Assign) -> tuple[n.Expr, int] | None:
    """(t, ±1) for `h[e] = h[e] + t` or `h[e] = h[e] - t` (the same index, as written)."""
    assert st.index is not None
    v = st.value
    if not isinstance(v, n.Binary) or v.op not in ("+", "-"):
        return None

    def own(x: n.Expr) -> bool:
        return isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id == st.target and \
            not x.base.primed and x.index == st.index
    if own(v.left) and st.target not in free_names(v.right):
        return v.right, 1 if v.op == "+" else -1
    if v.op == "+" and own(v.right) and st.target not in free_names(v.left):
        return v.left, 1
    return None


def _reads_nothing_written(loop: n.For, updates: dict[str, list[_Update]],
                           bins: dict[str, list[tuple[_Update, n.Expr]]], temporaries: set[str]) -> None:
    """Hypothesis 3: no condition, no term, no bin's index and no bound reads a variable the loop assigns (the
    folds are assigned one after another, so a bound reading one accumulator would see another's new value)."""
    written = set(updates) | set(bins) | temporaries
    parts = [loop.lo, loop.hi, *(x for ups in updates.values() for up in ups for x in (*up.guards, up.term)),
             *(x for ups in bins.values() for up, index in ups for x in (*up.guards, up.term, index))]
    for e in parts:
        reads = free_names(e) & written
        if reads:
            raise NotFoldable(f"the loop at line {loop.span.line} reads `{sorted(reads)[0]}` while it "
                              "accumulates it: not a fold")


def _increment(st: n.Assign) -> tuple[n.Expr, int] | None:
    """(e, +1) for `x = x + e` (x any summand of a chain `a + b + ...`), (e, -1) for `x = x - e`; None
    otherwise."""
    v = st.value
    if not isinstance(v, n.Binary) or v.op not in ("+", "-"):
        return None
    if v.op == "-":
        return (v.right, -1) if _is_var(v.left, st.target) else None
    summands: list[n.Expr] = []

    def flatten(e: n.Expr) -> None:
        if isinstance(e, n.Binary) and e.op == "+":
            flatten(e.left)
            flatten(e.right)
        else:
            summands.append(e)

    flatten(v)
    at = next((k for k, x in enumerate(summands) if _is_var(x, st.target)), None)
    if at is None:
        return None
    rest = summands[:at] + summands[at + 1:]
    term = rest[0]
    for x in rest[1:]:
        term = n.Binary("+", term, x, x.span, type=_sum_type(term, x))
    return term, 1


def _type(e: n.Expr) -> Type:
    assert not isinstance(e, n.Name), "a resolved program has no Name"
    return e.type or REAL


def _sum_type(a: n.Expr, b: n.Expr) -> Scalar:
    return INT if _type(a) == INT and _type(b) == INT else REAL


def _is_var(e: n.Expr, name: str) -> bool:
    return isinstance(e, n.VarRef) and e.id == name and not e.primed


def _conjunction(guards: tuple[n.Expr, ...]) -> n.Expr:
    c = guards[0]
    for g in guards[1:]:
        c = n.BoolOp("and", c, g, g.span, type=BOOL)
    return c


def _accumulate(loop: n.For, name: str, updates: list[_Update], at: n.Assign,
                entry: n.Number | None = None) -> n.Assign:
    """`x = x + count(l in lo .. hi: c)` for one guarded `+ 1`, `x = x + sum(l in lo .. hi: d(l))` otherwise (with
    `entry`, the list entry `x[entry]`)."""
    span = loop.span
    target_type = _type(at.value)
    domain = n.Range(loop.lo, loop.hi, span, type=RANGE)
    if len(updates) == 1 and updates[0].guards and updates[0].sign == 1 and _is_one(updates[0].term):
        body: n.Expr = _conjunction(updates[0].guards)
        comp = n.Comprehension("count", loop.var, loop.var_span, domain, None, None, body, span, span, type=INT)
    else:
        terms: list[n.Expr] = []
        for up in updates:
            term = up.term if up.sign == 1 else n.Unary("-", up.term, up.term.span, type=_type(up.term))
            if up.guards:
                zero = n.Number(Fraction(0), _type(term) == INT, span, type=_type(term))
                term = n.Conditional(_conjunction(up.guards), term, zero, span, type=_type(term))
            terms.append(term)
        body = terms[0]
        for t in terms[1:]:
            body = n.Binary("+", body, t, span, type=_sum_type(body, t))
        comp = n.Comprehension("sum", loop.var, loop.var_span, domain, None, None, body, span, span,
                               type=_type(body))
    if entry is None:
        current: n.Expr = n.VarRef(name, False, at.target_span, type=target_type)
    else:
        assert isinstance(at.value, n.Binary)
        owner = at.value.left if isinstance(at.value.left, n.Index) else at.value.right
        assert isinstance(owner, n.Index)
        current = n.Index(owner.base, entry, span, type=target_type)
    value = n.Binary("+", current, comp, span, type=target_type)
    return n.Assign(name, at.target_span, entry, value, span)


def _is_one(e: n.Expr) -> bool:
    return isinstance(e, n.Number) and e.value == 1
