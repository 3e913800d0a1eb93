"""Benchmark: a soundness harness for `align verify`, by mutating the specs it proves (issue 9, part 5).

    python bench/soundness.py [--quick] [--spec PATH ...] [--operator NAME ...] [--jobs J] [--limit S]
                              [--align-samples N] [--test-samples N] [--alpha A] [--verify-timeout S]
                              [--seed S] [--save-dir DIR] [--list]

A checker that says "proved" for a mechanism that is not ε-DP is worse than one that says nothing, and the
corpus alone cannot show that it never does: every spec in it was written to pass. So this harness makes
specs that should NOT pass. For every spec whose expectation is proved (`# expect: proved` or `bounded`, and
the R²DP specs, proved by the mixture rule) it rewrites the syntax tree mechanically — one operator at one
place at a time, each operator a small function in `OPERATORS` — and prints the result back as a spec file
(`align.unparse.unparse_spec`). Halving a noise scale, dropping a `break` or a shift constant, flipping a
comparison, reading private data or shifted noise in a noise parameter ... make most mutants non-private or
their alignment wrong.

Each mutant goes through `align verify` (in-process, through the command line, JSON output). For every mutant
it proves — overall status `proved`, or `bounded` / a proof whose scope says "for lengths <= N", counted as
proved within that bound — three empirical checks run with the reference interpreter, at list lengths the
proof covers (N for a bounded proof; 3 and the length of the spec's `example` clause, 5, for a proof for every length):

1. `align run --check-alignment` on adversarial pairs (every entry up, down, alternating, one dominant entry),
   with a fixed seed: a failing sample is a counterexample to C2, C3, C4a, C4c or C4d;
2. replays of random noise vectors with `align run --noise ... --aligned`: besides the replay's own verdict,
   every value the aligned run draws must be drawn from the same distribution with the same parameters as on D
   (Lemma 1's f_i is one fixed density; design.md's C0). A parameter that reads private data or shifted noise
   breaks this with no change in the output, so the sampled check alone would not see it;
3. `align test` with the test arguments, a fixed seed and a modest budget; a violation counts only when a
   second seed confirms it too (each search errs at level alpha).

A runtime error on inputs that satisfy `requires` and the adjacency counts as a failing check too: the
interpreter stopping in the mechanism (`too-few-entries` when a data-dependent `break` leaves top-k too few
values) or in the alignment (`noise-not-drawn`, `index-out-of-range` on `out`) means the proof is about
something the reference semantics does not define. Bounded proofs are checked at every value of the integer
parameters they enumerated (`0 <= k <= 4`) that `requires` allows, not only at the test arguments'.

A proof needs two distinct neighbours: a proved mutant whose adjacency clauses admit no D != D' at the lengths
checked (one entry moved by the least positive bound, `distinct_neighbours`) holds of D = D' alone, and counts as
a failing check too (`tighten_adjacency` makes such mutants; the checker calls them vacuous, obligation ADJ).

A proved mutant with a failing check is UNSOUND: it is printed with the mutation applied and saved under
`--save-dir` (bench/soundness_unsound/, created only when there is something to save) with the commands that
reproduce it. The vacuous column counts the verdicts the checker calls vacuous (unknown: no two distinct
neighbours) and the bounded proofs that no input of the covered lengths satisfies (there is none since the bounded
check runs on to the least length `requires` admits; listed with the same checks run beyond the bound).
Mutants run in a process pool (`--jobs`, default 2), each under a time limit (`--limit`, a timeout is listed,
not counted as unsound). Output: one row per operator (mutants, proved, bounded, vacuous, refuted, unknown,
invalid: the mutant does not resolve, error: align verify crashed, timeouts, unsound), the unsound mutants, and
last the line `mutants: N proved: P unsound: U`, where P counts bounded proofs too. U must be 0.

The harness talks to `align` only through `align.cli.main` (and the parser and printer for the trees), so it
does not depend on the checker's internals. Everything is deterministic: mutants in tree order, fixed seeds,
results in mutant order whatever the number of workers.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from align import nodes as n
from align.adjacency import AdjacencyKind, PythonOps
from align.cli import main as align_main
from align.expectations import read_expectations
from align.interp.values import example_arguments, example_length
from align.parse import parse_source, read_source
from align.span import Source, Span
from align.unparse import unparse, unparse_adjacency, unparse_spec

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "specs" / "peers"

SAVE_DIR = ROOT / "bench" / "soundness_unsound"

QUICK_SPECS = ("freegap/example1_laplace.dp", "freegap/example2_noisy_threshold.dp", "r2dp/point_mass.dp")
"""The `--quick` subset: these specs, the first place of every operator."""

UNBOUNDED_LENGTHS = (3,)
"""Lengths checked for a proof for every length, besides the length of the spec's `example` clause."""


# ------------------------------------------------------------------------------------------------ subjects


@dataclass(frozen=True)
class Subject:
    """A spec whose expectation is proved: the tree to mutate and the arguments to run it with."""

    spec: str
    """Path relative to specs/."""
    tree: n.SpecFile
    public: dict[str, int | float]
    """The public arguments (the spec's `example` clause)."""
    length: int
    """The list length of the `example` clause (5 when absent)."""


def subjects(peers: bool = False) -> list[Subject]:
    """Every spec expected `proved` (or `bounded`: proved for lengths <= N) and every R²DP spec (mixture rule),
    in path order; with `peers`, the private programs of specs/peers/ too (issue 37: the other projects' programs,
    as align proves more of them)."""
    found = []
    for path in sorted((ROOT / "specs").rglob("*.dp")):
        if PEERS in path.parents and not peers:
            continue
        source = read_source(str(path))
        kinds = {e.kind for e in read_expectations(source)}
        spec = str(path.relative_to(ROOT / "specs"))
        if not kinds & {"proved", "bounded"} and not ("mixture-rule" in kinds and spec.startswith("r2dp/")):
            continue
        tree = parse_source(source)
        mech = tree.mechanisms[0]
        found.append(Subject(spec, tree, example_arguments(mech), example_length(mech)))
    return found


# ------------------------------------------------------------------------------------ tree rewriting

TreePath = tuple[str | int, ...]
"""Where a node sits in a tree: field names and tuple positions from the root."""

_SPAN = Span("<mutant>", 1, 1, 1, 1)
"""The span of a node made by a mutation (printing ignores spans)."""


def walk(node: object, path: TreePath = ()) -> Iterator[tuple[TreePath, object]]:
    """Every node of the tree under `node` with its path, in source order (pre-order)."""
    yield path, node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if not isinstance(value, (Span, Source)):
                yield from walk(value, (*path, f.name))
    elif isinstance(node, tuple):
        for k, item in enumerate(node):
            yield from walk(item, (*path, k))


def get_at(node: Any, path: TreePath) -> Any:
    for step in path:
        node = node[step] if isinstance(step, int) else getattr(node, step)
    return node


def replace_at(node: Any, path: TreePath, new: Any) -> Any:
    """The tree with the node at `path` replaced by `new` (frozen nodes: rebuilt with dataclasses.replace)."""
    if not path:
        return new
    step, rest = path[0], path[1:]
    if isinstance(step, int):
        items = list(node)
        items[step] = replace_at(node[step], rest, new)
        return tuple(items)
    return dataclasses.replace(node, **{step: replace_at(getattr(node, step), rest, new)})


def num(value: int | Fraction, is_integer: bool | None = None) -> n.Number:
    value = Fraction(value)
    return n.Number(value, value.denominator == 1 if is_integer is None else is_integer, _SPAN)


def name(ident: str, primed: bool = False) -> n.Name:
    return n.Name(ident, primed, _SPAN)


def binary(op: str, left: n.Expr, right: n.Expr) -> n.Binary:
    return n.Binary(op, left, right, _SPAN)


def call(func: str, *args: n.Expr) -> n.Call:
    return n.Call(func, tuple(args), _SPAN, _SPAN)


def index(base: str, at: n.Expr) -> n.Index:
    return n.Index(name(base), at, _SPAN)


def compare(op: str, left: n.Expr, right: n.Expr) -> n.Compare:
    return n.Compare((op,), (left, right), _SPAN)


def _line(node: object) -> int:
    span = getattr(node, "span", None)
    return span.line if isinstance(span, Span) and span.path != "<mutant>" else 0


def _describe(node: object, before: str, after: str) -> str:
    where = f"line {_line(node)}: " if _line(node) else ""
    return f"{where}{before} -> {after}"


def _stmt_text(s: n.Stmt) -> str:
    if isinstance(s, n.Sample):
        return f"{s.var} ~ {s.dist}({', '.join(unparse(a) for a in s.args)})"
    if isinstance(s, n.Break):
        return "break"
    if isinstance(s, n.Output):
        return f"output {unparse(s.value)}"
    if isinstance(s, n.Assign):
        return f"{s.target} = {unparse(s.value)}"
    return type(s).__name__.lower()


# --------------------------------------------------------------------------------- facts about a spec


def _mechanism_paths(spec: n.SpecFile) -> list[TreePath]:
    return [("mechanisms", m) for m in range(len(spec.mechanisms))]


def _private(mech: n.Mechanism) -> list[n.Param]:
    sensitive = {a.var for a in mech.adjacency}
    return [p for p in mech.params if p.name in sensitive]


def _noise_names(mech: n.Mechanism) -> set[str]:
    return {s.var for _, s in walk(mech.body) if isinstance(s, n.Sample)}


