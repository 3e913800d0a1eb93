"""Loop fusion: two loops in sequence — the first samples and fills lists, the second reads them — become one
loop, so that the induction (`induction.py`) proves the mechanism for every length.

    for i in 0 .. n { eta ~ D(...); x[i] = e }          for i in 0 .. n {
    for i in 0 .. n { ... x[i] ... }              ⟶        eta ~ D(...); x = e; ... x ...
                                                         }

The fused program has the same output distribution as the written one, so a proof of either is a proof of
both. Hypotheses, each checked here (the spec named after it is what the checker would "prove" without it):

1. Both loops run over the same bound, which reads nothing the first loop writes: the fused loop draws each
   noise family over the same indices.
2. The first loop only samples (not in a branch), fills lists at its own index (`x[i] = e`, in branches too, e
   reading of the lists it builds only the entries this iteration has written on every path, at i: `m[i] = nu +
   a[i]; cmp[i] = m[i] >= T`) and assigns variables it carries (`counter = counter + 1`); it outputs nothing and
   does not break: outputs keep their positions (an alignment reading `out[l]` means the same output), and every
   entry the second loop reads at index i is final by then, but for the second loop's own writes at index i (`if
   aborted { res[j] = -1 }`), which come after the first loop's in both programs. The variables the first loop
   carries are neither read nor written by the second loop or the statements between the loops (the second loop
   would read them mid-way: `specs/incorrect/fused_loops_read_carried_variable.dp`), and where the second loop may
   break, no statement after it reads them (they have their final values there only if the first loop ran to the
   end: `specs/incorrect/fused_loops_break_carried_variable.dp`).
3. The second loop reads and writes each built list only at its own index (`x[i]`, not inside a comprehension
   that rebinds i), and not the first loop's noise: iteration i reads nothing that the fused iteration has not
   computed yet (`specs/incorrect/fused_loops_read_next_entry.dp`). When the second loop is of the first loop's
   shape too (2) and a loop follows, the two merge into one loop that fills all their lists (kept as lists), which
   is then fused with the next loop in turn (DP-Sniper's draw, draw, walk; DP-Auditorium's fill, draw, compare,
   count, output).
4. Nothing else reads or writes the built lists (the prefix, a user invariant, the statements after the second
   loop, which stay after the fused one: it has drawn the same noise and computed the same values by then, but its
   lists are scalars there; they may be anything else, loops too). Statements between the loops
   (no loops among them) must not read the lists or the first loop's noise: they then commute with the first
   loop, which writes nothing else, and move before it. And the first loop reads no variable that the statements
   between the loops or the second loop write (it runs after the first and interleaved with the second in the
   fused program: `nu ~ Lap(s)` with `s` updated by the second loop would draw with another scale).
5. Where the second loop may `break`, the written program still draws the first loop's noise for the indices
   after the halt, and its alignment must be defined there and paid for (a shift reading `out[i]` past the
   output's end is not defined: C4a); the fused loop never reaches those indices. So with a `break`, the shift of
   every noise family of the first loop must be 0 past the output's end, written so that this is syntactic:
   `(i < len(out) and ...) ? e : 0` (or no shift at all). Then those draws cost nothing and stay in their
   support, their parameters read only parameters and i (hypothesis 2), so C0 at any index is C0 at a
   symbolic one, and the written program's obligations are the fused program's. Without it,
   `specs/incorrect/fused_loops_break_alignment_past_output.dp` (AboveThreshold with its noise drawn first and
   the shift `out[i] is TOP ? 2 : 0`) would be "proved"; with the guard, `dworkroth/above_threshold_presampled.dp`
   is proved for every length.

With them the fused program draws the same noise with the same parameters up to the halt (1; the sampling
statements are moved, not changed), none after it that an obligation sees (5), and computes the same outputs,
since each `x[i]` the second loop reads holds the value the first loop's iteration i assigned (2, 3, 4). Only the
order of the draws changes, and the noise variables are independent.
"""

from __future__ import annotations

import dataclasses
import functools

