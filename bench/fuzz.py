r"""Benchmark (robustness and containment): hostile, mutated and random input through every surface a pull request
controls: spec text and `--arg` values through `align check`, `verify`, `run` and `report`, and the repository
itself: its configuration (`align.toml`, `[tool.align]`), its file names, its symlinks, the command-line values a
workflow passes, and the Markdown, HTML and LaTeX reports. Every input must end in a result or a located
diagnostic with a registered code, in bounded time, without reading or writing outside what it was given.

    python bench/fuzz.py              # full: >= 10,000 inputs through check, >= 500 through verify and run,
                                      # >= 1,000 through the repository surfaces (about four minutes on 2 cores)
    python bench/fuzz.py --quick      # a few hundred check inputs, a few dozen of every other kind
    python bench/fuzz.py --save DIR   # also write each failing input to DIR (DIR/NNNNN_category.json and its tree)
    python bench/fuzz.py --replay DIR/NNNNN_category.json   # run one saved input again
    python bench/fuzz.py --only '^config/'                   # the inputs whose category matches

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
  `--counterexample-out` paths that cannot be written;
- `config/*`: the repository's configuration: `paths` globs that climb out of it (`..` to the canary,
  /etc/passwd, /proc/self/environ), absolute globs, `.`, `**` inside a component, over-long components;
  `timeout = inf`, `nan`, `1e308`, out-of-range `max-length`, hostile `output-format` and key names; TOML
  nested thousands deep, huge, not UTF-8; configuration files that are symlinks, FIFOs or directories;
- `symlinks/*`: symlinks committed in the repository: spec files linked to /etc/passwd, the canary,
  /proc/self/environ, devices, a FIFO, themselves; directory links that make loops (`specs/l1 -> .`) or lead
  out of the repository (`..`, `/`, /etc) under a `**` glob, through every command (`align explain C1` too);
- `names/*`: spec files (and directories) named with newlines, CR, ESC, `::warning::` and `::stop-commands::`,
  `%`, `,`, `:`, backticks, HTML, TeX, leading dashes and bytes that are not UTF-8, through check and verify
  in every output format, the configuration's globs, run, test and the three report formats;
- `cli/*`: command-line values: `--timeout inf|nan|1e308`, `--max-length`, `--seed -1`, `--jobs 100000`,
  `--samples 10^21`, `--length 10^8`, `--executor dask://[::1`, `--alpha nan`, and `-o`, `--plot`,
  `--counterexample`, `--counterexample-out`, `--noise-file` naming a directory, `''`, /dev/full, a symlink
  out of the repository, a dangling symlink, a FIFO or a hostile name;
- `report/inject`: spec comments that try to break out of the reports' listings and formulas (Markdown
  fences, `<img onerror>`, `</pre><script>`, `\end{Verbatim}`, `\input`, `\typeout`, catcodes), in md, html and
  tex, on standard output and with -o.

Each input runs in a fresh temporary directory laid out as an attacker's checkout: `repo/` (`{dir}` in the
command line) is a git repository (a `.git` directory) and the working directory, and beside it, outside the
repository, `canary.dp` holds a secret token that is also the first variable of the worker's environment
(`ALIGN_FUZZ_SECRET`), so that reading a file outside the repository or the process environment
(/proc/self/environ) shows as the token. Each input runs in-process (`align.cli.main(argv, stdout, stderr)`,
both streams UTF-8 as a CI pipe takes them) in a worker process (its own session, started with the canary in
its environment); the parent kills a worker, and everything it started, that runs past the per-input limit (a
*hang*), past the memory limit or past a process count (a fork bomb), and starts a fresh one.

An input is *internal* when the command prints `internal-error` or a traceback, lets an exception escape
`main`, crashes the worker, exceeds the memory or process limit, exits with a code other than 0-3, exits 2
without a diagnostic, prints a code that is not registered, or prints a diagnostic about the spec's text
without a `path:line:col` location.

An input *escapes* when (checks in `escapes`):
- any output (stdout, stderr, every file align wrote) holds the canary token or the first line of /etc/passwd;
- align wrote, changed or removed a file the command line did not name (the trees of the repository and of
  the directory around it compared before and after; a report's figures beside its -o file are named by it);
- a line of the output starts with `::` (or `##[`) and is not one of align's own annotations: a command other
  than `error`, `warning` or `notice`, a property other than file, line, col, endLine, endColumn and title, or
  a `%` that is not one of the escapes (`%25`, `%0D`, `%0A`, and in properties `%3A`, `%2C`), or any line
  begins with the part of a file name after a line break;
- the output has a raw control character (C0 but LF and TAB, DEL, C1, bidi controls);
- a Markdown report, parsed as CommonMark (markdown-it-py), has raw HTML, a link, or an image other than the
  figures align wrote beside it, or its rendering has a `<script` or an `on...` attribute;
- an HTML report has an element or attribute (parsed with html.parser) that align's own reports of benign specs
  do not have (MathML aside), an `on...` attribute, a `javascript:` value or an image that is not inline PNG;
- a LaTeX report has, outside its Verbatim listings, a control sequence taken from the spec, a file name or
  the command line that align's own reports do not use, or an `\end{Verbatim}` that closes no listing (all tex
  reports); and, for a bounded sample (40 in full mode, 3 quick), `pdflatex -no-shell-escape -recorder`
  opens a file outside the TeX installation and the report's own files, writes another file, or prints an
  injected `\typeout`.

Prints a table by category, one line per failing input (status, category, detail and argv), and last
`inputs: N internal: I hangs: H escapes: E`; exits 1 unless all three are 0.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import html.parser
import io
import itertools
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import warnings
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
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
    per_family: int | None
    """The first n inputs of each family of the repository surfaces (config, symlinks, names, cli, report
    injection; each list starts with its known attacks); None: all of them."""
    tex_compiles: int
    """LaTeX reports compiled with pdflatex (the rest get the static check only)."""
    generated: int
    """Inputs of each generated family of the repository surfaces (`_generated_cases`: random file names,
    configurations, report payloads and command-line values, combined from the hostile fragments)."""


FULL = Sizes(check_grammar=3000, check_soup=1500, check_mutate=5100, hostile_every=1,
             verify_grammar=230, verify_mutate=230, run_args=380, run_grammar=60, per_family=None, tex_compiles=40,
             generated=1000)
QUICK = Sizes(check_grammar=100, check_soup=60, check_mutate=120, hostile_every=12,
              verify_grammar=8, verify_mutate=8, run_args=16, run_grammar=6, per_family=3, tex_compiles=3,
              generated=8)

LIMIT_S = {"check": 20.0, "verify": 60.0, "run": 30.0, "report": 60.0, "test": 60.0, "explain": 20.0}
"""Seconds an input may take before it counts as a hang: 20 s as in the issue; verify proves things (up to
a few seconds per solver query), run and test sample."""
VERIFY_OPTIONS = ("--max-length", "1", "--timeout", "2")
RUN_OPTIONS = ("--samples", "200", "--seed", "7")
TEST_OPTIONS = ("--samples", "2000", "--confirm", "0", "--no-checker", "--no-exact")
MEMORY_LIMIT_MB = 3072
"""Resident memory a worker and the processes it started may reach; beyond it the input counts as internal."""
PROCESS_LIMIT = 48
"""Processes a worker may start during one input (a pool of --jobs workers, a local Dask cluster); past it the
harness stops them all and the input counts as internal (`--jobs 100000` would otherwise fork until the
machine has no process ids left)."""

REPO = "repo"
"""The repository: `{dir}` in a command line, the working directory of the command, a git repository."""
CANARY = "canary.dp"
"""Beside the repository, outside it: a file whose only content is the worker's secret token."""
CANARY_ENV = "ALIGN_FUZZ_SECRET"
"""The environment variable with the same token: the first of the worker's environment (/proc/self/environ)."""

# ------------------------------------------------------------------------------------------------ cases


@dataclass(frozen=True)
class Case:
    """One command line, with the files it needs; `{dir}` in argv is the repository (the working directory)."""

    command: str
    """The align command: check, verify, run, report, test or explain."""
    category: str
    """The row of the table, e.g. `check/mutate` (what follows a `:` names the input, not the row)."""
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    """Files to write into the repository first (name, content); a name may have folders (`specs/a.dp`), and
    `../` makes it a file beside the repository."""
    special: tuple[tuple[str, str], ...] = ()
    """Other things to make in the repository (names as in `files`): ("fifo", name), ("dir", name),
    ("symlink", "name=target") with the target written as it is."""
    compile_tex: bool = False
    """A LaTeX report to compile with pdflatex (a bounded sample of them)."""
    limit_s: float | None = None
    """Seconds before it is a hang, when not the command's (`LIMIT_S`)."""

    @property
    def limit(self) -> float:
        return self.limit_s or LIMIT_S[self.command]


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
          ("n", "int[] in 0 .. k + 1"), ("r", "real"))
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
        if draw(st.integers(0, 3)) == 0:  # a release block: what is published, read from `out`
            published = expressions(names + ("out",))
            block = [*draw(st.lists(statements(published, 2), max_size=3)), f"output {draw(published)}"]
            lines.append("release m {\n  " + "\n  ".join(block) + "\n}")
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

    with _no_local_constants():
        collect()
    return examples[:count]


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Hypothesis (6.131+) mixes into its draws the constants of the local modules loaded so far (sys.modules), so
    the same strategy drew other inputs once a test had imported another module of the repository. Within: no local
    constants, and none cached from before (the same inputs in every process). Private names of hypothesis's: where
    they are missing (another version), nothing is patched, and the draws depend on the loaded modules again."""
    try:
        from hypothesis.internal.conjecture import providers
        get, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
    except (ImportError, AttributeError):
        yield
        return
    providers._get_local_constants = lambda: providers.Constants()
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.cache.clear()


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


# ---------------------------------------------------------------------------- the repository's surfaces
# What an attacker's pull request controls besides spec text: the configuration, file names, symlinks, the
# values a workflow passes on the command line (often the changed files' names), and the reports written for
# them. Each list starts with its known attacks: a quick run takes the first few of each (`Sizes.per_family`).

PROVED = "freegap/example1_laplace.dp"
"""Proved in a fraction of a second; one private real and eps (`--arg q=1 --arg eps=1` for run)."""
REFUTED = "incorrect/svt_gap_outputs_noisy_query.dp"
"""C4a refuted: verify annotates the file, report has a counterexample (and a figure with --confirm)."""
BROKEN = b"mechanism m(q: real {\n  output q\n}\n"
"""A syntax error: every format names the file."""
PROVED_ARGS = ("--arg", "q=1", "--arg", "eps=1")
REFUTED_ARGS = ("--arg", "q=[0.5, 2, 1, 3]", "--arg", "T=1", "--arg", "k=2", "--arg", "eps=1", "--arg", "theta=0.5",
                "--neighbour", "q=[1.5, 2, 1, 3]")
FAST_LIMIT_S = 20.0
"""The limit of the surface inputs: their specs are proved or refuted in about a second."""
TEX_MARK = "ALIGN-TEX-42"
"""What an injected `\\typeout{ALIGN-TEX-\\the\\numexpr 6*7\\relax}` prints when TeX runs it (the spec's text has
`\\the\\numexpr`, not 42: seeing the mark means the code ran)."""
TYPEOUT = "\\typeout{ALIGN-TEX-\\the\\numexpr 6*7\\relax}"


def _spec(path: str) -> bytes:
    return (ROOT / "specs" / path).read_bytes()


def _label(text: str) -> str:
    """A short, printable name for a category: the start and the end of a long text."""
    return ascii(text if len(text) <= 40 else text[:18] + "..." + text[-18:])


def _take(items: tuple | list, sizes: Sizes) -> list:
    return list(items) if sizes.per_family is None else list(items)[: sizes.per_family]


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, control characters as \\uXXXX)."""
    return json.dumps(text, ensure_ascii=False)