def _used_names(spec: n.SpecFile) -> set[str]:
    names = {x.id for _, x in walk(spec) if isinstance(x, n.Name)}
    names |= {x.target for _, x in walk(spec) if isinstance(x, n.Assign)}
    names |= {x.var for _, x in walk(spec) if isinstance(x, (n.Sample, n.For, n.Comprehension))}
    names |= {p.name for m in spec.mechanisms for p in m.params}
    return names


def _fresh(spec: n.SpecFile, wanted: str) -> str:
    used, candidate, k = _used_names(spec), wanted, 2
    while candidate in used:
        candidate, k = f"{wanted}{k}", k + 1
    return candidate


def _loops_above(spec: n.SpecFile, path: TreePath) -> list[tuple[TreePath, n.For]]:
    """The `for` statements that enclose the node at `path`, outermost first."""
    return [(path[:k], get_at(spec, path[:k])) for k in range(len(path)) if isinstance(get_at(spec, path[:k]), n.For)]


def _samples(spec: n.SpecFile) -> Iterator[tuple[TreePath, n.Sample]]:
    for mpath in _mechanism_paths(spec):
        for path, s in walk(get_at(spec, mpath).body, (*mpath, "body")):
            if isinstance(s, n.Sample):
                yield path, s


def _private_reference(spec: n.SpecFile, mech: n.Mechanism, path: TreePath) -> n.Expr | None:
    """A private value readable at `path`: a private scalar, or a private list at the enclosing loop's index
    when the loop runs over its length (else at 0, which every length >= 1 has)."""
    for p in _private(mech):
        if not p.type.is_list:
            return name(p.name)
        for _, loop in reversed(_loops_above(spec, path)):
            hi = loop.hi
            if (isinstance(loop.lo, n.Number) and loop.lo.value == 0 and isinstance(hi, n.Call) and hi.func == "len"
                    and len(hi.args) == 1 and isinstance(hi.args[0], n.Name) and hi.args[0].id == p.name):
                return index(p.name, name(loop.var))
        return index(p.name, num(0))
    return None


# Lemma 1's Lipschitz distributions, with the parameter whose change means less noise, and how it changes.
def _halve_scale(e: n.Expr) -> n.Expr:
    return binary("/", e, num(2))


def _double(e: n.Expr) -> n.Expr:
    return binary("*", num(2), e)


def _square_complement(e: n.Expr) -> n.Expr:
    # Geo(p) costs -ln(1 - p): p -> 1 - (1 - p)^2 doubles it, as halving a Laplace scale does.
    return binary("-", num(1), binary("^", binary("-", num(1), e), num(2)))


LESS_NOISE: dict[str, tuple[int, Callable[[n.Expr], n.Expr]]] = {
    "Lap": (0, _halve_scale), "Exp": (0, _halve_scale), "Logistic": (1, _halve_scale), "Geo": (0, _square_complement),
    "DLap": (0, _double), "Staircase": (0, _double),
}

# The kind of each distribution parameter: how to make it depend on a value x and stay well formed.
PARAM_KINDS: dict[str, tuple[str | None, ...]] = {
    "Lap": ("scale",), "Exp": ("scale",), "Geo": ("prob",), "DLap": ("rate",), "Staircase": ("rate", "prob"),
    "Logistic": ("location", "scale"), "Gumbel": ("location", "scale"), "Uniform": (None, "upper"),
    "Gamma": ("scale", "scale"), "Bernoulli": ("prob",), "Point": ("scale",), "Normal": ("location", "scale"),
    "TruncNormal": ("location", "scale", None, "upper"),
}


def _depend(kind: str, e: n.Expr, x: n.Expr) -> n.Expr:
    """Parameter `e` of this kind made to read x, keeping it in its domain."""
    grow = binary("+", num(1), call("abs", x))
    if kind == "scale":
        return binary("*", e, grow)
    if kind in ("rate", "prob"):
        return binary("/", e, grow)
    if kind == "location":
        return binary("+", e, x)
    return binary("+", e, call("abs", x))  # upper end of an interval


def _with_arg(s: n.Sample, k: int, value: n.Expr) -> n.Sample:
    args = list(s.args)
    if k < len(args):
        args[k] = value
    else:  # an optional parameter left at its default (Logistic's scale 1)
        args += [num(0)] * (k - len(args)) + [value]
    return dataclasses.replace(s, args=tuple(args))


def _default_arg(s: n.Sample, k: int) -> n.Expr:
    return s.args[k] if k < len(s.args) else num(1)


# ----------------------------------------------------------------------------------------------- operators

Mutation = tuple[str, n.SpecFile]
"""A place (what changed, in words) and the mutated tree."""


@dataclass(frozen=True)
class Operator:
    name: str
    doc: str
    """What the operator does and why it should break a proof (its docstring's first paragraph)."""
    apply: Callable[[n.SpecFile], Iterator[Mutation]]


OPERATORS: dict[str, Operator] = {}


def operator(func: Callable[[n.SpecFile], Iterator[Mutation]]) -> Callable[[n.SpecFile], Iterator[Mutation]]:
    """Register a mutation operator under its function name (the registry's order is the table's)."""
    doc = " ".join((func.__doc__ or "").strip().split("\n\n")[0].split())
    OPERATORS[func.__name__] = Operator(func.__name__, doc, func)
    return func


@operator
def halve_noise(spec: n.SpecFile) -> Iterator[Mutation]:
    """Halve the noise of one sampling site (Lap/Exp/Logistic scale b -> b/2, Geo p -> 1-(1-p)^2, DLap and
    Staircase a -> 2a): the alignment's cost at that site doubles."""
    for path, s in _samples(spec):
        if s.dist not in LESS_NOISE:
            continue
        k, change = LESS_NOISE[s.dist]
        new = _with_arg(s, k, change(_default_arg(s, k)))
        yield _describe(s, _stmt_text(s), _stmt_text(new)), replace_at(spec, path, new)


@operator
def noise_reads_private(spec: n.SpecFile) -> Iterator[Mutation]:
    """Make one parameter of one sampling site read a private input x: a scale times (1 + |x|), a rate or
    probability divided by it, a location plus x. The density then differs between D and D' (C0)."""
    for path, s in _samples(spec):
        mech = get_at(spec, path[:2])
        x = _private_reference(spec, mech, path)
        if x is None:
            continue
        for k, kind in enumerate(PARAM_KINDS.get(s.dist, ())):
            if kind is None or k >= len(s.args):
                continue
            new = _with_arg(s, k, _depend(kind, s.args[k], x))
            yield _describe(s, _stmt_text(s), _stmt_text(new)), replace_at(spec, path, new)


@operator
def scale_adds_private(spec: n.SpecFile) -> Iterator[Mutation]:
    """Add |x| for a private input x to the scale of one sampling site (Lap(b) -> Lap(b + abs(q[i])))."""
    for path, s in _samples(spec):
        mech = get_at(spec, path[:2])
        x = _private_reference(spec, mech, path)
        kinds = PARAM_KINDS.get(s.dist, ())
        if x is None or not kinds or kinds[0] != "scale" or not s.args:
            continue
        new = _with_arg(s, 0, binary("+", s.args[0], call("abs", x)))
        yield _describe(s, _stmt_text(s), _stmt_text(new)), replace_at(spec, path, new)


def _insert_before(spec: n.SpecFile, path: TreePath, statements: tuple[n.Stmt, ...]) -> n.SpecFile:
    """The tree with `statements` inserted just before the statement at `path`, in the same block."""
    block, k = path[:-1], path[-1]
    current = get_at(spec, block)
    return replace_at(spec, block, current[:k] + statements + current[k:])


def _private_parameter_sites(spec: n.SpecFile) -> Iterator[tuple[TreePath, n.Sample, str, n.Expr]]:
    """Sampling sites whose first parameter has a kind, with that kind and a private value readable there."""
    for path, s in _samples(spec):
        kinds = PARAM_KINDS.get(s.dist, ())
        x = _private_reference(spec, get_at(spec, path[:2]), path)
        if x is not None and kinds and kinds[0] in ("scale", "rate", "prob") and s.args:
            yield path, s, kinds[0], x


@operator
def scale_via_variable(spec: n.SpecFile) -> Iterator[Mutation]:
    """Make a noise parameter read private data through a variable (`s = 1 + abs(q[i])` just before
    `xi ~ Lap(b * s)`): C0 must follow data flow, not only the sampling statement's own text."""
    for path, s, kind, x in _private_parameter_sites(spec):
        var = _fresh(spec, "s")
        factor = n.Assign(var, _SPAN, None, binary("+", num(1), call("abs", x)), _SPAN)
        param = binary("*", s.args[0], name(var)) if kind == "scale" else binary("/", s.args[0], name(var))
        new = _with_arg(s, 0, param)
        mutated = _insert_before(replace_at(spec, path, new), path, (factor,))
        yield _describe(s, _stmt_text(s), f"{var} = {unparse(factor.value)}; {_stmt_text(new)}"), mutated


