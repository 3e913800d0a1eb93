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
from typing import TypeVar

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
    "dependent_variables", "free_names", "is_expr", "names_in", "names_used", "read_name", "resolve",
    "rewrite", "statement_exprs",
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
    alignments = _bound(spec.alignments, "alignment", names, report)
    releases = _bound(spec.releases, "release block", names, report)
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
        release = releases.get(m.name)
        rc = None
        if release is not None:
            rc = c.release_checker()
            rc.resolve_release(release)
            if m.privacy and "out" in free_names(m.privacy[0]):
                report.append(diag("claim-reads-released", m.privacy[0].span, name=m.name))
        checked.append((c, alignment, rc, release))
    if any(d.severity.value == "error" for d in report):
        raise SpecError(sorted(report, key=_order))
    return ResolvedSpec(spec.source.path, tuple(_bind(*item) for item in checked))


_Block = TypeVar("_Block", n.Alignment, n.Release)


def _bound(blocks: tuple[_Block, ...], what: str, names: dict[str, Span],
           report: list[Diagnostic]) -> dict[str, _Block]:
    """The blocks of one kind (alignments, release blocks) by the mechanism each is bound to: at most one each, and
    to a mechanism of the file."""
    bound: dict[str, _Block] = {}
    for b in blocks:
        if b.name not in names:
            report.append(diag("unknown-mechanism", b.name_span, what=what, name=b.name,
                               hint=did_you_mean(b.name, names)))
        elif b.name in bound:
            report.append(diag("duplicate-definition", b.name_span, Note(bound[b.name].name_span, "first defined here"),
                               what=f"{what} for", name=b.name))
        else:
            bound[b.name] = b
    return bound


def _bind(c: MechanismChecker, alignment: ResolvedAlignment | None, rc: MechanismChecker | None,
          release: n.Release | None) -> ResolvedMechanism:
    m = c.mech
    tags = tuple(sorted(c.tags | _output_tags(c) | (_output_tags(rc) if rc is not None else set())))
    b = Binder(c, tags)
    claim = b.expr(m.privacy[0]) if m.privacy else n.Number(Fraction(0), True, m.name_span, type=INT)
    body = b.block(m.body)
    params = tuple(b.param(p) for p in c.params.values())
    requires = b.exprs(m.requires)
    released = None
    if rc is not None and release is not None:
        # the release block as a program of its own: the public parameters and `out` in, no noise, no alignment
        released = ResolvedMechanism(
            name=m.name, params=params, requires=requires, claim=claim, body=Binder(rc, tags).block(release.body),
            noise=(), variables=dict(rc.variables), constants=frozenset(), output_type=rc.output_type,
            alignment=None, tags=tags, node=m, release_node=release)
    return ResolvedMechanism(
        name=m.name, params=params, requires=requires,
        claim=claim, body=body, noise=tuple(b.site(s) for s in c.noise.values()), variables=dict(c.variables),
        constants=frozenset(c.constants), output_type=c.output_type,
        alignment=b.alignment(alignment) if alignment is not None else None, tags=tags, node=m, release=released)


def _output_tags(c: MechanismChecker) -> set[str]:
    t = c.output_type
    return set(t.tags) if isinstance(t, TagType) else set()


def _order(d: Diagnostic) -> tuple:
    s = d.span
    return (s.line, s.column) if s is not None else (0, 0)