from .. import nodes as n
from ..resolve import (
    ResolvedMechanism,
    children,
    free_names,
    names_in,
    rewrite,
    statement_exprs,
    walk,
    walk_statements,
)
from ..types import ListType
from ..unparse import unparse
from .rewrites import NotRewritable, Rewritten

Fused = Rewritten


class NotFusable(NotRewritable):
    """The two loops break one of the hypotheses above (the message says which)."""


def _is_index(e: n.Expr, var: str) -> bool:
    return isinstance(e, n.LocalRef) and e.id == var


def _map_stmt(st: n.Stmt, f) -> n.Stmt:
    """st with f applied to its expressions through `rewrite` (statements nested in branches too)."""
    if isinstance(st, n.Assign):
        return dataclasses.replace(st, value=rewrite(st.value, f),
                                   index=None if st.index is None else rewrite(st.index, f))
    if isinstance(st, n.Sample):
        return dataclasses.replace(st, args=tuple(rewrite(a, f) for a in st.args))
    if isinstance(st, n.If):
        return dataclasses.replace(st, condition=rewrite(st.condition, f),
                                   then=tuple(_map_stmt(s, f) for s in st.then),
                                   orelse=tuple(_map_stmt(s, f) for s in st.orelse))
    if isinstance(st, n.Output):
        return dataclasses.replace(st, value=rewrite(st.value, f))
    return st  # Break; loops are refused before