@operator
def implicit_flow_scale(spec: n.SpecFile) -> Iterator[Mutation]:
    """Choose a noise parameter in a branch on private data (`if q[i] > 1 { s = 2 } else { s = 1 }` before
    `xi ~ Lap(b * s)`): an implicit flow, with no private name in any noise parameter."""
    for path, s, kind, x in _private_parameter_sites(spec):
        var = _fresh(spec, "s")
        branch = n.If(compare(">", x, num(1)), (n.Assign(var, _SPAN, None, num(2), _SPAN),),
                      (n.Assign(var, _SPAN, None, num(1), _SPAN),), _SPAN)
        param = binary("*", s.args[0], name(var)) if kind == "scale" else binary("/", s.args[0], name(var))
        new = _with_arg(s, 0, param)
        mutated = _insert_before(replace_at(spec, path, new), path, (branch,))
        yield (_describe(s, _stmt_text(s), f"if {unparse(branch.condition)} {{ {var} = 2 }} else {{ {var} = 1 }}; "
                         f"{_stmt_text(new)}"), mutated)


@operator
def noise_reads_shifted_noise(spec: n.SpecFile) -> Iterator[Mutation]:
    """Make the first parameter of a sampling site read an earlier noise value that the alignment shifts
    (Lap(b) -> Lap(b * (1 + abs(eta)))): on D' with φ(H) the site draws from another density (C0)."""
    shifted = {i.var for a in spec.alignments for i in a.items if isinstance(i, n.Shift)}
    for path, s in _samples(spec):
        kinds = PARAM_KINDS.get(s.dist, ())
        if not kinds or kinds[0] not in ("scale", "rate", "prob") or not s.args:
            continue
        block, position = path[:-1], path[-1]
        # Readable and always drawn before s: a sample earlier in the same block (the loop body for a family
        # member of the same iteration), or earlier at the top level.
        blocks = [block] + ([path[:3]] if len(path) > 4 else [])
        for b in blocks:
            stop = position if b == block else path[3]
            for k, earlier in enumerate(get_at(spec, b)):
                if (k < stop and isinstance(earlier, n.Sample) and earlier.var in shifted
                        and earlier.var != s.var):
                    new = _with_arg(s, 0, _depend(kinds[0], s.args[0], name(earlier.var)))
                    yield _describe(s, _stmt_text(s), _stmt_text(new)), replace_at(spec, path, new)


def _shift_items(spec: n.SpecFile) -> Iterator[tuple[TreePath, n.Shift]]:
    for a, alignment in enumerate(spec.alignments):
        for k, item in enumerate(alignment.items):
            if isinstance(item, n.Shift):
                yield ("alignments", a, "items", k), item


def _shift_text(s: n.Shift) -> str:
    lhs = f"{s.var}'" if s.index_var is None else f"{s.var}[{s.index_var}]'"
    return f"{lhs} = {unparse(s.rhs)}"


def _shift_constants(spec: n.SpecFile) -> Iterator[tuple[TreePath, n.Shift, TreePath, n.Number]]:
    for path, shift in _shift_items(spec):
        for sub, node in walk(shift.rhs, (*path, "rhs")):
            if isinstance(node, n.Number):
                yield path, shift, sub, node


def _integer_context(spec: n.SpecFile, path: TreePath) -> bool:
    """Whether the literal at `path` must stay an int: a range end, a list index, an element tested for
    membership (halving it would be a type error, not a mutant)."""
    for k in range(len(path)):
        node = get_at(spec, path[:k])
        if isinstance(node, n.Range) or (isinstance(node, n.Index) and path[k] == "index") or \
                (isinstance(node, n.Member) and path[k] == "element"):
            return True
    return False


@operator
def change_shift_constant(spec: n.SpecFile) -> Iterator[Mutation]:
    """Change one constant in a shift: c -> c/2 (c + 1 where it must stay an int), 0 -> 1 (an alignment that
    no longer lines the runs up, or costs more than the claim)."""
    for path, shift, sub, c in _shift_constants(spec):
        if c.value == 0:
            value = Fraction(1)
        else:
            value = c.value + 1 if _integer_context(spec, sub) else c.value / 2
        mutated = replace_at(spec, sub, num(value, c.is_integer and value.denominator == 1))
        yield _describe(shift, _shift_text(shift), _shift_text(get_at(mutated, path))), mutated


@operator
def drop_shift_constant(spec: n.SpecFile) -> Iterator[Mutation]:
    """Drop one non-zero constant of a shift (replace it by 0)."""
    for path, shift, sub, c in _shift_constants(spec):
        if c.value == 0:
            continue
        mutated = replace_at(spec, sub, num(0, c.is_integer))
        yield _describe(shift, _shift_text(shift), _shift_text(get_at(mutated, path))), mutated


@operator
def negate_shift(spec: n.SpecFile) -> Iterator[Mutation]:
    """Negate one shift: x' = x + psi becomes x' = x - psi."""
    for path, shift in _shift_items(spec):
        rhs = shift.rhs
        own = n.Index(name(shift.var), name(shift.index_var), _SPAN) if shift.index_var else name(shift.var)
        if isinstance(rhs, n.Binary) and rhs.op == "+" and _same(rhs.left, own):
            new_rhs: n.Expr = binary("-", rhs.left, rhs.right)
        else:
            new_rhs = binary("-", own, binary("-", rhs, own))
        new = dataclasses.replace(shift, rhs=new_rhs)
        yield _describe(shift, _shift_text(shift), _shift_text(new)), replace_at(spec, path, new)


def _same(a: n.Expr, b: n.Expr) -> bool:
    return unparse(a) == unparse(b)


@operator
def drop_shift(spec: n.SpecFile) -> Iterator[Mutation]:
    """Remove one shift from the alignment (that noise is no longer moved)."""
    for path, shift in _shift_items(spec):
        items = get_at(spec, path[:-1])
        k = path[-1]
        mutated = replace_at(spec, path[:-1], items[:k] + items[k + 1:])
        yield _describe(shift, _shift_text(shift), "(removed)"), mutated


_FLIP = {">=": "<", "<": ">=", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}


@operator
def flip_comparison(spec: n.SpecFile) -> Iterator[Mutation]:
    """Flip one comparison in the mechanism body or the alignment (>= to <, > to <=, == to !=, ...)."""
    roots = [(*m, "body") for m in _mechanism_paths(spec)] + [("alignments",)]
    for root in roots:
        for path, node in walk(get_at(spec, root), root):
            if not isinstance(node, n.Compare):
                continue
            for k, op in enumerate(node.ops):
                ops = node.ops[:k] + (_FLIP[op],) + node.ops[k + 1:]
                new = dataclasses.replace(node, ops=ops)
                yield _describe(node, unparse(node), unparse(new)), replace_at(spec, path, new)


@operator
def halve_claim(spec: n.SpecFile) -> Iterator[Mutation]:
    """Halve the claimed budget: privacy e -> privacy e / 2."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        for k, claim in enumerate(mech.privacy):
            new = binary("/", claim, num(2))
            yield (_describe(claim, f"privacy {unparse(claim)}", f"privacy {unparse(new)}"),
                   replace_at(spec, (*mpath, "privacy", k), new))


def _without_statement(spec: n.SpecFile, path: TreePath) -> n.SpecFile:
    """The tree without the statement at `path`; an `if` left with two empty branches goes too."""
    block, k = path[:-1], path[-1]
    statements = get_at(spec, block)
    mutated = replace_at(spec, block, statements[:k] + statements[k + 1:])
    owner = get_at(mutated, block[:-1]) if len(block) > 1 else None
    if isinstance(owner, n.If) and not owner.then and not owner.orelse:
        return _without_statement(mutated, block[:-1])
    return mutated


@operator
def drop_break(spec: n.SpecFile) -> Iterator[Mutation]:
    """Remove one `break` (SVT without its cutoff answers without bound)."""
    for mpath in _mechanism_paths(spec):
        for path, node in walk(get_at(spec, mpath).body, (*mpath, "body")):
            if isinstance(node, n.Break):
                yield _describe(node, "break", "(removed)"), _without_statement(spec, path)


@operator
def break_on_private(spec: n.SpecFile) -> Iterator[Mutation]:
    """Append `if q[i] > 2 { break }` to one loop: how many values are drawn and output now depends on the
    data, not only on the output (C2, C4a)."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        for path, loop in walk(mech.body, (*mpath, "body")):
            if not isinstance(loop, n.For):
                continue
            x = _private_reference(spec, mech, (*path, "body", 0))
            if x is None:
                continue
            stop = n.If(compare(">", x, num(2)), (n.Break(_SPAN),), (), _SPAN)
            mutated = replace_at(spec, (*path, "body"), (*loop.body, stop))
            yield f"line {_line(loop)}: loop body += if {unparse(stop.condition)} {{ break }}", mutated


