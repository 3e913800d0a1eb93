"""Parts in sequence: a body that runs one part and then another, the second reading nothing that the first
computes but what it outputs as it is, is proved part by part, each part a mechanism of its own.

    for i in 0 .. len(q) { eta ~ Lap(1 / eps1); output NUM(q[i] + eta) }          part 1, claim eps1
    rho ~ Lap(2 / eps2); T_hat = T + rho; for j in 0 .. len(q) { ... }            part 2, claim eps2

Each part keeps the parameters, `requires` and adjacency of the whole, and gets its own statements, its own
noise, the shifts of that noise and a share of the claim's summands; the proofs for every length then take it
like any mechanism (`verify.prove_for_every_length`, which may split a part again). Each part proved is c_k-DP by
Lemma 1; the second part runs on the data, its own noise and what the first part output (hypothesis 1), so the
pair of their outputs is (c_1 + c_2)-DP by sequential composition (Dwork & Roth 2014, Theorem 3.16, and Section
3.5 for a second mechanism chosen from the first's output) and the whole output, the concatenation, is a function
of the pair (post-processing, Proposition 2.1). Where the first part's outputs have a fixed count, the union φ of
the parts' shifts is also a Lemma 1 alignment of the whole: outputs preserved part by part (C4a), cost the sum
(C4c), reads within a part only, so the union of two acyclic alignments is acyclic (C4b), and C0, C2, C3, C4d per
sample. Hypotheses, each checked here, and what each guards:

1. The second part reads no variable that the first part assigns, noise included, besides the constants (values
   of the parameters computed before any sampling, whose definitions the second part gets a copy of) and the
   variables the first part releases as they are (`_released`: assigned once, by a top-level statement, and output
   as they are by a later top-level `output v` or `output TAG(v)`), which the second part reads as public
   parameters of its own. So on every input the second part runs as it would alone, given the first part's
   output: its draws and outputs depend on the first part's noise only through that output, and the pair is
   (c_1 + c_2)-DP by composition for mechanisms chosen from the outputs before them (Dwork & Roth 2014, Section
   3.5). A second part comparing the queries against a noisy threshold that the first part assigns would
   otherwise be "proved" with a threshold of its own: `specs/incorrect/sequential_parts_share_noise.dp`; and a
   variable output and then assigned again would be read as the value output:
   `specs/incorrect/sequential_parts_released_then_reassigned.dp`.
2. The claim is a sum and its summands are shared out between the parts (a part may get none: claim 0): the
   parts' claims add up to the whole's. Giving each part the whole claim would "prove" a histogram followed by
   AboveThreshold at ε each within ε: `specs/incorrect/sequential_parts_one_budget.dp`.
3. Each part's shifts, and the lets they read, read only that part's noise; no let is read by both parts; the
   alignment states no invariant (an invariant is about one loop of the whole).
4. The shifts read the output only as `out[e]`: the first part's as they are, the second part's as `out[K + e]`,
   with K the first part's number of outputs — one loop `for x in 0 .. K` that outputs once in every iteration
   and has no `break`, or K top-level `output` statements — which the part reads as `out[e]`. A proved part's
   alignment is defined on its outputs (C4a), so each `out[e]` it reads is one of its own and means what it means
   in the whole. `len(out)`, `indices(out)` and a claim that reads the output are outside this rule.

The body splits after a top-level loop or `output` statement that outputs, when a later top-level statement outputs
too; the first part's top-level sampling statements and scalar assignments that only the second part reads move to
the second part's start (`_sunk`), when they commute with what stays. A part that reads the output otherwise, or a
body without such a split, is not this shape (None).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from fractions import Fraction

from .. import nodes as n
from ..obligations import ObligationId
from ..resolve import (
    ResolvedMechanism,
    ResolvedParam,
    free_names,
    names_used,
    rewrite,
    statement_exprs,
    walk,
    walk_statements,
)
from ..types import INT, REAL, Scalar, Type
from ..unparse import unparse
from .every_length import Inductive, NotInductive

NAME = "parts"
"""How the report names this proof when it declines."""

MAX_SUMMANDS = 4
"""Claims with more summands are not shared out (2^4 ways to share at most)."""


def prove(mech: ResolvedMechanism, prove_part: Callable[[ResolvedMechanism], Inductive | None]) -> Inductive | None:
    """The whole's proof from its parts' when the body splits into two parts that `prove_part` proves for some
    share of the claim; None when the body has no such split. Raises NotInductive with the reason when a split is
    there but a hypothesis fails or no share of the claim proves both parts."""
    if mech.alignment is None:
        return None
    reasons: list[str] = []
    for k in _split_points(mech.body):
        first, second = _sunk(mech, mech.body[:k], mech.body[k:])
        try:
            result = _prove_split(mech, first, second, prove_part)
        except NotInductive as error:
            reasons.append(f"after line {first[-1].span.end_line}: {error}")
            continue
        if result is not None:
            return result
        reasons.append(f"after line {first[-1].span.end_line}: no share of the claim proves both parts")
    if not reasons:
        return None
    raise NotInductive("; ".join(reasons))


def _split_points(body: tuple[n.Stmt, ...]) -> Iterator[int]:
    """Where the body may split: after a top-level loop or `output` statement that outputs, when a later top-level
    statement outputs too."""
    outputs = [k for k, s in enumerate(body) if isinstance(s, n.For | n.Output) and _outputs(s)]
    later = [k for k, s in enumerate(body) if _outputs(s)]
    yield from (k + 1 for k in outputs if any(j > k for j in later))


def _sunk(mech: ResolvedMechanism, first: tuple[n.Stmt, ...],
          second: tuple[n.Stmt, ...]) -> tuple[tuple[n.Stmt, ...], tuple[n.Stmt, ...]]:
    """The split with the first part's top-level sampling statements and scalar assignments that only the second
    part reads moved to its start (`rho ~ Lap(2 / eps2); T_hat = T + rho` written before the first part's loop):
    each such statement reads only parameters, constants and what other moved statements assign, and no statement
    that stays in the first part reads or writes what it assigns, so it commutes with them; a sampling statement
    moved draws independent noise later, which changes no distribution and no output."""
    # the largest set of candidates that commute with what stays: drop one that what stays touches, or that reads
    # what stays assigns, until none is left to drop (a chain `rho ~ ...; T_hat = T + rho` moves together)
    moved: list[n.Stmt] = [st for st in first if isinstance(st, n.Sample) or
                           (isinstance(st, n.Assign) and st.index is None and st.target not in mech.constants)]
    changed = True
    while changed:
        changed = False
        staying = list(walk_statements(tuple(x for x in first if not any(x is m for m in moved))))
        assigned = {x.target for x in staying if isinstance(x, n.Assign)} | \
            {x.var for x in staying if isinstance(x, n.Sample)}
        for st in moved:
            assert isinstance(st, n.Sample | n.Assign), "only draws and assignments move"
            target = st.var if isinstance(st, n.Sample) else st.target
            touched = target in assigned or any(
                any(target in free_names(e) for e in statement_exprs(x)) or
                (isinstance(x, n.For) and target in free_names(x.lo) | free_names(x.hi)) for x in staying)
            reads = set().union(*(free_names(e) for e in statement_exprs(st)))
            if touched or reads & (assigned - mech.constants):
                moved = [m for m in moved if m is not st]
                changed = True
                break
    if not moved:
        return first, second
    kept = tuple(x for x in first if not any(x is m for m in moved))
    return kept, tuple(x for x in first if any(x is m for m in moved)) + second


def _lines(body: tuple[n.Stmt, ...]) -> str:
    """The lines of a part's statements, as ranges (`9, 15–23`: a statement moved to the part's start, `_sunk`)."""
    ranges: list[list[int]] = []
    for st in body:
        if ranges and st.span.line <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], st.span.end_line)
        else:
            ranges.append([st.span.line, st.span.end_line])
    return ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in ranges)


def _outputs(s: n.Stmt) -> bool:
    return any(isinstance(x, n.Output) for x in walk_statements([s]))


def _prove_split(mech: ResolvedMechanism, first: tuple[n.Stmt, ...], second: tuple[n.Stmt, ...],
                 prove_part: Callable[[ResolvedMechanism], Inductive | None]) -> Inductive | None:
    assert mech.alignment is not None
    # 1. the second part reads nothing the first assigns, besides the constants (copied)
    assigned = {s.target for s in walk_statements(first) if isinstance(s, n.Assign)} | \
               {s.var for s in walk_statements(first) if isinstance(s, n.Sample)}
    definitions = tuple(s for s in first if isinstance(s, n.Assign) and s.index is None and s.target in mech.constants)
    read = set()
    for s in walk_statements(second):
        for e in statement_exprs(s):
            read |= free_names(e)
        if isinstance(s, n.For):
            read |= free_names(s.lo) | free_names(s.hi)
    released = _released(first, mech.variables)
    shared = sorted(read & (assigned - mech.constants - set(released)))
    if shared:
        raise NotInductive(f"the second part reads {', '.join(f'`{x}`' for x in shared)}, which the first part "
                           "assigns (and does not release as it is)")
    reads_released = sorted(read & set(released))
    taken = names_used(mech)  # a fresh name is none of the program's or the alignment's
    params, copies = [], []
    for name in reads_released:
        param = _fresh(f"{name}_released", taken)
        taken.add(param)
        kind, span = mech.variables[name], released[name].span
        params.append(ResolvedParam(param, kind, (), span))
        copies.append(n.Assign(name, span, None, n.ParamRef(param, False, span, type=kind), span))
    # 3. shifts and lets read only their own part's noise; no invariant
    if mech.alignment.invariants:
        raise NotInductive("the alignment states an invariant")
    noise1 = {s.var for s in walk_statements(first) if isinstance(s, n.Sample)}
    noise2 = {s.var for s in walk_statements(second) if isinstance(s, n.Sample)}
    lets = {let.name: let for let in mech.alignment.lets}
    part_lets: list[set[str]] = []
    for own, other in ((noise1, noise2), (noise2, noise1)):
        exprs = [s.shift for s in mech.alignment.shifts if s.var in own]
        needed = _lets_read(exprs, lets)
        reads = set().union(*(free_names(e) for e in exprs), *(free_names(lets[x].value) for x in needed))
        if reads & other:
            raise NotInductive("a shift reads the other part's noise")
        part_lets.append(needed)
    if part_lets[0] & part_lets[1]:
        raise NotInductive(f"both parts read the let `{sorted(part_lets[0] & part_lets[1])[0]}`")
    # 4. the output: read as out[e] by the first part, as out[K + e] by the second
    if any(isinstance(x, n.OutRef) for x in walk(mech.claim)):
        raise NotInductive("the claim reads the output")
    count = _output_count(first)
    part1 = _part(mech, first, noise1, part_lets[0], _as_is)
    part2 = dataclasses.replace(_part(mech, definitions + tuple(copies) + second, noise2, part_lets[1],
                                      lambda e: _rebased(e, count)),
                                params=mech.params + tuple(params))
    # 2. the claim's summands shared out
    summands = _summands(mech.claim)
    if len(summands) > MAX_SUMMANDS:
        raise NotInductive(f"the claim has more than {MAX_SUMMANDS} summands to share out")
    for mask in range(2 ** len(summands)):
        shares = ([c for b, c in enumerate(summands) if mask >> b & 1], [c for b, c in enumerate(summands)
                                                                         if not mask >> b & 1])
        parts = [dataclasses.replace(p, claim=_sum(share, mech.claim)) for p, share in zip((part1, part2), shares)]
        results = []
        for part in parts:
            result = prove_part(part)
            if result is None or any(reason is not None for reason in result.proved.values()):
                break
            results.append(result)
        else:
            return _whole(parts, (first, second), results, reads_released)
    return None


def _released(first: tuple[n.Stmt, ...], variables: dict[str, Type]) -> dict[str, n.Output]:
    """The scalar variables that the first part releases as they are: assigned once, by a top-level statement, and
    output as they are (`output v`, `output TAG(v)`, or a component of an output tuple) by a later top-level
    statement. The second part may read
    them: each is then a function of the first part's output, a public value to the second (hypothesis 1)."""
    writes: dict[str, list[n.Assign]] = {}
    for st in walk_statements(first):
        if isinstance(st, n.Assign):
            writes.setdefault(st.target, []).append(st)
    released: dict[str, n.Output] = {}
    for k, st in enumerate(first):
        if not isinstance(st, n.Output):
            continue
        # `output v`, `output TAG(v)`, or v a component of an output tuple `(1, v)`: v is read off the output
        values = st.value.items if isinstance(st.value, n.TupleLit) else \
            st.value.args if isinstance(st.value, n.TagCall) and len(st.value.args) == 1 else (st.value,)
        for value in values:
            if not isinstance(value, n.VarRef) or value.primed or not isinstance(variables.get(value.id), Scalar):
                continue
            (write, *more) = writes.get(value.id, [None])
            top = [j for j, s in enumerate(first) if s is write]
            if write is not None and write.index is None and not more and top and top[0] < k:
                released.setdefault(value.id, st)
    return released