def fuse(mech: ResolvedMechanism) -> Fused | None:
    """The fused mechanism when the body is a prefix, a loop, statements without loops, a second loop over the
    same range and any statements after it (the first two loops fused); None for any other shape. Raises
    NotFusable when the shape is there but a hypothesis fails."""
    body = mech.body
    loops = [k for k, s in enumerate(body) if isinstance(s, (n.For, n.While))]
    if len(loops) < 2:
        return None
    first, second = body[loops[0]], body[loops[1]]
    if not isinstance(first, n.For) or not isinstance(second, n.For):
        return None
    between = body[loops[0] + 1:loops[1]]
    after = body[loops[1] + 1:]
    i, j = first.var, second.var
    # 1. the same bound (otherwise not this shape at all: a map loop, a ranking, then a loop over its k results)
    if unparse(first.lo) != unparse(second.lo) or unparse(first.hi) != unparse(second.hi):
        return None
    # 2. the first loop samples and fills lists at its index, nothing else (reading an entry it has written in
    # this iteration, at its index: `m[i] = nu + a[i]; cmp[i] = m[i] >= T`)
    filled = _fills(first, i)
    assert filled is not None, "strict"
    built, carried = filled
    if not built:
        raise NotFusable("the first loop fills no list")
    lists = set(built)
    first_noise = {site.name for site in mech.noise if site.loop is first}
    for st in first.body:
        for e in statement_exprs(st):
            if any(isinstance(x, n.Comprehension) and x.var == j for x in walk(e)):
                raise NotFusable(f"the first loop binds `{j}` in a comprehension")
    if free_names(first.hi) & lists or free_names(first.lo) & lists:
        raise NotFusable("the bound reads a list the first loop builds")
    # the variables the first loop assigns: the second loop and the statements between the loops (which move before
    # the first) neither read nor write them; after the second loop they have their final values, as written,
    # unless the second loop breaks (then the written first loop has run to the end, the fused one has not: nothing
    # after the loops may read them)
    for st in walk_statements(between + (second,)):
        written = st.target if isinstance(st, n.Assign) else st.var if isinstance(st, n.Sample) else None
        if written in carried or any(names_in(e) & carried for e in statement_exprs(st)):
            raise NotFusable(f"line {st.span.line} uses a variable that the first loop carries")
    if any(isinstance(st, n.Break) for st in walk_statements(second.body)):
        for st in walk_statements(after):
            read = sorted(set().union(*(names_in(e) & carried for e in statement_exprs(st))))
            if read:
                raise NotFusable(f"the second loop may break, and line {st.span.line} after it reads `{read[0]}`, "
                                 "which the first loop assigns")
    # 3. the second loop reads the built lists at its own index only, and not the first loop's noise
    for st in walk_statements(second.body):
        if isinstance(st, (n.For, n.While)):
            raise NotFusable("the second loop is nested")
        if isinstance(st, n.Assign) and st.target in built and \
                not (st.index is not None and _is_index(st.index, j)):
            raise NotFusable(f"the second loop assigns `{st.target}` other than at its index `{j}`")
        for e in statement_exprs(st):
            _reads_at_index(e, lists, j, first_noise)
    # Two loops that only sample and fill lists, followed by another loop over the same range, merge into one that
    # fills them all (its lists stay lists, for the loop after it that reads them: fused with it in turn)
    following = next((st for st in after if isinstance(st, (n.For, n.While))), None)
    merging = _fills(second, j, strict=False, existing=frozenset(lists)) is not None and \
        isinstance(following, n.For) and \
        unparse(following.lo) == unparse(second.lo) and unparse(following.hi) == unparse(second.hi)
    # 4. nobody else touches the built lists (nor, between the loops, the first loop's noise: the statements
    # there then commute with the first loop, which writes nothing else, and move before it); after the second
    # loop the fused one has drawn the same noise and computed the same values, but its lists are scalars there
    for st in walk_statements(body[:loops[0]] + between + (() if merging else after)):
        if (isinstance(st, n.Assign) and st.target in lists) or any(names_in(e) & lists for e in statement_exprs(st)):
            raise NotFusable(f"the statements outside the loops use a list the first loop builds "
                             f"(line {st.span.line})")
    for st in walk_statements(between):
        if any(names_in(e) & first_noise for e in statement_exprs(st)):
            raise NotFusable(f"the statements between the loops read the first loop's noise (line {st.span.line})")
    if mech.alignment is not None and any(names_in(inv.condition) & lists for inv in mech.alignment.invariants):
        raise NotFusable("an invariant reads a list the first loop builds")
    # ... and the first loop reads nothing that the statements between the loops or the second loop write: in
    # the fused program it runs after the first and interleaved with the second
    reads = {name for st in first.body for e in statement_exprs(st) for name in free_names(e)} - {i}
    for st in walk_statements(between + (second,)):
        written = st.target if isinstance(st, n.Assign) else st.var if isinstance(st, n.Sample) else None
        if written is not None and written in reads:
            raise NotFusable(f"the first loop reads `{written}`, which line {st.span.line} writes after it")
    # 5. with a break, the first loop's draws after the halt must have shift 0: guarded by i < len(out) - P, where
    # the statements before the second loop output P items on every path and each of its iterations outputs at
    # most one (then len(out) - P counts the iterations that output, and every index past them has shift 0)
    breaks = any(isinstance(st, n.Break) for st in walk_statements(second.body))
    before = _fixed_outputs(body[:loops[0]] + between)
    if breaks and mech.alignment is not None and before is None:
        raise NotFusable("the second loop may break, and the statements before it output on some paths only: "
                         "`len(out)` does not say which iterations have output")
    if breaks and mech.alignment is not None and _most_outputs(second.body) > 1:
        raise NotFusable("the second loop may break, and an iteration may output more than once: `len(out)` does "
                         "not say which iterations have output")
    if breaks and mech.alignment is not None:
        guard = "len(out)" if not before else f"len(out) - {before}"
        for name in sorted(first_noise):
            shift = mech.alignment.shift_of(name)
            if shift is not None and not _zero_past_output(shift.shift, shift.index_var, before or 0):
                raise NotFusable(f"the second loop may break, and the shift of `{name}` is not written "
                                 f"`({shift.index_var} < {guard} and ...) ? e : 0`: the written program draws "
                                 f"`{name}` after the halt too, where the alignment must also hold")
    if merging:
        merged = _fused(mech, loops[0], loops[1], first, second, built, carried, scalars=False)
        try:
            further = fuse(merged.mechanism)
        except NotFusable:
            further = None
        return merged if further is None else Fused(further.mechanism, merged.note + "; " + further.note)
    fused = _fused(mech, loops[0], loops[1], first, second, built, carried)
    if _outputs_before_halting(second.body) >= 1 and mech.alignment is not None:
        # In the fused loop every iteration that draws index i outputs before it can halt, so len(out) > i at
        # every drawn index and the guard of hypothesis 5 is true there: dropped for the induction, which does
        # not encode len(out) in its abstract iteration.
        shifts = tuple(
            dataclasses.replace(sh, shift=rewrite(sh.shift, functools.partial(_guard_true, index=sh.index_var,
                                                                              before=before or 0)))
            if sh.var in first_noise else sh for sh in mech.alignment.shifts)
        if all(new.shift is old.shift for new, old in zip(shifts, mech.alignment.shifts)):
            return fused
        alignment = dataclasses.replace(mech.alignment, shifts=shifts)
        fused = Fused(dataclasses.replace(fused.mechanism, alignment=alignment),
                      fused.note + "; every iteration outputs before it can halt, so the shifts' guard "
                      "`i < len(out)` holds at every index it draws, and the written program's draws after the "
                      "halt have shift 0")
    return fused


