"""Fixed entries: a program that reads each list only at fixed positions is proved for every length by the bounded
check of the short ones.

    mechanism first_two(q: real[], eps: real) ... requires len(q) >= 2 ... {
      eta0 ~ Lap(2 / eps); eta1 ~ Lap(2 / eps); output (q[0] + eta0, q[1] + eta1)
    }

Such a program (no loop, each list parameter read only as `x[c]` or `x'[c]` with c a literal, its length never read)
runs on lists of any length L >= t exactly as on their first t entries, t = `covering_length`: one past the largest
position read, and at least the smallest length `requires` admits. `prove` runs the bounded check at every length
<= t (whatever `--max-length` is); each obligation it proves there holds at every length: for D, D' adjacent of
length L > t, their first t entries are adjacent lists of length t (each clause on lists of one length is
prefix-closed, `AdjacencyRule.prefix_closed`: restricting a pair to a prefix keeps it, and a prefix extended by
unchanged entries satisfies it), they satisfy `requires` (it reads the same entries, and the length only as
len(x) >= c with c <= t), and the body, the alignment and the claim read nothing else, so every obligation
(Lemma 1's conditions on the runs on D and D') says the same of both pairs. Hypotheses, each checked here, and
the mechanism each guards against:

1. No loop, and each list parameter is read only at a literal, non-negative position (no comprehension, builtin or
   variable index reads it: those read entries beyond t, or the length). A noisy sum of all entries claimed at
   3 eps for pointwise neighbours holds at lengths <= 3 and fails at 4:
   `specs/incorrect/fixed_entries_sum_of_every_entry.dp`.
2. The length is read only in `requires` conjuncts len(x) >= c or len(x) > c (the others would make the program,
   or the inputs `requires` admits, depend on the length beyond t). A Laplace scale that shrinks once the list is
   longer than the checked lengths: `specs/incorrect/fixed_entries_scale_reads_length.dp`. The adjacency clauses'
   bounds are read like the program (a bound len(q) admits larger changes on longer lists:
   `specs/incorrect/fixed_entries_adjacency_reads_length.dp`).
3. Every adjacency clause on a list is prefix-closed (not add/remove-one-record, which changes the length), and
   the alignment states no invariant (an invariant is about a loop).
4. The bounded check covers every input shape up to t: no integer parameter shapes the program (none does without a
   loop; `options.coverage`), and it runs to t without stopping at a refutation (`every_obligation`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from .. import nodes as n
from ..resolve import ResolvedMechanism, statement_exprs, walk, walk_statements
from ..results import Note
from ..status import Status
from ..types import ListType
from .every_length import Context, Inductive, NotInductive
from .options import coverage

NAME = "fixed entries"
"""How the report names this proof when it declines."""

LONGEST = 8
"""The longest covering length checked (the bounded check enumerates every length up to it, for every list)."""
SHAPES = 100
"""The most input shapes (a length per list) the check may enumerate."""


class NotFixed(NotInductive):
    """Why a program is not read at fixed entries only."""


def applies(mech: ResolvedMechanism) -> bool:
    """Whether the body has no loop: the shape this proof is for (`verify.prove_for_every_length` tries it first
    then; a loop is the other proofs' business, and their reasons say why one fails)."""
    return not any(isinstance(s, n.For | n.While) for s in walk_statements(mech.body))


def prove(mech: ResolvedMechanism, context: Context) -> Inductive:
    """Each obligation that the bounded check proves at every length <= t (`covering_length`), proved for every
    length; raises NotFixed when a hypothesis fails."""
    t = covering_length(mech)
    lists = sum(isinstance(p.type, ListType) for p in mech.params)
    if t > LONGEST or (t + 1) ** lists > SHAPES:
        raise NotFixed(f"the lists are read up to length {t}: too many input shapes to check")
    structural = coverage(mech, t).structural
    if structural:
        raise NotFixed("the bounded check would not cover every value of " + ", ".join(s[0] for s in structural))
    verdicts = context.bounded(mech, t)
    result = Inductive()
    note = (f"{NAME}: the program reads only the first {t} entries of its lists and not their length, so a longer "
            f"input runs as its first {t} entries do; every length <= {t} checked")
    for v in verdicts:
        held = v.status in (Status.PROVED, Status.BOUNDED)
        result.proved[v.obligation.key] = None if held else f"{NAME}: not proved at lengths <= {t}: {v.reason}"
        if held:
            result.notes.setdefault(v.obligation.id, [note])
        elif v.status == Status.REFUTED and v.counterexample is not None:
            # A counterexample at a length the bounded check of --max-length may not reach: it is the verdict.
            length = v.counterexample.length
            where = f"length {length}" if isinstance(length, int) else "these inputs"
            result.refuted[v.obligation.key] = replace(v, remarks=(Note(
                f"{NAME}: refuted at {where}, by the check of every length <= {t} that the proof for every length "
                "runs whatever --max-length is", frozenset({Status.REFUTED})), *v.remarks))
    return result


def covering_length(mech: ResolvedMechanism) -> int:
    """The length t whose check covers every longer one (see the module's text); raises NotFixed with the
    reason when a hypothesis fails."""
    lists = {p.name for p in mech.params if isinstance(p.type, ListType)}
    for p in mech.params:
        for clause in p.adjacency:
            if not clause.rule.prefix_closed:
                raise NotFixed(f"the neighbouring relation of `{p.name}` ({clause.rule.kind.value}) changes more "
                               "than a prefix of the list")
    if not applies(mech):
        raise NotFixed("the program has a loop")
    if mech.alignment is not None and mech.alignment.invariants:
        raise NotFixed("the alignment states an invariant")
    shortest = 0
    exprs = list(_program_exprs(mech))
    for condition in mech.requires:
        bound = _length_bound(condition, lists)
        if bound is None:
            exprs.append(condition)
        else:
            shortest = max(shortest, bound)
    past = 0
    for e in exprs:
        fixed = {id(x.base) for x in walk(e) if isinstance(x, n.Index) and _literal_position(x.index) is not None}
        for x in walk(e):
            if isinstance(x, n.ParamRef) and x.id in lists and id(x) not in fixed:
                raise NotFixed(f"line {x.span.line} reads `{x.text}` other than at a fixed entry")
            if isinstance(x, n.Index) and id(x.base) in fixed:
                past = max(past, (_literal_position(x.index) or 0) + 1)
    return max(past, shortest)


def _program_exprs(mech: ResolvedMechanism) -> Iterator[n.Expr]:
    """Every expression the body, the alignment, the claim and the adjacency clauses' bounds evaluate (a bound that
    read the length or an entry past t would make the neighbours of a longer input more than those of its first t
    entries)."""
    for p in mech.params:
        yield from (clause.bound for clause in p.adjacency if clause.bound is not None)
    for s in walk_statements(mech.body):
        yield from statement_exprs(s)
    if mech.alignment is not None:
        yield from (let.value for let in mech.alignment.lets)
        yield from (s.shift for s in mech.alignment.shifts)
    yield mech.claim


def _literal_position(e: n.Expr) -> int | None:
    if isinstance(e, n.Number) and e.value.denominator == 1 and e.value >= 0:
        return int(e.value)
    return None


def _length_bound(condition: n.Expr, lists: set[str]) -> int | None:
    """c + 1 for `len(x) > c`, c for `len(x) >= c` (or written the other way round), x a list parameter; None for
    any other condition."""
    if not isinstance(condition, n.Compare) or len(condition.ops) != 1:
        return None
    op, (left, right) = condition.ops[0], condition.operands
    if _is_length(right, lists):
        op, left, right = {"<": ">", "<=": ">="}.get(op, ""), right, left
    if not _is_length(left, lists) or op not in (">", ">="):
        return None
    c = _literal_position(right)
    if c is None:
        return None
    return c + 1 if op == ">" else c


def _is_length(e: n.Expr, lists: set[str]) -> bool:
    return isinstance(e, n.Call) and e.func == "len" and len(e.args) == 1 and \
        isinstance(e.args[0], n.ParamRef) and e.args[0].id in lists and not e.args[0].primed