def _surface(command: str, category: str, argv: tuple[str, ...], files: tuple = (), special: tuple = ()) -> Case:
    return Case(command, category, argv, tuple(files), tuple(special), limit_s=FAST_LIMIT_S)


CLIMB = "../" * 24
"""More `..` than any temporary directory is deep: from the repository up to /."""
GLOBS = (
    "../canary.dp", CLIMB + "etc/passwd", CLIMB + "proc/self/environ", "/etc/passwd", ".", "specs/**x/*.dp",
    "a" * 300 + "/*.dp", "../*.dp", "../*", "../**/*.dp", "./../canary.dp", "specs/../../canary.dp",
    "specs/../../*.dp", "**/../../canary.dp", CLIMB + "etc/pass*", CLIMB + "proc/self/fd/*", CLIMB + "dev/zero",
    CLIMB + "proc/self/cwd/../canary.dp", "/proc/self/environ", "/etc/*", "//etc/passwd", "/",
    "/proc/self/cwd/../canary.dp", "..", "./", "**", "*", "**/", "*/", "specs/a**/*.dp", "specs/***/*.dp",
    "**/**/**/**/**/**/*.dp", "specs//ok.dp", "specs/ok.dp/", "specs/./ok.dp", " specs/ok.dp", "specs/[!a]*.dp",
    "specs/[", "specs/\\*.dp", "~/*", "~root/*", "$HOME/*", "${HOME}/*", "specs/ok.dp\x00", "specs/\n::warning::x.dp",
    "specs/\x1b[2J*.dp", "a/" * 3000 + "*.dp", "x" * 100000, "specs/{ok,x}.dp", "C:\\Windows\\*", "file:///etc/passwd",
)
"""`paths` globs: none may read a file outside the repository, hang, or fail with an internal error."""

CONFIG_VALUES = (
    "timeout = inf", "timeout = 1e308", "timeout = nan", "max-length = 9223372036854775807", "timeout = -inf",
    "timeout = 1.7976931348623157e308", "timeout = 1e-320", "timeout = 5e-324", "timeout = 0.0", "timeout = -0.0",
    "timeout = 9223372036854775807", "timeout = 99999999999999999999", "timeout = 1e20", "timeout = true",
    'timeout = "inf"', "max-length = 0", "max-length = -1", "max-length = 2.0", "max-length = true",
    "max-length = 100000000", 'accept-bounded = "yes"', "accept-bounded = 1", 'output-format = "github\\n"',
    'output-format = "\\u001b[2J"', 'output-format = "::warning::x"', 'output-format = "sarif"',
    'output-format = "github"', 'output-format = "json"', 'output-format = "concise"', 'output-format = "full"',
    'output-format = ""', '"\\u001b[2Jkey" = 1', '"::warning::key" = 1', '"a\\n::warning::b" = 1',
    '"\\r::error::x" = 1', '"%0A::error::x" = 1', 'x = "\\u001b]0;pwned\\u0007"', 'paths = "specs/*.dp"',
    "paths = [1]", "paths = []", 'paths = [""]', 'paths = [[["specs/*.dp"]]]', "paths = {a = 1}",
    'paths = ["specs/*.dp", ' + ", ".join(['"specs/ok.dp"'] * 20000) + "]",
    'output-format = "' + "x" * 100000 + '"', '"' + "k" * 100000 + '" = 1',
)
"""One line of align.toml each (with `paths = ["specs/*.dp"]` unless the line sets paths)."""


def _toml_documents() -> tuple[tuple[str, str, bytes], ...]:
    """(label, file name, content): TOML that is deep, huge, not UTF-8 or wrong in hostile ways."""
    ok = b'paths = ["specs/*.dp"]\n'
    pyproject = b'[project]\nname = "x"\n\n[tool.align]\n'
    return (
        ("array-10000-deep", "align.toml", b"paths = " + b"[" * 10000 + b"]" * 10000 + b"\n"),
        ("inline-table-10000-deep", "align.toml", b"x = " + b"{a = " * 10000 + b"1" + b"}" * 10000 + b"\n"),
        ("not-utf8", "align.toml", b'paths = ["specs/\xff.dp"]\n'),
        ("huge-comment", "align.toml", b"# " + b"x" * (24 << 20) + b"\n" + ok),
        ("huge-pyproject", "pyproject.toml", b"# " + b"x" * (24 << 20) + b"\n" + pyproject + ok),
        ("array-1000-deep", "align.toml", b"paths = " + b"[" * 1000 + b"]" * 1000 + b"\n"),
        ("pyproject-array-10000-deep", "pyproject.toml", pyproject + b"paths = " + b"[" * 10000 + b"]" * 10000),
        ("dotted-key-10000", "align.toml", b"a" + b".a" * 10000 + b" = 1\n"),
        ("table-header-10000", "align.toml", b"[" + b"a." * 10000 + b"a]\n"),
        ("array-of-tables-100000", "align.toml", b"[[a]]\n" * 100000),
        ("huge-string", "align.toml", b'paths = ["' + b"a" * (16 << 20) + b'"]\n'),
        ("many-lines", "align.toml", b"\n" * (4 << 20) + b"paths = [1\n"),
        ("latin-1-comment", "align.toml", b"# caf\xe9\n" + ok),
        ("utf-16", "align.toml", 'paths = ["specs/*.dp"]\n'.encode("utf-16")),
        ("bom", "align.toml", b"\xef\xbb\xbf" + ok),
        ("nul", "align.toml", ok + b"\x00\n"),
        ("cr-only", "align.toml", b'max-length = 1\rpaths = ["specs/*.dp"]\r'),
        ("esc-in-error", "align.toml", b"\x1b[2J\x1b]0;pwned\x07 = = =\n"),
        ("workflow-command-in-error", "align.toml", b"::error file=README.md::pwned\n"),
        ("stop-commands-in-error", "align.toml", b"x = 1\n::stop-commands::fuzztoken\n"),
        ("newline-in-key", "align.toml", b'"a\n::warning::b" = 1\n'),
        ("binary", "align.toml", bytes(range(256)) * 4),
        ("empty", "align.toml", b""),
        ("tool-align-not-a-table", "pyproject.toml", b"[tool]\nalign = 1\n"),
        ("tool-align-in-a-string", "pyproject.toml", b'x = """\n[tool.align]\n"""\n'),
        ("tool-align-twice", "pyproject.toml", pyproject + ok + b"\n[tool.align]\n" + ok),
        ("pyproject-not-utf8", "pyproject.toml", pyproject + b'paths = ["\xff"]\n'),
    )


CONFIG_FILES = (  # (label, special): configuration files that are not regular files of the repository
    ("align.toml -> ../canary.dp", (("symlink", "align.toml=../canary.dp"),)),
    ("align.toml -> /etc/passwd", (("symlink", "align.toml=/etc/passwd"),)),
    ("align.toml -> /proc/self/environ", (("symlink", "align.toml=/proc/self/environ"),)),
    ("align.toml -> /dev/zero", (("symlink", "align.toml=/dev/zero"),)),
    ("align.toml -> a FIFO", (("fifo", "../pipe"), ("symlink", "align.toml=../pipe"))),
    ("align.toml a FIFO", (("fifo", "align.toml"),)),
    ("align.toml a directory", (("dir", "align.toml"),)),
    ("align.toml -> itself", (("symlink", "align.toml=align.toml"),)),
    ("align.toml -> /dev/stdin", (("symlink", "align.toml=/dev/stdin"),)),
    ("align.toml -> /dev/urandom", (("symlink", "align.toml=/dev/urandom"),)),
    ("pyproject.toml -> /proc/self/environ", (("symlink", "pyproject.toml=/proc/self/environ"),)),
    ("pyproject.toml -> /dev/zero", (("symlink", "pyproject.toml=/dev/zero"),)),
    ("pyproject.toml -> a FIFO", (("fifo", "../pipe"), ("symlink", "pyproject.toml=../pipe"))),
    ("pyproject.toml -> ../canary.dp", (("symlink", "pyproject.toml=../canary.dp"),)),
)


