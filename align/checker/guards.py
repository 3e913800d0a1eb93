"""A shift's guard `i < len(out)` is true wherever member i is drawn, when every iteration of its loop outputs:

    for i in 0 .. len(q) {                              nu[i]' = nu[i] + (i < len(out) and out[i] is TOP ? 2 : 0)
      nu ~ Lap(4 / eps)                     ⟶          nu[i]' = nu[i] + (true and out[i] is TOP ? 2 : 0)
      if q[i] + nu >= T { output TOP; break } else { output BOT }
    }

A normal form of the alignment applied before the proofs for every length (`strategies.py`): the induction reads
one abstract iteration, where `len(out)` is not known. The guard is how an alignment written for the same mechanism
with its noise drawn first (a fill loop for every index, then a walk that may halt) says that members past the halt
have shift 0. In one loop, hypotheses checked here (the shift stays as written otherwise):

1. The family is drawn in a loop `for i in 0 .. n` at the top level of the body (it runs once, and member i is
   drawn in its iteration i, the (i + 1)-th).
2. Every path through an iteration outputs at least once before it ends or reaches a `break`
   (`fusion._outputs_before_halting`): when member i is drawn, iteration i outputs, so at the end of the run
   len(out) >= i + 1 (outputs before the loop only add to it).

So `i < len(out)` is true at every member the run draws. A shift's value at a member the run does not draw is read
by nothing: no obligation is about an undrawn member (the cost, the supports and the densities are of the samples
drawn, and shifts read the first run's noise, not other shifts), so writing `true` for the guard keeps every value
Lemma 1 reads.
"""

from __future__ import annotations

import dataclasses
import functools

from .. import nodes as n
from ..resolve import ResolvedMechanism, rewrite
from .fusion import _guard_true, _outputs_before_halting
from .rewrites import Rewritten

NAME = "drawn guards"


def drawn_guards(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with each shift's `i < len(out)` written `true` where hypotheses 1 and 2 hold; None when no
    shift changes."""
    alignment = mech.alignment
    if alignment is None:
        return None
    top = {id(s) for s in mech.body}
    changed, shifts = [], []
    for sh in alignment.shifts:
        site = next((s for s in mech.noise if s.name == sh.var), None)
        loop = site.loop if site is not None else None
        if loop is None or id(loop) not in top or not (isinstance(loop.lo, n.Number) and loop.lo.value == 0) or \
                _outputs_before_halting(loop.body) < 1:
            shifts.append(sh)
            continue
        new = rewrite(sh.shift, functools.partial(_guard_true, index=sh.index_var))
        if new is not sh.shift:
            changed.append(f"`{sh.var}`")
        shifts.append(dataclasses.replace(sh, shift=new))
    if not changed:
        return None
    return Rewritten(dataclasses.replace(mech, alignment=dataclasses.replace(alignment, shifts=tuple(shifts))),
                     f"every iteration of the loop that draws {', '.join(changed)} outputs before it can halt, so "
                     "the shifts' guard `i < len(out)` holds at every member drawn")