def _fresh(name: str, taken: set[str]) -> str:
    k, candidate = 1, name
    while candidate in taken:
        k += 1
        candidate = f"{name}{k}"
    return candidate


def _lets_read(exprs: list[n.Expr], lets: dict[str, n.Let]) -> set[str]:
    """The lets that `exprs` read, directly or through other lets."""
    needed: set[str] = set()
    todo = [x.text for e in exprs for x in walk(e) if isinstance(x, n.LetRef)]
    while todo:
        name = todo.pop()
        if name in needed or name not in lets:
            continue
        needed.add(name)
        todo += [x.text for x in walk(lets[name].value) if isinstance(x, n.LetRef)]
    return needed


def _output_count(stmts: tuple[n.Stmt, ...]) -> n.Expr | None:
    """K when the statements output only in one loop `for x in 0 .. K` that outputs once in every iteration and has
    no `break`, or only in K top-level `output` statements; else None (the second part may then not read the
    output)."""
    loops = [s for s in stmts if _outputs(s)]
    if loops and all(isinstance(s, n.Output) for s in loops):
        return n.Number(Fraction(len(loops)), True, loops[0].span, type=INT)
    if len(loops) != 1 or not isinstance(loops[0], n.For):
        return None
    loop = loops[0]
    top = [s for s in loop.body if isinstance(s, n.Output)]
    nested = [s for s in walk_statements(loop.body) if isinstance(s, n.Output | n.Break)]
    zero = isinstance(loop.lo, n.Number) and loop.lo.value == 0
    return loop.hi if zero and len(top) == 1 and len(nested) == 1 else None