def _config_cases(sizes: Sizes) -> list[Case]:
    ok = ("specs/ok.dp", _spec(PROVED))
    cases = []
    for k, glob in enumerate(_take(GLOBS, sizes)):
        line = f"paths = [{_toml(glob)}]\nmax-length = 1\ntimeout = 2\n".encode()
        name, text = ("align.toml", line) if k % 2 == 0 else ("pyproject.toml", b"[tool.align]\n" + line)
        files = (ok, (name, text))
        category = f"config/paths:{_label(glob)}"
        cases.append(_surface("verify", category, ("verify",), files))
        cases.append(_surface("verify", category, ("verify", "--output-format", "github"), files))
        if k % 3 == 0:
            cases.append(_surface("explain", category, ("explain", "C1"), files))
    for k, line in enumerate(_take(CONFIG_VALUES, sizes)):
        document = line if line.startswith("paths") else f'paths = ["specs/*.dp"]\n{line}'
        files = (ok, ("align.toml", (document + "\n").encode()))
        category = f"config/values:{_label(line)}"
        cases.append(_surface("verify", category, ("verify",), files))
        cases.append(_surface("check", category, ("check", "specs/ok.dp"), files))
        if k % 2 == 0:
            cases.append(_surface("report", category, ("report", "specs/ok.dp"), files))
    for label, name, data in _take(_toml_documents(), sizes):
        files = (ok, (name, data))
        cases.append(_surface("verify", f"config/toml:{label}", ("verify", "--output-format", "github"), files))
        cases.append(_surface("check", f"config/toml:{label}", ("check", "specs/ok.dp"), files))
    for label, special in _take(CONFIG_FILES, sizes):
        cases.append(_surface("verify", f"config/files:{label}", ("verify",), (ok,), special))
        cases.append(_surface("check", f"config/files:{label}", ("check", "specs/ok.dp", "--output-format", "github"),
                              (ok,), special))
    return cases


LINKED_SPECS = (  # committed symlinks: specs/leak.dp -> target (and what the target needs)
    ("/etc/passwd", ()), ("../../canary.dp", ()), ("/proc/self/environ", ()), ("/dev/zero", ()),
    ("../../pipe", (("fifo", "../pipe"),)), ("leak.dp", ()), ("/dev/stdin", ()), ("/", ()), ("nowhere.dp", ()),
    ("/proc/self/fd/0", ()), ("/dev/urandom", ()), ("other.dp", (("symlink", "specs/other.dp=leak.dp"),)),
)
LOOPS = (  # (label, special, glob): directory symlinks under a `**` glob, or under one `*` per level
    ("specs/l1 -> .", (("symlink", "specs/l1=."),), "specs/**/*.dp"),
    ("specs/up -> ../.. under */", (("symlink", "specs/up=../.."),), "specs/*/*.dp"),
    ("3 links to . under 14 levels of */", (("symlink", "specs/l1=."), ("symlink", "specs/l2=."),
                                            ("symlink", "specs/l3=.")), "specs/" + "*/" * 14 + "*.dp"),
    ("specs/up -> ../..", (("symlink", "specs/up=../.."),), "specs/**/*.dp"),
    ("specs/etc -> /etc under */", (("symlink", "specs/etc=/etc"),), "specs/*/passwd"),
    ("specs/root -> / under */*/", (("symlink", "specs/root=/"),), "specs/root/*/*"),
    ("specs/etc -> /etc", (("symlink", "specs/etc=/etc"),), "specs/**/*"),
    ("specs/l1 -> ..", (("symlink", "specs/l1=.."),), "specs/**/*.dp"),
    ("specs/a/b/l -> ../..", (("dir", "specs/a/b"), ("symlink", "specs/a/b/l=../..")), "**/*.dp"),
    ("specs/x <-> specs/y", (("symlink", "specs/x=y"), ("symlink", "specs/y=x")), "specs/**/*.dp"),
    ("specs/a/lb <-> specs/b/la", (("dir", "specs/a"), ("dir", "specs/b"), ("symlink", "specs/a/lb=../b"),
                                   ("symlink", "specs/b/la=../a")), "specs/**/*.dp"),
    ("specs/proc -> /proc/self", (("symlink", "specs/proc=/proc/self"),), "specs/**/*.dp"),
    ("specs/root -> /", (("symlink", "specs/root=/"),), "specs/**/*.dp"),
)


def _symlink_cases(sizes: Sizes) -> list[Case]:
    ok = ("specs/ok.dp", _spec(PROVED))
    cases = []
    for target, extra in _take(LINKED_SPECS, sizes):
        special = (*extra, ("symlink", f"specs/leak.dp={target}"))
        config = ("align.toml", b'paths = ["specs/*.dp"]\nmax-length = 1\ntimeout = 2\n')
        category = f"symlinks/files:{target}"
        cases.append(_surface("verify", category, ("verify",), (ok, config), special))
        cases.append(_surface("verify", category, ("verify", "--output-format", "github"), (ok, config), special))
        cases.append(_surface("check", category, ("check", "specs/leak.dp"), (ok,), special))
        cases.append(_surface("report", category, ("report", "specs/leak.dp", *VERIFY_OPTIONS), (ok,), special))
        cases.append(_surface("run", category, ("run", "specs/leak.dp", "--samples", "10", *PROVED_ARGS), (ok,),
                              special))
        cases.append(_surface("test", category, ("test", "specs/leak.dp", *TEST_OPTIONS), (ok,), special))
    for k, (label, special, glob) in enumerate(_take(LOOPS, sizes)):
        config = ("align.toml", f"paths = [{_toml(glob)}]\nmax-length = 1\ntimeout = 2\n".encode())
        category = f"symlinks/loops:{label}"
        cases.append(_surface("verify", category, ("verify",), (ok, config), special))
        if k < 2:  # every command reads the configuration: a loop must not hang `align explain` either
            cases.append(_surface("explain", category, ("explain", "C1"), (ok, config), special))
            cases.append(_surface("check", category, ("check", "specs/ok.dp"), (ok, config), special))
    return cases


HOSTILE_NAMES = (
    "x\n::warning file=README.md::pwned.dp", "``<img src=x onerror=alert(1)>``.dp", "\udcff\udcfe.dp",
    "\x1b]0;pwned\x07\x1b[2J.dp", "x\n::stop-commands::fuzztoken\n.dp", "::stop-commands::fuzztoken.dp",
    "::error::pwned.dp", "x\r::error::pwned.dp", "x\r\n::notice::pwned.dp", "x\n##[error]pwned.dp", "a\nb.dp",
    "x\nalign: error[internal-error]: spoofed.dp", "\x1b[31mred\x1b[0m.dp", "a\x08\x08\x08b.dp", "a\x7fb.dp",
    "a\u202eb.dp", "a\x85b.dp", "a\u2028b.dp", "a\x0bb.dp", "<img src=x onerror=alert(1)>.dp",
    "<script>alert(1)<\u2215script>.dp", "`a`.dp", "``.dp", "a<b>c&amp;d\"e'f.dp", "a%0Ab.dp", "a%25b.dp",
    "100%.dp", "a,b.dp", "a:1:1: error[x]: y.dp", "a b.dp", " lead.dp", "trail .dp", "a=b,c=d.dp", "-o.dp",
    "--output-format=json.dp", "\\input{canary.dp}.dp", TYPEOUT + ".dp", "a}\\end{Verbatim}.dp", "$x^2$.dp",
    "a{b}c%d#e&f_g^h~i.dp", "^^5cinput.dp", "[link](javascript:alert(1)).dp", "*a*_b_.dp", "| x |.dp", "<!--.dp",
    "]]>.dp", "caf\udce9.dp", "\udced\udca0\udc80.dp", "\udcc3.dp", "${{ secrets.GITHUB_TOKEN }}.dp", "$(id).dp",
    "a;b|c&d.dp", "e" * 251 + ".dp", "*.dp", "?.dp", "[a].dp",
)
"""Spec file names (any character but `/` and NUL; `\\udcXX` are bytes that are not UTF-8)."""


def _name_cases(sizes: Sizes) -> list[Case]:
    refuted, proved = _spec(REFUTED), _spec(PROVED)
    config = ("align.toml", b'paths = ["specs/*.dp"]\noutput-format = "github"\nmax-length = 1\ntimeout = 2\n')
    cases = []
    for name in _take(HOSTILE_NAMES, sizes):
        rel = "specs/" + name
        label = f":{_label(name)}"
        for fmt in ("text", "concise", "github", "json", "sarif"):
            cases.append(_surface("check", "names/check" + label, ("check", rel, "--output-format", fmt),
                                  ((rel, BROKEN),)))
        for fmt in ("github", "text"):
            cases.append(_surface("verify", "names/verify" + label,
                                  ("verify", rel, *VERIFY_OPTIONS, "--output-format", fmt), ((rel, refuted),)))
        cases.append(_surface("verify", "names/config" + label, ("verify",), ((rel, refuted), config)))
        for fmt, out in (("md", None), ("html", "report.html"), ("tex", "report.tex")):
            argv = ("report", rel, *VERIFY_OPTIONS, "--format", fmt) + (("-o", out) if out else ())
            cases.append(_surface("report", "names/report" + label, argv, ((rel, refuted),)))
        cases.append(_surface("run", "names/run" + label, ("run", rel, "--samples", "10", *PROVED_ARGS),
                              ((rel, proved),)))
        cases.append(_surface("run", "names/run" + label, ("run", rel, *PROVED_ARGS), ((rel, BROKEN),)))
        cases.append(_surface("test", "names/test" + label, ("test", rel, *TEST_OPTIONS), ((rel, BROKEN),)))
        if re.search(r"[\r\n:]", name):  # a folder with the name: in every path below it
            inner = f"specs/{name.removesuffix('.dp')}/ok.dp"
            cases.append(_surface("check", "names/folder" + label, ("check", inner, "--output-format", "github"),
                                  ((inner, BROKEN),)))
            cases.append(_surface("verify", "names/folder" + label, ("verify",),
                                  ((inner, refuted), ("align.toml", config[1].replace(b"*.dp", b"**/*.dp")))))
    return cases


