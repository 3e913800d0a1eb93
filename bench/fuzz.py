"""Benchmark (robustness): hostile, mutated and random input through `align check`, `align verify`, `align run`
and `align report`; every input must end in a result or a located diagnostic with a registered code, in bounded
time.

    python bench/fuzz.py              # full: >= 10,000 inputs through check, >= 500 through verify and run
    python bench/fuzz.py --quick      # a few hundred check inputs, a few dozen verify and run inputs
    python bench/fuzz.py --save DIR   # also write each failing input (and its command line) to DIR

Inputs, all deterministic (fixed seeds; hypothesis runs derandomized):

- `grammar`: hypothesis strategies over the grammar (align/grammar.lark): spec-shaped programs whose
  expressions, statements, clauses and alignment lines are drawn rule by rule, with names from a small pool
  so that many of them resolve and reach sympy, z3 and the interpreter;
- `soup`: token sequences over the grammar's own terminals (every keyword and punctuation of the LALR
  parser, names, numbers), which exercise the syntax-error paths;
- `mutate`: byte-level mutations of the corpus (specs/): flipped, inserted (control characters, invalid
  UTF-8, NUL, bidi overrides), deleted, duplicated and spliced bytes, hostile numbers and deep nesting
  pasted into expressions;
- `hostile`: hand-made families at and past every limit of align/limits.py (nesting depth exactly at the
  limit in every context, literal digits and exponents, constant powers, control characters, file sizes)
  and files that are not regular files (a FIFO, /dev/zero, /dev/urandom, a directory, a symlink to a device);
- for `run`: hostile `--arg`, `--neighbour` and `--noise` values (integers past 2^53 and 2^63, 1e-308,
  1e400, NaN, Infinity, deep lists, huge exact expressions) on every mechanism of the corpus, hostile
  `--seed`, `--samples` and `--chunk-size`, noise files that are devices, FIFOs or malformed JSON, and
  `--counterexample-out` paths that cannot be written.

Each input runs in-process (`align.cli.main(argv, stdout, stderr)`) in a worker process; the parent kills a
worker that runs past the per-input limit (a *hang*) or past the memory limit, and starts a fresh one. An
input is *internal* when the command prints `internal-error` or a traceback, lets an exception escape
`main`, crashes the worker, exceeds the memory limit, exits with a code other than 0-3, exits 2 without a
diagnostic, prints a code that is not registered, prints a raw control character, or prints a diagnostic
about the spec's text without a `path:line:col` location.

Prints a table by category, one line per failing input, and last `inputs: N internal: I hangs: H`; exits 1
unless both are 0. Full mode takes about ten minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread per worker
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import functools

from align.diagnostics import CODES
from align.limits import MAX_NESTING_DEPTH, MAX_SAMPLING_SITES, MAX_SOURCE_BYTES

# ------------------------------------------------------------------------------------------------ sizes


@dataclass(frozen=True)
class Sizes:
    """How many inputs of each generated kind; the hostile families are fixed lists (a subset when quick)."""

    check_grammar: int
    check_soup: int
    check_mutate: int
    hostile_every: int
    """Take every n-th case of the fixed hostile families (1: all of them)."""
    verify_grammar: int
    verify_mutate: int
    run_args: int
    run_grammar: int


FULL = Sizes(check_grammar=3000, check_soup=1500, check_mutate=5100, hostile_every=1,
             verify_grammar=230, verify_mutate=230, run_args=380, run_grammar=60)
QUICK = Sizes(check_grammar=100, check_soup=60, check_mutate=120, hostile_every=12,
              verify_grammar=8, verify_mutate=8, run_args=16, run_grammar=6)

LIMIT_S = {"check": 20.0, "verify": 60.0, "run": 30.0, "report": 60.0}
"""Seconds an input may take before it counts as a hang: 20 s as in the issue; verify proves things (up to
a few seconds per solver query), run samples."""
VERIFY_OPTIONS = ("--max-length", "1", "--timeout", "2")
RUN_OPTIONS = ("--samples", "200", "--seed", "7")
MEMORY_LIMIT_MB = 3072
"""Resident memory a worker may reach; beyond it the input counts as internal (memory exhausted)."""

# ------------------------------------------------------------------------------------------------ cases


@dataclass(frozen=True)
class Case:
    """One command line, with the files it needs; `{dir}` in argv is the case's own scratch directory."""

    command: str
    """check, verify or run."""
    category: str
    """The row of the table, e.g. `check/mutate`."""
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    """Files to write into `{dir}` first (name, content)."""
    special: tuple[tuple[str, str], ...] = ()
    """Other things to make in `{dir}`: ("fifo", name), ("dir", name), ("symlink", "name=target")."""

    @property
    def limit(self) -> float:
        return LIMIT_S[self.command]


def _spec_case(command: str, category: str, text: str | bytes, extra: tuple[str, ...] = ()) -> Case:
    data = text.encode("utf-8") if isinstance(text, str) else text
    options = VERIFY_OPTIONS if command in ("verify", "report") else ()
    return Case(command, category, (command, "{dir}/spec.dp", *options, *extra), (("spec.dp", data),))


# ------------------------------------------------------------------------------------------------ corpus


def _corpus() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "specs").rglob("*.dp"))]


def _is_mixture(text: str) -> bool:
    # R²DP scale mixtures take 2-13 s in verify (sympy integrates MGFs): a few of them, not hundreds.
    return "mixture-rule" in text


DEFAULTS = {"eps": "1", "theta": "0.5", "k": "2", "c": "2", "T": "1", "p": "0.5", "b0": "1", "b1": "2",
            "dq": "1", "mu": "0", "sigma": "1", "a": "0.5", "b": "2", "du": "1"}
LIST_DEFAULTS = {"real[]": "[0.5, 2, 1, 3]", "int[]": "[1, 3, 0, 2]", "bool[]": "[true, false, true, true]"}
SCALAR_DEFAULTS = {"real": "1", "int": "1", "bool": "true"}


def _mechanisms() -> list[tuple[str, str, list[tuple[str, str, bool]], bool]]:
    """(path, mechanism, [(parameter, type, public)], has alignment) for every mechanism of the corpus."""
    from align.parse import parse_source, read_source
    from align.resolve import resolve

    result = []
    for path, _ in _corpus():
        for mech in resolve(parse_source(read_source(str(ROOT / path)))).mechanisms:
            params = [(p.name, str(p.type), p.public) for p in mech.params]
            result.append((str(ROOT / path), mech.name, params, mech.alignment is not None))
    return result


