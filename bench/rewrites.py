"""Benchmark (metamorphic): a proof must follow the mechanism, not its spelling (issue 37, "Measured generality" 1).

    python bench/rewrites.py [--quick] [--spec FILE ...] [--rewrite NAME ...] [--max-length N] [--check]
                             [--write DIR] [--list]

For every corpus spec expected `proved` (`# expect: proved`), each rewrite of `REWRITES` writes the same
mechanism another way — renamed, a variable inlined or extracted, `i in [j]` as `i == j`, a filtered
comprehension for `l not in S`, an explicit running-maximum loop for `argmax`, two loops fused or one split,
branches swapped, independent statements reordered, numeric sentinels or tuples for tags, ... — and `align
verify` (the in-process Python API, default options) decides the variant. A rewrite works on the parser's tree
(align/parse.py, `n.SpecFile`) with what resolution knows of the original (types, noise sites, constants, the
universes of `l not in S`), adjusts the alignment where the mechanism's change asks for it, and prints the variant
with align/unparse.py; where its precondition does not hold it returns None and makes no variant.

Every rewrite preserves the meaning exactly: the variant, run by the reference interpreter on the same inputs
and the same noise (renamed where the rewrite renames noise or parameters), gives the same outputs (tags mapped
to the sentinels or tuples that replace them), and its alignment gives every drawn value the same shift, so that
the runs on D' with the aligned noise agree too (`check_variant`, run by tests/test_rewrites.py and by `--check`).
The outputs agree bit for bit in doubles; only `regroup-shift` re-associates a shift (the alignment is exact
arithmetic in the proof) and is compared up to rounding.

Output: one row per variant,

    SPEC  REWRITE  ORIGINAL  VARIANT  SECONDS

where ORIGINAL and VARIANT are the overall verdict of `align verify` with its scope ("proved every length",
"proved all inputs", "bounded lengths <= 3", "refuted", "unknown"; `invalid CODE` when the variant does not
resolve, with the diagnostic's code) and SECONDS the variant's verification time. A table per rewrite follows
(variants, same verdict, same scope), then the last line

    variants: N same-verdict: V same-scope: S

N counts the variants, V those whose overall status equals the original's, S those whose status and scope
both do. The target for the every-length engine of issue 37 is V = S = N with N >= 300.

`--quick` runs a few specs (for CI); `--spec FILE` (repeatable) replaces the corpus; `--rewrite NAME` keeps
only the rewrites named; `--check` also runs `check_variant` on every variant and lists any difference (the
rewriter's own bug, never the checker's); `--write DIR` writes each variant to DIR/SPEC_STEM.REWRITE.dp;
`--list` prints the rewrites with their one-line summaries.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from align import nodes as n
from align.diagnostics import SpecError
from align.expectations import read_expectations
from align.files import read_source
from align.parse import parse_source
from align.pipeline import resolve_source
from align.resolve import ResolvedMechanism
from align.resolve.program import free_names, walk
from align.resolve.program import rewrite as outermost
from align.span import Source, Span
from align.types import REAL, Scalar, TagType, Type
from align.unparse import unparse, unparse_spec

QUICK = (
    "specs/freegap/example1_laplace.dp",
    "specs/dworkroth/above_threshold.dp",
    "specs/freegap/noisy_max.dp",
    "specs/freegap/alg2_svt_gap.dp",
)
"""`--quick`: a scalar mechanism, a loop with a break, a ranking, and a tag with a payload."""

SPAN = Span("<rewrite>", 0, 0, 0, 0)
"""The span of a node a rewrite makes: on no line, so no acceptance comment marks it by accident."""

ACCEPTANCE_LINE = 1_000_000
"""Comparisons a rewrite introduces and accepts (`# align: accept-float-sensitive`) get spans on lines from here:
past any real line, each with an acceptance of its own (`_accepted_compare`)."""


# ------------------------------------------------------------------------------------------------ subjects


@dataclass(frozen=True)
class Subject:
    """A corpus spec to rewrite: its parsed tree and what resolution knows about it."""

    path: str
    """Relative to the repository root, as the rows print it."""
    source: Source
    spec: n.SpecFile
    mech: ResolvedMechanism

    @property
    def mechanism(self) -> n.Mechanism:
        return self.spec.mechanisms[0]

    @property
    def alignment(self) -> n.Alignment | None:
        return self.spec.alignments[0] if self.spec.alignments else None


def load_subject(path: str) -> Subject:
    source = read_source(path)
    spec = parse_source(source)
    mech = resolve_source(source).mechanisms[0]
    return Subject(path, source, spec, mech)


def proved_specs() -> list[str]:
    """The corpus specs whose expectation is `proved`, relative to the repository root (not specs/peers/, the other
    projects' programs: `--spec specs/peers/NAME.dp` rewrites those)."""
    found = []
    for p in sorted((ROOT / "specs").rglob("*.dp")):
        if (ROOT / "specs" / "peers") in p.parents:
            continue
        if any(e.kind == "proved" for e in read_expectations(read_source(str(p)))):
            found.append(str(p.relative_to(ROOT)))
    return found


# ------------------------------------------------------------------------------------------------ variants


@dataclass(frozen=True)
class Rewritten:
    """What a rewrite returns: the new tree and how to compare its runs with the original's."""

    spec: n.SpecFile
    noise: Mapping[str, str] = field(default_factory=dict)
    """Noise variables renamed: original name -> the variant's (the others keep theirs)."""
    params: Mapping[str, str] = field(default_factory=dict)
    """Parameters renamed: original name -> the variant's."""
    output: Callable[[Any], Any] | None = None
    """How an element of the original's output reads in the variant (tags as sentinels, tuples); None: as is."""
    exact: bool = True
    """Whether outputs and shifts agree in doubles bit for bit (False: only up to rounding: a sum re-associated)."""
    members: Mapping[str, int] = field(default_factory=dict)
    """Families whose members moved: original family -> how far (member k of the original is k + offset)."""


@dataclass(frozen=True)
class Variant:
    subject: Subject
    rewrite: str
    result: Rewritten

    @property
    def text(self) -> str:
        return unparse_spec(self.result.spec, f"{self.rewrite}: a rewrite of {self.subject.path} by "
                                              "bench/rewrites.py")

    @property
    def path(self) -> str:
        return f"{self.subject.path}~{self.rewrite}"


@dataclass(frozen=True)
class Rewrite:
    name: str
    apply: Callable[[Subject], Rewritten | None]

    @property
    def summary(self) -> str:
        """The docstring's first sentence."""
        paragraph = " ".join((self.apply.__doc__ or "").strip().split("\n\n")[0].split())
        head, dot, _ = paragraph.partition(". ")
        return head + dot.strip()


REWRITES: list[Rewrite] = []


def rewrite(name: str) -> Callable[[Callable[[Subject], Rewritten | None]], Callable[[Subject], Rewritten | None]]:
    def register(func: Callable[[Subject], Rewritten | None]) -> Callable[[Subject], Rewritten | None]:
        REWRITES.append(Rewrite(name, func))
        return func
    return register


def variants(subject: Subject, names: list[str] | None = None) -> list[Variant]:
    """The variants of one spec, in the order of `REWRITES`: one per rewrite whose precondition holds."""
    found = []
    for r in REWRITES:
        if names and r.name not in names:
            continue
        result = r.apply(subject)
        if result is not None and unparse_spec(result.spec) != unparse_spec(subject.spec):
            found.append(Variant(subject, r.name, result))
    return found


# ----------------------------------------------------------------------------------------- tree helpers


def num(value: int | Fraction, integer: bool = True, span: Span = SPAN) -> n.Number:
    return n.Number(Fraction(value), integer, span)


def name(ident: str, primed: bool = False, span: Span = SPAN) -> n.Name:
    return n.Name(ident, primed, span)


def binary(op: str, left: n.Expr, right: n.Expr, span: Span = SPAN) -> n.Binary:
    return n.Binary(op, left, right, span)


def compare(op: str, left: n.Expr, right: n.Expr, span: Span = SPAN) -> n.Compare:
    return n.Compare((op,), (left, right), span)


def call(func: str, *args: n.Expr, span: Span = SPAN) -> n.Call:
    return n.Call(func, tuple(args), span, span)


def index(base: n.Expr, at: n.Expr, span: Span = SPAN) -> n.Index:
    return n.Index(base, at, span)


def length_of(e: n.Expr) -> n.Call:
    return call("len", e)


def same(a: n.Expr, b: n.Expr) -> bool:
    """Two expressions written alike (spans aside)."""
    return unparse(a) == unparse(b)


def is_name(e: n.Expr, ident: str | None = None) -> bool:
    return isinstance(e, n.Name) and not e.primed and (ident is None or e.id == ident)


def is_zero(e: n.Expr) -> bool:
    return isinstance(e, n.Number) and e.value == 0


def trivial(e: n.Expr) -> bool:
    """Too small to be worth a variable of its own: a name, a literal, `-1`, an entry `q[i]`."""
    if isinstance(e, (n.Name, n.Number, n.BoolLit)):
        return True
    if isinstance(e, n.Unary) and isinstance(e.operand, n.Number):
        return True
    return isinstance(e, n.Index) and isinstance(e.base, n.Name) and isinstance(e.index, (n.Name, n.Number))


def bottom_up(e: n.Expr, f: Callable[[n.Expr], n.Expr]) -> n.Expr:
    """e with f applied to every sub-expression, innermost first (f sees the already rewritten children)."""
    changes: dict[str, Any] = {}
    for fld in dataclasses.fields(e):
        if fld.name == "type":
            continue
        value = getattr(e, fld.name)
        if isinstance(value, tuple) and value and all(_is_expr(v) for v in value):
            items = tuple(bottom_up(v, f) for v in value)
            if any(a is not b for a, b in zip(items, value)):
                changes[fld.name] = items
        elif _is_expr(value):
            item = bottom_up(value, f)
            if item is not value:
                changes[fld.name] = item
    return f(replace(e, **changes) if changes else e)


_EXPR_CLASSES = tuple(n.Expr.__args__)


def _is_expr(value: object) -> bool:
    return isinstance(value, _EXPR_CLASSES)


def substitute(e: n.Expr, ident: str, value: n.Expr) -> n.Expr:
    """e with every unprimed read of the name `ident` replaced by `value`."""
    return bottom_up(e, lambda x: value if is_name(x, ident) else x)


ExprMap = Callable[[n.Expr], n.Expr]


def map_statement(s: n.Stmt, f: ExprMap) -> n.Stmt:
    """s with f applied to each expression it evaluates, and to those of the statements nested in it."""
    if isinstance(s, n.Assign):
        return replace(s, value=f(s.value), index=f(s.index) if s.index is not None else None)
    if isinstance(s, n.Sample):
        return replace(s, args=tuple(f(a) for a in s.args))
    if isinstance(s, n.If):
        return replace(s, condition=f(s.condition), then=map_block(s.then, f), orelse=map_block(s.orelse, f))
    if isinstance(s, n.For):
        return replace(s, lo=f(s.lo), hi=f(s.hi), body=map_block(s.body, f))
    if isinstance(s, n.While):
        return replace(s, condition=f(s.condition), body=map_block(s.body, f))
    if isinstance(s, n.Output):
        return replace(s, value=f(s.value))
    return s


def map_block(body: tuple[n.Stmt, ...], f: ExprMap) -> tuple[n.Stmt, ...]:
    return tuple(map_statement(s, f) for s in body)


def map_alignment(a: n.Alignment, f: ExprMap) -> n.Alignment:
    items: list[n.AlignmentItem] = []
    for item in a.items:
        if isinstance(item, n.Let):
            items.append(replace(item, value=f(item.value)))
        elif isinstance(item, n.Shift):
            items.append(replace(item, rhs=f(item.rhs)))
        else:
            items.append(replace(item, condition=f(item.condition)))
    return replace(a, items=tuple(items))


def with_parts(spec: n.SpecFile, body: tuple[n.Stmt, ...] | None = None, alignment: n.Alignment | None = None,
               **mechanism: Any) -> n.SpecFile:
    """The spec with its (only) mechanism's body or other fields, and its alignment, replaced."""
    mech = spec.mechanisms[0]
    if body is not None:
        mechanism["body"] = body
    mechs = (replace(mech, **mechanism), *spec.mechanisms[1:]) if mechanism else spec.mechanisms
    aligns = spec.alignments if alignment is None else (alignment, *spec.alignments[1:])
    return replace(spec, mechanisms=mechs, alignments=aligns)


def map_spec(spec: n.SpecFile, body: ExprMap | None = None, alignment: ExprMap | None = None,
             header: ExprMap | None = None) -> n.SpecFile:
    """The spec with `body` applied to the mechanism's statements, `alignment` to the alignment's items and
    `header` to `requires` and the claim."""
    mech = spec.mechanisms[0]
    changes: dict[str, Any] = {}
    if body is not None:
        changes["body"] = map_block(mech.body, body)
    if header is not None:
        changes["requires"] = tuple(header(r) for r in mech.requires)
        changes["privacy"] = tuple(header(p) for p in mech.privacy)
    new_alignment = None
    if alignment is not None and spec.alignments:
        new_alignment = map_alignment(spec.alignments[0], alignment)
    return with_parts(spec, alignment=new_alignment, **changes)


def statements(body: tuple[n.Stmt, ...]) -> Iterator[n.Stmt]:
    """Every statement, nested ones included, in text order."""
    for s in body:
        yield s
        if isinstance(s, n.If):
            yield from statements(s.then)
            yield from statements(s.orelse)
        elif isinstance(s, (n.For, n.While)):
            yield from statements(s.body)


def own_exprs(s: n.Stmt) -> list[n.Expr]:
    """The expressions s itself evaluates (a loop's bounds included; not those of nested statements)."""
    if isinstance(s, n.Assign):
        return [s.value] + ([s.index] if s.index is not None else [])
    if isinstance(s, n.Sample):
        return list(s.args)
    if isinstance(s, (n.If, n.While)):
        return [s.condition]
    if isinstance(s, n.For):
        return [s.lo, s.hi]
    if isinstance(s, n.Output):
        return [s.value]
    return []


def reads(body: tuple[n.Stmt, ...]) -> set[str]:
    """The names the statements read (a list entry written `x[i] = e` reads x too: the rest of the list)."""
    found: set[str] = set()
    for s in statements(body):
        for e in own_exprs(s):
            found |= free_names(e)
        if isinstance(s, n.Assign) and s.index is not None:
            found.add(s.target)
    return found


def writes(body: tuple[n.Stmt, ...]) -> set[str]:
    """The names the statements assign, draw or bind; `out` for an output."""
    found: set[str] = set()
    for s in statements(body):
        if isinstance(s, n.Assign):
            found.add(s.target)
        elif isinstance(s, (n.Sample, n.For)):
            found.add(s.var)
        elif isinstance(s, n.Output):
            found.add("out")
    return found


def has(body: tuple[n.Stmt, ...], kind: type) -> bool:
    return any(isinstance(s, kind) for s in statements(body))


def breaks_out(body: tuple[n.Stmt, ...]) -> bool:
    """Whether a `break` in these statements leaves the loop around them (one not inside a nested loop)."""
    for s in body:
        if isinstance(s, n.Break):
            return True
        if isinstance(s, n.If) and (breaks_out(s.then) or breaks_out(s.orelse)):
            return True
    return False


def read_count(spec: n.SpecFile, ident: str) -> int:
    """How many times the whole spec reads the unprimed name `ident`."""
    total = 0
    for e in all_exprs(spec):
        total += sum(1 for x in walk(e) if is_name(x, ident))
    return total


def all_exprs(spec: n.SpecFile) -> Iterator[n.Expr]:
    mech = spec.mechanisms[0]
    yield from mech.requires
    yield from mech.privacy
    for s in statements(mech.body):
        yield from own_exprs(s)
    for a in spec.alignments:
        for item in a.items:
            yield item.value if isinstance(item, n.Let) else item.rhs if isinstance(item, n.Shift) else item.condition


def identifiers(subject: Subject) -> set[str]:
    """Every identifier of the spec (comments aside): a fresh name must differ from all of them."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", unparse_spec(subject.spec)))


class Fresh:
    """Fresh names for one variant: `base`, `base1`, ... that the spec does not use yet."""

    def __init__(self, subject: Subject):
        self.used = identifiers(subject)

    def __call__(self, base: str) -> str:
        candidate, k = base, 0
        while candidate in self.used:
            k += 1
            candidate = f"{base}{k}"
        self.used.add(candidate)
        return candidate


def negate(c: n.Expr) -> n.Expr:
    """The negation of a condition: an opposite comparison where there is one (the same decision in doubles for
    numbers that are not NaN), else `not c`."""
    opposite = {"<": ">=", ">=": "<", "<=": ">", ">": "<=", "==": "!=", "!=": "=="}
    if isinstance(c, n.Compare) and len(c.ops) == 1:
        return replace(c, ops=(opposite[c.ops[0]],))
    if isinstance(c, n.Member):
        return replace(c, negated=not c.negated)
    if isinstance(c, n.Unary) and c.op == "not":
        return c.operand
    return n.Unary("not", c, c.span)


def to_parse(e: n.Expr) -> n.Expr:
    """A resolved expression back in the parser's terms (references as names), to put into a tree."""
    def back(x: n.Expr) -> n.Expr:
        if isinstance(x, (n.ParamRef, n.VarRef, n.LetRef)):
            return n.Name(x.id, x.primed, x.span)
        if isinstance(x, (n.NoiseRef, n.LocalRef)):
            return n.Name(x.id, False, x.span)
        if isinstance(x, (n.OutRef, n.AlignedCostRef)):
            return n.Name(x.text, False, x.span)
        if isinstance(x, n.TagLit):
            return n.Name(x.tag, False, x.span)
        if isinstance(x, n.MemberRef):
            return n.Index(n.Name(x.id, False, x.id_span), x.index, x.span)
        if isinstance(x, n.TagCall):
            return n.Call(x.tag, x.args, x.span, x.func_span)
        return replace(x, type=None) if hasattr(x, "type") and x.type is not None else x
    return bottom_up(e, back)


def resolved_nodes(mech: ResolvedMechanism) -> dict[Span, list[n.Expr]]:
    """Every expression of the resolved program by its span (several nodes may share one)."""
    found: dict[Span, list[n.Expr]] = {}
    roots: list[n.Expr] = [*mech.requires, mech.claim]
    for s in statements(mech.body):
        roots += own_exprs(s)
    if mech.alignment is not None:
        roots += [let.value for let in mech.alignment.lets]
        roots += [s.shift for s in mech.alignment.shifts]
        roots += [i.condition for i in mech.alignment.invariants]
    for root in roots:
        for x in walk(root):
            found.setdefault(x.span, []).append(x)
    return found


def type_of(subject: Subject, e: n.Expr) -> Type | None:
    """The type resolution gave the node written at e's span."""
    for x in resolved_nodes(subject.mech).get(e.span, []):
        if type(x) is type(e) or (isinstance(e, n.Name) and isinstance(x, (*n.Ref.__args__, n.MemberRef))):
            return x.type
    return None


def is_int(t: Type | None) -> bool:
    return isinstance(t, Scalar) and t.name == "int"


def _accepted_compare(spec: n.SpecFile, op: str, left: n.Expr, right: n.Expr, reason: str
                      ) -> tuple[n.SpecFile, n.Compare]:
    """A comparison accepted as float-sensitive by a comment of its own: the spec with the acceptance added.

    Used for the comparisons of a running maximum, which the float analysis reports (align/floats.py: a family's
    current member compared with a variable holding an earlier one, "although it cannot flip"); the ranking builtin
    they replace is admitted without one. The comment is what a user told so would write."""
    mech = spec.mechanisms[0]
    line = ACCEPTANCE_LINE + len(mech.acceptances)
    span = Span("<rewrite>", line, 1, line, 2)
    acceptance = n.Acceptance(False, reason, span)
    return with_parts(spec, acceptances=(*mech.acceptances, acceptance)), compare(op, left, right, span)


# ------------------------------------------------------------------------------------------------ renaming

_IDENTIFIER_FIELDS = frozenset({"id", "var", "target", "name", "index_var", "rhs_index", "primed_var"})
"""The fields of the tree's nodes that hold a name a renaming maps (a use, a binder, a parameter, a let)."""


def rename(node: Any, mapping: Mapping[str, str]) -> Any:
    """The tree with every name in `mapping` renamed, wherever it is written: uses (primed too), assignments,
    draws, loop and comprehension indices, shift lines, lets (`m'` with `m`), parameters and their clauses."""
    if isinstance(node, tuple):
        return tuple(rename(x, mapping) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (type, Span, Source)):
        return node
    changes: dict[str, Any] = {}
    for fld in dataclasses.fields(node):
        value = getattr(node, fld.name)
        if fld.name in _IDENTIFIER_FIELDS and isinstance(value, str):
            base, prime = (value[:-1], "'") if value.endswith("'") else (value, "")
            new: Any = mapping.get(base, base) + prime
        elif isinstance(value, tuple) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            new = rename(value, mapping)
        else:
            continue
        if new != value:
            changes[fld.name] = new
    return replace(node, **changes) if changes else node


def _renamed(subject: Subject, names: list[str], base: str) -> dict[str, str]:
    fresh = Fresh(subject)
    return {old: fresh(base + str(k)) for k, old in enumerate(dict.fromkeys(names))}


@rewrite("rename-noise")
def rename_noise(s: Subject) -> Rewritten | None:
    """Rename every noise variable (in the body and in the alignment): eta -> u0, ..."""
    mapping = _renamed(s, [site.name for site in s.mech.noise], "u")
    return Rewritten(rename(s.spec, mapping), noise=mapping) if mapping else None


@rewrite("rename-vars")
def rename_vars(s: Subject) -> Rewritten | None:
    """Rename every program variable (constants the alignment reads too): Tt -> v0, ..."""
    mapping = _renamed(s, sorted(s.mech.variables), "v")
    return Rewritten(rename(s.spec, mapping)) if mapping else None


@rewrite("rename-indices")
def rename_indices(s: Subject) -> Rewritten | None:
    """Rename loop indices, comprehension indices and the index of every family shift: i -> k0, l -> k1, ..."""
    found: list[str] = []
    for st in statements(s.mechanism.body):
        if isinstance(st, n.For):
            found.append(st.var)
    for e in all_exprs(s.spec):
        found += [x.var for x in walk(e) if isinstance(x, n.Comprehension)]
    if s.alignment is not None:
        found += [i.index_var for i in s.alignment.items if isinstance(i, n.Shift) and i.index_var]
    mapping = _renamed(s, found, "k")
    return Rewritten(rename(s.spec, mapping)) if mapping else None


@rewrite("rename-params")
def rename_params(s: Subject) -> Rewritten | None:
    """Rename every parameter (clauses, `example`, primes in the alignment): q -> p0, eps -> p1, ..."""
    mapping = _renamed(s, [p.name for p in s.mechanism.params], "p")
    return Rewritten(rename(s.spec, mapping), params=mapping)


@rewrite("rename-lets")
def rename_lets(s: Subject) -> Rewritten | None:
    """Rename the alignment's lets (m and m' together): m -> b0, ..."""
    if s.alignment is None:
        return None
    lets = [i.name.rstrip("'") for i in s.alignment.items if isinstance(i, n.Let)]
    mapping = _renamed(s, lets, "b")
    return Rewritten(rename(s.spec, mapping)) if mapping else None


# ---------------------------------------------------------------------------------- inlining and extraction


def _assigned_once(body: tuple[n.Stmt, ...], ident: str) -> bool:
    return sum(1 for st in statements(body) if isinstance(st, n.Assign) and st.target == ident) == 1


def _inline_one(spec: n.SpecFile) -> n.SpecFile | None:
    """The spec with one variable inlined, the first one that can be; None when none can.

    `x = e` in a block is inlined when it is x's only assignment, every read of x comes after it in the same
    block, nothing after it in the block assigns a name e reads, and x is not read by an invariant (which could
    read it primed). The alignment and the claim read only constants; a constant's reads there are inlined too."""
    mech = spec.mechanisms[0]
    invariant_reads: set[str] = set()
    for a in spec.alignments:
        for item in a.items:
            if isinstance(item, n.Invariant):
                invariant_reads |= {x.id for x in walk(item.condition) if isinstance(x, n.Name)}

    def body_reads(stmts: tuple[n.Stmt, ...], ident: str) -> int:
        return sum(1 for st in statements(stmts) for e in own_exprs(st) for x in walk(e) if is_name(x, ident))

    def attempt(block: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...] | None:
        for k, st in enumerate(block):
            if isinstance(st, n.Assign) and st.index is None and st.target not in invariant_reads \
                    and _assigned_once(mech.body, st.target):
                rest = block[k + 1:]
                later = body_reads(rest, st.target)
                if later and later == body_reads(mech.body, st.target) and not (free_names(st.value) & writes(rest)):
                    return block[:k] + map_block(rest, lambda e, s_=st: substitute(e, s_.target, s_.value))
            inner = nested(st)
            if inner is not None:
                return block[:k] + (inner,) + block[k + 1:]
        return None

    def nested(st: n.Stmt) -> n.Stmt | None:
        if isinstance(st, n.If):
            then = attempt(st.then)
            if then is not None:
                return replace(st, then=then)
            orelse = attempt(st.orelse)
            return replace(st, orelse=orelse) if orelse is not None else None
        if isinstance(st, n.For):
            body = attempt(st.body)
            return replace(st, body=body) if body is not None else None
        return None

    body = attempt(mech.body)
    if body is None:
        return None
    # Which variable went: the one assigned in the old body and not in the new.
    gone = {st.target for st in statements(mech.body) if isinstance(st, n.Assign)} - \
        {st.target for st in statements(body) if isinstance(st, n.Assign)}
    (ident,) = gone
    value = next(st.value for st in statements(mech.body) if isinstance(st, n.Assign) and st.target == ident)
    new = with_parts(spec, body=body)
    return map_spec(new, alignment=lambda e: substitute(e, ident, value),
                    header=lambda e: substitute(e, ident, value))


@rewrite("inline-vars")
def inline_vars(s: Subject) -> Rewritten | None:
    """Inline every variable assigned once and read only after it (`Tt = T + eta` into `q[i] + xi - (T + eta)`)."""
    spec, changed = s.spec, False
    while (next_spec := _inline_one(spec)) is not None:
        spec, changed = next_spec, True
    return Rewritten(spec) if changed else None


def _replace_equal(block: tuple[n.Stmt, ...], e: n.Expr, var: n.Name) -> tuple[n.Stmt, ...]:
    """The statements with every occurrence of e replaced by var, up to the first one that assigns a name e
    reads (from there on e may have another value)."""
    reads_e = free_names(e)
    out: list[n.Stmt] = []
    for k, st in enumerate(block):
        if writes((st,)) & reads_e:
            return (*out, *block[k:])
        out.append(map_statement(st, lambda x: bottom_up(x, lambda y: var if same(y, e) else y)))
    return tuple(out)


def _extract(s: Subject, pick: Callable[[n.Stmt], list[n.Expr]], base: str, share: bool = False
             ) -> Rewritten | None:
    """Each expression `pick` chooses in a statement becomes a fresh variable assigned just before it.

    With `share`, the same expression inside the statement's branches (up to an assignment to a name it reads)
    reads the variable too: `g = q[i] + xi - Tt; if g >= 0 { output TOP(g) ... }`."""
    fresh = Fresh(s)
    changed = False

    def block(stmts: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        nonlocal changed
        out: list[n.Stmt] = []
        for st in stmts:
            st = nested(st)
            chosen = pick(st)
            for e in chosen:
                var = fresh(base)
                ref = name(var, span=e.span)
                out.append(n.Assign(var, SPAN, None, e, SPAN))
                st = _replace_in_own(st, e, ref)
                if share and isinstance(st, n.If):
                    st = replace(st, then=_replace_equal(st.then, e, ref), orelse=_replace_equal(st.orelse, e, ref))
                changed = True
            out.append(st)
        return tuple(out)

    def nested(st: n.Stmt) -> n.Stmt:
        if isinstance(st, n.If):
            return replace(st, then=block(st.then), orelse=block(st.orelse))
        if isinstance(st, n.For):
            return replace(st, body=block(st.body))
        return st

    body = block(s.mechanism.body)
    return Rewritten(with_parts(s.spec, body=body)) if changed else None


def _replace_in_own(st: n.Stmt, e: n.Expr, ref: n.Expr) -> n.Stmt:
    """st with the node e (by identity) in its own expressions replaced by ref."""
    def f(x: n.Expr) -> n.Expr:
        return _replace_node(x, e, ref)
    if isinstance(st, n.Assign):
        return replace(st, value=f(st.value))
    if isinstance(st, n.Sample):
        return replace(st, args=tuple(f(a) for a in st.args))
    if isinstance(st, n.If):
        return replace(st, condition=f(st.condition))
    if isinstance(st, n.For):
        return replace(st, lo=f(st.lo), hi=f(st.hi))
    if isinstance(st, n.Output):
        return replace(st, value=f(st.value))
    return st


def _replace_node(x: n.Expr, target: n.Expr, by: n.Expr) -> n.Expr:
    return outermost(x, lambda y: by if y is target else None)


def _pick_comparison(st: n.Stmt) -> list[n.Expr]:
    if isinstance(st, n.If) and isinstance(st.condition, n.Compare):
        return [o for o in st.condition.operands if not trivial(o)]
    return []


def _pick_output(st: n.Stmt) -> list[n.Expr]:
    if not isinstance(st, n.Output):
        return []
    v = st.value
    if isinstance(v, n.Call) and v.func.isupper():  # a tag with a payload (tags are capitals, builtins not)
        return [a for a in v.args if not trivial(a)]
    if isinstance(v, n.TupleLit):
        return [a for a in v.items if not trivial(a)]
    if isinstance(v, n.Conditional):
        return []
    return [] if trivial(v) else [v]


def _pick_scale(st: n.Stmt) -> list[n.Expr]:
    return [a for a in st.args if not trivial(a)] if isinstance(st, n.Sample) else []


def _pick_bound(st: n.Stmt) -> list[n.Expr]:
    return [b for b in (st.lo, st.hi) if not trivial(b)] if isinstance(st, n.For) else []


@rewrite("extract-comparison")
def extract_comparison(s: Subject) -> Rewritten | None:
    """Name the sides of each `if` comparison (`g = q[i] + xi - Tt; if g >= 0 { output TOP(g) ... }`)."""
    return _extract(s, _pick_comparison, "g", share=True)


@rewrite("extract-output")
def extract_output(s: Subject) -> Rewritten | None:
    """Name each released value before its `output` (`y = q[i] + eta; output y`; a tag's payload, a tuple's items)."""
    return _extract(s, _pick_output, "y")


@rewrite("extract-scale")
def extract_scale(s: Subject) -> Rewritten | None:
    """Name each noise parameter before its draw (`b = 2 / eps1; xi ~ Lap(b)`)."""
    return _extract(s, _pick_scale, "scale")


@rewrite("extract-bound")
def extract_bound(s: Subject) -> Rewritten | None:
    """Name each loop bound before its loop (`n = len(q); for i in 0 .. n`)."""
    return _extract(s, _pick_bound, "n")


def _lets(a: n.Alignment) -> list[n.Let]:
    return [i for i in a.items if isinstance(i, n.Let)]


@rewrite("inline-lets")
def inline_lets(s: Subject) -> Rewritten | None:
    """Inline the alignment's lets into the lines after them (`let m = ...` into the shift)."""
    a = s.alignment
    if a is None or not _lets(a):
        return None
    items: list[n.AlignmentItem] = []
    bound: dict[tuple[str, bool], n.Expr] = {}

    def inline(e: n.Expr) -> n.Expr:
        return bottom_up(e, lambda x: bound.get((x.id, x.primed), x) if isinstance(x, n.Name) else x)

    for item in a.items:
        if isinstance(item, n.Let):
            base = item.name.rstrip("'")
            bound[(base, item.name.endswith("'"))] = inline(item.value)
        elif isinstance(item, n.Shift):
            items.append(replace(item, rhs=inline(item.rhs)))
        else:
            items.append(replace(item, condition=inline(item.condition)))
    return Rewritten(with_parts(s.spec, alignment=replace(a, items=tuple(items))))


def _shift_terms(rhs: n.Expr) -> list[tuple[str, n.Expr]]:
    """The terms of a top-level sum, with their signs."""
    if isinstance(rhs, n.Binary) and rhs.op in "+-":
        right = (rhs.op, rhs.right)
        return [*_shift_terms(rhs.left), right]
    return [("+", rhs)]


def _is_shifted(e: n.Expr, shift: n.Shift) -> bool:
    if shift.index_var is None:
        return is_name(e, shift.var)
    return isinstance(e, n.Index) and is_name(e.base, shift.var) and is_name(e.index, shift.index_var)


@rewrite("extract-let")
def extract_let(s: Subject) -> Rewritten | None:
    """Name the parts of a shift that do not read its index as lets (`let j = out[0]`, `let d = q - q'`)."""
    a = s.alignment
    if a is None:
        return None
    fresh = Fresh(s)
    lets: list[n.Let] = []
    known: list[tuple[n.Expr, str]] = []

    def let_for(e: n.Expr) -> n.Expr:
        for value, ident in known:
            if same(value, e):
                return name(ident, span=e.span)
        ident = fresh("d")
        known.append((e, ident))
        lets.append(n.Let(ident, e, SPAN, SPAN))
        return name(ident, span=e.span)

    def closed(e: n.Expr, bound: set[str]) -> bool:
        return not (free_names(e) & bound) and not any(isinstance(x, n.Name) and x.id == "aligned_cost"
                                                         for x in walk(e))

    def extract(e: n.Expr, bound: set[str]) -> n.Expr:
        """Maximal closed non-trivial parts, looked for where evaluation is unconditional (not in a branch of
        `?:`, the right side of `and`/`or`, or a comprehension's body)."""
        if closed(e, bound) and not isinstance(e, (n.Name, n.Number, n.BoolLit, n.ListLit)) \
                and not (isinstance(e, n.Unary) and isinstance(e.operand, n.Number)):
            return let_for(e)
        if isinstance(e, n.Conditional):
            return replace(e, condition=extract(e.condition, bound))
        if isinstance(e, n.BoolOp):
            return replace(e, left=extract(e.left, bound))
        if isinstance(e, n.Comprehension):
            return e
        changes: dict[str, Any] = {}
        for fld in dataclasses.fields(e):
            value = getattr(e, fld.name)
            if fld.name != "type" and _is_expr(value):
                new = extract(value, bound)
                if new is not value:
                    changes[fld.name] = new
            elif isinstance(value, tuple) and value and all(_is_expr(v) for v in value):
                items = tuple(extract(v, bound) for v in value)
                if any(x is not y for x, y in zip(items, value)):
                    changes[fld.name] = items
        return replace(e, **changes) if changes else e

    items: list[n.AlignmentItem] = []
    changed = False
    for item in a.items:
        if not isinstance(item, n.Shift):
            items.append(item)
            continue
        bound = {item.index_var} if item.index_var else set()
        terms = _shift_terms(item.rhs)
        if not any(_is_shifted(t, item) for _, t in terms):
            items.append(item)
            continue
        before = len(lets)
        new_terms = [(op, t if _is_shifted(t, item) else extract(t, bound)) for op, t in terms]
        rhs = new_terms[0][1]
        for op, t in new_terms[1:]:
            rhs = binary(op, rhs, t, item.rhs.span)
        items.extend(lets[before:])
        changed |= len(lets) > before or any(t is not u for (_, t), (_, u) in zip(new_terms, terms))
        items.append(replace(item, rhs=rhs))
    if not changed:
        return None
    return Rewritten(with_parts(s.spec, alignment=replace(a, items=tuple(items))))


@rewrite("regroup-shift")
def regroup_shift(s: Subject) -> Rewritten | None:
    """Group or ungroup a shift's terms: `eta + (q - q')` <-> `eta + q - q'` (equal up to rounding)."""
    a = s.alignment
    if a is None:
        return None
    items: list[n.AlignmentItem] = []
    changed = False
    for item in a.items:
        if isinstance(item, n.Shift):
            terms = _shift_terms(item.rhs)
            rhs = item.rhs
            if len(terms) == 2 and terms[0][0] == "+" and _is_shifted(terms[0][1], item) \
                    and isinstance(terms[1][1], n.Binary) and terms[1][1].op in "+-" and terms[1][0] == "+":
                rhs = terms[0][1]
                for op, t in _shift_terms(terms[1][1]):
                    rhs = binary(op, rhs, t, item.rhs.span)
            elif len(terms) >= 3 and _is_shifted(terms[0][1], item) and terms[1][0] == "+":
                rest = terms[1][1]
                for op, t in terms[2:]:
                    rest = binary(op, rest, t)
                rhs = binary("+", terms[0][1], rest, item.rhs.span)
            if rhs is not item.rhs:
                changed = True
                item = replace(item, rhs=rhs)
        items.append(item)
    return Rewritten(with_parts(s.spec, alignment=replace(a, items=tuple(items))), exact=False) if changed else None


# ------------------------------------------------------------------------------------ membership, filters


@rewrite("member-to-eq")
def member_to_eq(s: Subject) -> Rewritten | None:
    """`i in [j]` -> `i == j`, `i not in [j]` -> `i != j`."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Member) and isinstance(x.collection, n.ListLit) and len(x.collection.items) == 1:
            return compare("!=" if x.negated else "==", x.element, x.collection.items[0], x.span)
        return x
    return _everywhere(s, f)


@rewrite("eq-to-member")
def eq_to_member(s: Subject) -> Rewritten | None:
    """`a == b` -> `a in [b]`, `a != b` -> `a not in [b]`, for integers."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Compare) and len(x.ops) == 1 and x.ops[0] in ("==", "!=") \
                and all(is_int(type_of(s, o)) for o in x.operands):
            left, right = x.operands
            return n.Member(left, n.ListLit((right,), SPAN), x.ops[0] == "!=", x.span)
        return x
    return _everywhere(s, f)


def _everywhere(s: Subject, f: ExprMap, header: bool = False) -> Rewritten | None:
    """f applied bottom-up to every expression of the body and the alignment (and of `requires` and the claim
    with `header`); None when nothing changes."""
    def g(e: n.Expr) -> n.Expr:
        return bottom_up(e, f)
    spec = map_spec(s.spec, body=g, alignment=g, header=g if header else None)
    return Rewritten(spec) if unparse_spec(spec) != unparse_spec(s.spec) else None


@rewrite("excluded-to-filter")
def excluded_to_filter(s: Subject) -> Rewritten | None:
    """`max(l not in [j]: e)` -> `max(l in 0 .. len(q) if l != j: e)`, the universe written out."""
    resolved = resolved_nodes(s.mech)

    def f(x: n.Expr) -> n.Expr:
        if not isinstance(x, n.Comprehension) or x.excluded is None:
            return x
        domain = x.domain
        if domain is None:
            found = [r for r in resolved.get(x.span, []) if isinstance(r, n.Comprehension) and r.domain is not None]
            if not found:
                return x
            domain = to_parse(found[0].domain)
        var = name(x.var, span=x.var_span)
        if isinstance(x.excluded, n.ListLit) and len(x.excluded.items) == 1:
            test: n.Expr = compare("!=", var, x.excluded.items[0])
        else:
            test = n.Member(var, x.excluded, True, SPAN)
        condition = test if x.condition is None else n.BoolOp("and", test, x.condition, SPAN)
        return replace(x, domain=domain, excluded=None, condition=condition)
    return _everywhere(s, f)


@rewrite("filter-to-excluded")
def filter_to_excluded(s: Subject) -> Rewritten | None:
    """`max(l in 0 .. len(q) if l != j: e)` -> `max(l not in [j]: e)` in the alignment, where the universe it
    infers is the range written."""
    a = s.alignment
    if a is None:
        return None

    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Comprehension) and x.domain is not None and x.excluded is None \
                and isinstance(x.condition, n.Compare) and x.condition.ops == ("!=",) \
                and is_name(x.condition.operands[0], x.var):
            return replace(x, domain=None, excluded=n.ListLit((x.condition.operands[1],), SPAN), condition=None)
        return x

    def g(e: n.Expr) -> n.Expr:
        return bottom_up(e, f)

    spec = map_spec(s.spec, alignment=g)
    if unparse_spec(spec) == unparse_spec(s.spec):
        return None
    # Keep it only where the inferred universe is the one written: resolve and compare the printed domains.
    try:
        mech = resolve_source(Source("<filter-to-excluded>", unparse_spec(spec))).mechanisms[0]
    except SpecError:
        return None
    before = sorted(unparse(x.domain) for x in _alignment_exprs(s.mech) if isinstance(x, n.Comprehension)
                    and x.domain is not None)
    after = sorted(unparse(x.domain) for x in _alignment_exprs(mech) if isinstance(x, n.Comprehension)
                   and x.domain is not None)
    return Rewritten(spec) if before == after else None


def _alignment_exprs(mech: ResolvedMechanism) -> Iterator[n.Expr]:
    if mech.alignment is None:
        return
    for let in mech.alignment.lets:
        yield from walk(let.value)
    for shift in mech.alignment.shifts:
        yield from walk(shift.shift)


@rewrite("count-to-sum")
def count_to_sum(s: Subject) -> Rewritten | None:
    """`count(l in D: c)` -> `sum(l in D: c ? 1 : 0)`."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Comprehension) and x.func == "count":
            return replace(x, func="sum", body=n.Conditional(x.body, num(1), num(0), SPAN))
        return x
    return _everywhere(s, f, header=True)


@rewrite("split-sum")
def split_sum(s: Subject) -> Rewritten | None:
    """`sum(l in D: a - b)` -> `sum(l in D: a) - sum(l in D: b)` (equal up to rounding)."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Comprehension) and x.func == "sum" and isinstance(x.body, n.Binary) \
                and x.body.op in "+-":
            return binary(x.body.op, replace(x, body=x.body.left), replace(x, body=x.body.right), x.span)
        return x
    result = _everywhere(s, f, header=True)
    return replace(result, exact=False) if result is not None else None


@rewrite("minmax-conditional")
def minmax_conditional(s: Subject) -> Rewritten | None:
    """`min(a, b)` -> `a <= b ? a : b`, `max(a, b)` -> `a >= b ? a : b`."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Call) and x.func in ("min", "max") and len(x.args) == 2:
            a, b = x.args
            return n.Conditional(compare("<=" if x.func == "min" else ">=", a, b), a, b, x.span)
        return x
    return _everywhere(s, f, header=True)


# ------------------------------------------------------------------------------------------ arithmetic


@rewrite("commute")
def commute(s: Subject) -> Rewritten | None:
    """Swap the operands of every `+` and `*` (exact in doubles too)."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Binary) and x.op in ("+", "*"):
            return replace(x, left=x.right, right=x.left)
        return x
    return _everywhere(s, f, header=True)


@rewrite("flip-compare")
def flip_compare(s: Subject) -> Rewritten | None:
    """Write every comparison the other way round: `a >= b` -> `b <= a`, `0 < t < 1` -> `1 > t > 0`."""
    mirror = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}

    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Compare):
            return replace(x, ops=tuple(mirror[o] for o in reversed(x.ops)), operands=tuple(reversed(x.operands)))
        return x
    return _everywhere(s, f, header=True)