@operator
def drop_noise_use(spec: n.SpecFile) -> Iterator[Mutation]:
    """Replace one read of a noise variable in the mechanism body by 0: the value is still drawn and aligned,
    but no longer hides the data (Stoddard's SVT without query noise)."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        noise = _noise_names(mech)
        for path, node in walk(mech.body, (*mpath, "body")):
            if isinstance(node, n.Name) and node.id in noise and not node.primed:
                yield f"line {node.span.line}: {node.id} -> 0", replace_at(spec, path, num(0, False))


@operator
def float_dead_noise(spec: n.SpecFile) -> Iterator[Mutation]:
    """Guard one read of a noise variable in the mechanism body by a test that exact arithmetic and doubles
    decide differently: eta -> (0.1 + 0.2 == 0.3 ? eta : 0.0). Exactly, the test holds and nothing changes; in
    doubles (0.1 + 0.2 is 0.30000000000000004) it fails, and the mechanism the interpreter runs is
    drop_noise_use's, whose noise no longer hides the data. A checker that decides the test in exact arithmetic
    proves a mechanism that is not the one that runs (issue 35; docs/language.md, "Exact and floating-point
    arithmetic")."""
    exactly = compare("==", binary("+", num(Fraction(1, 10)), num(Fraction(2, 10))), num(Fraction(3, 10)))
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        noise = _noise_names(mech)
        for path, node in walk(mech.body, (*mpath, "body")):
            if isinstance(node, n.Name) and node.id in noise and not node.primed:
                guarded = n.Conditional(exactly, node, num(0, False), _SPAN)
                yield f"line {node.span.line}: {node.id} -> ({unparse(guarded)})", replace_at(spec, path, guarded)


@operator
def widen_adjacency(spec: n.SpecFile) -> Iterator[Mutation]:
    """Weaken the neighbouring relation: double one adjacency bound, or drop a `monotone` clause (the claim
    was made for the narrower relation)."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        for k, adj in enumerate(mech.adjacency):
            if adj.bound is None:  # `monotone q`, `q'[i] >= q[i]`: a restriction; without it, more pairs
                mutated = replace_at(spec, (*mpath, "adjacency"), mech.adjacency[:k] + mech.adjacency[k + 1:])
                yield _describe(adj, adj.rule.text(adj.var), "(removed)"), mutated
            elif adj.bound is not None:
                new = binary("*", num(2), adj.bound)
                yield (_describe(adj, f"<= {unparse(adj.bound)}", f"<= {unparse(new)}"),
                       replace_at(spec, (*mpath, "adjacency", k, "bound"), new))


@operator
def tighten_adjacency(spec: n.SpecFile) -> Iterator[Mutation]:
    """Narrow the neighbouring relation until it admits no two distinct inputs: every adjacency bound set to 0, and
    `|q[i] - q'[i]| <= 0` added for a private parameter whose clauses have none (`monotone q`, `q'[i] >= q[i]`).
    Then D = D' is the only pair, every obligation holds of it, and a "proof" says nothing about privacy: the
    verdict must be vacuous (unknown), never proved (issue 35). Not for add/remove-one-record neighbours, which
    always differ."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        if not mech.adjacency or any(a.rule.changes_length for a in mech.adjacency):
            continue
        clauses = [dataclasses.replace(a, bound=num(0)) if a.bound is not None else a for a in mech.adjacency]
        for p in _private(mech):
            if all(a.bound is None for a in mech.adjacency if a.var == p.name):
                kind = AdjacencyKind.POINTWISE if p.type.is_list else AdjacencyKind.SCALAR
                clauses.append(n.Adjacency(kind, p.name, _SPAN, num(0), _SPAN, primed_var=p.name,
                                           index_vars=("i", "i") if p.type.is_list else ("", "")))
        before = ", ".join(unparse_adjacency(a) for a in mech.adjacency)
        after = ", ".join(unparse_adjacency(a) for a in clauses)
        yield _describe(mech.adjacency[0], before, after), replace_at(spec, (*mpath, "adjacency"), tuple(clauses))


@operator
def drop_output_term(spec: n.SpecFile) -> Iterator[Mutation]:
    """Keep one side of a sum or difference in an output (TOP(q[i] + xi - Tt) -> TOP(q[i] + xi)): the
    released value is no longer the gap the alignment preserves."""
    for mpath in _mechanism_paths(spec):
        for path, out in walk(get_at(spec, mpath).body, (*mpath, "body")):
            if not isinstance(out, n.Output):
                continue
            for sub, node in walk(out.value, (*path, "value")):
                if isinstance(node, n.Binary) and node.op in "+-":
                    for kept in (node.left, node.right):
                        new = replace_at(out, sub[len(path):], kept)
                        yield _describe(out, _stmt_text(out), _stmt_text(new)), replace_at(spec, path, new)


@operator
def gaussian_noise(spec: n.SpecFile) -> Iterator[Mutation]:
    """Replace one Lap/Exp/Logistic site by Normal(0, b): a non-Lipschitz density, allowed only where the
    alignment provably does not shift it (C3)."""
    for path, s in _samples(spec):
        if s.dist not in ("Lap", "Exp", "Logistic"):
            continue
        scale = s.args[0] if s.dist != "Logistic" else _default_arg(s, 1)
        new = dataclasses.replace(s, dist="Normal", args=(num(0), scale))
        yield _describe(s, _stmt_text(s), _stmt_text(new)), replace_at(spec, path, new)


def _list_params(mech: n.Mechanism) -> list[n.Param]:
    return [p for p in mech.params if p.type.is_list]


@operator
def requires_length(spec: n.SpecFile) -> Iterator[Mutation]:
    """Add `requires len(q) >= 2`, or `>= 4` (beyond the bounded check's default --max-length 3), for one
    list parameter: a privacy-neutral change that a bounded proof may satisfy only vacuously."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        for p in _list_params(mech):
            for least in (2, 4):
                clause = compare(">=", call("len", name(p.name)), num(least))
                yield (f"requires += {unparse(clause)}",
                       replace_at(spec, (*mpath, "requires"), (*mech.requires, clause)))


@operator
def requires_length_less_noise(spec: n.SpecFile) -> Iterator[Mutation]:
    """Add `requires len(q) >= 4` AND halve every Lipschitz noise site: not private, and a proof for lengths
    <= 3 only is vacuous."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        lists = _list_params(mech)
        if not lists:
            continue
        clause = compare(">=", call("len", name(lists[0].name)), num(4))
        mutated = replace_at(spec, (*mpath, "requires"), (*mech.requires, clause))
        for path, s in list(_samples(mutated)):
            if s.dist in LESS_NOISE and path[:2] == mpath:
                k, change = LESS_NOISE[s.dist]
                mutated = replace_at(mutated, path, _with_arg(s, k, change(_default_arg(s, k))))
        yield f"requires += {unparse(clause)}; every noise scale halved", mutated


def _public_number(mech: n.Mechanism) -> n.Expr:
    """A public scalar to build a partial expression on (so that z3 cannot fold it away), else 1."""
    private = {p.name for p in _private(mech)}
    for p in mech.params:
        if p.name not in private and not p.type.is_list and p.type.base in ("real", "int"):
            return name(p.name)
    return num(1)


@operator
def dead_partial_branch(spec: n.SpecFile) -> Iterator[Mutation]:
    """Halve the claim AND add a branch that never runs but applies a partial builtin outside its domain
    (`if false { dead = sqrt(-1 - abs(T)) }`, also under the negated first `requires` clause, with ln or a
    division by 0): only an encoding that the dead code made inconsistent could prove the halved claim."""
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        p = _public_number(mech)
        negative = binary("-", num(-1), call("abs", p))
        dead = _fresh(spec, "dead")
        never: list[tuple[str, n.Expr]] = [("false", n.BoolLit(False, _SPAN))]
        if mech.requires:
            never.append((f"not ({unparse(mech.requires[0])})", n.Unary("not", mech.requires[0], _SPAN)))
        partial = [("sqrt", call("sqrt", negative)), ("ln", call("ln", negative)),
                   ("1 / 0", binary("/", num(1), binary("-", p, p)))]
        claims = tuple(binary("/", c, num(2)) for c in mech.privacy)
        halved = replace_at(spec, (*mpath, "privacy"), claims)
        places: list[tuple[str, TreePath, list[tuple[str, n.Expr]], list[tuple[str, n.Expr]]]] = [
            ("body start", (*mpath, "body"), never, partial)]
        for path, loop in walk(mech.body, (*mpath, "body")):
            if isinstance(loop, n.For):
                places.append((f"start of the loop at line {loop.span.line}", (*path, "body"), never[-1:],
                               partial[:1]))
        for where, block, conditions, values in places:
            for cond_text, cond in conditions:
                for value_text, value in values:
                    if cond_text == "false" and value_text != "sqrt":
                        continue  # `false` is folded by any encoder; one such probe is enough
                    branch = n.If(cond, (n.Assign(dead, _SPAN, None, value, _SPAN),), (), _SPAN)
                    mutated = replace_at(halved, block, (branch, *get_at(halved, block)))
                    yield f"claim halved; {where}: if {cond_text} {{ {dead} = {unparse(value)} }}", mutated


def _add_list_param(spec: n.SpecFile, mpath: TreePath, private: bool) -> tuple[n.SpecFile, str]:
    mech = get_at(spec, mpath)
    extra = _fresh(spec, "r")
    params = (*mech.params, n.Param(extra, n.TypeExpr("real", True, _SPAN), _SPAN))
    mech = dataclasses.replace(mech, params=params)
    if private:
        clause = n.Adjacency(AdjacencyKind.POINTWISE, extra, _SPAN, num(1), _SPAN, primed_var=extra,
                             index_vars=("i", "i"))
        mech = dataclasses.replace(mech, adjacency=(*mech.adjacency, clause))
    return replace_at(spec, mpath, mech), extra


def _second_list(spec: n.SpecFile, private: bool) -> Iterator[Mutation]:
    for mpath in _mechanism_paths(spec):
        mech = get_at(spec, mpath)
        sensitive = {p.name: p for p in _private(mech)}
        for path, node in walk(mech.body, (*mpath, "body")):
            is_list_read = isinstance(node, n.Index) and isinstance(node.base, n.Name) and node.base.id in sensitive
            is_scalar_read = (isinstance(node, n.Name) and node.id in sensitive
                              and not sensitive[node.id].type.is_list)
            if not (is_list_read or is_scalar_read):
                continue
            widened, extra = _add_list_param(spec, mpath, private)
            if is_list_read:  # r is read where q is, so it needs q's length
                assert isinstance(node, n.Index) and isinstance(node.base, n.Name)
                read = binary("+", node, index(extra, node.index))
                lengths = compare("==", call("len", name(extra)), call("len", name(node.base.id)))
            else:
                read = binary("+", node, index(extra, num(0)))
                lengths = compare(">=", call("len", name(extra)), num(1))
            mutated = replace_at(widened, path, read)
            requires = get_at(mutated, (*mpath, "requires"))
            mutated = replace_at(mutated, (*mpath, "requires"), (*requires, lengths))
            kind = f"private ({extra}, |{extra}[i] - {extra}'[i]| <= 1)" if private else f"public ({extra})"
            yield f"line {_line(node)}: {unparse(node)} -> {unparse(read)}, {extra}: real[] {kind}", mutated


@operator
def second_list_private(spec: n.SpecFile) -> Iterator[Mutation]:
    """Add a second private list parameter r (|r[i] - r'[i]| <= 1, len(r) == len(q)) and add r[i] to one
    read of the data: the alignment does not account for r."""
    yield from _second_list(spec, private=True)


@operator
def second_list_public(spec: n.SpecFile) -> Iterator[Mutation]:
    """Add a second, public list parameter r and add r[i] to one read of the data (privacy-neutral: checks
    that more than one list parameter is handled, by the checker and by the empirical checks)."""
    yield from _second_list(spec, private=False)


# ------------------------------------------------------------------------------------------------ mutants


@dataclass(frozen=True)
class Mutant:
    spec: str
    """The mutated spec, relative to specs/."""
    operator: str
    number: int
    """Position among this operator's mutants of this spec (0-based, tree order)."""
    place: str
    """What changed, in words."""
    text: str
    """The mutant, printed as a spec file (header comments included)."""
    public: dict[str, int | float]
    length: int

    @property
    def key(self) -> str:
        return f"{Path(self.spec).stem}__{self.operator}__{self.number}"


def mutants_of(subject: Subject, operators: list[str] | None = None, first_only: bool = False) -> list[Mutant]:
    """Every mutant of one spec, operator by operator (registry order), place by place (tree order);
    a mutant that prints the same as an earlier one of the same spec is left out."""
    found: list[Mutant] = []
    seen = {unparse_spec(subject.tree)}
    for op in OPERATORS.values():
        if operators is not None and op.name not in operators:
            continue
        number = 0
        for place, tree in op.apply(subject.tree):
            body = unparse_spec(tree)
            if body in seen:
                continue
            seen.add(body)
            header = f"soundness mutant of specs/{subject.spec}\noperator: {op.name}: {op.doc}\nmutation: {place}"
            found.append(Mutant(subject.spec, op.name, number, place, unparse_spec(tree, header), subject.public,
                                subject.length))
            number += 1
            if first_only:
                break
    return found


# --------------------------------------------------------------------------------------- running align


def run_align(argv: list[str]) -> tuple[int, str, str]:
    """`align ARGV` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = align_main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


@dataclass(frozen=True)
class Verdict:
    status: str
    """proved, bounded, refuted, unknown, invalid (the mutant does not parse or resolve: a bug of an operator)
    or error (align stopped with an internal error: a bug of align)."""
    bound: int | None = None
    """For bounded: the largest list length the proof covers."""
    detail: str = ""
    """The failing obligations, or the scope, or the error."""
    ranges: tuple[tuple[str, int, int], ...] = ()
    """For bounded: the integer parameters the proof enumerated, as (name, lo, hi) (`0 <= k <= 4`)."""
    vacuous: bool = False
    """For unknown: the checker found no two distinct neighbours (obligation ADJ unknown, "vacuous: ...")."""


_LENGTHS = re.compile(r"lengths?\s*<=\s*(\d+)")
_RANGE = re.compile(r"(-?\d+)\s*<=\s*([A-Za-z_]\w*)\s*<=\s*(-?\d+)")


def verify(path: str, timeout: float = 60.0) -> Verdict:
    """`align verify --output-format json`, read as: the mechanism's status, and its bound when the proof (or
    any obligation's scope) covers only lengths <= N. `timeout` is verify's wall-clock safety net per solver
    query (a query stopped by it is unknown, never proved, so a lower one only saves time)."""
    code, out, err = run_align(["verify", "--output-format", "json", "--timeout", f"{timeout:g}", path])
    try:
        files = json.loads(out)["files"]
    except (ValueError, KeyError, TypeError):  # no document: align itself failed
        return Verdict("error", None, f"exit {code}: {_last_line(out, err)}")
    if not files or not files[0].get("ok") or not files[0].get("mechanisms"):
        messages = [d.get("message", "") for f in files for d in f.get("diagnostics", [])]
        return Verdict("invalid", None, "; ".join(messages) or err.strip() or f"exit {code}")
    statuses, bounds, failing = [], [], []
    vacuous = False
    ranges: dict[str, tuple[int, int]] = {}
    for mech in files[0]["mechanisms"]:
        statuses.append(mech.get("status", "unknown"))
        scopes = [str(mech.get("scope", ""))] + [str(o.get("scope", "")) for o in mech.get("obligations", [])]
        bounds += [int(m.group(1)) for s in scopes for m in _LENGTHS.finditer(s)]
        for m in (m for s in scopes for m in _RANGE.finditer(s)):
            lo, hi = ranges.get(m.group(2), (int(m.group(1)), int(m.group(3))))
            ranges[m.group(2)] = (max(lo, int(m.group(1))), min(hi, int(m.group(3))))
        failing += [f"{o.get('id')}{'(' + o['site'] + ')' if o.get('site') else ''}={o.get('status')}"
                    for o in mech.get("obligations", []) if o.get("status") not in ("proved",)]
        vacuous = vacuous or any(o.get("id") == "ADJ" and o.get("status") == "unknown" and
                                 str(o.get("reason", "")).startswith("vacuous:") for o in mech.get("obligations", []))
    order = ("refuted", "unknown", "bounded", "proved")
    status = min(statuses, key=lambda s: order.index(s) if s in order else 0)
    if status not in order:
        return Verdict("invalid", None, f"status {status}")
    covered = tuple((k, lo, hi) for k, (lo, hi) in sorted(ranges.items()))
    within = "".join(f" and {lo} <= {k} <= {hi}" for k, lo, hi in covered)
    if status in ("proved", "bounded") and bounds:
        return Verdict("bounded", min(bounds), f"for lengths <= {min(bounds)}{within}", covered)
    if status in ("proved", "bounded") and covered:
        return Verdict("bounded", None, f"for{within[4:]}", covered)
    if status == "bounded":  # a bounded status without a readable bound: the default --max-length
        return Verdict("bounded", 3, "bounded (scope unreadable; assumed lengths <= 3)")
    return Verdict(status, None, " ".join(failing[:6]), vacuous=vacuous and status == "unknown")


def _evaluate(e: n.Expr, env: dict[str, Any]) -> float | None:
    """A number from a small expression over the public arguments (adjacency bounds), or None."""
    if isinstance(e, n.Number):
        return float(e.value)
    if isinstance(e, n.Name) and not e.primed and isinstance(env.get(e.id), (int, float)):
        return float(env[e.id])
    if isinstance(e, n.Unary) and e.op == "-":
        x = _evaluate(e.operand, env)
        return None if x is None else -x
    if isinstance(e, n.Binary) and e.op in "+-*/":
        a, b = _evaluate(e.left, env), _evaluate(e.right, env)
        if a is None or b is None or (e.op == "/" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[e.op]
    return None


_DIGITS = (3, 1, 4, 1, 5, 9, 2, 6, 5, 3)


def _typed(values: list[float], base: str) -> list[int | float]:
    return [round(v) if base == "int" else float(v) for v in values]


def input_pairs(mech: n.Mechanism, public: dict[str, Any], length: int) -> list[tuple[str, dict, dict]]:
    """Adversarial (D, D') pairs of every private parameter at this list length, within the adjacency bounds:
    every entry up, every entry down, alternating, one dominant entry (StatDP's patterns, as the corpus's
    alignment tests use them); scalars move up and down from 0 and from the constants the body compares with."""
    clauses: dict[str, dict[str, Any]] = {}
    for adj in mech.adjacency:
        c = clauses.setdefault(adj.var, {})
        c[adj.kind] = _evaluate(adj.bound, public) if adj.bound is not None else True
    literals = sorted({float(x.value) for _, cmp in walk(mech.body) if isinstance(cmp, n.Compare)
                       for x in cmp.operands if isinstance(x, n.Number) and x.value != 0})
    patterns: dict[str, list[tuple[str, Any, Any]]] = {}
    for p in mech.params:
        if p.name not in clauses:
            continue
        c = clauses[p.name]
        if not p.type.is_list:
            bound = c.get(AdjacencyKind.SCALAR) or 1.0
            bases = [0.0, *literals][:2]
            patterns[p.name] = [(f"{p.name} {b:g}{sign}{bound:g}", _typed([b], p.type.base)[0],
                                 _typed([b + (bound if sign == "+" else -bound)], p.type.base)[0])
                                for b in bases for sign in "+-"]
            continue
        L = length
        const, digits = [1.0] * L, [float(_DIGITS[k % 10]) for k in range(L)]
        if AdjacencyKind.L1 in c and AdjacencyKind.POINTWISE not in c:
            bound = c[AdjacencyKind.L1] or 1.0
            found = [("first up", const, [const[0] + bound, *const[1:]]),
                     ("last down", digits, [*digits[:-1], digits[-1] - bound])]
            if p.type.base != "int":
                found.append(("split", const, [const[0] + bound / 2, *const[1:-1], const[-1] - bound / 2]
                              if L > 1 else [const[0] + bound]))
        else:
            bound = c.get(AdjacencyKind.POINTWISE) or 1.0
            const = [bound] * L
            digits = [d * bound for d in digits]
            found = [("all up", const, [v + bound for v in const]), ("all down", digits, [v - bound for v in digits])]
            dominant = [L * bound] + [0.0] * (L - 1)
            if c.get(AdjacencyKind.MONOTONE):
                found.append(("one dominant, all up", dominant, [v + bound for v in dominant]))
            else:
                found.append(("alternating", digits, [v + (bound if k % 2 else -bound) for k, v in enumerate(digits)]))
                found.append(("one dominant", dominant, [dominant[0] - bound] + [bound] * (L - 1)))
        # Keep the pairs every clause admits (one-sided and count clauses rule some out).
        found = [(label, d, d2) for label, d, d2 in found
                 if all(c[a.kind] is None or a.rule.violation(PythonOps(1e-9), d, d2, c[a.kind]) is None
                        for a in mech.adjacency if a.var == p.name)]
        patterns[p.name] = [(label, _typed(d, p.type.base), _typed(d2, p.type.base)) for label, d, d2 in found]
    if not patterns:
        return []
    count = min(len(v) for v in patterns.values())
    pairs = []
    for k in range(count):
        label = ", ".join(dict.fromkeys(v[k][0] for v in patterns.values()))
        pairs.append((label, {name_: v[k][1] for name_, v in patterns.items()},
                      {name_: v[k][2] for name_, v in patterns.items()}))
    return pairs


def distinct_neighbours(mech: n.Mechanism, public: dict[str, Any], length: int) -> bool:
    """Whether some D != D' at this list length satisfies the adjacency clauses (with the public arguments'
    values in their bounds): a private parameter of which one entry (or the scalar) moves up or down by the least
    positive bound, or a record added. Independent of the checker: a proof of a mechanism without such a pair
    holds of D = D' alone, which says nothing about privacy."""
    for p in _private(mech):
        clauses = [a for a in mech.adjacency if a.var == p.name]
        if any(a.rule.changes_length for a in clauses):
            return True
        bounds = [_evaluate(a.bound, public) for a in clauses if a.bound is not None]
        if any(b is None for b in bounds):
            return True  # a bound this harness cannot evaluate: assume it admits a pair
        step = min((b for b in bounds if b is not None and b > 0), default=1.0)
        if p.type.base == "int":
            step = max(1.0, float(int(step)))  # two ints differ by 1 at least
        size = length if p.type.is_list else 1
        for sign in (1, -1):
            if size == 0:
                continue
            d = _typed([0.0] * size, p.type.base)
            d2 = _typed([step * sign] + [0.0] * (size - 1), p.type.base)
            here, there = (d, d2) if p.type.is_list else (d[0], d2[0])
            if all(a.rule.violation(PythonOps(1e-9), here, there,
                                    _evaluate(a.bound, public) if a.bound is not None else True) is None
                   for a in clauses):
                return True
    return False


def _public_arguments(mech: n.Mechanism, public: dict[str, Any], length: int) -> dict[str, Any]:
    """The public arguments, with a value for every public list parameter (a mutant may add one)."""
    private = {p.name for p in _private(mech)}
    values = dict(public)
    for p in mech.params:
        if p.name not in private and p.name not in values and p.type.is_list:
            values[p.name] = _typed([0.5 if p.type.base == "real" else 1] * length, p.type.base)
    return values


def _options(flag: str, values: dict[str, Any]) -> list[str]:
    return [f"{flag}={k}={json.dumps(v)}" for k, v in values.items()]


_ARGUMENT_ERRORS = ("requires-violated", "not-adjacent", "no-input-pair", "missing-argument", "argument-type")
"""Diagnostics that mean the arguments do not fit (a length that `requires` excludes): nothing ran."""

RUNTIME_ERRORS = ("invalid-distribution-parameter", "index-out-of-range", "list-gap", "math-domain",
                  "division-by-zero", "empty-reduction", "too-few-entries", "undefined-value", "noise-not-drawn")
"""Diagnostics of the interpreter stopping on inputs that satisfy `requires` and the adjacency: the mechanism
(or its alignment) is not defined there, which a proof of it must not overlook."""


@dataclass
class Finding:
    check: str
    """alignment (the sampled check), replay, C0 (parameters differ on D'), violation (align test)."""
    detail: str
    length: int
    command: list[str] = field(default_factory=list)
    """The `align` arguments that show it (the mutant's path first after the subcommand)."""


@dataclass
class Outcome:
    mutant: Mutant
    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)
    beyond: list[Finding] = field(default_factory=list)
    """For a vacuous bounded proof: what the checks find beyond the bound (information, not unsoundness)."""
    vacuous: bool = False
    errors: list[str] = field(default_factory=list)
    """Checks that could not run (runtime errors of the mechanism, unusable arguments)."""
    notes: list[str] = field(default_factory=list)
    """Observations that are not findings (a violation on one seed that the second did not confirm)."""
    checked_lengths: list[int] = field(default_factory=list)
    seconds: float = 0.0
    timeout: bool = False

    @property
    def proved(self) -> bool:
        return self.verdict.status in ("proved", "bounded")

    @property
    def unsound(self) -> bool:
        return self.proved and bool(self.findings)