def _default_value(name: str, type_: str) -> str:
    if type_ in LIST_DEFAULTS:
        return LIST_DEFAULTS[type_]
    return DEFAULTS.get(name, SCALAR_DEFAULTS.get(type_, "1"))


# ----------------------------------------------------------------------------- hypothesis: the grammar

PARAMS = (("q", "real[]"), ("T", "real"), ("k", "int"), ("eps", "real"), ("theta", "real"), ("flag", "bool"),
          ("n", "int[]"), ("r", "real"))
VARIABLES = ("x", "y", "cost", "eta", "xi", "m", "i", "l", "out", "aligned_cost", "zz")
NOISE = ("eta", "xi", "nu")
FUNCTIONS = ("len", "abs", "min", "max", "argmax", "argmin", "sqrt", "exp", "ln", "normal_cdf", "normal_pdf",
             "top_k_with_gaps", "top_k", "indices", "count", "sum", "all", "any", "foo", "Lap")
COMPREHENSIONS = ("max", "min", "argmax", "argmin", "sum", "count", "all", "any")
DISTRIBUTIONS = ("Lap", "Exp", "Geo", "DLap", "Staircase", "Gumbel", "Logistic", "Uniform", "Gamma", "Bernoulli",
                 "Normal", "TruncNormal", "Point", "Laplace")
TAGS = ("TOP", "BOT", "MID")
OPERATORS = ("+", "-", "*", "/", "^", "<", "<=", "==", "!=", ">", ">=", "and", "or")
COMMON_NUMBERS = ("0", "1", "2", "3", "0.5", "0.25", "1e-3", "2.5E+2", "10", "100", "1000")
EDGE_NUMBERS = ("1e300", "9.99e300", "1e-300", "1.5e-300", "1e301", "1e-301", "1e308", "1e-308", "1e400",
                "1" * 100, "1" * 101, "9" * 4400, "1e100000000", "1e-100000000", "0e999999999",
                "0." + "0" * 98 + "1", "123456789012345678901234567890", "9007199254740993",
                "18446744073709551616", "64", "65", "1000000", "0.0")