OUT_TARGETS = (  # (label, the path given, what the repository has): where -o, --counterexample, --plot ... point
    ("symlink out of the repository", "out.x", (("symlink", "out.x=../canary.dp"),)),
    ("directory", ".", ()),
    ("empty", "", ()),
    ("/dev/full", "/dev/full", ()),
    ("dangling symlink out", "out.x", (("symlink", "out.x=../new.x"),)),
    ("folder symlink out", "up/out.x", (("symlink", "up=.."),)),
    ("symlink to /dev/full", "out.x", (("symlink", "out.x=/dev/full"),)),
    ("symlink to a FIFO", "out.x", (("fifo", "../pipe"), ("symlink", "out.x=../pipe"))),
    ("newline name", "a\n::warning::x.x", ()),
    ("dash", "-", ()),
    ("too long", "c" * 300 + ".x", ()),
    ("trailing slash", "out.x/", ()),
    ("missing folder", "no/such/out.x", ()),
)


def _cli_cases(sizes: Sizes) -> list[Case]:
    proved, refuted = _spec(PROVED), _spec(REFUTED)
    files = (("spec.dp", proved), ("refuted.dp", refuted))
    cases: list[Case] = []

    def add(command: str, family: str, label: str, argv: tuple[str, ...], special: tuple = ()) -> None:
        cases.append(_surface(command, f"cli/{family}:{_label(label)}", argv, files, special))

    verify = ("verify", "refuted.dp", "--max-length", "1")
    for value in _take(("inf", "nan", "1e308", "-inf", "-1", "0", "1e-320", "1e20", "9" * 400), sizes):
        add("verify", "verify", f"--timeout {value}", (*verify, "--timeout", value))
    for value in _take(("100000000", "0", "-1", str(2**63), "9" * 400), sizes):
        add("verify", "verify", f"--max-length {value}", ("verify", "spec.dp", "--timeout", "2", "--max-length", value))
    report = ("report", "refuted.dp", *VERIFY_OPTIONS)
    for value in _take(("inf", "nan", "1e308"), sizes):
        add("report", "report", f"--timeout {value}", ("report", "refuted.dp", "--max-length", "1", "--timeout", value))
    for value in _take((str(10**21), "0", "-1"), sizes):
        add("report", "report", f"--confirm-samples {value}", (*report, "--confirm", "--confirm-samples", value))
    figure = (*report, "--confirm", "--confirm-samples", "2000")
    for label, target, special in _take((
            ("figure name breaks the md image", "x)<img src=x onerror=alert(1)>(.md", ()),
            ("figure name in \\includegraphics", "a}" + TYPEOUT + "{.tex", ()),
            ("figure name in html", "x\"><img src=x onerror=alert(1)>.html", ()),
            ("figure through a symlink out", "fig.md", (("symlink", "fig-1.png=../canary.dp"),)),
            ("figure beside a tex report", "fig.tex", ()),
            ("figure beside an html report", "fig.html", ())), sizes):
        add("report", "report", label, (*figure, "-o", target), special)
    run = ("run", "spec.dp", *PROVED_ARGS)
    for extra in _take((("--samples", str(10**21)), ("--seed", "-1"), ("--chunk-size", str(10**21)),
                        ("--seed", str(2**64)), ("--samples", "-1")), sizes):
        add("run", "run", " ".join(extra), (*run, *extra))
    for target in _take(("/proc/self/environ", "../canary.dp", "/etc/passwd", "/dev/zero", "../pipe"), sizes):
        special = ((("fifo", "../pipe"),) if "pipe" in target else ()) + (("symlink", f"noise.json={target}"),)
        add("run", "run", f"--noise-file -> {target}", (*run, "--noise-file", "noise.json"), special)
    test = ("test", "spec.dp", *TEST_OPTIONS)
    for extra in _take((("--jobs", "100000"), ("--samples", str(10**21)), ("--length", str(10**8)),
                        ("--executor", "dask://[::1"), ("--seed", "-1"), ("--jobs", "0"), ("--jobs", "-1"),
                        ("--seed", str(2**64)), ("--samples", "0"), ("--length", "0"), ("--length", str(2**63)),
                        ("--executor", "dask://"), ("--executor", "dask://:"), ("--executor", "dask://host:notaport"),
                        ("--executor", "dask://[::1]:99999"), ("--executor", "dask://\x1b[2J"),
                        ("--executor", "tcp://x"), ("--alpha", "nan"), ("--alpha", "inf"), ("--alpha", "1e-320"),
                        ("--confirm", str(10**9)), ("--confirm", "-1"), ("--mechanism", "\x1b[2J"),
                        ("--mechanism", "a\n::warning::x"), ("--arg", "eps=nan"), ("--arg", "eps=1e308")), sizes):
        add("test", "test", " ".join(extra), (*test, *extra))
    for value in _take(("a\n::warning::x", "\x1b[2J", "", "x" * 100000, "::stop-commands::fuzztoken"), sizes):
        add("explain", "explain", value, ("explain", value))
    for label, target, special in _take(OUT_TARGETS, sizes):
        md, json_ = target.replace(".x", ".md"), target.replace(".x", ".json")
        special_md = tuple((k, v.replace(".x", ".md")) for k, v in special)
        special_json = tuple((k, v.replace(".x", ".json")) for k, v in special)
        add("report", "out", f"report -o {label}", (*report, "-o", md), special_md)
        add("verify", "out", f"verify --counterexample {label}",
            ("verify", "refuted.dp", *VERIFY_OPTIONS, "--counterexample", json_), special_json)
        add("run", "out", f"run --counterexample-out {label}",
            ("run", str(ROOT / "specs" / REFUTED), *REFUTED_ARGS, "--check-alignment", "--samples", "2000",
             "--counterexample-out", json_), special_json)
        png = target.replace(".x", ".png")
        add("test", "out", f"test --plot {label}", (*test, "--plot", png),
            tuple((k, v.replace(".x", ".png")) for k, v in special))
        add("test", "out", f"test --counterexample {label}", (*test, "--counterexample", json_), special_json)
    return cases


PAYLOADS = (
    "\\end{Verbatim}\\input{../canary.dp}" + TYPEOUT, "``` <img src=x onerror=alert(1)>",
    "</pre><script>alert(1)</script>", "\\end{Verbatim}", "\\input{/etc/hostname}",
    "\\immediate\\write18{id}\\immediate\\openout1=pwned.tex", "\\catcode`\\#=0 #input ../canary.dp",
    "^^5cinput{../canary.dp}", "\\csname input\\endcsname{../canary.dp}", "$\\input{../canary.dp}$",
    "$$ " + TYPEOUT + " $$", "```", "````", "~~~", "<img src=x onerror=alert(1)>", "<a href=javascript:alert(1)>x</a>",
    "<!-- ", "]]> <![CDATA[", "&lt;script&gt;", "[x](javascript:alert(1)) ![y](x) <https://example.invalid>",
    "| a | b |", "\\", "%", "\x1b[2J\x1b]0;pwned\x07", "\r::warning::pwned", "\u202e", "\x0c",
)
"""Comment text that tries to leave a report's listing (each on one comment line, in four places of a spec)."""


def _inject(data: bytes, payload: str) -> bytes:
    """The spec with `# payload` before it, inside its mechanism and alignment blocks, and after it."""
    out, blocks = [f"# {payload}"], 0
    for line in data.decode().rstrip("\n").split("\n"):
        out.append(line)
        if blocks < 2 and line.rstrip().endswith("{") and not line.lstrip().startswith(("#", "for", "if")):
            out.append(f"  # {payload}")
            blocks += 1
    out.append(f"# {payload}")  # the last line, without a newline
    return "\n".join(out).encode()


def _report_cases(sizes: Sizes) -> list[Case]:
    proved, refuted = _spec(PROVED), _spec(REFUTED)
    cases = []
    for payload in _take(PAYLOADS, sizes):
        category = f"report/inject:{_label(payload)}"
        for fmt in ("md", "html", "tex"):
            files = (("spec.dp", _inject(proved, payload)),)
            cases.append(_surface("report", category, ("report", "spec.dp", *VERIFY_OPTIONS, "--format", fmt), files))
            cases.append(_surface("report", category, ("report", "spec.dp", *VERIFY_OPTIONS, "-o", f"report.{fmt}"),
                                  files))
            cases.append(_surface("report", category, ("report", "spec.dp", *VERIFY_OPTIONS, "-o", f"report.{fmt}"),
                                  (("spec.dp", _inject(refuted, payload)),)))
    return cases


FRAGMENTS = (
    "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u2028", "\u202e", "\u2066", "\x1b[2J", "\x1b]0;pwned\x07", "\x08",
    "\x7f", "\t", " ", "::warning::", "::error file=README.md::", "::stop-commands::fuzztoken", "::add-mask::x",
    "##[error]", "##[group]", "align: error[internal-error]: ", "`", "``", "```", "~~~", "<img src=x onerror=alert(1)>",
    "</pre>", "<script>", "&amp;", "[x](javascript:alert(1))", "![y](x)", "\\input{../canary.dp}", "\\end{Verbatim}",
    TYPEOUT, "^^5c", "%", "%0A", "%25", "{", "}", "#", "$", "&", "_", "^", "~", "|", ",", ":", ";", "=", "*", "?",
    "[a]", "..", "-", "--", "$(id)", "${{ secrets.X }}", "\udcff", "\udce9", "caf\u00e9", "\u03b5", "\u2264", "e" * 60,
)
"""Pieces of hostile text, combined at random into file names, configuration values, spec comments and
command-line values by `_generated_cases`."""