@dataclass(frozen=True)
class Budget:
    align_samples: int = 4000
    replays: int = 6
    test_samples: int = 8000
    seed: int = 0
    limit: float = 300.0
    alpha: float = 0.01
    """Level of each `align test` search; a violation needs two seeds, so a false alarm has probability
    about alpha² per proved mutant."""
    verify_timeout: float = 60.0
    """`align verify --timeout`: the wall-clock safety net of each solver query (default 300 s there)."""


def _check_alignment(path: str, mech: n.Mechanism, public: dict, length: int, budget: Budget,
                     findings: list[Finding], errors: list[str]) -> bool:
    """The sampled alignment check on every pair; False when no pair could run at this length."""
    if not any(a.name == mech.name for a in _alignments(path)):
        return True  # no alignment block (the mixture rule): nothing to check by sampling
    ran = False
    for label, d, d_prime in input_pairs(mech, public, length):
        if findings:
            break  # one counterexample is enough
        argv = ["run", path, "--check-alignment", "--format", "json", "--samples", str(budget.align_samples),
                "--seed", str(budget.seed), *_options("--arg", {**public, **d}), *_options("--neighbour", d_prime)]
        code, out, err = run_align(argv)
        if code == 2:
            ran = _stopped("check-alignment", label, length, argv, (out, err), path, budget,
                           ({**public, **d}, {**public, **d_prime}), findings, errors) or ran
            continue
        ran = True
        if code == 1:
            report = json.loads(out)
            failed = {k: v for k, v in report.get("failures", {}).items() if v}
            note = report.get("counterexamples", [{}])[0].get("note", "") if report.get("counterexamples") else ""
            findings.append(Finding("alignment", f"{label}: failing samples {failed}"
                                    f"{'; ' + note if note else ''}", length, argv))
    return ran