class _Declined(Exception):
    """`_fills` not strict: the loop is not of the shape."""


def _fills(loop: n.For, i: str, strict: bool = True,
           existing: frozenset[str] = frozenset()) -> tuple[dict[str, n.Assign], set[str]] | None:
    """(the lists a loop fills, the scalars it carries) when it samples (not in a branch), fills lists at its index
    `i` on every path through its body (overwrites, in branches too, of the `existing` lists, which an earlier loop
    filled: `if aborted { res[i] = -1 }`) and assigns scalars, reading an entry of a list it fills only at i, after
    this iteration has written it on every path; otherwise NotFusable (`strict`) or None. A list written on some
    paths only has gaps, where the written program stops with an error and the fused one would read another
    iteration's value (specs/incorrect/fused_loops_list_with_gaps.dp)."""
    targets = {st.target for st in walk_statements(loop.body) if isinstance(st, n.Assign) and st.index is not None}
    built: dict[str, n.Assign] = {}
    carried: set[str] = set()

    def fail(message: str) -> None:
        if strict:
            raise NotFusable(message)
        raise _Declined(message)

    def block(statements: tuple[n.Stmt, ...], written: set[str], top: bool) -> set[str]:
        written = set(written)
        for st in statements:
            try:
                for e in statement_exprs(st):
                    _reads_at_index(e, targets, i, set(), "the first loop")
                    if free_names(e) & (targets - written):
                        fail(f"the first loop reads a list it builds before it is written (line {st.span.line})")
            except NotFusable as error:
                fail(str(error))
            if isinstance(st, n.Sample):
                if not top:
                    fail(f"the first loop samples in a branch (line {st.span.line})")
            elif isinstance(st, n.Assign) and st.index is not None:
                if not _is_index(st.index, i):
                    fail(f"the first loop assigns `{st.target}` other than at its index `{i}` (line {st.span.line})")
                built.setdefault(st.target, st)
                written.add(st.target)
            elif isinstance(st, n.Assign) and st.target not in targets:
                carried.add(st.target)
            elif isinstance(st, n.If):
                written = block(st.then, written, False) & block(st.orelse, written, False)
            else:
                fail(f"the first loop does more than sample, fill lists at its index `{i}` and assign variables "
                     f"(line {st.span.line})")
        return written

    try:
        written = block(loop.body, set(), True)  # fills `built` as it goes
        gaps = sorted(set(built) - written - existing)
        if gaps:
            fail(f"the first loop writes `{gaps[0]}` on some paths only")
    except _Declined:
        return None
    return (built, carried) if built or strict else None