@rewrite("sub-to-add-neg")
def sub_to_add_neg(s: Subject) -> Rewritten | None:
    """`a - b` -> `a + -b` (exact in doubles too)."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Binary) and x.op == "-":
            return replace(x, op="+", right=n.Unary("-", x.right, x.right.span))
        return x
    return _everywhere(s, f, header=True)


@rewrite("normalise-compare")
def normalise_compare(s: Subject) -> Rewritten | None:
    """`a >= b` <-> `a - b >= 0` for the ordering comparisons of the body and the alignment, where a and b are
    doubles (the sign of a difference of doubles is exact). Not for integers: `q[l] - t[i]` may leave the 64 bits
    where `q[l] >= t[i]` cannot (the interpreter stops there, and checker/stops.py says so), nor an integer beside a
    double (`2^53 + 1 - 2^53.0` rounds to 0)."""
    resolved = resolved_nodes(s.mech)

    def doubles(*xs: n.Expr) -> bool:
        types = [[t for r in resolved.get(x.span, []) if (t := getattr(r, "type", None)) is not None] for x in xs]
        return all(found and all(t == REAL for t in found) for found in types)

    def f(x: n.Expr) -> n.Expr:
        if not (isinstance(x, n.Compare) and len(x.ops) == 1 and x.ops[0] in ("<", "<=", ">", ">=")):
            return x
        left, right = x.operands
        if is_zero(right) and isinstance(left, n.Binary) and left.op == "-":
            return replace(x, operands=(left.left, left.right)) if doubles(left.left, left.right) else x
        if is_zero(right) or not doubles(left, right):
            return x
        return replace(x, operands=(binary("-", left, right, left.span), num(0)))
    return _everywhere(s, f)


# ---------------------------------------------------------------------------------------------- branches


@rewrite("swap-if")
def swap_if(s: Subject) -> Rewritten | None:
    """`if c {A} else {B}` -> `if not c {B} else {A}`, the comparison negated (every `if` with an `else`)."""
    changed = False

    def block(stmts: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        nonlocal changed
        out = []
        for st in stmts:
            if isinstance(st, n.If):
                then, orelse = block(st.then), block(st.orelse)
                if orelse:
                    changed = True
                    st = replace(st, condition=negate(st.condition), then=orelse, orelse=then)
                else:
                    st = replace(st, then=then)
            elif isinstance(st, n.For):
                st = replace(st, body=block(st.body))
            out.append(st)
        return tuple(out)

    body = block(s.mechanism.body)
    return Rewritten(with_parts(s.spec, body=body)) if changed else None


@rewrite("swap-conditional")
def swap_conditional(s: Subject) -> Rewritten | None:
    """`c ? a : b` -> `not c ? b : a`, the comparison negated (body and alignment)."""
    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Conditional):
            return replace(x, condition=negate(x.condition), then=x.orelse, orelse=x.then)
        return x
    return _everywhere(s, f, header=True)


@rewrite("if-to-select")
def if_to_select(s: Subject) -> Rewritten | None:
    """`if c { output a } else { output b }` -> `output c ? a : b` (and the same for one assignment)."""
    changed = False

    def block(stmts: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        nonlocal changed
        out: list[n.Stmt] = []
        for st in stmts:
            if isinstance(st, n.If):
                st = replace(st, then=block(st.then), orelse=block(st.orelse))
                if len(st.then) == 1 and len(st.orelse) == 1:
                    a, b = st.then[0], st.orelse[0]
                    if isinstance(a, n.Output) and isinstance(b, n.Output):
                        changed = True
                        st = n.Output(n.Conditional(st.condition, a.value, b.value, SPAN), st.span)
                    elif isinstance(a, n.Assign) and isinstance(b, n.Assign) and a.target == b.target \
                            and a.index is None and b.index is None:
                        changed = True
                        st = n.Assign(a.target, a.target_span, None, n.Conditional(st.condition, a.value, b.value,
                                                                                    SPAN), st.span)
            elif isinstance(st, n.For):
                st = replace(st, body=block(st.body))
            out.append(st)
        return tuple(out)

    body = block(s.mechanism.body)
    return Rewritten(with_parts(s.spec, body=body)) if changed else None


# ------------------------------------------------------------------------------------------------ order


def _independent(a: n.Stmt, b: n.Stmt) -> bool:
    """Whether two statements in sequence may run in the other order: neither leaves the loop, neither writes
    what the other reads or writes (`out` for outputs)."""
    if breaks_out((a,)) or breaks_out((b,)):
        return False
    ra, wa, rb, wb = reads((a,)), writes((a,)), reads((b,)), writes((b,))
    return not (wa & (rb | wb)) and not (wb & ra)


@rewrite("reorder")
def reorder(s: Subject) -> Rewritten | None:
    """Swap independent neighbouring statements (`eps0 = ...; eps1 = ...`, a draw and an unrelated update)."""
    changed = False

    def block(stmts: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        nonlocal changed
        items = [nested(st) for st in stmts]
        k = 0
        while k + 1 < len(items):
            if _independent(items[k], items[k + 1]):
                items[k], items[k + 1] = items[k + 1], items[k]
                changed = True
                k += 2
            else:
                k += 1
        return tuple(items)

    def nested(st: n.Stmt) -> n.Stmt:
        if isinstance(st, n.If):
            return replace(st, then=block(st.then), orelse=block(st.orelse))
        if isinstance(st, n.For):
            return replace(st, body=block(st.body))
        return st

    body = block(s.mechanism.body)
    return Rewritten(with_parts(s.spec, body=body)) if changed else None


# ------------------------------------------------------------------------------------------------ loops


def _fill_loop(body: tuple[n.Stmt, ...], before: int, ident: str) -> int | None:
    """The position of the top-level loop before `before` that fills the list `ident` entry by entry (`v[i] = e`
    with i the loop index, as a statement of the loop's own body) and is the only place that assigns it."""
    for k in range(before - 1, -1, -1):
        st = body[k]
        if isinstance(st, n.For) and any(isinstance(x, n.Assign) and x.target == ident for x in st.body):
            fills = [x for x in statements(st.body) if isinstance(x, n.Assign) and x.target == ident]
            ok = len(fills) == 1 and fills[0] in st.body and fills[0].index is not None \
                and is_name(fills[0].index, st.var) and not breaks_out(st.body)
            others = sum(1 for x in statements(body) if isinstance(x, n.Assign) and x.target == ident)
            return k if ok and others == 1 else None
    return None


def _ranking(st: n.Stmt) -> n.Call | None:
    """The `argmax(v)` or `argmin(v)` that an output or an assignment computes of a list named v."""
    value = st.value if isinstance(st, (n.Output, n.Assign)) else None
    if isinstance(value, n.Call) and value.func in ("argmax", "argmin") and len(value.args) == 1 \
            and isinstance(value.args[0], n.Name):
        return value
    return None


@rewrite("argmax-loop")
def argmax_loop(s: Subject) -> Rewritten | None:
    """`output argmax(v)` -> a loop keeping the index of the best entry so far (ties to the lower index, as
    `argmax` breaks them), its comparison accepted as float-sensitive; argmin alike."""
    fresh = Fresh(s)
    spec = s.spec
    body = list(s.mechanism.body)
    changed = False
    for k in range(len(body) - 1, -1, -1):
        ranking = _ranking(body[k])
        if ranking is None:
            continue
        v = ranking.args[0]
        best, idx = fresh("best"), fresh("l")
        spec, better = _accepted_compare(spec, ">" if ranking.func == "argmax" else "<", index(v, name(idx)),
                                         index(v, name(best)), "(a running maximum, as the ranking it replaces)")
        loop = n.For(idx, SPAN, num(1), length_of(v),
                     (n.If(better, (n.Assign(best, SPAN, None, name(idx), SPAN),), (), SPAN),), SPAN)
        body[k] = _replace_in_own(body[k], ranking, name(best))
        body[k:k] = [n.Assign(best, SPAN, None, num(0), SPAN), loop]
        changed = True
    return Rewritten(with_parts(spec, body=tuple(body))) if changed else None


@rewrite("argmax-running")
def argmax_running(s: Subject) -> Rewritten | None:
    """`argmax(v)` of a list filled by a loop -> one pass keeping the best value and its index, as CheckDP and
    ShadowDP write noisy max (`if i == 0 or e > bv { best = i; bv = e }`); the list goes when nothing else
    reads it."""
    fresh = Fresh(s)
    spec = s.spec
    body = list(s.mechanism.body)
    for k in range(len(body) - 1, -1, -1):
        ranking = _ranking(body[k])
        if ranking is None:
            continue
        v = ranking.args[0]
        assert isinstance(v, n.Name)
        at = _fill_loop(tuple(body), k, v.id)
        if at is None or writes(tuple(body[at + 1:k])) & {v.id}:
            continue
        loop = body[at]
        assert isinstance(loop, n.For)
        fill = next(x for x in loop.body if isinstance(x, n.Assign) and x.target == v.id)
        keep = read_count(spec, v.id) > 1
        value = index(v, name(loop.var)) if keep else fill.value
        best, bv = fresh("best"), fresh("bv")
        spec, better = _accepted_compare(spec, ">" if ranking.func == "argmax" else "<", value, name(bv),
                                         "(a running maximum, as the ranking it replaces)")
        first = compare("==", name(loop.var), loop.lo)
        update = n.If(n.BoolOp("or", first, better, SPAN),
                      (n.Assign(best, SPAN, None, name(loop.var), SPAN), n.Assign(bv, SPAN, None, value, SPAN)),
                      (), SPAN)
        pos = loop.body.index(fill)
        new_body = loop.body[:pos] + ((fill,) if keep else ()) + (update,) + loop.body[pos + 1:]
        body[at] = replace(loop, body=new_body)
        body[k] = _replace_in_own(body[k], ranking, name(best))
        body[at:at] = [n.Assign(best, SPAN, None, num(0), SPAN), n.Assign(bv, SPAN, None, num(0), SPAN)]
        return Rewritten(with_parts(spec, body=tuple(body)))
    return None


def _fusable(first: n.For, second: n.For, after: tuple[n.Stmt, ...]) -> bool:
    """Whether `for i {A}` then `for j {B}` over the same range run as one loop `for i {A; B}`: A neither
    outputs nor leaves its loop; B reads what A writes only as the current entry `w[j]` of a list A fills at
    `w[i]`, and nothing A writes is read after the two loops (B may stop early); A reads nothing B writes."""
    if not (same(first.lo, second.lo) and same(first.hi, second.hi)):
        return False
    if has(first.body, n.Output) or has(first.body, n.Break):
        return False
    written = writes(first.body) - {first.var}
    lists = {st.target for st in statements(first.body) if isinstance(st, n.Assign) and st.index is not None
             and is_name(st.index, first.var)}
    scalars = written - lists
    if any(isinstance(st, n.Assign) and st.target in lists and (st.index is None or not is_name(st.index, first.var))
           for st in statements(first.body)):
        return False
    for st in statements(second.body):
        for e in own_exprs(st):
            for x in walk(e):
                if is_name(x) and x.id in scalars:
                    return False
                if is_name(x) and x.id in lists and not _only_current(e, x.id, second.var):
                    return False
    if reads(after) & written or reads(first.body) & writes(second.body):
        return False
    bound_in_second = writes(second.body) | {x.var for st in statements(second.body) for e in own_exprs(st)
                                             for x in walk(e) if isinstance(x, n.Comprehension)}
    return first.var == second.var or first.var not in bound_in_second | reads(second.body)


def _only_current(e: n.Expr, ident: str, var: str) -> bool:
    """Whether every read of the list `ident` in e is the entry `ident[var]`."""
    total = sum(1 for x in walk(e) if is_name(x, ident))
    current = sum(1 for x in walk(e) if isinstance(x, n.Index) and is_name(x.base, ident) and is_name(x.index, var))
    return total == current


@rewrite("loop-fusion")
def loop_fusion(s: Subject) -> Rewritten | None:
    """Two loops in sequence over the same range, the first filling lists the second reads entry by entry, as one
    loop (`for i { nu ~ ...; noisy[i] = q[i] + nu }  for j { if noisy[j] >= T ... }` -> one `for i`)."""
    body = s.mechanism.body
    for k in range(len(body) - 1):
        first, second = body[k], body[k + 1]
        if isinstance(first, n.For) and isinstance(second, n.For) and _fusable(first, second, body[k + 2:]):
            tail = second.body if second.var == first.var else rename(second.body, {second.var: first.var})
            fused = replace(first, body=first.body + tail)
            return Rewritten(with_parts(s.spec, body=(*body[:k], fused, *body[k + 2:])))
    return None


def _outputs_per_path(stmts: tuple[n.Stmt, ...]) -> tuple[set[int], set[int]] | None:
    """The numbers of outputs on the paths through the statements: (those that fall through, those that leave
    the loop by `break`), over-approximated (every count of a branch combined with every count before it); None
    when a nested loop outputs."""
    through, left = {0}, set()
    for st in stmts:
        if isinstance(st, n.Output):
            through = {k + 1 for k in through}
        elif isinstance(st, n.Break):
            left |= through
            through = set()
        elif isinstance(st, n.If):
            a, b = _outputs_per_path(st.then), _outputs_per_path(st.orelse)
            if a is None or b is None:
                return None
            left = left | {k + x for k in through for x in a[1] | b[1]}
            through = {k + x for k in through for x in a[0] | b[0]}
        elif isinstance(st, n.For) and has(st.body, n.Output):
            return None
    return through, left


def _outputs_before(stmts: tuple[n.Stmt, ...]) -> n.Expr | None:
    """The number of outputs that statements at the top level make before a point, as an expression over the
    parameters; None when it is not one fixed count."""
    total: n.Expr = num(0)

    def add(e: n.Expr) -> None:
        nonlocal total
        total = e if is_zero(total) else binary("+", total, e)

    for st in stmts:
        if isinstance(st, n.Output):
            add(num(1))
        elif isinstance(st, n.If):
            a, b = _outputs_per_path(st.then), _outputs_per_path(st.orelse)
            if a is None or b is None or a[1] or b[1] or len(a[0] | b[0]) != 1:
                return None
            (count,) = a[0] | b[0]
            if count:
                add(num(count))
        elif isinstance(st, n.For):
            if not has(st.body, n.Output):
                continue
            paths = _outputs_per_path(st.body)
            if paths is None or paths[1] or paths[0] != {1}:
                return None
            add(st.hi if is_zero(st.lo) else binary("-", st.hi, st.lo))
    return total


@rewrite("loop-fission")
def loop_fission(s: Subject) -> Rewritten | None:
    """A loop that draws first and then computes, split in two: one loop draws every member and keeps it in a
    list, the second reads the list (`for i { nu ~ ...; nus[i] = nu }  for i { ... nus[i] ... }`). When the loop
    can stop early, the variant draws members the original never reaches: their shifts are made 0, guarded by
    `i < len(out) - outputs before the loop` (every iteration outputs once)."""
    fresh = Fresh(s)
    body = s.mechanism.body
    for k, loop in enumerate(body):
        if not isinstance(loop, n.For):
            continue
        draws = list(itertools.takewhile(lambda st: isinstance(st, n.Sample), loop.body))
        rest = loop.body[len(draws):]
        if not draws or not rest:
            continue
        if any(free_names(a) & writes(rest) for d in draws for a in d.args):
            continue
        guard: n.Expr | None = None
        if breaks_out(rest):
            paths = _outputs_per_path(rest)
            before = _outputs_before(body[:k])
            if paths is None or before is None or not (paths[0] <= {1} and paths[1] <= {1}):
                continue
            guard = _reached(before, loop.lo)
        lists = {d.var: fresh(d.var + "s") for d in draws}
        first, second = _split(loop, draws, rest, lists)
        spec = with_parts(s.spec, body=(*body[:k], first, second, *body[k + 1:]))
        if guard is not None and s.alignment is not None:
            alignment = _guard_shifts(s.alignment, set(lists), guard)
            if alignment is None:
                return None
            spec = with_parts(spec, alignment=alignment)
        return Rewritten(spec)
    return None


def _split(loop: n.For, draws: list[n.Sample], rest: tuple[n.Stmt, ...], lists: dict[str, str]
           ) -> tuple[n.For, n.For]:
    """The loop that draws (and keeps each member in its list) and the loop that reads the lists."""
    keep = tuple(n.Assign(lists[d.var], SPAN, name(loop.var), name(d.var), SPAN) for d in draws)

    def entry(x: n.Expr) -> n.Expr:
        return index(name(lists[x.id]), name(loop.var), x.span) if is_name(x) and x.id in lists else x

    second = map_block(rest, lambda e: bottom_up(e, entry))
    return replace(loop, body=(*draws, *keep)), replace(loop, body=second, span=SPAN)


def _guard_shifts(a: n.Alignment, families: set[str], guard: n.Expr) -> n.Alignment | None:
    """The alignment with each shift of these families guarded: `x[i]' = x[i] + (guard ? ψ : 0)`, `__i__` in the
    guard standing for the shift's index; None when a shift is not written `x[i] + ψ`."""
    items = []
    for item in a.items:
        if isinstance(item, n.Shift) and item.var in families and item.index_var:
            terms = _shift_terms(item.rhs)
            if not _is_shifted(terms[0][1], item) or terms[0][0] != "+":
                return None
            if len(terms) > 1:
                condition = substitute(guard, "__i__", name(item.index_var))
                guarded = n.Conditional(condition, _rebuild(terms[1:]), num(0), SPAN)
                item = replace(item, rhs=binary("+", terms[0][1], guarded, item.rhs.span))
        items.append(item)
    return replace(a, items=tuple(items))


def _rebuild(terms: list[tuple[str, n.Expr]]) -> n.Expr:
    """The sum of signed terms (the ψ of a shift after its noise term)."""
    first_op, e = terms[0]
    total: n.Expr = e if first_op == "+" else n.Unary("-", e, SPAN)
    for op, t in terms[1:]:
        total = binary(op, total, t)
    return total


def _reached(before: n.Expr, lo: n.Expr) -> n.Expr:
    """`__i__ < len(out) - before + lo`: iteration __i__ ran (one output each, `before` outputs ahead of the loop)."""
    bound: n.Expr = length_of(name("out"))
    if not is_zero(before):
        bound = binary("-", bound, before)
    if not is_zero(lo):
        bound = binary("+", bound, lo)
    return compare("<", name("__i__"), bound)


@rewrite("loop-offset")
def loop_offset(s: Subject) -> Rewritten | None:
    """Every loop from 0 counted from 1, as the paper writes its loops: `for i in 1 .. len(q) + 1` reading
    `q[i - 1]`; the members of a family drawn in such a loop move up by one, so the alignment reads `eta[l + 1]`
    and shifts member i by ψ at i - 1."""
    moved: dict[str, int] = {}
    loops = [st for st in statements(s.mechanism.body) if isinstance(st, n.For) and is_zero(st.lo)]
    if not loops:
        return None
    for loop in loops:  # a draw is inside one loop at most (`nested-family`): this one
        moved.update({st.var: 1 for st in statements(loop.body) if isinstance(st, n.Sample)})

    def shift_loops(block: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        out: list[n.Stmt] = []
        for st in block:
            if isinstance(st, n.For) and is_zero(st.lo):
                before = binary("-", name(st.var), num(1))
                body = map_block(shift_loops(st.body), lambda e, v=st.var, b=before: substitute(e, v, b))
                st = replace(st, lo=num(1), hi=binary("+", st.hi, num(1)), body=body)
            elif isinstance(st, n.For):
                st = replace(st, body=shift_loops(st.body))
            elif isinstance(st, n.If):
                st = replace(st, then=shift_loops(st.then), orelse=shift_loops(st.orelse))
            out.append(st)
        return tuple(out)

    def member_up(e: n.Expr) -> n.Expr:
        def f(x: n.Expr) -> n.Expr:
            if isinstance(x, n.Index) and isinstance(x.base, n.Name) and x.base.id in moved and not x.base.primed:
                return replace(x, index=binary("+", x.index, num(1)))
            return x
        return bottom_up(e, f)

    spec = with_parts(s.spec, body=shift_loops(s.mechanism.body))
    a = s.alignment
    if a is not None:
        items: list[n.AlignmentItem] = []
        for item in a.items:
            if isinstance(item, n.Shift) and item.var in moved and item.index_var:
                terms = _shift_terms(item.rhs)
                if not _is_shifted(terms[0][1], item) or terms[0][0] != "+":
                    return None
                if len(terms) > 1:
                    psi = substitute(_rebuild(terms[1:]), item.index_var,
                                     binary("-", name(item.index_var), num(1)))
                    item = replace(item, rhs=binary("+", terms[0][1], member_up(psi), item.rhs.span))
            elif isinstance(item, n.Shift):
                item = replace(item, rhs=member_up(item.rhs))
            elif isinstance(item, n.Let):
                item = replace(item, value=member_up(item.value))
            else:
                item = replace(item, condition=member_up(item.condition))
            items.append(item)
        spec = with_parts(spec, alignment=replace(a, items=tuple(items)))
    return Rewritten(spec, members=moved)


# ------------------------------------------------------------------------------------------------ tags


def _tag_payloads(s: Subject) -> dict[str, tuple[Type, ...]] | None:
    t = s.mech.output_type
    return dict(t.payloads) if isinstance(t, TagType) else None


def _tags_in_body_only_as_values(s: Subject) -> bool:
    """The body makes tags and never tests them (`is`, `payload`, `count`): only then are all its tags outputs."""
    for st in statements(s.mechanism.body):
        for e in own_exprs(st):
            for x in walk(e):
                if isinstance(x, n.TagTest) or (isinstance(x, n.Call) and x.func in ("payload", "count")):
                    return False
    return True


class Decline(Exception):
    """A rewrite's precondition fails deep inside the tree: the rewrite makes no variant."""


def _encode_reads(s: Subject, is_tag: Callable[[n.Expr, str], n.Expr],
                  payload: Callable[[n.Expr, str, n.Expr, int | None], n.Expr | None]) -> ExprMap:
    """The alignment's and the claim's reads of tags rewritten, outermost first (so that `payload(v, T, d)[k]` is
    seen whole): `v is T` by `is_tag(v, T)`, `count(out, T)` by a comprehension over the outputs, and
    `payload(v, T, d)[k]` (k None: the whole payload) by `payload(v, T, d, k)`, which may raise `Decline`."""
    fresh = Fresh(s)

    def f(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.TagTest):
            return is_tag(x.value, x.tag)
        if isinstance(x, n.Call) and x.func == "count" and len(x.args) == 2 and isinstance(x.args[1], n.Name):
            var = fresh("l")
            return n.Comprehension("count", var, SPAN, n.Range(num(0), length_of(x.args[0]), SPAN), None, None,
                                   is_tag(index(x.args[0], name(var)), x.args[1].id), x.span, SPAN)
        read: tuple[n.Call, int | None] | None = None
        if isinstance(x, n.Index) and isinstance(x.base, n.Call) and x.base.func == "payload" \
                and isinstance(x.index, n.Number):
            read = (x.base, int(x.index.value))
        elif isinstance(x, n.Call) and x.func == "payload":
            read = (x, None)
        if read is None:
            return None
        v, tag, d = read[0].args
        new = payload(v, tag.id if isinstance(tag, n.Name) else "", d, read[1])
        if new is None:
            raise Decline(f"cannot read {unparse(x)} from the encoded output")
        return new

    return lambda e: outermost(e, f)


def _map_tags_in_body(s: Subject, value: Callable[[str, tuple[n.Expr, ...], Span], n.Expr]) -> ExprMap:
    tags = set(_tag_payloads(s) or {})

    def f(x: n.Expr) -> n.Expr:
        if isinstance(x, n.Name) and x.id in tags and not x.primed:
            return value(x.id, (), x.span)
        if isinstance(x, n.Call) and x.func in tags:
            return value(x.func, x.args, x.span)
        return x
    return lambda e: bottom_up(e, f)


@rewrite("tag-sentinel")
def tag_sentinel(s: Subject) -> Rewritten | None:
    """Tags released as numbers: without payloads each tag is a code (`BOT` -> 0, `TOP` -> 1) and the alignment
    reads `out[i] == 1`; with one real payload (SVT with Gap) the payload itself is released and every other tag
    is a sentinel (-1000, ...), as CheckDP writes it: the alignment then reads a real output, which the language
    refuses today (`continuous-output-read`)."""
    payloads = _tag_payloads(s)
    if not payloads or not _tags_in_body_only_as_values(s):
        return None
    tags = sorted(payloads)
    carrying = [t for t in tags if payloads[t]]
    if not carrying:
        codes = {t: k for k, t in enumerate(tags)}

        def value(tag: str, args: tuple[n.Expr, ...], span: Span) -> n.Expr:
            return num(codes[tag], span=span)

        def is_tag(v: n.Expr, tag: str) -> n.Expr:
            return compare("==", v, num(codes[tag]))

        def encode(x: Any) -> Any:
            return codes[x.name]
    elif len(carrying) == 1 and len(payloads[carrying[0]]) == 1 and payloads[carrying[0]][0] == Scalar("real"):
        (real,) = carrying
        sentinels = {t: -1000 * (k + 1) for k, t in enumerate(t for t in tags if t != real)}

        def value(tag: str, args: tuple[n.Expr, ...], span: Span) -> n.Expr:
            return args[0] if tag == real else n.Unary("-", num(-sentinels[tag]), span)

        def is_tag(v: n.Expr, tag: str) -> n.Expr:
            if tag != real:
                return compare("==", v, n.Unary("-", num(-sentinels[tag]), SPAN))
            test: n.Expr | None = None
            for t in sentinels:
                one = compare("!=", v, n.Unary("-", num(-sentinels[t]), SPAN))
                test = one if test is None else n.BoolOp("and", test, one, SPAN)
            assert test is not None
            return test

        def encode(x: Any) -> Any:
            return x.payload[0] if x.name == real else sentinels[x.name]
    else:
        return None

    def payload(v: n.Expr, tag: str, d: n.Expr, k: int | None) -> n.Expr | None:
        if tag not in carrying or k not in (None, 0):
            return None
        default = d.items[0] if k == 0 and isinstance(d, n.TupleLit) else d
        return n.Conditional(is_tag(v, tag), v, default, SPAN)

    read_tags = _encode_reads(s, is_tag, payload)
    try:
        spec = map_spec(s.spec, body=_map_tags_in_body(s, value), alignment=read_tags, header=read_tags)
    except Decline:
        return None
    return Rewritten(spec, output=encode)


@rewrite("tag-tuple")
def tag_tuple(s: Subject) -> Rewritten | None:
    """Tags released as tuples `(code, payload...)`, padded with 0 (`TOP(g)` -> `(1, g)`, `BOT` -> `(0, 0)`); the
    alignment reads the integer code `out[i][0] == 1` and integer payload components `out[i][2]`."""
    payloads = _tag_payloads(s)
    if not payloads or not _tags_in_body_only_as_values(s):
        return None
    if any(not (isinstance(t, Scalar) and t.name in ("int", "real")) for p in payloads.values() for t in p):
        return None
    tags = sorted(payloads)
    codes = {t: k for k, t in enumerate(tags)}
    width = max(len(p) for p in payloads.values())

    def value(tag: str, args: tuple[n.Expr, ...], span: Span) -> n.Expr:
        return n.TupleLit((num(codes[tag]), *args, *(num(0) for _ in range(width - len(args)))), span)

    def is_tag(v: n.Expr, tag: str) -> n.Expr:
        return compare("==", index(v, num(0)), num(codes[tag]))

    def payload(v: n.Expr, tag: str, d: n.Expr, k: int | None) -> n.Expr | None:
        arity = len(payloads.get(tag, ()))
        if k is None:
            if arity != 1:
                return None
            return n.Conditional(is_tag(v, tag), index(v, num(1)), d, SPAN)
        if not isinstance(d, n.TupleLit) or k >= arity:
            return None
        return n.Conditional(is_tag(v, tag), index(v, num(1 + k)), d.items[k], SPAN)

    def encode(x: Any) -> Any:
        return (codes[x.name], *x.payload, *(0 for _ in range(width - len(x.payload))))

    read_tags = _encode_reads(s, is_tag, payload)
    try:
        spec = map_spec(s.spec, body=_map_tags_in_body(s, value), alignment=read_tags, header=read_tags)
    except Decline:
        return None
    return Rewritten(spec, output=encode)


# ---------------------------------------------------------------------------------- checking the meaning


def _constant(e: n.Expr) -> Any:
    """The value of an `example` item: literals, lists and arithmetic on them."""
    if isinstance(e, n.Number):
        return int(e.value) if e.is_integer else float(e.value)
    if isinstance(e, n.BoolLit):
        return e.value
    if isinstance(e, n.ListLit):
        return [_constant(x) for x in e.items]
    if isinstance(e, n.Unary) and e.op == "-":
        return -_constant(e.operand)
    if isinstance(e, n.Binary):
        a, b = _constant(e.left), _constant(e.right)
        ops: dict[str, Callable[[Any, Any], Any]] = {"+": lambda x, y: x + y, "-": lambda x, y: x - y,
                                                     "*": lambda x, y: x * y, "/": lambda x, y: x / y,
                                                     "//": lambda x, y: x // y, "%": lambda x, y: x % y,
                                                     "^": lambda x, y: x ** y}
        return ops[e.op](a, b)
    raise ValueError(f"not a constant: {unparse(e)}")


def _bound(adj: n.Adjacency, public: Mapping[str, Any]) -> float | None:
    if adj.bound is None:
        return None
    try:
        return float(_constant(adj.bound))
    except (ValueError, KeyError):
        pass
    if isinstance(adj.bound, n.Name) and adj.bound.id in public:
        return float(public[adj.bound.id])
    return 1.0


def inputs(subject: Subject, length: int, rng: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Arguments for a run (the `example` values of the public parameters, random private values with every list
    of this length) and the private parameters' values on a neighbour that the adjacency clauses admit."""
    from align.adjacency import PythonOps

    mech = subject.mechanism
    public = {x.name: _constant(x.value) for x in mech.examples if not x.length}
    args = dict(public)
    neighbour: dict[str, Any] = {}
    for p in mech.params:
        clauses = [a for a in mech.adjacency if a.var == p.name]
        if not clauses:
            if p.name not in args:  # a public parameter without an example: some value of its type
                args[p.name] = [1] * length if p.type.is_list else 1
            continue
        integer = p.type.base == "int"

        def draw(size: int, integer: bool = integer) -> list[Any]:
            if integer:
                return [int(x) for x in rng.integers(0, 4, size)]
            return [float(x) for x in np.round(rng.uniform(-3, 3, size), 3)]

        value: Any = draw(length) if p.type.is_list else draw(1)[0]
        bounds = [b for b in (_bound(a, public) for a in clauses) if b is not None]
        step = min(bounds) if bounds else 1.0
        step = max(1, int(step)) if integer else step
        as_list = value if p.type.is_list else [value]
        size = len(as_list)
        candidates: list[list[Any]] = []
        if any(a.rule.changes_length for a in clauses):
            candidates += [as_list + draw(1), as_list[:-1]]
        else:
            spread = [int(x) for x in rng.integers(-step, step + 1, size)] if integer else \
                [float(x) for x in np.round(rng.uniform(-step, step, size), 3)]
            one = [0] * size
            if size:
                one[int(rng.integers(0, size))] = step if rng.random() < 0.5 else -step
            half = step if integer else step / 2
            for delta in (spread, one, [half] * size, [-half] * size):
                candidates.append([x + d for x, d in zip(as_list, delta)])
        candidates.append(list(as_list))
        for other in candidates:
            here, there = (as_list, other) if p.type.is_list else (as_list[0], other[0] if other else None)
            if there is None:
                continue
            if all(a.rule.violation(PythonOps(1e-9), here, there, _bound(a, public)) is None for a in clauses):
                neighbour[p.name] = there
                break
        args[p.name] = value
    return args, neighbour


def _noise(mech: ResolvedMechanism, members: int, rng: Any) -> dict[str, Any]:
    """Random noise for every site, any value in its support (a replay takes any): `members` per family."""
    def one(dist: str) -> Any:
        if dist in ("Exp", "Gamma"):
            return float(np.round(rng.exponential(2.0), 3))
        if dist == "Geo":
            return int(rng.geometric(0.3) - 1)
        if dist in ("DLap", "Bernoulli"):
            return int(rng.integers(0, 2))
        return float(np.round(rng.laplace(0.0, 2.0), 3))
    return {s.name: [one(s.distribution.name) for _ in range(members)] if s.family else one(s.distribution.name)
            for s in mech.noise}


@dataclass
class Execution:
    """One input run through a mechanism: its output on D, each drawn value's shift, and the aligned run's output
    on D'; an error is kept as its diagnostic code."""

    out: Any = None
    shifts: dict[tuple[str, int | None], float] | None = None
    aligned: Any = None


def execute(mech: ResolvedMechanism, args: Mapping[str, Any], neighbour: Mapping[str, Any],
            noise: Mapping[str, Any], aligned: bool) -> Execution | str:
    """Run the interpreter (align/interp/scalar.py) as `align run --noise ... --aligned` does; a string is the code
    of the diagnostic that stopped the arguments (`requires` or the adjacency not met)."""
    from align.interp.errors import RunError
    from align.interp.runner import prepare_arguments, prepare_neighbour
    from align.interp.scalar import Interpreter, NoiseValues, align

    try:
        values = prepare_arguments(mech, dict(args))
        other = prepare_neighbour(mech, values, dict(neighbour)) if aligned else {}
    except RunError as error:
        return error.diagnostic.code
    result = Execution()
    try:
        run = Interpreter(mech, NoiseValues(mech, noise), trace=False).run(values)
    except RunError as error:
        result.out = ("error", error.diagnostic.code)
        return result
    result.out = run.out
    if not aligned:
        return result
    try:
        alignment = align(mech, values, other, run)
    except RunError as error:
        result.shifts = {("error", None): error.diagnostic.code}  # type: ignore[dict-item]
        return result
    result.shifts = {(d.draw.site.name, d.draw.member): d.shift for d in alignment.draws}
    try:
        result.aligned = Interpreter(mech, NoiseValues(mech, alignment.noise(), aligned=True), trace=False) \
            .run({**values, **other}).out
    except RunError as error:
        result.aligned = ("error", error.diagnostic.code)
    return result


def _agree(a: Any, b: Any, exact: bool) -> bool:
    if exact:
        return bool(a == b)
    from align.interp.replay import same_output

    return same_output(a, b, 1.0)


def resolve_variant(variant: Variant) -> tuple[ResolvedMechanism, bool]:
    """The variant resolved, and whether with its alignment: one that reads a real output (`tag-sentinel` with a
    payload) is refused by the language today, so only its mechanism is compared."""
    source = Source(variant.path, variant.text)
    try:
        return resolve_source(source).mechanisms[0], True
    except SpecError as error:
        if {d.code for d in error.diagnostics} != {"continuous-output-read"}:
            raise
    bare = replace(variant.result.spec, alignments=())
    return resolve_source(Source(variant.path, unparse_spec(bare))).mechanisms[0], False


def check_variant(variant: Variant, lengths: tuple[int, ...] = (1, 2, 3, 5), seeds: tuple[int, ...] = (0, 1, 2)
                  ) -> list[str]:
    """Where the variant runs otherwise than its original under the interpreter, on the same inputs and noise:
    outputs on D, each drawn value's shift, outputs of the aligned run on D'. Empty when it runs alike. The variant
    must resolve (raises `SpecError` otherwise); only its mechanism is compared when its alignment reads a real
    output."""
    import zlib

    original = variant.subject.mech
    mech, with_alignment = resolve_variant(variant)
    aligned = with_alignment and original.alignment is not None
    result, params, noise_names = variant.result, variant.result.params, variant.result.noise
    encode = result.output or (lambda x: x)

    def encoded(out: Any) -> Any:
        return out if isinstance(out, tuple) else [encode(x) for x in out]

    problems: list[str] = []
    ran = 0
    examples = tuple(int(_constant(x.value)) for x in variant.subject.mechanism.examples if x.length)
    for length in dict.fromkeys(lengths + examples):
        for seed in seeds:
            rng = np.random.default_rng([seed, length, zlib.crc32(variant.path.encode())])
            args, neighbour = inputs(variant.subject, length, rng)
            ints = [v for v in args.values() if isinstance(v, int) and not isinstance(v, bool)]
            ints += [len(v) for v in args.values() if isinstance(v, list)]
            noise = _noise(original, max([length, *ints]) + 2, rng)
            first = execute(original, args, neighbour, noise, aligned)
            if isinstance(first, str):
                continue
            ran += 1
            moved = {k: [None] * result.members[k] + v if k in result.members else v for k, v in noise.items()}
            second = execute(mech, {params.get(k, k): v for k, v in args.items()},
                             {params.get(k, k): v for k, v in neighbour.items()},
                             {noise_names.get(k, k): v for k, v in moved.items()}, aligned)
            where = f"length {length}, seed {seed}: args {args}, neighbour {neighbour}, noise {noise}"
            if isinstance(second, str):
                problems.append(f"{where}: the variant refuses the arguments ({second})")
                continue
            if not _agree(encoded(first.out), second.out, result.exact):
                problems.append(f"{where}: output {first.out} (encoded {encoded(first.out)}), variant {second.out}")
                continue
            if not aligned or first.shifts is None or second.shifts is None:
                continue
            # A value drawn by one run only (a loop split or fused past a `break`) must be left where it is.
            renamed = {(noise_names.get(name_, name_), None if k is None else k + result.members.get(name_, 0)): v
                       for (name_, k), v in first.shifts.items()}
            for key in renamed.keys() | second.shifts.keys():
                expected, shift = renamed.get(key, 0.0), second.shifts.get(key, 0.0)
                if not _agree(expected, shift, result.exact):
                    problems.append(f"{where}: shift of {key[0]}[{key[1]}] {expected}, variant {shift}")
            if not _agree(encoded(first.aligned), second.aligned, result.exact):
                problems.append(f"{where}: aligned output {first.aligned}, variant {second.aligned}")
    if not ran:
        problems.append("no input satisfied `requires`: nothing was compared")
    return problems


# -------------------------------------------------------------------------------------------- verifying


@dataclass(frozen=True)
class Verdict:
    """`align verify`'s overall verdict: status and scope, or `invalid` and the diagnostic's code."""

    status: str
    scope: str
    seconds: float

    @property
    def text(self) -> str:
        scope = self.scope.removeprefix("for ").replace("every input length", "every length")
        return f"{self.status} {scope}".strip()


def verify(text: str, path: str, max_length: int | None = None) -> Verdict:
    """Verify one spec text in this process, as `align verify` does (pipeline.verify, default options)."""
    from align.checker.options import Options
    from align.pipeline import select
    from align.pipeline import verify as verify_mechanism

    source = Source(path, text)
    start = time.perf_counter()
    try:
        mech = select(resolve_source(source), None, path)
    except SpecError as error:
        return Verdict("invalid", error.diagnostics[0].code, time.perf_counter() - start)
    result = verify_mechanism(mech, Options.of(max_length), source=source)
    return Verdict(result.status.value, result.scope, time.perf_counter() - start)


@dataclass(frozen=True)
class Row:
    spec: str
    rewrite: str
    original: Verdict
    variant: Verdict

    @property
    def same_verdict(self) -> bool:
        return self.variant.status == self.original.status

    @property
    def same_scope(self) -> bool:
        return self.same_verdict and self.variant.scope == self.original.scope


def summary_line(rows: list[Row]) -> str:
    return (f"variants: {len(rows)} same-verdict: {sum(r.same_verdict for r in rows)} "
            f"same-scope: {sum(r.same_scope for r in rows)}")


def table(rows: list[Row]) -> str:
    """One line per rewrite: variants, same verdict, same scope."""
    lines = [f"{'rewrite':22} {'variants':>8} {'same-verdict':>12} {'same-scope':>10}"]
    for r in REWRITES:
        mine = [x for x in rows if x.rewrite == r.name]
        lines.append(f"{r.name:22} {len(mine):8d} {sum(x.same_verdict for x in mine):12d} "
                     f"{sum(x.same_scope for x in mine):10d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--spec", action="append", default=[], metavar="FILE", help="a spec instead of the corpus")
    parser.add_argument("--rewrite", action="append", default=[], metavar="NAME", help="only this rewrite")
    parser.add_argument("--max-length", type=int, default=None, help="align verify --max-length (default 3)")
    parser.add_argument("--check", action="store_true", help="also compare every variant's runs with the original's")
    parser.add_argument("--write", metavar="DIR", help="write every variant to DIR")
    parser.add_argument("--list", action="store_true", help="list the rewrites and stop")
    args = parser.parse_args(argv)
    if args.list:
        for r in REWRITES:
            print(f"{r.name:22} {r.summary}")
        return 0
    unknown = set(args.rewrite) - {r.name for r in REWRITES}
    if unknown:
        parser.error(f"no rewrite {', '.join(sorted(unknown))} (--list shows them)")
    paths = args.spec or (list(QUICK) if args.quick else proved_specs())
    rows: list[Row] = []
    differences = 0
    print(f"{'spec':56} {'rewrite':20} {'original':28} {'variant':32} {'s':>6}")
    for path in paths:
        subject = load_subject(path)
        original = verify(subject.source.text, path, args.max_length)
        for variant in variants(subject, args.rewrite):
            if args.write:
                target = Path(args.write) / f"{Path(path).stem}.{variant.rewrite}.dp"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(variant.text)
            verdict = verify(variant.text, variant.path, args.max_length)
            row = Row(path, variant.rewrite, original, verdict)
            rows.append(row)
            print(f"{path:56} {variant.rewrite:20} {original.text:28} {verdict.text:32} {verdict.seconds:6.2f}",
                  flush=True)
            if args.check:
                try:
                    problems = check_variant(variant)
                except SpecError as error:
                    problems = [f"does not resolve: {error.diagnostics[0].code}"]
                for p in problems[:3]:
                    print(f"  DIFFERS {p}", flush=True)
                differences += bool(problems)
    print()
    print(table(rows))
    if args.check:
        print(f"variants that run otherwise than their original: {differences}")
    print(summary_line(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