def _codes(out: str, err: str) -> list[str]:
    """The diagnostic codes of a failed `align` command (JSON document on stdout, or text on stderr)."""
    codes = re.findall(r"error\[([a-z0-9-]+)\]", err)
    with contextlib.suppress(ValueError, AttributeError):
        codes += [str(d.get("code", "")) for d in json.loads(out).get("diagnostics", [])]
    return codes


def _stopped(what: str, label: str, length: int, argv: list[str], output: tuple[str, str], path: str,
             budget: Budget, inputs: tuple[dict, dict] | None, findings: list[Finding], errors: list[str]) -> bool:
    """Sort out an `align` command that exited 2; True when something ran (the arguments fit).

    Arguments that `requires` or the adjacency exclude: nothing ran. A runtime error (RUNTIME_ERRORS) on inputs
    that fit: a finding — "runtime error" when plainly running the mechanism on D or on D' stops too (a mechanism
    that fails, perhaps depending on the data, is not the one proved), "alignment error" when only the alignment
    cannot be evaluated (the reference interpreter gives it no meaning). Anything else: an error of the harness.
    """
    out, err = output
    codes = _codes(out, err)
    if any(c in _ARGUMENT_ERRORS for c in codes):
        return False
    if not any(c in RUNTIME_ERRORS for c in codes):
        errors.append(f"{what} ({label}, length {length}): {_last_line(out, err)}")
        return True
    for side, values in zip(("D", "D'"), inputs or ()):
        plain = ["run", path, "--samples", str(budget.align_samples), "--seed", str(budget.seed),
                 *_options("--arg", values)]
        code, out2, err2 = run_align(plain)
        if code == 2 and any(c in RUNTIME_ERRORS for c in _codes(out2, err2)):
            findings.append(Finding("runtime error", f"{label}: the mechanism stops on {side} "
                                    f"{json.dumps(values)}: {_last_line(out2, err2)}", length, plain))
            return True
    kind = "runtime error" if inputs is None else "alignment error"
    findings.append(Finding(kind, f"{label}: {what} stops: {_last_line(out, err)}", length, argv))
    return True