def _strategies():
    """The hypothesis strategies (imported lazily: only the parent generates inputs)."""

    from hypothesis import strategies as st

    numbers = st.one_of(st.sampled_from(COMMON_NUMBERS), st.sampled_from(COMMON_NUMBERS),
                        st.integers(0, 10**6).map(str), st.sampled_from(EDGE_NUMBERS))

    @functools.cache  # building a strategy costs more than drawing from it: one per name pool
    def expressions(names: tuple[str, ...]):
        atoms = st.one_of(numbers, st.sampled_from(names), st.sampled_from(names),
                          st.sampled_from(tuple(f"{n}'" for n in names)),
                          st.sampled_from(("true", "false", "out", "TOP", "BOT")))

        def extend(sub):
            pair = st.tuples(sub, st.sampled_from(OPERATORS), sub)
            return st.one_of(
                pair.map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
                pair.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
                sub.map(lambda e: f"-{e}"),
                sub.map(lambda e: f"not {e}"),
                st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
                st.tuples(st.sampled_from(FUNCTIONS), st.lists(sub, max_size=3)).map(
                    lambda t: f"{t[0]}({', '.join(t[1])})"),
                st.tuples(st.sampled_from(COMPREHENSIONS), st.sampled_from(("l", "j")), sub, sub).map(
                    lambda t: f"{t[0]}({t[1]} in 0 .. {t[2]}: {t[3]})"),
                st.tuples(st.sampled_from(COMPREHENSIONS), sub).map(
                    lambda t: f"{t[0]}(l not in indices(out): q[l] + {t[1]})"),
                st.tuples(sub, sub).map(lambda t: f"{t[0]}[{t[1]}]"),
                st.lists(sub, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
                st.tuples(sub, sub).map(lambda t: f"({t[0]}, {t[1]})"),
                st.tuples(sub, st.sampled_from(TAGS)).map(lambda t: f"{t[0]} is {t[1]}"),
                st.tuples(sub, sub, sub).map(lambda t: f"{t[0]} in {t[1]} .. {t[2]}"),
                st.tuples(st.sampled_from(TAGS), sub).map(lambda t: f"{t[0]}({t[1]})"),
            )

        return st.recursive(atoms, extend, max_leaves=10)

    @functools.cache
    def statements(expr, depth: int):
        simple = st.one_of(
            st.tuples(st.sampled_from(VARIABLES[:5]), expr).map(lambda t: f"{t[0]} = {t[1]}"),
            st.tuples(st.sampled_from(VARIABLES[:5]), expr, expr).map(lambda t: f"{t[0]}[{t[1]}] = {t[2]}"),
            st.tuples(st.sampled_from(NOISE), st.sampled_from(DISTRIBUTIONS), st.lists(expr, min_size=1, max_size=2))
            .map(lambda t: f"{t[0]} ~ {t[1]}({', '.join(t[2])})"),
            st.tuples(st.sampled_from(NOISE), st.sampled_from(("Lap", "Exp", "Geo"))).map(
                lambda t: f"{t[0]} ~ {t[1]}({'0.5' if t[1] == 'Geo' else '1 / eps'})"),
            expr.map(lambda e: f"output {e}"),
            st.sampled_from(("break", ";", "output q[i] + xi", "output TOP(x)", "output BOT")),
        )
        if depth == 0:
            return simple
        inner = statements(expr, depth - 1)
        block = st.lists(inner, max_size=3).map(lambda ss: "{\n  " + "\n  ".join(ss) + "\n}")
        return st.one_of(
            simple, simple,
            st.tuples(expr, block, st.one_of(st.just(""), block.map(lambda b: f" else {b}"))).map(
                lambda t: f"if {t[0]} {t[1]}{t[2]}"),
            st.tuples(st.sampled_from(("i", "j")), st.one_of(st.just("0"), expr),
                      st.one_of(st.just("len(q)"), expr), block).map(
                lambda t: f"for {t[0]} in {t[1]} .. {t[2]} {t[3]}"),
            st.tuples(expr, block).map(lambda t: f"while {t[0]} {t[1]}"),
        )

    @st.composite
    def programs(draw) -> tuple[str, tuple[tuple[str, str], ...]]:
        # q and eps nearly always: then names resolve, and the program reaches sympy, z3 and the interpreter
        extra = draw(st.lists(st.sampled_from(PARAMS[1:]), max_size=4, unique_by=lambda p: p[0]))
        params = tuple(dict.fromkeys(([PARAMS[0], ("eps", "real")] if draw(st.integers(0, 9)) else []) + extra))
        names = tuple(p[0] for p in params) + VARIABLES
        expr = expressions(names)
        lines = ["mechanism m(" + ", ".join(f"{n}: {t}" for n, t in params) + ")"]
        private = [n for n, t in params if n in ("q", "r", "n")]
        for name in private:
            if draw(st.booleans()):
                typ = dict(params)[name]
                lines.append(f"  adjacent |{name}[i] - {name}'[i]| <= {draw(expr)}" if typ.endswith("[]")
                             else f"  adjacent |{name} - {name}'| <= {draw(expr)}")
        if draw(st.booleans()):
            lines.append("  requires " + ", ".join(draw(st.lists(expr, min_size=1, max_size=3))))
        if draw(st.integers(0, 9)) > 0:
            lines.append("  privacy " + draw(st.one_of(st.just("eps"), expr)))
        body = draw(st.lists(statements(expr, 2), max_size=6))
        if draw(st.booleans()):
            body = ["eta ~ Lap(1 / eps)", *body, "output q[0] + eta"]
        lines.append("{\n  " + "\n  ".join(body) + "\n}")
        if draw(st.booleans()):
            items = draw(st.lists(st.one_of(
                st.tuples(st.sampled_from(NOISE), expr).map(lambda t: f"{t[0]}' = {t[0]} + {t[1]}"),
                expr.map(lambda e: f"xi[i]' = xi[i] + {e}"),
                st.tuples(st.sampled_from(("a", "m", "m'")), expr).map(lambda t: f"let {t[0]} = {t[1]}"),
                expr.map(lambda e: f"invariant {e}"),
                st.tuples(st.sampled_from(NOISE), expr).map(lambda t: f"{t[0]} = {t[1]}"),
            ), max_size=4))
            lines.append("alignment m {\n  " + "\n  ".join(items) + "\n}")
        return "\n".join(lines) + "\n", params

    terminals = _terminals()
    soup_tokens = st.one_of(st.sampled_from(terminals), st.sampled_from(terminals), numbers,
                            st.sampled_from(tuple(n for n, _ in PARAMS) + VARIABLES + DISTRIBUTIONS + TAGS))
    soups = st.tuples(st.lists(soup_tokens, max_size=40), st.booleans()).map(
        lambda t: (" " if t[1] else "\n").join(t[0]))
    return programs(), soups


def _terminals() -> tuple[str, ...]:
    """Every fixed string the LALR parser knows (keywords, punctuation), read from the grammar itself."""
    from align.parse import _parser

    words = []
    for terminal in _parser().terminals:
        if terminal.pattern.type == "str":
            words.append(terminal.pattern.value)
        elif terminal.name in ("BASETYPE", "COMPARE_OP", "ADD_OP", "MUL_OP"):
            words += re.findall(r"[a-z]+|[<>=!]=|[<>+\-*/]", terminal.pattern.value.replace("\\", ""))
    return tuple(sorted(set(words)))


def _draw(strategy, count: int) -> list:
    """`count` examples of a strategy, deterministic (derandomized hypothesis, no database, no shrinking)."""
    from hypothesis import HealthCheck, Phase, given, settings

    examples: list = []

    @settings(max_examples=count, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example) -> None:
        examples.append(example)

    collect()
    return examples[:count]


# -------------------------------------------------------------------------------------- byte mutations

INSERTS = (b"\x1b[2J", b"\x1b]0;pwned\x07", b"\x00", b"\r", b"\x07", b"\x7f", b"\x85".decode("latin-1").encode(),
           "\u202e".encode(), "\u2066".encode(), "\ufeff".encode(), b"\xff", b"\xc3", b"\xed\xa0\x80", b"\t",
           b"\x0c", b"\x0b", "\u2028".encode(), b"'", b"\"", b"..", b"^", b"~", b"?", b"#", b"\n", b"{", b"}",
           b"(", b")", b"[", b"]", "é".encode(), "η".encode())
HOSTILE_SNIPPETS = (b"1e100000000", b"1e-100000000", b"9" * 5000, b"1" * 101, b"1e400", b"1e300 * 1e300",
                    b"2 ^ 64 ^ 64", b"2 ^ 100000", b"(" * 300 + b"1" + b")" * 300, b"-" * 300 + b"1",
                    b"not " * 200 + b"true", b"[" * 120 + b"1" + b"]" * 120, b"x" * 3000,
                    b"abs(" * 120 + b"1" + b")" * 120,
                    b"0e99999999999", b"1/3 + 1/7 + 1/11 + 1/13 + 1/17 + 1/19", b"(1/3)^64 * (1/7)^64",
                    b"for i in 0 .. 1000000000 { }", b"if true { " * 60 + b"}" * 60)


def _mutate(data: bytes, rng: random.Random, corpus: list[bytes]) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(10)
        pos = rng.randint(0, len(out))
        if op == 0 and out:  # flip one byte
            out[min(pos, len(out) - 1)] = rng.randrange(256)
        elif op == 1:
            out[pos:pos] = rng.choice(INSERTS)
        elif op == 2:
            out[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3:  # delete a span
            del out[pos:pos + rng.randint(1, 40)]
        elif op == 4 and out:  # duplicate a span elsewhere
            start = rng.randrange(len(out))
            chunk = out[start:start + rng.randint(1, 60)]
            out[pos:pos] = chunk
        elif op == 5:  # a number replaced by a hostile one
            numbers = list(re.finditer(rb"[0-9]+(\.[0-9]+)?", bytes(out)))
            if numbers:
                m = rng.choice(numbers)
                out[m.start():m.end()] = rng.choice(HOSTILE_SNIPPETS[:6] + tuple(e.encode() for e in EDGE_NUMBERS))
        elif op == 6:  # a hostile expression pasted after `=`, `output`, `(` or `,`
            spots = [m.end() for m in re.finditer(rb"(= |output |\(|, )", bytes(out))]
            if spots:
                at = rng.choice(spots)
                out[at:at] = rng.choice(HOSTILE_SNIPPETS) + rng.choice((b" + ", b" * ", b"; "))
        elif op == 7:  # splice a chunk of another spec
            other = rng.choice(corpus)
            start = rng.randrange(max(1, len(other)))
            out[pos:pos] = other[start:start + rng.randint(1, 200)]
        elif op == 8:  # swap two lines
            lines = bytes(out).split(b"\n")
            if len(lines) > 2:
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                out = bytearray(b"\n".join(lines))
        else:  # truncate
            del out[pos:]
    return bytes(out)


# --------------------------------------------------------------------------------------- hostile families

_MECH = ("mechanism m(q: real, eps: real, k: int)\n  adjacent |q - q'| <= 1\n  requires {requires}\n"
         "  privacy {privacy}\n{{\n  eta ~ Lap({scale})\n  {body}\n}}\nalignment m {{\n  eta' = eta + {shift}\n}}\n")


def _fill(**slots: str) -> str:
    values = {"requires": "eps > 0", "privacy": "eps", "scale": "1 / eps", "body": "output q + eta",
              "shift": "q - q'"}
    values.update(slots)
    return _MECH.format(**values)


CONTEXTS = {
    "output": lambda e: _fill(body=f"output q + eta + {e}"),
    "requires": lambda e: _fill(requires=f"eps > 0, eps < {e}"),
    "privacy": lambda e: _fill(privacy=f"eps + 0 * ({e})"),
    "scale": lambda e: _fill(scale=f"1 / eps + 0 * ({e})"),
    "shift": lambda e: _fill(shift=f"q - q' + 0 * ({e})"),
    "condition": lambda e: _fill(body=f"if {e} > 0 {{ output q + eta }} else {{ output q + eta }}"),
}
SHAPES = {  # (template with {} for the inner expression, the innermost expression)
    "negate": ("-(q + {})", "q"),
    "sum-chain": (None, None),
    "parens-sum": ("(1 + {})", "eps"),
    "fraction": ("1 / (1 + {})", "eps"),
    "abs": ("abs({})", "q"),
    "exp": ("exp({})", "q"),
    "max": ("max({}, q)", "q"),
    "ternary": ("(q > 0 ? {} : 1)", "q"),
    "power": ("(1 + {}) ^ 2", "q"),
    "index": ("[q, 1][{}]", "0"),
    "list-len": ("len([{}])", "1"),
    "not": ("(not ({} > 0) or q > 1 ? 1 : 0)", "q"),
}


def _nest(shape: str, n: int) -> str:
    template, inner = SHAPES[shape]
    if template is None:
        return " + ".join(["q"] * (n + 1))
    before, after = template.split("{}")
    return before * n + inner + after * n


def _depth(text: str) -> int | None:
    from lark import Tree
    from lark.exceptions import LarkError

    from align.parse import _parser

    try:
        tree = _parser().parse(text, start="start")
    except LarkError:
        return None
    best, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, Tree))
    return best