def _is_guard(c: n.Expr, index: str | None, before: int = 0) -> bool:
    """`index < len(out)`, or with `before` outputs ahead of the loop `index < len(out) - before` (also written
    `index + before < len(out)`)."""
    if not (isinstance(c, n.Compare) and c.ops == ("<",)):
        return False
    left, right = c.operands

    def length(x: n.Expr) -> bool:
        return isinstance(x, n.Call) and x.func == "len" and isinstance(x.args[0], n.OutRef)

    def number(x: n.Expr, value: int) -> bool:
        return isinstance(x, n.Number) and x.value == value

    if before == 0:
        return _is_index(left, index or "") and length(right)
    if _is_index(left, index or ""):  # i < len(out) - P
        return isinstance(right, n.Binary) and right.op == "-" and length(right.left) and number(right.right, before)
    return isinstance(left, n.Binary) and left.op == "+" and length(right) and \
        any(_is_index(a, index or "") and number(b, before) for a, b in ((left.left, left.right),
                                                                         (left.right, left.left)))


def _guard_true(x: n.Expr, index: str | None, before: int = 0) -> n.Expr | None:
    if not _is_guard(x, index, before):
        return None
    assert isinstance(x, n.Compare)
    return n.BoolLit(True, x.span, type=x.type)


def _outputs_before_halting(body: tuple[n.Stmt, ...]) -> int:
    """The fewest outputs on any path through body before it ends or reaches a `break` (paths through branches;
    a nested loop's outputs are not counted: it may run no iteration)."""
    return _outputs_on_paths(body, most=False)


def _most_outputs(body: tuple[n.Stmt, ...]) -> int:
    """The most outputs on any path through body (a nested loop that outputs: as many as it may run, here "many":
    2)."""
    return _outputs_on_paths(body, most=True)


def _outputs_on_paths(body: tuple[n.Stmt, ...], most: bool) -> int:
    count = 0
    for k, st in enumerate(body):
        if isinstance(st, n.Output):
            count += 1
        elif isinstance(st, n.Break):
            return count
        elif most and isinstance(st, (n.For, n.While)) and \
                any(isinstance(x, n.Output) for x in walk_statements(st.body)):
            return count + 2
        elif isinstance(st, n.If):
            rest = body[k + 1:]
            paths = (_outputs_on_paths(st.then + rest, most), _outputs_on_paths(st.orelse + rest, most))
            return count + (max(paths) if most else min(paths))
    return count


def _fixed_outputs(body: tuple[n.Stmt, ...]) -> int | None:
    """The number of outputs on every path through body (no `break` at this level); None when it depends on the
    path (an output under a branch that the other side does not match, or in a loop)."""
    count = 0
    for st in body:
        if isinstance(st, n.Output):
            count += 1
        elif isinstance(st, (n.For, n.While)):
            if any(isinstance(x, n.Output) for x in walk_statements(st.body)):
                return None
        elif isinstance(st, n.If):
            then, orelse = _fixed_outputs(st.then), _fixed_outputs(st.orelse)
            if then is None or then != orelse:
                return None
            count += then
    return count


def _zero_past_output(shift: n.Expr, index: str | None, before: int = 0) -> bool:
    """Whether the shift is 0 syntactically, or `c ? e : 0` with `index < len(out) - before` among the conjuncts
    of c."""
    if isinstance(shift, n.Number):
        return shift.value == 0
    if not (isinstance(shift, n.Conditional) and isinstance(shift.orelse, n.Number) and shift.orelse.value == 0):
        return False
    conjuncts, todo = [], [shift.condition]
    while todo:
        c = todo.pop()
        if isinstance(c, n.BoolOp) and c.op == "and":
            todo += [c.left, c.right]
        else:
            conjuncts.append(c)
    return any(_is_guard(c, index, before) for c in conjuncts)