def _as_is(e: n.Expr) -> n.Expr:
    """A first part's shift: the output read only as out[e]."""
    indexed = {id(x.base) for x in walk(e) if isinstance(x, n.Index)}
    if any(isinstance(x, n.OutRef) and id(x) not in indexed for x in walk(e)):
        raise NotInductive("the first part's alignment reads the output other than as `out[e]`")
    return e


def _rebased(e: n.Expr, count: n.Expr | None) -> n.Expr:
    """A second part's shift with each out[K + e] read as out[e] and len(out) - K as len(out) (K the first part's
    number of outputs)."""
    def rebase(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.Binary) and x.op == "-" and isinstance(x.left, n.Call) and x.left.func == "len" and \
                isinstance(x.left.args[0], n.OutRef) and count is not None and unparse(x.right) == unparse(count):
            return x.left  # the second part's outputs: those after the first part's K
        if isinstance(x, n.Index) and isinstance(x.base, n.OutRef):
            index = x.index
            if count is None or not (isinstance(index, n.Binary) and index.op == "+" and
                                     unparse(count) in (unparse(index.left), unparse(index.right))):
                raise NotInductive("the second part's alignment reads the output other than as `out[K + e]` or "
                                   "`len(out) - K`, K the first part's number of outputs")
            rest = index.right if unparse(index.left) == unparse(count) else index.left
            return dataclasses.replace(x, index=rewrite(rest, rebase))
        if isinstance(x, n.OutRef):
            raise NotInductive("the second part's alignment reads the output other than as `out[K + e]` or "
                               "`len(out) - K`")
        return None

    return rewrite(e, rebase)


