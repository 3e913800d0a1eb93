"""Stage 2 (parser's tree -> typed IR): bind names, check types, collect noise sites, attach alignments.

`resolve` is a pure function of a parsed `SpecFile`. It reports every problem it finds (not just the
first) and either returns a `ResolvedSpec` or raises `SpecError`. Nothing here proves anything. Its jobs, one
module each:

- `check.py`: names and types, noise sites, the conditions the language decides itself (C1, C5), with
  `builtin_types.py` (the typing rule of each builtin) and `alignment.py` (lets, shifts, invariants);
- `desugar.py`: explicit comprehension domains and shifts split from aligned values (tree -> tree);
- `bind.py`: the parser's tree -> the typed IR, every name a reference (tree -> tree);
- `program.py`: the resolved program's records and the walks over expressions and statements;
- `scope.py`: the names with a meaning of their own (tags, reserved names, builtins).
"""

from __future__ import annotations

from fractions import Fraction

from .. import nodes as n
from ..diagnostics import Diagnostic, Note, SpecError, diag, did_you_mean
from ..span import Span
from ..types import INT, TagType
from .alignment import check_alignment
from .bind import Binder
from .check import MechanismChecker
from .program import (
    NoiseSite,
    ResolvedAlignment,
    ResolvedMechanism,
    ResolvedParam,
    ResolvedShift,
    ResolvedSpec,
    children,
    dependent_variables,
    free_names,
    is_expr,
    names_in,
    names_used,
    read_name,
    rewrite,
    statement_exprs,
    walk,
    walk_statements,
)
from .scope import BUILTIN_ARITY, COMPREHENSIONS, RESERVED, TAG_PATTERN

__all__ = [
    "BUILTIN_ARITY", "COMPREHENSIONS", "RESERVED", "TAG_PATTERN", "MechanismChecker", "NoiseSite",
    "ResolvedAlignment", "ResolvedMechanism", "ResolvedParam", "ResolvedShift", "ResolvedSpec", "children",
    "dependent_variables", "free_names", "is_expr", "names_in", "names_used", "read_name", "resolve", "rewrite",
    "statement_exprs",
    "walk",
    "walk_statements",
]


def resolve(spec: n.SpecFile) -> ResolvedSpec:
    """Resolve every mechanism of a file and bind each alignment block to its mechanism."""
    report: list[Diagnostic] = []
    names: dict[str, Span] = {}
    for m in spec.mechanisms:
        if m.name in names:
            report.append(diag("duplicate-definition", m.name_span, Note(names[m.name], "first defined here"),
                               what="mechanism", name=m.name))
        else:
            names[m.name] = m.name_span
    alignments: dict[str, n.Alignment] = {}
    for a in spec.alignments:
        if a.name not in names:
            report.append(diag("unknown-mechanism", a.name_span, name=a.name, hint=did_you_mean(a.name, names)))
        elif a.name in alignments:
            report.append(diag("duplicate-definition", a.name_span,
                               Note(alignments[a.name].name_span, "first defined here"),
                               what="alignment for", name=a.name))
        else:
            alignments[a.name] = a
    checked = []
    seen: set[str] = set()
    for m in spec.mechanisms:
        if m.name in seen:
            continue
        seen.add(m.name)
        c = MechanismChecker(m, set(names), report)
        c.resolve_header()
        c.resolve_body()
        c.resolve_claim()
        written = alignments.get(m.name)
        alignment = check_alignment(c, written) if written is not None and not written.auto else None
        checked.append((c, alignment))
    if any(d.severity.value == "error" for d in report):
        raise SpecError(sorted(report, key=_order))
    return ResolvedSpec(spec.source.path, tuple(_bind(c, alignment) for c, alignment in checked))


def _bind(c: MechanismChecker, alignment: ResolvedAlignment | None) -> ResolvedMechanism:
    m = c.mech
    tags = tuple(sorted(c.tags | _output_tags(c)))
    b = Binder(c, tags)
    claim = b.expr(m.privacy[0]) if m.privacy else n.Number(Fraction(0), True, m.name_span, type=INT)
    body = b.block(m.body)
    return ResolvedMechanism(
        name=m.name, params=tuple(b.param(p) for p in c.params.values()), requires=b.exprs(m.requires),
        claim=claim, body=body, noise=tuple(b.site(s) for s in c.noise.values()), variables=dict(c.variables),
        constants=frozenset(c.constants), output_type=c.output_type,
        alignment=b.alignment(alignment) if alignment is not None else None, tags=tags, node=m)


def _output_tags(c: MechanismChecker) -> set[str]:
    t = c.output_type
    return set(t.tags) if isinstance(t, TagType) else set()


def _order(d: Diagnostic) -> tuple:
    s = d.span
    return (s.line, s.column) if s is not None else (0, 0)