def _at_limit(context: str, shape: str, past: bool) -> bytes:
    """The deepest text of this shape in this context that the depth limit accepts (or, with `past`, the
    shallowest that it refuses): each nesting step adds the same number of levels."""
    make = CONTEXTS[context]

    def depth(n: int) -> int:
        d = _depth(make(_nest(shape, n)))
        assert d is not None, (context, shape)
        return d

    low, high = depth(20), depth(40)  # beyond the depth of the rest of the spec: linear in n from here
    n = 20 + (MAX_NESTING_DEPTH - low) * 20 // (high - low)
    while depth(n) > MAX_NESTING_DEPTH:
        n -= 1
    while depth(n + 1) <= MAX_NESTING_DEPTH:
        n += 1
    return make(_nest(shape, n + 1 if past else n)).encode()


def _hostile_texts() -> list[tuple[str, Any]]:
    """(name, file content, or a function that makes it) of the fixed hostile families; the functions run
    only for the cases taken (`_materialize`), so a quick run does not build them all."""
    cases: list[tuple[str, Any]] = []
    for context, make in CONTEXTS.items():
        for shape in SHAPES:
            cases.append((f"depth-at-limit:{context}:{shape}", lambda c=context, s=shape: _at_limit(c, s, False)))
            cases.append((f"depth-past-limit:{context}:{shape}", lambda c=context, s=shape: _at_limit(c, s, True)))
        for n in (1000, 15000):
            cases.append((f"depth-{n}:{context}", make(_nest("negate", n)).encode()))
        for number in EDGE_NUMBERS + ("1e301 / 10", "1e300 * 1e300", "1e-300 / 1e300", "2 ^ 64", "2 ^ 65",
                                      "2 ^ 64 ^ 64", "(1/3) ^ 64", "3 ^ 64 * 3 ^ 64 * 3 ^ 64 * 3 ^ 64",
                                      "10 ^ 300 * 10", "2 ^ -64", "0 ^ -1", "1 / 0", "0 / 0", "q ^ 64",
                                      "(q + eps) ^ 64", "(q + eps + k) ^ 64", "q ^ 65", "q ^ 0.5",
                                      "exp(exp(exp(exp(1e300))))", "ln(0)", "sqrt(-1)",
                                      " + ".join(f"1/{p}" for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29) * 9),
                                      "1e300 + 1e-300", "9" * 100 + " * " + "9" * 100):
            cases.append((f"number:{context}:{number[:20]}", make(number).encode()))
    loops = ("for i in 0 .. k { for j in 0 .. k { output q + eta } }",
             "for i in 0 .. 3 { for j in 0 .. 3 { for l in 0 .. 3 { output q + eta } } }",
             "for i in 0 .. 2 ^ 64 { output q + eta }",
             "for i in 0 .. 2 ^ 62 { output q + eta }",
             "x = [q]\n  x2 = [x]\n  x3 = [x2]\n  output q + eta")
    for body in loops:
        cases.append((f"loop:{body[:30]}", _fill(body=body).encode()))
    for body in UNROLLING:  # every command must cope; verify answers unknown past MAX_UNROLL
        cases.append((f"unroll:{body[:30]}", _fill(body=body).encode()))
    cases.append(("loop:requires-k", _fill(requires="eps > 0, k == 1000000",
                                           body="for i in 0 .. k { output q + eta }").encode()))
    deep_lists = "a0 = [q]\n  " + "\n  ".join(f"a{i} = [a{i - 1}]" for i in range(1, 80)) + "\n  output q + eta"
    cases.append(("nested-list-variables", _fill(body=deep_lists).encode()))
    many = "\n  ".join(f"x{i} = q * {i} + eps" for i in range(2000)) + "\n  output q + eta"
    cases.append(("many-statements", _fill(body=many).encode()))
    for count in (MAX_SAMPLING_SITES - 1, 300):  # with eta: at the limit, and past it
        sites = "\n  ".join(f"e{i} ~ Lap({i + 1} / eps)" for i in range(count)) + "\n  output q + eta"
        cases.append((f"sampling-sites-{count + 1}", _fill(body=sites).encode()))
    text = _fill()
    for name, data in (
        ("empty", b""), ("bom", b"\xef\xbb\xbf" + text.encode()), ("crlf", text.replace("\n", "\r\n").encode()),
        ("lone-cr", text.replace("\n", "\r").encode()), ("form-feed", text.replace("\n", "\x0c\n").encode()),
        ("nul", text.encode().replace(b"eta ~", b"eta\x00 ~")),
        ("latin-1", text.replace("q + eta", "q + \xe9ta").encode("latin-1")),
        ("esc-in-name", text.replace("eta ~", "e\x1b[2Jta ~").encode()),
        ("esc-in-comment", ("# \x1b]0;pwned\x07 \x1b[31m\n" + text).encode()),
        ("bidi", text.replace("q + eta", "q + eta \u202e + 1").encode()),
        ("cr-in-line", text.replace("output q", "output \rq\rq").encode()),
        ("c1", text.replace("eta ~", "eta\u0085\u009b ~").encode()),
        ("surrogate-bytes", text.encode() + b"\xed\xa0\x80"),
        ("vt-line", text.replace("privacy eps", "privacy\x0beps").encode()),
        ("u2028", text.replace("privacy eps", "privacy\u2028eps").encode()),
        ("long-name", text.replace("eta", "e" * 100000).encode()),
        ("long-line", text.replace("output q + eta", "output q + eta" + " + q" * 20000).encode()),
        ("long-comment", ("#" + "x" * 200000 + "\n" + text).encode()),
        ("too-large", ("#" * 300000 + "\n" + text).encode()),
        ("at-size-limit", (text + "#" * (MAX_SOURCE_BYTES - len(text.encode()) - 1) + "\n").encode()),
        ("dense-at-size-limit", _fill(body="output q" + " + -q" * ((MAX_SOURCE_BYTES - 400) // 5)).encode()),
        ("many-errors", ("mechanism m(q: real) privacy 1 {\n" + "  output zz\n" * 5000 + "}\n").encode()),
        ("unicode-names", text.replace("eta", "ηta").encode()),
        ("only-comments", b"# nothing\n" * 100),
        ("binary", bytes(range(256)) * 4),
    ):
        cases.append((f"text:{name}", data))
    return cases


UNROLLING = ("for i in 0 .. 1000000 { x = i }\n  output q + eta",
             "for i in 0 .. 1000000000000 { output q + eta }",
             "for i in 0 .. 300 { for j in 0 .. 300 { output q + eta } }",
             "x = 0\n  for i in 0 .. 100 { for j in 0 .. 100 { for l in 0 .. 100 { x = x + 1 } } }\n  output q + eta",
             "for i in 0 .. 100000 { xi ~ Lap(1 / eps) }\n  output q + eta",
             "for i in 0 .. 100000 { output q + eta }")
"""Long loops with concrete ranges: `align verify` refuses to unroll them past align.limits.MAX_UNROLL (unknown),
`align run` refuses them with loop-too-long or run-too-large (tests/limits/ keeps the first reproducers)."""


def _materialize(items: list[tuple[str, Any]]) -> list[tuple[str, bytes]]:
    return [(name, data() if callable(data) else data) for name, data in items]


FILE_SPECIALS: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], ...] = (
    ("fifo", ("{dir}/pipe.dp",), (("fifo", "pipe.dp"),)),
    ("dev-zero", ("/dev/zero",), ()),
    ("dev-urandom", ("/dev/urandom",), ()),
    ("dev-null", ("/dev/null",), ()),
    ("directory", ("{dir}/adir",), (("dir", "adir"),)),
    ("symlink-to-device", ("{dir}/link.dp",), (("symlink", "link.dp=/dev/zero"),)),
    ("symlink-loop", ("{dir}/loop.dp",), (("symlink", "loop.dp=loop.dp"),)),
    ("missing", ("{dir}/missing.dp",), ()),
    ("control-in-path", ("{dir}/a\x1b[2Jb.dp",), ()),
    ("nul-in-path", ("{dir}/a\x00b.dp",), ()),
    ("proc-file", ("/proc/self/status",), ()),
)


# --------------------------------------------------------------------------------------------- the run

HOSTILE_VALUES = ("1e400", "-1e400", "1e-308", "-1e-308", "1e-300", "1e300", "nan", "NaN", "inf", "Infinity",
                  "-Infinity", str(2**53 + 1), str(2**63), str(-(2**63) - 1), str(2**64), "9" * 400, "9" * 5000,
                  "1e99999999", '"1e99999999"', '"1/0"', "1/0", "0/0", '"1/3"', "1/3", "[]", "[[1]]",
                  "[" * 5000 + "]" * 5000, "[" * 90 + "1" + "]" * 90, "[1e308, -1e308]", "[1e300, -1e300, 1e300]",
                  "1e300*1e300", "2^64", "2^65", "2^-1074", "(1/3)^64", "true", "null", "{}", '"abc"',
                  "\x1b[2J", "", "[1,", "1" * 101, "0.1e-299", "-0", "0", "-1", "1e-5", "[0.5, 1e300]",
                  "[" + ",".join(["1"] * 5000) + "]", "{\"a\": 1}", "1e309", "-2^63", "2^63-1", "[nan]")


def _run_cases(sizes: Sizes, rng: random.Random) -> list[Case]:
    mechanisms = _mechanisms()
    cases: list[Case] = []
    pool = []
    for path, name, params, _ in mechanisms:
        for p, type_, _public in params:
            for value in HOSTILE_VALUES:
                pool.append((path, name, params, p, type_, value))
    rng.shuffle(pool)
    for path, name, params, target, _, value in pool[: sizes.run_args]:
        argv = ["run", path, "--mechanism", name, *RUN_OPTIONS]
        for p, type_, _public in params:
            argv += ["--arg", f"{p}={value if p == target else _default_value(p, type_)}"]
        cases.append(Case("run", "run/args", tuple(argv)))
    path, name, params, _ = next(m for m in mechanisms if m[1] == "svt_gap")
    base = ["run", path]
    for p, type_, _public in params:
        base += ["--arg", f"{p}={_default_value(p, type_)}"]
    options = [["--seed", "-1"], ["--seed", str(2**64)], ["--seed", str(2**128)], ["--seed", "1e3"],
               ["--samples", "-1"], ["--samples", "0"], ["--samples", str(10**12)], ["--samples", str(2**63)],
               ["--samples", "9" * 5000], ["--chunk-size", "0"], ["--chunk-size", str(2**40)],
               ["--chunk-size", "1"], ["--samples", "3", "--format", "json"], ["--mechanism", "nope"],
               ["--mechanism", "\x1b[2J"], ["--aligned", "--noise", "eta=1"], ["--neighbour", "q=[1]"],
               ["--counterexample-out", "x.json"], ["--noise", "eta"], ["--noise", "=1"], ["--arg", "eps"],
               ["--arg", "nope=1"], ["--arg", "eps=1", "--arg", "eps=2"]]
    for extra in options:
        argv = base + (["--samples", "50"] if "--samples" not in extra else []) + extra
        cases.append(Case("run", "run/options", tuple(argv)))
    replays = [["--noise", f"eta={v}", "--noise", "xi=[0.1, 0.2, 0.3, 0.4]"] for v in HOSTILE_VALUES[::3]]
    replays += [["--noise", "eta=0", "--noise", f"xi={v}"] for v in HOSTILE_VALUES[::4]]
    for extra in replays:
        cases.append(Case("run", "run/replay", tuple(base + extra)))
    for v in HOSTILE_VALUES[::3]:
        cases.append(Case("run", "run/aligned", tuple(base + ["--noise", "eta=0", "--noise", "xi=[0, 0, 0, 0]",
                                                              "--aligned", "--neighbour", f"q={v}"])))
    noise_files = [("dev-zero", "/dev/zero", ()), ("fifo", "{dir}/pipe.json", (("fifo", "pipe.json"),)),
                   ("directory", "{dir}/adir", (("dir", "adir"),)), ("missing", "{dir}/none.json", ())]
    for label, target, special in noise_files:
        cases.append(Case("run", f"run/noise-file:{label}", tuple(base + ["--noise-file", target]), (), special))
    contents = [b"", b"{", b"[]", b"null", b'{"eta": 1e999}', b'{"eta": "1e99999999"}',
                b'{"eta": ' + b"9" * 5000 + b"}", b'{"eta": NaN}', b'{"eta": ' + b"[" * 100000 + b"]" * 100000 + b"}",
                b"\xff\xfe",
                (b'{"format": "align-counterexample/1", "spec": "x", "mechanism": "svt_gap", "obligation": "C4a", '
                 b'"args": {"q": "1e99999999"}, "neighbour": {}, "noise": {}}'),
                b'{"format": "align-counterexample/1"}', b'{"eta": "\x1b[2J"}', b"#" * 300000]
    for content in contents:
        cases.append(Case("run", "run/noise-file", tuple(base + ["--noise-file", "{dir}/n.json"]),
                          (("n.json", content),)))
    check = base + ["--check-alignment", "--samples", "200", "--neighbour", "q=[1.5, 2, 1, 3]"]
    refuted_path, _, refuted_params, _ = next(m for m in mechanisms if m[1] == "svt_gap_outputs_noisy_query")
    refuted = ["run", refuted_path, "--check-alignment", "--samples", "2000", "--neighbour", "q=[1.5, 2, 1, 3]"]
    for p, type_, _public in refuted_params:
        refuted += ["--arg", f"{p}={_default_value(p, type_)}"]
    outs = [("missing-dir", "{dir}/no/such/dir/c.json", ()), ("directory", "{dir}/adir", (("dir", "adir"),)),
            ("under-a-file", "{dir}/afile/c.json", ()), ("nul", "{dir}/a\x00.json", ()), ("ok", "{dir}/c.json", ())]
    for label, target, special in outs:
        files = (("afile", b"x"),) if label == "under-a-file" else ()
        for argv in (check, refuted):
            for fmt in ("text", "json"):
                cases.append(Case("run", f"run/counterexample-out:{label}",
                                  tuple(argv + ["--counterexample-out", target, "--format", fmt]), files, special))
    for v in HOSTILE_VALUES[::2]:
        cases.append(Case("run", "run/check-alignment", tuple(base + ["--check-alignment", "--samples", "100",
                                                                      "--neighbour", f"q={v}"])))
    return cases


# ----------------------------------------------------------------------------------------- all inputs


def build_cases(sizes: Sizes) -> list[Case]:
    rng = random.Random(20240909)
    corpus = _corpus()
    corpus_bytes = [text.encode() for _, text in corpus]
    programs, soups = _strategies()
    cases: list[Case] = []

    generated = _draw(programs, sizes.check_grammar + sizes.verify_grammar + sizes.run_grammar)
    texts = [text for text, _ in generated]
    for text in texts[: sizes.check_grammar]:
        cases.append(_spec_case("check", "check/grammar", text))
    for text in _draw(soups, sizes.check_soup):
        cases.append(_spec_case("check", "check/soup", text))
    for _k in range(sizes.check_mutate):
        cases.append(_spec_case("check", "check/mutate", _mutate(rng.choice(corpus_bytes), rng, corpus_bytes)))
    hostile = _materialize(_hostile_texts()[:: sizes.hostile_every])
    for _name, data in hostile:
        fmt = ("--output-format", rng.choice(("full", "full", "concise", "json")))
        cases.append(_spec_case("check", "check/hostile", data, fmt))
    for _name, argv, special in FILE_SPECIALS:
        cases.append(Case("check", "check/files", ("check", *argv), (), special))

    for text in texts[sizes.check_grammar: sizes.check_grammar + sizes.verify_grammar]:
        cases.append(_spec_case("verify", "verify/grammar", text))
    cheap = [data for (path, text), data in zip(corpus, corpus_bytes) if not _is_mixture(text)]
    for _k in range(sizes.verify_mutate):
        cases.append(_spec_case("verify", "verify/mutate", _mutate(rng.choice(cheap), rng, corpus_bytes)))
    verify_hostile = [item for item in _hostile_texts()
                      if not item[0].startswith(("depth-1000", "depth-15000", "text:"))]
    for _name, data in _materialize(verify_hostile[:: max(1, sizes.hostile_every * 2)]):
        cases.append(_spec_case("verify", "verify/hostile", data))
    refuted = str(ROOT / "specs" / "incorrect" / "svt_gap_outputs_noisy_query.dp")
    for label, target, special, files in (("missing-dir", "{dir}/no/such/c.json", (), ()),
                                          ("directory", "{dir}/adir", (("dir", "adir"),), ()),
                                          ("under-a-file", "{dir}/afile/c.json", (), (("afile", b"x"),)),
                                          ("ok", "{dir}/c.json", (), ())):
        for fmt in ("full", "json"):
            cases.append(Case("verify", f"verify/counterexample:{label}",
                              ("verify", refuted, *VERIFY_OPTIONS, "--counterexample", target, "--output-format", fmt),
                              files, special))
    for _name, argv, special in FILE_SPECIALS[:6]:
        cases.append(Case("verify", "verify/files", ("verify", *argv, *VERIFY_OPTIONS), (), special))
    # `align report`: the same kinds of text through the verdict's document and its three writers
    formats = ("md", "html", "tex")
    for k, text in enumerate(texts[sizes.check_grammar: sizes.check_grammar + sizes.verify_grammar][::2]):
        cases.append(_spec_case("report", "report/grammar", text, ("--format", formats[k % 3])))
    for k in range(sizes.verify_mutate // 2):
        cases.append(_spec_case("report", "report/mutate", _mutate(rng.choice(cheap), rng, corpus_bytes),
                                ("--format", formats[k % 3])))

    run_cases = _run_cases(sizes, rng)
    if sizes is QUICK:
        run_cases = run_cases[: sizes.run_args] + run_cases[sizes.run_args::8]
    cases += run_cases
    for text, params in generated[sizes.check_grammar + sizes.verify_grammar:]:
        argv = ["run", "{dir}/spec.dp", *RUN_OPTIONS]
        for p, type_ in params:
            argv += ["--arg", f"{p}={_default_value(p, type_)}"]
        cases.append(Case("run", "run/grammar", tuple(argv), (("spec.dp", text.encode()),)))
    for _name, data in hostile[:: 3]:
        cases.append(Case("run", "run/hostile", ("run", "{dir}/spec.dp", *RUN_OPTIONS, "--arg", "q=1", "--arg",
                                                 "eps=1", "--arg", "k=2"), (("spec.dp", data),)))
    return cases


# ----------------------------------------------------------------------------------------- classifying

HEADLINE = re.compile(r"^(?:(?P<where>.*?): )?(?:error|warning)\[(?P<code>[^\]]*)\]: ", re.MULTILINE)
LOCATED = re.compile(r":\d+:\d+$")
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FILE_LEVEL = {"io-error", "file-too-large", "usage", "write-error"}
"""Codes about a whole file or the command line, which have no line and column."""
_NAMES = list(CODES)
RUNTIME = set(_NAMES[_NAMES.index("internal-error") + 1:]) | {"unknown-mechanism", "unknown-noise"}
"""Codes of `align run` and later commands (registered after internal-error): about arguments, replayed
noise and one execution; those about a command-line value have no location in the spec."""


def classify(command: str, code: int, out: str, err: str) -> str | None:
    """Why this result is an internal failure, or None when it is a result or a proper diagnostic."""
    text = out + err
    if "Traceback (most recent call last)" in text:
        return "traceback"
    if "internal-error" in text:
        line = next((ln for ln in text.splitlines() if "internal-error" in ln), "internal-error")
        return line.strip()[:300]
    if code not in (0, 1, 2, 3):
        return f"exit code {code}"
    raw = RAW_CONTROL.search(text)
    if raw is not None:
        return f"raw control character {raw.group()!r} in the output"
    headlines = list(HEADLINE.finditer(err))
    for match in headlines:
        name, where = match.group("code"), match.group("where") or ""
        if name not in CODES and name != "usage":
            return f"unregistered code {name!r}"
        unlocated_ok = FILE_LEVEL | (RUNTIME if command == "run" else set())
        if not LOCATED.search(where) and name not in unlocated_ok:
            return f"no location: {err[match.start():].splitlines()[0][:200]}"
    if code == 2 and not headlines and '"code"' not in out and "error[" not in text:
        return "exit 2 without a diagnostic"
    return None


# --------------------------------------------------------------------------------------------- workers


def _prepare(case: Case, base: Path) -> Path:
    work = base / "case"
    if work.exists() or work.is_symlink():
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name, data in case.files:
        (work / name).write_bytes(data)
    for kind, arg in case.special:
        if kind == "fifo":
            os.mkfifo(work / arg)
        elif kind == "dir":
            (work / arg).mkdir()
        elif kind == "symlink":
            name, target = arg.split("=", 1)
            os.symlink(target, work / name)
    return work


def _execute(case: Case, base: Path) -> tuple[str | None, float, str]:
    from align.cli import main

    work = _prepare(case, base)
    argv = [a.replace("{dir}", str(work)) for a in case.argv]
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    try:
        code = main(argv, out, err)
    except BaseException as error:  # noqa: BLE001 - anything that escapes main is the finding
        return f"{type(error).__name__} escaped main: {error}"[:300], time.perf_counter() - start, ""
    seconds = time.perf_counter() - start
    why = classify(case.command, code, out.getvalue(), err.getvalue())
    return why, seconds, (err.getvalue()[:2000] if why else "")


def _worker(conn: Any, base: str) -> None:
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints (numpy warnings, z3) must not mix with the table
    os.dup2(devnull, 2)
    while True:
        message = conn.recv()
        if message is None:
            return
        index, case = message
        conn.send((index, *_execute(case, Path(base))))


@dataclass
class _Slot:
    process: Any
    conn: Any
    base: str
    job: tuple[int, float] | None = None
    """(case index, start time) of the input it runs."""


@dataclass
class Outcome:
    status: str
    """ok, internal or hang."""
    detail: str = ""
    seconds: float = 0.0
    stderr: str = ""


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_cases(cases: list[Case], jobs: int, scratch: Path, progress: bool = False) -> list[Outcome]:
    """Run every case in `jobs` worker processes; kill and replace a worker past a case's limits."""
    import multiprocessing
    from multiprocessing import connection

    # Every module the commands import, imported once here: each worker (and each replacement after a hang)
    # is a fork that starts at once with them, and all run the same code even if files change meanwhile.
    import align.checker.verify
    import align.cli
    import align.commands.run
    import align.interp.scalar  # noqa: F401

    context = multiprocessing.get_context("fork")
    results: list[Outcome | None] = [None] * len(cases)

    def start(k: int) -> _Slot:
        base = scratch / f"worker{k}-{time.monotonic_ns()}"
        base.mkdir(parents=True)
        parent, child = context.Pipe()
        process = context.Process(target=_worker, args=(child, str(base)), daemon=True)
        process.start()
        child.close()
        return _Slot(process, parent, str(base))

    def retire(slot: _Slot) -> None:
        slot.process.kill()
        slot.process.join()
        slot.conn.close()
        shutil.rmtree(slot.base, ignore_errors=True)

    slots = [start(k) for k in range(jobs)]
    pending = deque(range(len(cases)))
    done, last_print = 0, time.monotonic()
    try:
        while pending or any(s.job for s in slots):
            for slot in slots:
                if slot.job is None and pending:
                    index = pending.popleft()
                    slot.conn.send((index, cases[index]))
                    slot.job = (index, time.monotonic())
            busy = [s for s in slots if s.job]
            ready = connection.wait([s.conn for s in busy], timeout=0.25)
            now = time.monotonic()
            for k, slot in enumerate(slots):
                if slot.job is None:
                    continue
                index, started = slot.job
                if slot.conn in ready:
                    try:
                        _, why, seconds, stderr = slot.conn.recv()
                        results[index] = Outcome("internal" if why else "ok", why or "", seconds, stderr)
                        slot.job = None
                        done += 1
                        continue
                    except (EOFError, OSError):
                        code = slot.process.exitcode
                        results[index] = Outcome("internal", f"worker died (exit code {code})", now - started)
                elif now - started > cases[index].limit:
                    results[index] = Outcome("hang", f"still running after {cases[index].limit:.0f} s",
                                             now - started)
                elif _rss_mb(slot.process.pid) > MEMORY_LIMIT_MB:
                    results[index] = Outcome("internal", f"memory past {MEMORY_LIMIT_MB} MB", now - started)
                else:
                    continue
                retire(slot)  # after a hang, a crash or a blow-up: a fresh worker for the next input
                slots[k] = start(k)
                done += 1
            if progress and time.monotonic() - last_print > 15:
                last_print = time.monotonic()
                print(f"  ... {done}/{len(cases)}", file=sys.stderr, flush=True)
    finally:
        for slot in slots:
            if slot.job is None:
                with contextlib.suppress(OSError):
                    slot.conn.send(None)
            retire(slot)
    return [r if r is not None else Outcome("internal", "no result") for r in results]


# --------------------------------------------------------------------------------------------- report


@dataclass
class Summary:
    inputs: int = 0
    internal: int = 0
    hangs: int = 0
    rows: dict[str, list[float]] = field(default_factory=dict)
    """category -> [inputs, internal, hangs, seconds]."""
    failures: list[tuple[int, Case, Outcome]] = field(default_factory=list)

    @property
    def last_line(self) -> str:
        return f"inputs: {self.inputs} internal: {self.internal} hangs: {self.hangs}"


def summarize(cases: list[Case], outcomes: list[Outcome]) -> Summary:
    summary = Summary()
    for index, (case, outcome) in enumerate(zip(cases, outcomes)):
        category = case.category.split(":")[0]
        row = summary.rows.setdefault(category, [0, 0, 0, 0.0])
        row[0] += 1
        row[3] += outcome.seconds
        summary.inputs += 1
        if outcome.status == "internal":
            row[1] += 1
            summary.internal += 1
        elif outcome.status == "hang":
            row[2] += 1
            summary.hangs += 1
        if outcome.status != "ok":
            summary.failures.append((index, case, outcome))
    return summary


def table(summary: Summary) -> str:
    lines = [f"{'category':28} {'inputs':>7} {'internal':>9} {'hangs':>6} {'seconds':>9}"]
    for command in ("check", "verify", "run", "report"):
        rows = {k: v for k, v in summary.rows.items() if k.startswith(command + "/")}
        for category, (inputs, internal, hangs, seconds) in sorted(rows.items()):
            lines.append(f"{category:28} {inputs:7d} {internal:9d} {hangs:6d} {seconds:9.1f}")
        if rows:
            total = [sum(v[i] for v in rows.values()) for i in range(4)]
            lines.append(f"{command + ' (all)':28} {total[0]:7d} {total[1]:9d} {total[2]:6d} {total[3]:9.1f}")
    return "\n".join(lines)


def _save(summary: Summary, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for index, case, outcome in summary.failures:
        stem = f"{index:05d}_{case.category.replace('/', '_').replace(':', '_')}"
        for name, data in case.files:
            (directory / f"{stem}_{name}").write_bytes(data)
        (directory / f"{stem}.txt").write_text(json.dumps(
            {"argv": case.argv, "special": case.special, "status": outcome.status, "detail": outcome.detail,
             "stderr": outcome.stderr}, indent=2, ensure_ascii=True) + "\n")


def fuzz(quick: bool = False, jobs: int | None = None, progress: bool = False) -> tuple[Summary, float]:
    """Build and run every input; returns the summary and the wall time in seconds."""
    import tempfile

    start = time.perf_counter()
    cases = build_cases(QUICK if quick else FULL)
    jobs = jobs or max(1, min(os.cpu_count() or 1, 8))
    with tempfile.TemporaryDirectory(prefix="align-fuzz-") as scratch:
        outcomes = run_cases(cases, jobs, Path(scratch), progress=progress)
    return summarize(cases, outcomes), time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few hundred inputs (what the test suite runs)")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: the CPU count)")
    parser.add_argument("--save", type=Path, default=None, help="write each failing input to this directory")
    args = parser.parse_args(argv)
    summary, seconds = fuzz(args.quick, args.jobs, progress=True)
    print(table(summary))
    for index, case, outcome in summary.failures:
        shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in case.argv)
        print(f"{outcome.status:8} {case.category} #{index}: {outcome.detail}  [{shown!a}]")
    if args.save is not None:
        _save(summary, args.save)
    print(f"wall s: {seconds:.1f}")
    print(summary.last_line)
    return 0 if summary.internal == summary.hangs == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
