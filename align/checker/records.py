"""The proof for every length of add/remove-one-record neighbours, by summaries of the records.

With `adjacent len(q') = len(q) ± 1` the neighbour q' is q with one record r inserted or deleted anywhere;
`len(q)` is private and the two runs read lists of different lengths, which the induction and the ranking
encodings (one index in both runs) cannot relate. Many counting mechanisms read such a list only through
`len(q)` and through `sum` or `count` over all its records (a noisy count, a clipped sum, a histogram's bins):
order-independent folds. Then, whatever the length and wherever r sits,

    len(q') = len(q) + δ,   sum(l in 0 .. len(q'): f(q'[l])) = sum(l in 0 .. len(q): f(q[l])) + δ·f(r),

with δ = +1 (r inserted) or −1 (deleted), as the clause admits, and the same for `count` with f = [cond]. The
encoding (`Encoding(records=True)`) makes each such fold a symbol on each side with that fact, len(q) a
symbol >= 0, and runs the ordinary z3 checks once: a proof there holds for every length. Anything else — a
direct q[i], a loop over len(q), a fold whose body reads its index other than as q[l] — is an EncodingError,
and the obligations fall back to the bounded check. Only mechanisms all of whose lists have a private length
are tried (a list of public length would need its own length here).
"""

from __future__ import annotations

from ..obligations import ObligationId
from ..resolve import ResolvedMechanism
from ..rules import rule_for
from ..smt.encode import AlignmentEval, Encoding, EncodingError, Run
from ..smt.solver import Validity
from ..types import ListType
from .checks import Z3_CHECKS, Query
from .every_length import Context, Inductive, NotInductive
from .verdicts import PendingVerdict

NAME = "records"

NOTE = ("sums and counts over the records related by the record r that q and q' do not share: "
        "fold(q') = fold(q) ± f(r), len(q') = len(q) ± 1")


def prove(mech: ResolvedMechanism, context: Context) -> Inductive:
    limits, support_of = context.limits, context.support_of

    lists = [p for p in mech.params if isinstance(p.type, ListType)]
    if not lists or any(p.length_public for p in lists):
        raise NotInductive("not every list has a private length")
    enc = Encoding(mech, {p.name: 0 for p in lists}, {}, records=True)
    try:
        run1 = Run(enc, enc.params).execute()
        align = AlignmentEval(enc, run1)
        run2 = Run(enc, {**enc.params, **enc.neighbour}, shift=align.shift, twin=run1).execute()
    except EncodingError as error:
        raise NotInductive(str(error)) from None
    query = Query(mech, enc, run1, run2, align, [enc.adjacency(), *support_of(enc, draws=run1.draws)], limits)
    result = Inductive()
    for o in rule_for(mech).obligations(mech):
        # C4b: `prove_for_every_length` proves it for every length when no shift reads noise (acyclic.py's order query
        # enumerates the noise of one length)
        if o.id not in Z3_CHECKS or o.id == ObligationId.C4B:
            continue
        try:
            outcome = Z3_CHECKS[o.id](query, o, PendingVerdict(o))
        except EncodingError as error:
            result.proved[o.key] = f"{NAME}: {error}"
            continue
        proved = outcome is None or outcome[0].status == Validity.PROVED
        result.proved[o.key] = None if proved else f"{NAME}: not shown with the records summarised"
        if proved:
            result.notes.setdefault(o.id, []).append(NOTE)
    result.assumptions = set(enc.assumptions)
    return result
