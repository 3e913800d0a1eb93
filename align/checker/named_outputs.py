"""A value output at the top level and read again later, written out both times, is named once:

    t ~ Lap(1 / eps1)                                   t ~ Lap(1 / eps1)
    output NUM(q[0] + t)                        ⟶      released = q[0] + t
    T_hat = T + (q[0] + t) + rho                        output NUM(released)
                                                        T_hat = T + released + rho

(common subexpression elimination, for output values: the proof in parts, `phases.py`, makes a variable that the
first part outputs as it is a public parameter of the second). A normal form applied before the proofs for every
length (`strategies.py`); the two programs compute the same values under these hypotheses, each checked here:

1. The output statement is at the top level of the body, and the value (or a component of its tag's payload or of
   its tuple) is an expression other than a name or a number, without a comprehension.
2. No statement after the output assigns or samples a name that the expression reads: each later occurrence of the
   same text has the value output. Later occurrences inside a comprehension that binds one of the names it reads
   are not replaced.
"""

from __future__ import annotations

import dataclasses
import functools

from .. import nodes as n
from ..resolve import ResolvedMechanism, free_names, names_used, rewrite, statement_exprs, walk, walk_statements
from ..unparse import unparse
from .exprs import map_statement, relinked_noise
from .rewrites import Rewritten

NAME = "named outputs"


def name_outputs(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with each output value that hypotheses 1 and 2 hold of, and that a later statement reads,
    assigned to a name first; None when none is."""
    body = list(mech.body)
    variables = dict(mech.variables)
    taken = names_used(mech)  # a fresh name is none of the program's or the alignment's
    notes = []
    replacements = []
    k = 0
    while k < len(body):
        st = body[k]
        k += 1
        if not isinstance(st, n.Output):
            continue
        later = tuple(body[k:])
        written = {s.target for s in walk_statements(later) if isinstance(s, n.Assign)} | \
            {s.var for s in walk_statements(later) if isinstance(s, n.Sample)}
        for value in _components(st.value):
            text = unparse(value)
            if isinstance(value, (n.Number, n.Ref)) or any(isinstance(x, n.Comprehension) for x in walk(value)) or \
                    free_names(value) & written or not _read_later(later, text, free_names(value)):
                continue
            name = "released"
            while name in taken:
                name += "_"
            taken.add(name)
            kind = getattr(value, "type", None)  # the parser's `Name` has none; the resolved program's nodes do
            assert kind is not None, "a resolved expression has a type"
            variables[name] = kind
            ref = n.VarRef(name, False, value.span, type=kind)
            same = functools.partial(_same, text=text, ref=ref, reads=free_names(value))
            replacements.append(same)
            output = dataclasses.replace(st, value=rewrite(st.value, same))
            body[k - 1:] = [n.Assign(name, value.span, None, value, value.span), output,
                            *(map_statement(s, same) for s in later)]
            k += 1
            st = output
            notes.append(f"`{text}` (line {value.span.line}) as `{name}`")
    if not notes:
        return None
    return Rewritten(dataclasses.replace(mech, body=tuple(body), noise=relinked_noise(mech, tuple(body)),
                                         variables=variables),
                     "a value output and read again later is named once: " + ", ".join(notes))


def _components(value: n.Expr) -> list[n.Expr]:
    if isinstance(value, n.TagCall):
        return list(value.args)
    if isinstance(value, n.TupleLit):
        return list(value.items)
    return [value]


def _read_later(later: tuple[n.Stmt, ...], text: str, reads: set[str]) -> bool:
    """Whether a later statement reads the text (outside comprehensions that rebind a name it reads)."""
    hits = []

    def look(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.Comprehension) and x.var in reads:
            return x  # not looked into
        if unparse(x) == text:
            hits.append(x)
            return x
        return None

    for s in walk_statements(later):
        for e in _exprs(s):
            rewrite(e, look)
    return bool(hits)


def _same(x: n.Expr, text: str, ref: n.Expr, reads: set[str]) -> n.Expr | None:
    """`ref` in place of the output value's text, None elsewhere; a comprehension that rebinds a name the value reads
    is kept as it is (its index is another variable of the same name)."""
    if isinstance(x, n.Comprehension) and x.var in reads:
        return x
    if unparse(x) == text:
        return ref
    return None


def _exprs(s: n.Stmt) -> list[n.Expr]:
    return [*statement_exprs(s), *((s.lo, s.hi) if isinstance(s, n.For) else ())]