def _reads_at_index(e: n.Expr, built: set[str], j: str, first_noise: set[str],
                    which: str = "the second loop") -> None:
    """Raise NotFusable unless every read of a built list in e is `x[j]` outside comprehensions rebinding j."""
    def visit(x: n.Expr, bound: bool) -> None:
        if isinstance(x, (n.NoiseRef, n.MemberRef)) and x.id in first_noise:
            raise NotFusable(f"{which} reads the first loop's noise `{x.id}`")
        if isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id in built:
            if bound or not _is_index(x.index, j):
                raise NotFusable(f"{which} reads `{unparse(x)}`, not `{x.base.id}[{j}]`")
            return
        if isinstance(x, n.VarRef) and x.id in built:
            raise NotFusable(f"{which} reads the list `{x.id}` as a whole")
        rebinds = bound or (isinstance(x, n.Comprehension) and x.var == j)
        for child in children(x):
            visit(child, rebinds)

    visit(e, False)


def _fused(mech: ResolvedMechanism, at: int, second_at: int, first: n.For, second: n.For,
           built: dict[str, n.Assign], carried: set[str], scalars: bool = True) -> Fused:
    """The prefix, then the statements between the loops (moved before the first, which they commute with), then
    the fused loop, then the statements after the second; the loops sit at `at` and `second_at` in the body.
    With `scalars`, the built lists become the iteration's values (their entries at the index); without, two
    loops that fill lists merge into one that fills them all."""
    i, j = first.var, second.var

    def rename(x: n.Expr) -> n.Expr | None:
        return dataclasses.replace(x, id=j) if isinstance(x, n.LocalRef) and x.id == i else None

    def element(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id in built:
            return n.VarRef(x.base.id, False, x.span, type=x.type)
        return None

    def scalar(st: n.Stmt) -> n.Stmt:
        """`x[j] = e` of a built list as `x = e`, in branches too."""
        if isinstance(st, n.Assign) and st.target in built:
            return dataclasses.replace(st, index=None)
        if isinstance(st, n.If):
            return dataclasses.replace(st, then=tuple(scalar(x) for x in st.then),
                                       orelse=tuple(scalar(x) for x in st.orelse))
        return st

    head = [_map_stmt(st, rename) for st in first.body]
    tail = list(second.body)
    if scalars:
        head = [scalar(_map_stmt(st, element)) for st in head]
        tail = [scalar(_map_stmt(st, element)) for st in tail]
    loop = dataclasses.replace(second, body=tuple(head + tail))
    noise = []
    for site in mech.noise:
        if site.loop is first or site.loop is second:
            stmt = _same_statement(site.stmt, loop)
            guards = tuple(rewrite(rewrite(g, rename), element) if scalars else rewrite(g, rename)
                           for g in site.guards)
            site = dataclasses.replace(site, loop=loop, stmt=stmt, args=stmt.args, guards=guards)
        noise.append(site)
    variables = dict(mech.variables)
    for name in built if scalars else ():
        t = variables[name]
        assert isinstance(t, ListType)
        variables[name] = t.elem
    body = (*mech.body[:at], *mech.body[at + 1:second_at], loop, *mech.body[second_at + 1:])
    fused = dataclasses.replace(mech, body=body, noise=tuple(noise), variables=variables)
    names = ", ".join(f"`{x}`" for x in sorted(built))
    carries = f" and carries {', '.join(f'`{x}`' for x in sorted(carried))}, which the second neither reads nor " \
        "writes" if carried else ""
    note = (f"the loops at lines {first.span.line} and {second.span.line} were fused into one (the first only "
            f"samples and fills {names} at its index{carries}; the second reads the lists only at its own), which "
            "draws the same noise and outputs the same")
    moved = mech.body[at + 1:second_at]
    if moved:
        lines = ", ".join(str(st.span.line) for st in moved)
        note += (f"; the statements between them (line{'s' if len(moved) > 1 else ''} {lines}) move before the "
                 "first loop, which writes nothing they read")
    return Fused(fused, note)


def _same_statement(stmt: n.Sample, loop: n.For) -> n.Sample:
    """The sampling statement of the fused loop that was `stmt` (rebuilt by the rewrite: found by its place)."""
    for s in walk_statements(loop.body):
        if isinstance(s, n.Sample) and s.var == stmt.var and s.span == stmt.span:
            return s
    raise AssertionError(f"sampling statement of {stmt.var} lost in fusion")