NUMERIC_OPTIONS = (  # (command line before the option, the option): every numeric option of every command
    (("verify", "refuted.dp"), "--timeout"), (("verify", "refuted.dp", "--timeout", "2"), "--max-length"),
    (("verify", "refuted.dp", *VERIFY_OPTIONS, "--confirm"), "--confirm-samples"),
    (("report", "spec.dp", "--max-length", "1"), "--timeout"),
    (("report", "spec.dp", "--timeout", "2"), "--max-length"),
    (("run", "spec.dp", *PROVED_ARGS), "--samples"), (("run", "spec.dp", *PROVED_ARGS), "--seed"),
    (("run", "spec.dp", *PROVED_ARGS), "--chunk-size"), (("test", "spec.dp", *TEST_OPTIONS), "--jobs"),
    (("test", "spec.dp", "--confirm", "0", "--no-checker", "--no-exact"), "--samples"),
    (("test", "spec.dp", *TEST_OPTIONS), "--length"), (("test", "spec.dp", *TEST_OPTIONS), "--seed"),
    (("test", "spec.dp", *TEST_OPTIONS), "--alpha"),
    (("test", "spec.dp", "--samples", "2000", "--no-exact"), "--confirm"),
)
NUMBERS = ("0", "-0", "1", "-1", "2", "0.5", "1e-320", "5e-324", "1e308", "1e309", "-1e308", "inf", "-inf", "nan",
           "NaN", "Infinity", "1_000", "0x10", "1e3", " 7 ", "", "9" * 30, "9" * 5000, str(2**63), str(2**64),
           str(2**128), str(10**21), "1/2", "2^10", "1e", ".", "+1", "--1")


def _random_text(rng: random.Random, pieces: int) -> str:
    return "".join(rng.choice(FRAGMENTS + ("a", "b", "x", "spec")) for _ in range(pieces))


def _random_name(rng: random.Random) -> str:
    """A file name of hostile pieces (any character but `/` and NUL; `\\udcXX` is a byte that is not UTF-8)."""
    name = _random_text(rng, rng.randint(1, 4)).replace("/", "_") + ".dp"
    return name if len(name.encode("utf-8", "surrogateescape")) <= 255 else name[-200:]