def _part(mech: ResolvedMechanism, body: tuple[n.Stmt, ...], noise: set[str], lets: set[str],
          read: Callable[[n.Expr], n.Expr]) -> ResolvedMechanism:
    assert mech.alignment is not None
    alignment = dataclasses.replace(
        mech.alignment,
        lets=tuple(dataclasses.replace(let, value=read(let.value)) for let in mech.alignment.lets if let.name in lets),
        shifts=tuple(dataclasses.replace(s, shift=read(s.shift)) for s in mech.alignment.shifts if s.var in noise))
    return dataclasses.replace(mech, body=body, noise=tuple(s for s in mech.noise if s.name in noise),
                               alignment=alignment)


def _summands(e: n.Expr) -> list[n.Expr]:
    if isinstance(e, n.Binary) and e.op == "+":
        return _summands(e.left) + _summands(e.right)
    return [e]


def _sum(terms: list[n.Expr], claim: n.Expr) -> n.Expr:
    if not terms:
        return n.Number(Fraction(0), False, claim.span, type=REAL)
    total = terms[0]
    for t in terms[1:]:
        total = n.Binary("+", total, t, claim.span, type=REAL)
    return total


def _whole(parts: list[ResolvedMechanism], bodies: tuple[tuple[n.Stmt, ...], ...],
           results: list[Inductive], released: list[str]) -> Inductive:
    """The whole's proof from its parts', each of which proved every obligation it has (a noise site's C0 and C3
    are its part's): notes and invariants by part."""
    whole = Inductive()
    labels = [f"lines {_lines(body)}" for body in bodies]
    for part, label, result in zip(parts, labels, results):
        assert all(reason is None for reason in result.proved.values()), "only proved parts make a whole"
        whole.proved.update(result.proved)
        for obligation, notes in result.notes.items():
            whole.notes.setdefault(obligation, []).extend(f"{label}: {note}" for note in notes)
        # each part's invariant is about its own claim
        whole.invariant += [c.within(f"{label} (claim {unparse(part.claim)})") for c in result.invariant]
        whole.assumptions |= result.assumptions
    split = " and ".join(f"{label} with claim {unparse(part.claim)}" for label, part in zip(labels, parts))
    for obligation in (ObligationId.C4A, ObligationId.C4C):
        whole.notes.setdefault(obligation, []).insert(
            0, f"in parts: {split}, each a mechanism of its own (the second reads nothing the first computes"
               + (f" but what it outputs as it is: {', '.join(f'`{x}`' for x in released)}, public to the second"
                  if released else "") + "); "
               "the alignment is the union of their shifts, its cost the sum of theirs")
    return whole