def _distinct(findings: list[Finding]) -> list[Finding]:
    """The findings without repeats (a replay and the sampled check often stop on the same input)."""
    seen: set[tuple[str, str, int]] = set()
    kept = []
    for f in findings:
        if (f.check, f.detail, f.length) not in seen:
            seen.add((f.check, f.detail, f.length))
            kept.append(f)
    return kept


def _alignments(path: str) -> tuple[n.Alignment, ...]:
    return parse_source(read_source(path)).alignments


def _last_line(out: str, err: str) -> str:
    """The message of a failed `align` command: its diagnostics, or its `error[...]` line, or its last line."""
    text = (err.strip() or out.strip()).splitlines()
    flagged = [line[line.index("error["):].strip() for line in text if "error[" in line]
    if flagged:
        return flagged[0]
    try:
        document = json.loads(out)
        messages = [d.get("message", "") for d in document.get("diagnostics", [])]
        if messages:
            return "; ".join(messages)
    except ValueError:
        pass
    return text[-1] if text else "no output"


# Random noise for a replay, by distribution: any value in the support is a valid H.
def _noise_value(dist: str, rng: Any) -> float | int | None:
    if dist in ("Lap", "Logistic", "Gumbel", "Normal", "Staircase"):
        return float(rng.laplace(0.0, 3.0))
    if dist in ("Exp", "Gamma"):
        return float(rng.exponential(3.0))
    if dist == "Geo":
        return int(rng.geometric(0.3) - 1)
    if dist == "DLap":
        return round(float(rng.laplace(0.0, 3.0)))
    if dist == "Bernoulli":
        return int(rng.random() < 0.5)
    return None  # a support that depends on the parameters (Uniform, TruncNormal, Point)


def _check_replays(path: str, mech: n.Mechanism, public: dict, length: int, budget: Budget, key: str,
                   findings: list[Finding], errors: list[str]) -> None:
    """Replays of random noise vectors, aligned: the replay's verdict (C0 among its conditions: the same
    densities on D' with φ(H))."""
    import numpy as np

    if not any(a.name == mech.name for a in _alignments(path)):
        return
    sites = [(s.var, s.dist, bool(_loops_above_mech(mech, p))) for p, s in walk(mech.body) if isinstance(s, n.Sample)]
    rng = np.random.default_rng([budget.seed, zlib.crc32(key.encode()), length])
    members = length + 2  # family lists cover loops over len(q) + 1; values past the end are simply unused
    for label, d, d_prime in input_pairs(mech, public, length)[:2]:
        for _ in range(budget.replays):
            noise: dict[str, Any] = {}
            for var, dist, family in sites:
                values = [_noise_value(dist, rng) for _ in range(members if family else 1)]
                if any(v is None for v in values):
                    return
                noise[var] = values if family else values[0]
            argv = ["run", path, "--aligned", "--format", "json", *_options("--arg", {**public, **d}),
                    *_options("--neighbour", d_prime), *_options("--noise", noise)]
            code, out, err = run_align(argv)
            if code == 2:
                found = len(findings)
                _stopped("replay", label, length, argv, (out, err), path, budget,
                         ({**public, **d}, {**public, **d_prime}), findings, errors)
                if len(findings) > found:
                    return
                continue
            document = json.loads(out)
            alignment = document.get("alignment", {})
            if code == 1:
                failures = alignment.get("failures", [])
                aligned = alignment.get("aligned_run", {})
                why = f" (aligned run stops: {aligned['error'].get('message', '')})" if "error" in aligned else ""
                # C0 (another density on D' with φ(H)) is a finding of its own: the replay compares the
                # parameters of every value drawn in both runs
                check = "C0" if "C0" in failures else "replay"
                findings.append(Finding(check, f"{label}: noise {json.dumps(noise)}: the alignment fails: "
                                        f"{', '.join(failures)}{why}", length, argv))
                return


def _loops_above_mech(mech: n.Mechanism, path: TreePath) -> list[n.For]:
    return [get_at(mech.body, path[:k]) for k in range(1, len(path)) if isinstance(get_at(mech.body, path[:k]), n.For)]


def _check_test(path: str, public: dict, length: int, has_lists: bool, budget: Budget,
                findings: list[Finding], errors: list[str], notes: list[str]) -> bool:
    """`align test`; a violation counts when seeds S and S + 1 both confirm one. False when it could not run."""
    confirmed: list[str] = []
    argv: list[str] = []
    for seed in (budget.seed, budget.seed + 1):
        argv = ["test", path, "--format", "json", "--no-checker", "--samples", str(budget.test_samples),
                "--alpha", str(budget.alpha), "--seed", str(seed), *(["--length", str(length)] if has_lists else []),
                *_options("--arg", public)]
        code, out, err = run_align(argv)
        if code == 2:
            return _stopped("test", "StatDP's patterns", length, argv, (out, err), path, budget, None, findings,
                            errors)
        if code != 1:
            if confirmed:
                notes.append(f"test (length {length}): a violation with seed {budget.seed} only: {confirmed[0]}")
            return True
        w = json.loads(out).get("witness") or {}
        bound = "inf" if w.get("epsilon_infinite") else f"{w.get('epsilon_lower_bound', float('nan')):.3g}"
        confirmed.append(f"D={w.get('d')} D'={w.get('d_prime')} event {w.get('event')}: "
                         f"{w.get('count_d')}/{w.get('samples_d')} vs {w.get('count_d_prime')}/"
                         f"{w.get('samples_d_prime')}, adjusted p {w.get('adjusted_p_value', 1):.3g}, "
                         f"eps >= {bound} (claim {w.get('epsilon')})")
    findings.append(Finding("violation", f"confirmed with seeds {budget.seed} and {budget.seed + 1}: {confirmed[0]}",
                            length, argv))
    return True


def _within(public: dict[str, Any], verdict: Verdict, notes: list[str]) -> dict[str, Any]:
    """The public arguments, with each integer parameter a bounded proof enumerated moved into its range."""
    values = dict(public)
    for key, lo, hi in verdict.ranges:
        if isinstance(values.get(key), int) and not lo <= values[key] <= hi:
            notes.append(f"{key} = {values[key]} is outside the proof's {lo} <= {key} <= {hi}: checked at {hi}")
            values[key] = hi
    return values


def empirical_checks(path: str, mutant: Mutant, verdict: Verdict, budget: Budget, outcome: Outcome) -> None:
    """The three checks at the lengths the proof covers (see the module docstring)."""
    mech = parse_source(read_source(path)).mechanisms[0]
    mutant = dataclasses.replace(mutant, public=_within(mutant.public, verdict, outcome.notes))
    has_lists = any(p.type.is_list for p in mech.params)
    if not has_lists:
        lengths = [mutant.length]
    elif verdict.status == "bounded" and verdict.bound is not None:
        lengths = [verdict.bound]
    else:
        lengths = sorted({*UNBOUNDED_LENGTHS, mutant.length})
    # A bounded proof enumerated its integer parameters (the k of top-k): check every value it covered, not only
    # the test arguments' (values that `requires` excludes at this length are skipped by align itself).
    variants = [mutant.public] + [{**mutant.public, key: v} for key, lo, hi in verdict.ranges
                                  if isinstance(mutant.public.get(key), int)
                                  for v in range(lo, hi + 1) if v != mutant.public[key]]
    for values in variants:
        for k, length in enumerate(lengths):
            public = _public_arguments(mech, values, length)
            ran = _check_alignment(path, mech, public, length, budget, outcome.findings, outcome.errors)
            if ran:
                _check_replays(path, mech, public, length, budget, mutant.key, outcome.findings, outcome.errors)
            # The likelihood-ratio test once, at the longest length checked.
            tested = k == len(lengths) - 1 and _check_test(path, public, length, has_lists, budget,
                                                           outcome.findings, outcome.errors, outcome.notes)
            if (ran or tested) and length not in outcome.checked_lengths:
                outcome.checked_lengths.append(length)
    if _private(mech) and not any(distinct_neighbours(mech, _public_arguments(mech, mutant.public, length), length)
                                  for length in lengths):
        # D = D' is the only pair the clauses admit at the lengths the proof covers: it proves nothing.
        where = f" at length(s) {', '.join(map(str, lengths))}" if has_lists else ""
        outcome.findings.append(Finding("neighbours", f"no two distinct inputs satisfy the adjacency clauses{where}: "
                                        "the proof holds of D = D' alone", lengths[-1], ["verify", path]))
    if verdict.status == "bounded" and not outcome.checked_lengths:
        # No input of the covered lengths satisfies `requires`: the proof is vacuous. Look beyond it.
        outcome.vacuous = True
        length = max(mutant.length, (verdict.bound or 0) + 1)
        public = _public_arguments(mech, mutant.public, length)
        if _check_alignment(path, mech, public, length, budget, outcome.beyond, outcome.errors):
            _check_replays(path, mech, public, length, budget, mutant.key, outcome.beyond, outcome.errors)
        _check_test(path, public, length, has_lists, budget, outcome.beyond, outcome.errors, outcome.notes)


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that align's last-line-of-defence `except Exception` lets it by."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Timeout