def _generated_cases(sizes: Sizes) -> list[Case]:
    """Random combinations of the hostile pieces on each surface (seeded): spec file names through every command
    and format, configuration files, spec comments in the three report formats, numeric option values."""
    rng = random.Random(20261206)
    proved, refuted = _spec(PROVED), _spec(REFUTED)
    cases: list[Case] = []
    for _ in range(sizes.generated):
        name = _random_name(rng)
        rel = "specs/" + name
        label = f":{_label(name)}"
        choice = rng.randrange(6)
        if choice < 2:
            fmt = rng.choice(("text", "concise", "github", "json", "sarif"))
            cases.append(_surface("check", "names/generated" + label, ("check", rel, "--output-format", fmt),
                                  ((rel, BROKEN),)))
        elif choice < 4:
            fmt = rng.choice(("text", "concise", "github", "sarif"))
            cases.append(_surface("verify", "names/generated" + label,
                                  ("verify", rel, *VERIFY_OPTIONS, "--output-format", fmt), ((rel, refuted),)))
        elif choice == 4:
            config = ("align.toml", b'paths = ["specs/*.dp"]\noutput-format = "github"\nmax-length = 1\n')
            cases.append(_surface("verify", "names/generated" + label, ("verify",), ((rel, refuted), config)))
        else:
            fmt = rng.choice(("md", "html", "tex"))
            cases.append(_surface("report", "names/generated" + label, ("report", rel, *VERIFY_OPTIONS, "--format",
                                                                          fmt), ((rel, BROKEN if rng.random() < .7
                                                                                  else refuted),)))
    ok = ("specs/ok.dp", proved)
    for k in range(sizes.generated):
        lines = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.randrange(4)
            if kind == 0:
                glob = rng.choice(GLOBS) if rng.random() < .3 else "/".join(
                    rng.choice(("specs", "*", "**", "..", ".", "ok.dp", "*.dp", _random_text(rng, 1)))
                    for _ in range(rng.randint(1, 5)))
                lines.append(f"paths = [{_toml(glob)}]")
            elif kind == 1:
                lines.append(rng.choice(CONFIG_VALUES[:-3]))
            elif kind == 2:
                lines.append(f"{_toml(_random_text(rng, 2))} = {_toml(_random_text(rng, 2))}")
            else:
                key = rng.choice(("timeout", "max-length", "accept-bounded", "output-format"))
                lines.append(f"{key} = {rng.choice(NUMBERS[:14])}" if rng.random() < .7 else
                             f"{key} = {_toml(_random_text(rng, 2))}")
        text = "\n".join(lines) + "\n"
        name, data = ("align.toml", text) if k % 2 == 0 else ("pyproject.toml", "[tool.align]\n" + text)
        argv = rng.choice((("verify",), ("verify", "--output-format", "github"), ("explain", "usage"),
                           ("check", "specs/ok.dp", "--output-format", "concise")))
        cases.append(_surface(argv[0], f"config/generated:{_label(text)}", argv,
                              (ok, (name, data.encode("utf-8", "surrogateescape")))))
    for _ in range(sizes.generated // 2):
        payload = _random_text(rng, rng.randint(1, 5)).replace("\n", " ").replace("\r", " ")
        payload = payload.encode("utf-8", "replace").decode()  # a spec is text: no bytes that are not UTF-8
        fmt = rng.choice(("md", "html", "tex"))
        spec = _inject(refuted if rng.random() < .2 else proved, payload)
        argv = ("report", "spec.dp", *VERIFY_OPTIONS) + (("-o", f"report.{fmt}") if rng.random() < .5 else
                                                          ("--format", fmt))
        cases.append(_surface("report", f"report/generated:{_label(payload)}", argv, (("spec.dp", spec),)))
    files = (("spec.dp", proved), ("refuted.dp", refuted))
    for _ in range(sizes.generated):
        before, option = rng.choice(NUMERIC_OPTIONS)
        value = rng.choice(NUMBERS) if rng.random() < .8 else _random_text(rng, 2)
        cases.append(_surface(before[0], f"cli/generated:{option} {_label(value)}", (*before, option, value), files))
    return cases


def _surface_cases(sizes: Sizes) -> list[Case]:
    """Every input of the repository's surfaces; a bounded sample of the LaTeX reports is compiled."""
    cases = _config_cases(sizes) + _symlink_cases(sizes) + _name_cases(sizes) + _cli_cases(sizes)
    cases += _report_cases(sizes) + _generated_cases(sizes)
    # The sample: first the reports written with -o of the payloads with TeX in them, then evenly spread.
    tex = [k for k, c in enumerate(cases) if c.command == "report" and _is_tex_report(c.argv)]
    first = [k for k in tex if cases[k].category.startswith("report/inject:") and "\\" in cases[k].category
             and "-o" in cases[k].argv][: sizes.tex_compiles]
    rest = [k for k in tex if k not in first]
    wanted = min(len(rest), sizes.tex_compiles - len(first))
    for k in first + [rest[i * len(rest) // wanted] for i in range(wanted)]:
        cases[k] = replace(cases[k], compile_tex=True)
    return cases


def _is_tex_report(argv: tuple[str, ...]) -> bool:
    """Whether `align report` writes LaTeX (`--format tex`, or `-o` ending in .tex)."""
    for option, value in itertools.pairwise(argv):
        if option == "--format":
            return value == "tex"
    out = next((v for o, v in itertools.pairwise(argv) if o in ("-o", "--output")), "")
    return out.lower().endswith(".tex")


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
    return cases + _surface_cases(sizes)


# ----------------------------------------------------------------------------------------- classifying

HEADLINE = re.compile(r"^(?!\s*\d*\s*\|).*?(?:error|warning)\[[^\]]*\]: .*$", re.MULTILINE)
"""A line that holds a diagnostic's headline somewhere (never a source line of an excerpt, `12 | ...`, which may
hold anything); `_headline` finds where its location ends."""
CANDIDATE = re.compile(r"(?:error|warning)\[(?P<code>[^\]]*)\]: ")
"""A diagnostic's first line; the location is the longest prefix (a file name may itself look like a diagnostic)."""
LOCATED = re.compile(r":\d+:\d+$")
INTERNAL = re.compile(r"error\[internal-error\]: internal error|\"(?:code|ruleId)\": \"internal-error\"|"
                      r"title=align%3A internal-error::")
"""An internal error in the text formats, JSON and SARIF (whose rules list the code: that is not one), GitHub."""
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FILE_LEVEL = {"io-error", "file-too-large", "usage", "write-error", "outside-repository"}
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
    if INTERNAL.search(text):
        line = next((ln for ln in text.splitlines() if INTERNAL.search(ln)), "internal-error")
        return line.strip()[:300]
    if code not in (0, 1, 2, 3):
        return f"exit code {code}"
    headlines = [m.group() for m in HEADLINE.finditer(err)]
    unlocated_ok = FILE_LEVEL | (RUNTIME if command in ("run", "test") else set())
    for line in headlines:
        problem = _headline_problem(line, unlocated_ok)
        if problem is not None:
            return problem
    if code == 2 and not headlines and '"code"' not in out and "error[" not in text and \
            not re.search(r"^::error ", out, re.MULTILINE) and '"level": "error"' not in out:
        return "exit 2 without a diagnostic"
    return None


def _headline_problem(line: str, unlocated_ok: set[str]) -> str | None:
    """What is wrong with a diagnostic's first line, or None. Both the path before the code and the message after
    it may quote `error[...]: ` (a file named `a:1:1: error[x]: y.dp`, a configuration key): the line is right
    when one of its `error[CODE]: ` is a registered code with a location (or one that needs none)."""
    found = None
    for match in CANDIDATE.finditer(line):
        where, name = line[: match.start()].removesuffix(": "), match.group("code")
        if name not in CODES and name != "usage":
            found = found or f"unregistered code {name!r}"
        elif LOCATED.search(where) or name in unlocated_ok:
            return None
        else:
            found = found or f"no location: {line[:200]}"
    return found


# ----------------------------------------------------------------------------------------------- escapes

ANNOTATION = re.compile(r"::(?P<command>[^ :]*)(?: (?P<properties>[^:]*))?::(?P<message>.*)", re.DOTALL)
ANNOTATION_COMMANDS = {"error", "warning", "notice"}
ANNOTATION_PROPERTIES = {"file", "line", "col", "endLine", "endColumn", "title"}
BAD_MESSAGE_ESCAPE = re.compile(r"%(?!25|0D|0A)")
BAD_PROPERTY_ESCAPE = re.compile(r"%(?!25|0D|0A|3A|2C)")
LINE_BREAK = re.compile("\r\n|[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What ends a line for str.splitlines (a log viewer may break at any of them)."""
MATHML = {"math", "mi", "mn", "mo", "mrow", "mfrac", "msqrt", "mroot", "msup", "msub", "msubsup", "mtext", "mspace",
          "mfenced", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "munder", "mover",
          "munderover", "semantics", "annotation", "ms"}
MATHML_ATTRIBUTES = {"", "display", "mathvariant", "stretchy", "fence", "separators", "open", "close", "linethickness",
                     "columnalign", "lspace", "rspace", "notation", "form", "accent", "movablelimits", "largeop",
                     "symmetric", "encoding", "xmlns"}
TEX_ROOTS = ("/usr/share/texlive/", "/usr/share/texmf/", "/usr/share/texmf-dist/", "/usr/share/texmf-texlive/",
             "/var/lib/texmf/", "/etc/texmf/", "/usr/local/texlive/", "/usr/local/share/texmf/", "/dev/null")
"""Where pdflatex may read besides the report's own files (its installation); with `kpsewhich`'s TEXMFVAR etc."""


def workflow_command_problem(text: str, names: list[str]) -> str | None:
    """Why the output could steer GitHub Actions (a workflow command that is not one of align's annotations, or
    a line that a file name's line break began), or None."""
    fragments = {f.strip() for name in names for f in LINE_BREAK.split(name)[1:] if len(f.strip()) >= 2}
    for line in re.split(r"\r\n|\r|\n", text):
        stripped = line.lstrip()
        if stripped.startswith("##["):
            return f"a line starts a workflow command: {stripped[:80]!a}"
        if stripped.startswith("::"):
            m = ANNOTATION.fullmatch(stripped)
            if m is None or m.group("command") not in ANNOTATION_COMMANDS:
                return f"a workflow command that is not an annotation of align's: {stripped[:80]!a}"
            if m.group("properties") is None:
                return f"a workflow command without the properties of align's annotations: {stripped[:80]!a}"
            for prop in m.group("properties").split(","):
                key, eq, value = prop.partition("=")
                if not eq or key not in ANNOTATION_PROPERTIES or BAD_PROPERTY_ESCAPE.search(value):
                    return f"an annotation with an unescaped property {prop[:60]!a}: {stripped[:80]!a}"
            if BAD_MESSAGE_ESCAPE.search(m.group("message")):
                return f"an annotation with an unescaped message: {stripped[:80]!a}"
        for fragment in fragments:
            if stripped.startswith(fragment):
                return f"a line begins with text from a file name: {stripped[:80]!a}"
    return None


class _Elements(html.parser.HTMLParser):
    """Every element, attribute and comment of an HTML text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))

    def handle_comment(self, data: str) -> None:
        self.found.append(("!--", []))

    def handle_pi(self, data: str) -> None:
        self.found.append(("?", []))


def html_elements(text: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Elements()
    parser.feed(text)
    parser.close()
    return parser.found


def html_problem(text: str, baseline: set[tuple[str, str]],
                 figures: set[str] | frozenset[str] = frozenset()) -> str | None:
    """Why an HTML text (a report, or a Markdown report's rendering) has markup that align's own reports of benign
    specs do not have (`baseline`: (element, attribute) pairs, attribute "" for the element itself; empty: not
    compared), or None."""
    for tag, attrs in html_elements(text):
        for name, value in attrs:
            value = (value or "").strip()
            if name.startswith("on") or value.lower().startswith(("javascript:", "vbscript:")):
                return f"an injected attribute: <{tag} {name}={value[:40]!a}>"
        if tag in ("script", "iframe", "object", "embed", "base", "!--", "?") or (
                baseline and (tag, "") not in baseline and tag not in MATHML):
            return f"an element that align does not write: <{tag}>"
        for name, value in attrs:
            value = (value or "").strip()
            if tag == "img" and name == "src" and not (value.startswith("data:image/png;base64,") or value in figures):
                return f"an image that align did not write: <img src={value[:60]!a}>"
            if baseline and (tag, name) not in baseline and not (tag in MATHML and name in MATHML_ATTRIBUTES):
                return f"an attribute that align does not write: <{tag} {name}>"
    return None


def markdown_problem(text: str, figures: set[str], baseline: set[tuple[str, str]]) -> str | None:
    """Why a Markdown report, parsed as CommonMark, has markup that its text injected: raw HTML, a link, an image
    other than align's figures; or its rendering has an element that align's rendered reports do not have."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    stack = list(tokens)
    while stack:
        token = stack.pop()
        stack.extend(token.children or ())
        if token.type in ("html_block", "html_inline"):
            return f"raw HTML in the Markdown report: {token.content.strip()[:80]!a}"
        if token.type == "link_open":
            return f"a link in the Markdown report: {str(token.attrs.get('href'))[:80]!a}"
        if token.type == "image" and token.attrs.get("src") not in figures:
            return f"an image that align did not write in the Markdown report: {str(token.attrs.get('src'))[:80]!a}"
    return html_problem(md.renderer.render(tokens, md.options, {}), baseline, figures)


CONTROL_SEQUENCE = re.compile(r"\\([A-Za-z@]+)")


def _outside_verbatim(text: str) -> tuple[str, str | None]:
    """The text of a LaTeX document outside its Verbatim listings (fancyvrb's rule: a listing ends at the first
    line that has `\\end{Verbatim}` anywhere; the rest of that line counts as outside), and why the listings are
    wrong, if they are."""
    parts, inside = [], False
    for line in text.split("\n"):
        if inside:
            if "\\end{Verbatim}" in line:
                inside = False
                parts.append(line.split("\\end{Verbatim}", 1)[1])
            continue
        if "\\end{Verbatim}" in line:
            return "", f"`\\end{{Verbatim}}` that closes no listing: {line[:80]!a}"
        if "\\begin{Verbatim}" in line:
            parts.append(line.split("\\begin{Verbatim}", 1)[0])
            inside = True
            continue
        parts.append(line)
    return "\n".join(parts), ("a listing that is never closed" if inside else None)


def tex_problem(text: str, hostile: list[str], vocabulary: set[str]) -> str | None:
    """Why a LaTeX report lets a control sequence of the spec, a file name or the command line (`hostile`) run:
    one that align's own reports never use (`vocabulary`) appears outside the listings, or a listing is broken."""
    outside, broken = _outside_verbatim(text)
    if broken:
        return broken
    injected = {name for source in hostile for name in CONTROL_SEQUENCE.findall(source)} - vocabulary
    for name in sorted(injected):
        if re.search(r"\\" + re.escape(name) + r"(?![A-Za-z@])", outside):
            return f"`\\{name}` from the input appears raw in the LaTeX report"
    if any("^^" in source for source in hostile) and "^^" in outside:
        return "`^^` from the input appears raw in the LaTeX report"
    return None


@functools.cache
def _tex_roots() -> tuple[str, ...]:
    roots = list(TEX_ROOTS)
    for var in ("TEXMFVAR", "TEXMFCONFIG", "TEXMFHOME", "TEXMFSYSVAR", "TEXMFSYSCONFIG", "TEXMFLOCAL", "TEXMFDIST"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            value = subprocess.run(["kpsewhich", f"-var-value={var}"], capture_output=True, text=True,
                                   timeout=20).stdout.strip()
            roots += [v.rstrip("/") + "/" for v in value.split(":") if v.startswith("/")]
    return tuple(roots)


def tex_compile_problem(text: str, folder: Path, figures: set[str]) -> str | None:
    """Compile a LaTeX report (a copy named fuzz-compile.tex beside it, so that no file name reaches pdflatex's
    command line) and say what it did that the report should not make it do."""
    job = "fuzz-compile"
    (folder / f"{job}.tex").write_text(text, encoding="utf-8", errors="replace")
    try:
        proc = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-recorder", f"{job}.tex"],
                              cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, timeout=40)
    except subprocess.TimeoutExpired:
        return "pdflatex ran past 40 s on the report"
    log = proc.stdout.decode("utf-8", "replace")
    with contextlib.suppress(OSError):
        log += (folder / f"{job}.log").read_text(errors="replace")
    problems = ["pdflatex ran an injected \\typeout"] if TEX_MARK in log else []
    try:
        recorded = (folder / f"{job}.fls").read_text(errors="replace").splitlines()
    except OSError:
        recorded = []  # pdflatex stopped before it recorded anything
    pwd = str(folder)
    own_inputs = {f"{job}.tex", f"{job}.aux", f"{job}.out", *figures}
    for line in recorded:
        kind, _, name = line.partition(" ")
        if kind == "PWD":
            pwd = name
        elif kind in ("INPUT", "OUTPUT"):
            path = os.path.normpath(os.path.join(pwd, name))
            mine = os.path.dirname(path) == os.path.normpath(str(folder))
            base = os.path.basename(path)
            if kind == "INPUT" and not ((mine and base in own_inputs) or path.startswith(_tex_roots())):
                problems.append(f"pdflatex read {path!a}")
            if kind == "OUTPUT" and not (mine and base in {f"{job}.{s}" for s in ("log", "aux", "pdf", "out")}):
                problems.append(f"pdflatex wrote {path!a}")
    return "; ".join(dict.fromkeys(problems)) or None


def _snapshot(top: Path) -> dict[str, tuple]:
    """Every file, folder and link below `top` (links not followed): what it is, and for files their size,
    modification time and inode, for links their target."""
    entries: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            kind = stat.S_IFMT(info.st_mode)
            if stat.S_ISDIR(kind):
                entries[path] = (kind,)
            elif stat.S_ISLNK(kind):
                entries[path] = (kind, os.readlink(path))
            else:
                entries[path] = (kind, info.st_size, info.st_mtime_ns, info.st_ino)
    return entries


def _option_values(argv: list[str], *options: str) -> list[str]:
    values = [v for o, v in itertools.pairwise(argv) if o in options]
    return values + [a.split("=", 1)[1] for a in argv if a.startswith(tuple(o + "=" for o in options))]


def _named(argv: list[str], repo: Path) -> tuple[set[str], set[str]]:
    """The paths the command line names (each argument, as a path from the working directory), and among them the
    figures a report writes beside its -o file (`report.document.figure_name`: STEM-1.png, ..., the stem reduced
    to ASCII letters, digits, `-` and `_`, as docs/report.md documents)."""
    from align.report.document import figure_name

    named = {os.path.normpath(os.path.join(repo, a.split("=", 1)[-1] if a.startswith("--") else a))
             for a in argv if a and "\x00" not in a}
    figures = set()
    for out in _option_values(argv, "-o", "--output"):
        stem = os.path.splitext(out)[0]
        for k in range(1, 10):
            figures.add(os.path.normpath(os.path.join(repo, os.path.dirname(out),
                                                      figure_name(os.path.basename(stem), k))))
    return named | figures, figures


def _shown(path: str, outside: Path) -> str:
    rel = os.path.relpath(path, outside)
    return ascii(rel if not rel.startswith("..") else path)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(64 << 20)
    except OSError:
        return b""


def escapes(case: Case, argv: list[str], repo: Path, outside: Path, out: str, err: str,
            before: dict[str, tuple], after: dict[str, tuple], secrets_: list[bytes],
            baseline: dict[str, Any]) -> str | None:
    """Why this input escaped (module docstring), or None."""
    named, figure_paths = _named(argv, repo)
    written = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    files = [p for p in written if p in after and stat.S_ISREG(after[p][0])]
    for where, data in [("stdout", out.encode("utf-8", "replace")), ("stderr", err.encode("utf-8", "replace"))] + \
            [(_shown(p, outside), _read(p)) for p in files]:
        for secret in secrets_:
            if secret in data:
                shown = "the canary token" if secret is secrets_[0] else "the first line of /etc/passwd"
                return f"{shown} in {where}"
    for entry in written:
        if entry not in named:
            verb = "removed" if entry not in after else "changed" if entry in before else "wrote"
            return f"{verb} {_shown(entry, outside)}, which the command line did not name"
    names = [n for n, _ in case.files] + [s.split("=", 1)[0] for _, s in case.special] + list(argv)
    problem = workflow_command_problem(out + "\n" + err, names)
    if problem:
        return problem
    raw = RAW_CONTROL.search(out + err)
    if raw is not None:
        return f"raw control character {raw.group()!r} in the output"
    if case.command != "report":
        return None
    outs = _option_values(argv, "-o", "--output")
    path: str | None = os.path.normpath(os.path.join(repo, outs[-1])) if outs else None
    text = out if path is None else _read(path).decode("utf-8", "replace") if path in files else ""
    if not text.strip():
        return None
    figures = {os.path.basename(p) for p in files if p in figure_paths}
    hostile = [data.decode("utf-8", "replace") for _, data in case.files if len(data) < 1 << 20] + names
    if text.startswith("<!DOCTYPE") or text.startswith("<style>"):
        problem = html_problem(text, {tuple(p) for p in baseline.get("html", ())}, figures)
    elif text.startswith("\\documentclass"):
        problem = tex_problem(text, hostile, set(baseline.get("tex", ())))
        if case.compile_tex and shutil.which("pdflatex"):  # the sample: what TeX does with it, even when flagged
            compiled = tex_compile_problem(text, Path(path).parent if path else repo, figures)
            problem = "; ".join(p for p in (problem, compiled) if p) or None
    else:
        problem = markdown_problem(text, figures, {tuple(p) for p in baseline.get("md", ())})
    return problem


def _baseline() -> dict[str, Any]:
    """What align's own reports of benign specs have: the (element, attribute) pairs of HTML reports and of Markdown
    reports rendered by markdown-it, and the control sequences of LaTeX reports (with a figure: --confirm).

    Each spec is verified once, as `align report` with these options verifies it (its parser, `proof_options`,
    `verify`, `confirm`), and its one result is rendered in the three formats, by the writer `align report -o`
    calls (`render`): a third of the proofs of one `align report` per format, the same texts."""
    from markdown_it import MarkdownIt

    from align.cli import _build_parser
    from align.commands.verify import confirm, proof_options
    from align.pipeline import read, resolve_source, select, verify
    from align.report import render
    from align.status import Status

    pairs: dict[str, set[tuple[str, str]]] = {"html": set(), "md": set()}
    vocabulary: set[str] = set()
    runs = [(PROVED, ()), ("freegap/alg2_svt_gap.dp", ()), ("freegap/alg4_noisy_top_k_gap.dp", ()),
            (REFUTED, ("--confirm", "--confirm-samples", "2000"))]
    parser, _ = _build_parser(io.StringIO())
    for k, (spec, extra) in enumerate(runs):
        path = str(ROOT / "specs" / spec)
        args = parser.parse_args(["report", path, *VERIFY_OPTIONS, *extra])
        source = read(path)
        result = verify(select(resolve_source(source), None, path), proof_options(args), source=source)
        if args.confirm and result.status == Status.REFUTED:
            result = replace(result, confirmation=confirm(result, args.confirm_samples))
        for fmt in ("html", "md", "tex"):
            text, _ = render(result, fmt, source, path, figure_stem=f"base{k}")
            if fmt == "tex":
                vocabulary |= set(CONTROL_SEQUENCE.findall(text))
                continue
            if fmt == "md":
                text = MarkdownIt("commonmark").enable("table").render(text)
            for tag, attrs in html_elements(text):
                pairs[fmt].add((tag, ""))
                pairs[fmt] |= {(tag, name) for name, _ in attrs}
    return {"html": sorted(pairs["html"]), "md": sorted(pairs["md"]), "tex": sorted(vocabulary)}


# --------------------------------------------------------------------------------------------- workers


def _prepare(case: Case, outside: Path, token: str) -> Path:
    """A fresh checkout at `outside`: the canary, and the repository (a git repository) with the case's files."""
    if outside.exists() or outside.is_symlink():
        shutil.rmtree(outside, ignore_errors=True)
    outside.mkdir(parents=True)
    (outside / CANARY).write_text(token + "\n")
    repo = outside / REPO
    for folder in ("objects", "refs/heads"):  # what git itself needs to call a folder a repository
        (repo / ".git" / folder).mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for name, data in case.files:
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for kind, arg in case.special:
        name, _, target = arg.partition("=")
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir(exist_ok=True)
        elif kind == "symlink":
            os.symlink(target, path)
    return repo


_WORKER: dict[str, Any] = {}
"""The worker's own state: its folder, token, secrets and the reports' baseline."""


def _execute(case: Case, base: Path) -> tuple[str | None, str | None, float, str]:
    """Run one input in a fresh checkout: (why it is internal, why it escaped, seconds, stderr when it failed)."""
    from align.cli import main

    outside = base / "case"
    repo = _prepare(case, outside, _WORKER["token"])
    before = _snapshot(outside)
    argv = [a.replace("{dir}", str(repo)) for a in case.argv]
    # UTF-8 streams as a CI pipe takes them: stdout strict (a lone surrogate fails there), stderr backslashreplace
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace", write_through=True)
    internal = None
    os.chdir(repo)
    start = time.perf_counter()
    try:
        code = main(argv, out, err)
    except BaseException as error:  # noqa: BLE001 - anything that escapes main is the finding
        code, internal = 0, f"{type(error).__name__} escaped main: {error}"[:300]
    finally:
        seconds = time.perf_counter() - start
        os.chdir(base)
    with contextlib.suppress(ValueError, OSError):
        out.flush()
        err.flush()
    stdout, stderr = out_bytes.getvalue().decode("utf-8", "replace"), err_bytes.getvalue().decode("utf-8", "replace")
    internal = internal or classify(case.command, code, stdout, stderr)
    try:
        escape = escapes(case, argv, repo, outside, stdout, stderr, before, _snapshot(outside), _WORKER["secrets"],
                         _WORKER["baseline"])
    except Exception as error:  # noqa: BLE001 - a check that fails is reported, not a dead worker
        escape = f"the escape checks failed: {type(error).__name__}: {error}"[:300]
    return internal, escape, seconds, (stderr[:2000] if internal or escape else "")


def _fork_guard() -> None:
    """os.register_at_fork: a command that forks past PROCESS_LIMIT (a pool of --jobs 100000) is stopped here,
    with every process it started, before it takes the machine's process ids."""
    _WORKER["forks"] = _WORKER.get("forks", 0) + 1
    if _WORKER["forks"] > PROCESS_LIMIT:
        with contextlib.suppress(OSError):
            (_WORKER["base"] / "stopped").write_text(f"started more than {PROCESS_LIMIT} processes (stopped)")
        os.killpg(0, signal.SIGKILL)


def _worker_main(fd: int, base: str, baseline: str) -> None:
    """A worker: `python bench/fuzz.py --worker FD BASE BASELINE`, talking to the parent over the socket FD."""
    from multiprocessing.connection import Connection

    warnings.simplefilter("ignore")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import align.checker.verify
    import align.cli
    import align.commands.run
    import align.interp.scalar  # noqa: F401

    token = os.environ[CANARY_ENV]
    secrets_ = [token.encode()]
    with contextlib.suppress(OSError, IndexError):
        first = Path("/etc/passwd").read_text().split("\n")[0]
        if len(first) >= 12:  # root:x:0:0:... (and as a GitHub annotation escapes it)
            secrets_ += [first.encode(), first.replace(":", "%3A").encode()]
    _WORKER.update(base=Path(base), token=token, secrets=secrets_,
                   baseline=json.loads(Path(baseline).read_text()) if baseline else {})
    os.register_at_fork(before=_fork_guard)
    conn = Connection(fd)
    while True:
        message = conn.recv()
        if message is None:
            return
        index, fields = message
        _WORKER["forks"] = 0
        conn.send((index, *_execute(Case(*fields), Path(base))))


@dataclass
class _Slot:
    process: subprocess.Popen
    conn: Any
    base: str
    job: tuple[int, float] | None = None
    """(case index, start time) of the input it runs."""


@dataclass
class Outcome:
    status: str
    """ok, internal, hang or escape."""
    detail: str = ""
    seconds: float = 0.0
    stderr: str = ""


def _memory_mb(pids: list[int]) -> float:
    """The proportional memory of these processes (shared pages divided among their sharers: forks of one worker
    share most of theirs)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/smaps_rollup") as handle:
            total += sum(int(line.split()[1]) for line in handle if line.startswith("Pss:")) / 1024
    return total


def _sessions() -> dict[int, tuple[int, float, list[int]]]:
    """Per session id: how many live processes it has, their resident memory in MB (shared pages counted in each
    process), and their ids."""
    page = os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    found: dict[int, tuple[int, float, list[int]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] in "ZX":
            continue
        count, rss, pids = found.get(int(fields[3]), (0, 0.0, []))
        found[int(fields[3])] = (count + 1, rss + int(fields[21]) * page, [*pids, int(entry)])
    return found


def run_cases(cases: list[Case], jobs: int, scratch: Path, progress: bool = False) -> list[Outcome]:
    """Run every case in `jobs` worker processes; kill and replace a worker past a case's limits."""
    from multiprocessing import connection

    baseline = ""
    if any(c.command == "report" for c in cases):
        baseline = str(scratch / "baseline.json")
        Path(baseline).write_text(json.dumps(_baseline()))
    results: list[Outcome | None] = [None] * len(cases)

    def start(k: int) -> _Slot:
        # A process of its own (not a fork of this one): its environment begins with the canary, as
        # /proc/self/environ shows it, and it leads a session that is killed as a whole.
        base = scratch / f"worker{k}-{time.monotonic_ns()}"
        base.mkdir(parents=True)
        env = {CANARY_ENV: "ALIGN_CANARY_" + secrets.token_hex(12),
               **{key: value for key, value in os.environ.items() if key != CANARY_ENV}}
        ours, theirs = socket.socketpair()
        with open(base / "worker.log", "wb") as log:
            process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--worker", str(theirs.fileno()), str(base), baseline],
                pass_fds=(theirs.fileno(),), env=env, cwd=base, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        theirs.close()
        return _Slot(process, connection.Connection(ours.detach()), str(base))

    def retire(slot: _Slot) -> None:
        with contextlib.suppress(OSError):
            os.killpg(slot.process.pid, signal.SIGKILL)
        slot.process.wait()
        slot.conn.close()
        shutil.rmtree(slot.base, ignore_errors=True)

    def died(slot: _Slot) -> str:
        base = Path(slot.base)
        if (base / "stopped").exists():
            return (base / "stopped").read_text()
        log = (base / "worker.log").read_bytes()[-300:].decode("utf-8", "replace").strip()
        return f"worker died (exit code {slot.process.poll()})" + (f": {log}" if log else "")

    slots = [start(k) for k in range(jobs)]
    pending = deque(range(len(cases)))
    done, last_print = 0, time.monotonic()
    try:
        while pending or any(s.job for s in slots):
            for slot in slots:
                if slot.job is None and pending:
                    index = pending.popleft()
                    case = cases[index]
                    slot.conn.send((index, (case.command, case.category, case.argv, case.files, case.special,
                                            case.compile_tex, case.limit_s)))
                    slot.job = (index, time.monotonic())
            busy = [s for s in slots if s.job]
            ready = connection.wait([s.conn for s in busy], timeout=0.25)
            now = time.monotonic()
            usage = _sessions()
            for k, slot in enumerate(slots):
                if slot.job is None:
                    continue
                index, started = slot.job
                count, rss, pids = usage.get(slot.process.pid, (0, 0.0, []))
                if slot.conn in ready:
                    try:
                        _, internal, escape, seconds, stderr = slot.conn.recv()
                        if escape:
                            detail = escape + (f" (and internal: {internal})" if internal else "")
                            results[index] = Outcome("escape", detail, seconds, stderr)
                        else:
                            results[index] = Outcome("internal" if internal else "ok", internal or "", seconds, stderr)
                        slot.job = None
                        done += 1
                        continue
                    except (EOFError, OSError):
                        slot.process.wait()
                        results[index] = Outcome("internal", died(slot), now - started)
                elif now - started > cases[index].limit:
                    results[index] = Outcome("hang", f"still running after {cases[index].limit:.0f} s",
                                             now - started)
                elif count > PROCESS_LIMIT:
                    results[index] = Outcome("internal", f"started more than {PROCESS_LIMIT} processes (stopped)",
                                             now - started)
                elif rss > MEMORY_LIMIT_MB and _memory_mb(pids) > MEMORY_LIMIT_MB:
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

SURFACES = ("check", "verify", "run", "report", "config", "symlinks", "names", "cli")
"""The table's groups: a category's first part (the command for spec text, else the surface)."""


@dataclass
class Summary:
    inputs: int = 0
    internal: int = 0
    hangs: int = 0
    escapes: int = 0
    rows: dict[str, list[float]] = field(default_factory=dict)
    """category -> [inputs, internal, hangs, escapes, seconds]."""
    failures: list[tuple[int, Case, Outcome]] = field(default_factory=list)

    @property
    def last_line(self) -> str:
        return f"inputs: {self.inputs} internal: {self.internal} hangs: {self.hangs} escapes: {self.escapes}"


def summarize(cases: list[Case], outcomes: list[Outcome]) -> Summary:
    summary = Summary()
    column = {"internal": 1, "hang": 2, "escape": 3}
    for index, (case, outcome) in enumerate(zip(cases, outcomes)):
        category = case.category.split(":")[0]
        row = summary.rows.setdefault(category, [0, 0, 0, 0, 0.0])
        row[0] += 1
        row[4] += outcome.seconds
        summary.inputs += 1
        if outcome.status in column:
            row[column[outcome.status]] += 1
            summary.internal += outcome.status == "internal"
            summary.hangs += outcome.status == "hang"
            summary.escapes += outcome.status == "escape"
            summary.failures.append((index, case, outcome))
    return summary


def table(summary: Summary) -> str:
    lines = [f"{'category':28} {'inputs':>7} {'internal':>9} {'hangs':>6} {'escapes':>8} {'seconds':>9}"]
    groups = SURFACES + tuple(sorted({k.split("/")[0] for k in summary.rows} - set(SURFACES)))
    for group in groups:
        rows = {k: v for k, v in summary.rows.items() if k.startswith(group + "/")}
        for category, (inputs, internal, hangs, escapes_, seconds) in sorted(rows.items()):
            lines.append(f"{category:28} {inputs:7d} {internal:9d} {hangs:6d} {escapes_:8d} {seconds:9.1f}")
        if rows:
            total = [sum(v[i] for v in rows.values()) for i in range(5)]
            lines.append(f"{group + ' (all)':28} {total[0]:7d} {total[1]:9d} {total[2]:6d} {total[3]:8d} "
                         f"{total[4]:9.1f}")
    return "\n".join(lines)


def _record(case: Case, outcome: Outcome | None = None) -> dict[str, Any]:
    """A case as JSON (names with their bytes that are not UTF-8 as \\udcXX escapes, contents in base64)."""
    record: dict[str, Any] = {
        "command": case.command, "category": case.category, "argv": list(case.argv),
        "files": [{"name": name, "base64": base64.b64encode(data).decode()} for name, data in case.files],
        "special": [list(s) for s in case.special], "compile_tex": case.compile_tex, "limit_s": case.limit_s,
        "layout": f"{{dir}} is {REPO}/, a git repository and the working directory; {CANARY} beside it holds the "
                  f"secret token, which is also ${CANARY_ENV}",
    }
    if outcome is not None:
        record.update(status=outcome.status, detail=outcome.detail, stderr=outcome.stderr)
    return record


def _case_of(record: dict[str, Any]) -> Case:
    return Case(record["command"], record["category"], tuple(record["argv"]),
                tuple((f["name"], base64.b64decode(f["base64"])) for f in record["files"]),
                tuple(tuple(s) for s in record["special"]), record.get("compile_tex", False), record.get("limit_s"))


def _save(summary: Summary, directory: Path) -> None:
    """Each failing input as DIR/NNNNN_category.json (replayable with --replay) and DIR/NNNNN_category/, its
    checkout as the command saw it (the repository, with its symlinks and FIFOs, and the canary beside it)."""
    directory.mkdir(parents=True, exist_ok=True)
    for index, case, outcome in summary.failures:
        stem = f"{index:05d}_" + re.sub(r"[^A-Za-z0-9._-]+", "_", case.category)[:60]
        record = {**_record(case, outcome), "reproduce": f"python bench/fuzz.py --replay {directory / stem}.json"}
        (directory / f"{stem}.json").write_text(json.dumps(record, indent=2, ensure_ascii=True) + "\n")
        with contextlib.suppress(OSError):
            _prepare(case, directory / stem, "ALIGN_CANARY_saved")


def fuzz(quick: bool = False, jobs: int | None = None, progress: bool = False,
         cases: list[Case] | None = None) -> tuple[Summary, float]:
    """Build and run every input (or the given ones); returns the summary and the wall time in seconds."""
    import tempfile

    start = time.perf_counter()
    if cases is None:
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
    parser.add_argument("--replay", type=Path, nargs="+", default=None, metavar="FILE.json",
                        help="run inputs saved by --save again (and nothing else)")
    parser.add_argument("--only", metavar="REGEX", default=None,
                        help="only the inputs whose category matches (e.g. `^config/`, `names/report`)")
    args = parser.parse_args(argv)
    cases = None
    if args.replay:
        cases = [_case_of(json.loads(path.read_text())) for path in args.replay]
    elif args.only:
        cases = [c for c in build_cases(QUICK if args.quick else FULL) if re.search(args.only, c.category)]
    summary, seconds = fuzz(args.quick, args.jobs, progress=True, cases=cases)
    print(table(summary))
    for index, case, outcome in summary.failures:
        shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in case.argv)
        print(f"{outcome.status:8} {case.category} #{index}: {outcome.detail}  [{shown!a}]")
    if args.save is not None:
        _save(summary, args.save)
    print(f"wall s: {seconds:.1f}")
    print(summary.last_line)
    return 0 if summary.internal == summary.hangs == summary.escapes == 0 else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker_main(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        sys.exit(0)
    sys.exit(main())