def check_mutant(task: tuple[Mutant, str, Budget]) -> Outcome:
    """Verify one mutant and, when it is proved, run the empirical checks (in a worker process)."""
    mutant, workdir, budget = task
    os.environ["NO_COLOR"] = "1"
    path = os.path.join(workdir, f"{mutant.key}.dp")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(mutant.text)
    started = time.perf_counter()
    outcome = Outcome(mutant, Verdict("unknown"))
    # SIGALRM interrupts Python code only; a z3 query is bounded by `align verify --timeout` (10 s) anyway.
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget.limit)
    try:
        outcome.verdict = verify(path, budget.verify_timeout)
        outcome.vacuous = outcome.verdict.vacuous
        if outcome.proved:
            empirical_checks(path, mutant, outcome.verdict, budget, outcome)
            outcome.findings = _distinct(outcome.findings)
    except _Timeout:
        outcome.timeout = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    outcome.seconds = time.perf_counter() - started
    return outcome


# ----------------------------------------------------------------------------------------------- report


def _display(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def save_unsound(outcome: Outcome, directory: Path) -> Path:
    """Write an unsound mutant, with what the checker said, what the checks found and the commands that
    reproduce each finding, as comments at its top."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{outcome.mutant.key}.dp"
    shown = _display(target)
    said = f" ({outcome.verdict.detail})" if outcome.verdict.detail else ""
    lines = [f"UNSOUND: `align verify {shown}` says {outcome.verdict.status}{said}, but:"]
    for f in outcome.findings:
        lines.append(f"- {f.check} (length {f.length}): {f.detail}")
        if f.command:
            command = [shown if k == 1 else a for k, a in enumerate(f.command)]
            lines.append("  reproduce: align " + shlex.join(command))
    body = outcome.mutant.text
    header_end = body.index("\n\n")
    commented = "\n".join(f"# {line}".rstrip() for line in lines)
    target.write_text(body[:header_end] + "\n" + commented + body[header_end:], encoding="utf-8")
    return target


COLUMNS = ("mutants", "proved", "bounded", "vacuous", "refuted", "unknown", "invalid", "error", "timeouts", "unsound")


def _row(outcomes: list[Outcome]) -> dict[str, int]:
    return {
        "mutants": len(outcomes),
        "proved": sum(o.verdict.status == "proved" and not o.timeout for o in outcomes),
        "bounded": sum(o.verdict.status == "bounded" and not o.timeout for o in outcomes),
        "vacuous": sum(o.vacuous for o in outcomes),
        "refuted": sum(o.verdict.status == "refuted" and not o.timeout for o in outcomes),
        "unknown": sum(o.verdict.status == "unknown" and not o.timeout for o in outcomes),
        "invalid": sum(o.verdict.status == "invalid" and not o.timeout for o in outcomes),
        "error": sum(o.verdict.status == "error" and not o.timeout for o in outcomes),
        "timeouts": sum(o.timeout for o in outcomes),
        "unsound": sum(o.unsound and not o.timeout for o in outcomes),
    }


def table(outcomes: list[Outcome]) -> str:
    width = max([len("operator"), *(len(k) for k in OPERATORS)])
    lines = [f"{'operator':{width}} " + " ".join(f"{c:>8}" for c in COLUMNS)]
    for op in OPERATORS:
        rows = [o for o in outcomes if o.mutant.operator == op]
        if rows:
            row = _row(rows)
            lines.append(f"{op:{width}} " + " ".join(f"{row[c]:>8}" for c in COLUMNS))
    total = _row(outcomes)
    lines.append(f"{'total':{width}} " + " ".join(f"{total[c]:>8}" for c in COLUMNS))
    return "\n".join(lines)


def summary_line(outcomes: list[Outcome]) -> str:
    row = _row(outcomes)
    return f"mutants: {row['mutants']} proved: {row['proved'] + row['bounded']} unsound: {row['unsound']}"


def select(specs: list[str] | None, operators: list[str] | None, quick: bool, peers: bool = False) -> list[Mutant]:
    """The mutants of a run, in a fixed order: spec path, operator (registry order), place."""
    chosen = []
    for subject in subjects(peers or any(PEERS in (ROOT / s).resolve().parents for s in specs or [])):
        if quick and subject.spec not in QUICK_SPECS:
            continue
        if specs and not any(Path(s).resolve() == (ROOT / "specs" / subject.spec).resolve() for s in specs):
            continue
        chosen += mutants_of(subject, operators, first_only=quick)
    return chosen


WORKER_Z3_MEMORY_MB = 6000


def _worker_limits() -> None:
    """Bound each worker's z3 memory (a mutant whose queries need more ends unknown, not the machine's memory)."""
    import z3

    z3.set_param("memory_max_size", WORKER_Z3_MEMORY_MB)


def run(mutants: list[Mutant], jobs: int, budget: Budget, progress: Callable[[Outcome], None] | None = None
        ) -> list[Outcome]:
    """Check every mutant (a pool of `jobs` processes; in this process when jobs is 1), in mutant order."""
    workdir = tempfile.mkdtemp(prefix="align-soundness-")
    try:
        tasks = [(m, workdir, budget) for m in mutants]
        if jobs <= 1:
            outcomes = []
            for task in tasks:
                outcomes.append(check_mutant(task))
                if progress:
                    progress(outcomes[-1])
            return outcomes
        by_key: dict[str, Outcome] = {}
        with ProcessPoolExecutor(jobs, initializer=_worker_limits) as pool:
            futures = [pool.submit(check_mutant, task) for task in tasks]
            for future in as_completed(futures):
                outcome = future.result()
                by_key[outcome.mutant.key] = outcome
                if progress:
                    progress(outcome)
        return [by_key[m.key] for m in mutants]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_SPECS)}, the first place of "
                        "each operator")
    parser.add_argument("--spec", action="append", metavar="PATH", help="only this spec (repeatable)")
    parser.add_argument("--peers", action="store_true",
                        help="the private programs of specs/peers/ too (a spec named under specs/peers/ implies it)")
    parser.add_argument("--operator", action="append", choices=list(OPERATORS), help="only this operator (repeatable)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=float, default=Budget.limit, help="seconds per mutant (default %(default)s)")
    parser.add_argument("--align-samples", type=int, default=Budget.align_samples)
    parser.add_argument("--test-samples", type=int, default=Budget.test_samples)
    parser.add_argument("--alpha", type=float, default=Budget.alpha, help="level of each align test search")
    parser.add_argument("--verify-timeout", type=float, default=Budget.verify_timeout,
                        help="align verify --timeout: seconds per solver query (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save-dir", type=Path, default=SAVE_DIR)
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    options = parser.parse_args(argv)
    mutants = select(options.spec, options.operator, options.quick, options.peers)
    if options.list:
        for m in mutants:
            print(f"{m.key:60} {m.place}")
        print(f"mutants: {len(mutants)}")
        return 0
    budget = Budget(options.align_samples, Budget.replays, options.test_samples, options.seed, options.limit,
                    options.alpha, options.verify_timeout)
    started = time.perf_counter()
    done = [0]

    def progress(o: Outcome) -> None:
        done[0] += 1
        mark = "UNSOUND" if o.unsound else ("timeout" if o.timeout else o.verdict.status)
        print(f"[{done[0]}/{len(mutants)}] {o.mutant.key}: {mark} ({o.seconds:.1f}s)", file=sys.stderr, flush=True)

    outcomes = run(mutants, options.jobs, budget, progress)
    print(table(outcomes))
    unsound = [o for o in outcomes if o.unsound and not o.timeout]
    if unsound:
        print(f"\nUNSOUND verdicts ({len(unsound)}): align verify proved these mutants, an empirical check refutes "
              "them")
        for o in unsound:
            saved = save_unsound(o, options.save_dir)
            print(f"  UNSOUND {o.mutant.spec} [{o.mutant.operator}] {o.mutant.place}")
            print(f"    align verify: {o.verdict.status}{' ' + o.verdict.detail if o.verdict.detail else ''}")
            for f in o.findings[:3]:
                print(f"    {f.check} (length {f.length}): {f.detail}")
            if len(o.findings) > 3:
                print(f"    ... {len(o.findings) - 3} more in the saved file")
            print(f"    saved: {_display(saved)}")
    vacuous = [o for o in outcomes if o.vacuous and o.verdict.status == "bounded"]
    if vacuous:
        print(f"\nvacuous bounded proofs ({len(vacuous)}): no input of the covered lengths satisfies `requires`")
        for o in vacuous:
            beyond = "; ".join(f"{f.check} at length {f.length}" for f in o.beyond) or "nothing found"
            print(f"  {o.mutant.spec} [{o.mutant.operator}] {o.mutant.place}: {o.verdict.detail}; beyond: {beyond}")
    timeouts = [o for o in outcomes if o.timeout]
    if timeouts:
        print(f"\ntimeouts ({len(timeouts)}, limit {budget.limit:g} s):")
        for o in timeouts:
            print(f"  {o.mutant.spec} [{o.mutant.operator}] {o.mutant.place}")
    for status, why in (("invalid", "they do not resolve: a bug of an operator"),
                        ("error", "align verify stopped with an error: a bug of align")):
        failed = [o for o in outcomes if o.verdict.status == status and not o.timeout]
        if failed:
            print(f"\n{status} mutants ({len(failed)}; {why}):")
            for o in failed:
                print(f"  {o.mutant.spec} [{o.mutant.operator}] {o.mutant.place}: {o.verdict.detail}")
    errors = [o for o in outcomes if o.errors]
    if errors:
        print(f"\nchecks that could not run ({len(errors)} mutants):")
        for o in errors:
            print(f"  {o.mutant.key}: {o.errors[0]}{f' (+{len(o.errors) - 1} more)' if len(o.errors) > 1 else ''}")
    print(f"seconds: {time.perf_counter() - started:.1f} with {options.jobs} process(es)")
    print(summary_line(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
