"""Limits on what `align` accepts: one documented constant per limit, imported wherever the limit applies.

A spec file from an untrusted pull request must be safe to check: it ends, within bounded time and memory,
in a result or in a located diagnostic, never in a traceback, a hang or a machine out of memory. The front
end (`parse.py`) enforces the limits on the text — its size, how deeply it nests, how large its numbers
are — so that no later stage ever sees an input that could make it recurse past Python's stack, build an
integer of millions of digits, or hand sympy or z3 an astronomically large constant. Limits that only the
later stages can apply (how far the checker unrolls a loop, how large an integer power it multiplies out)
are declared here as well, so that every limit is in one place (docs/language.md, "Limits", lists them with
their diagnostic codes).

Values are generous for real specs (the largest spec of the corpus has 3.5 KB and nests 16 levels deep, and
its literals have a few digits) and safe for the machine.

Numbers from the command line (and from the Python API and the configuration) are limited too: each numeric
option reads its text with one `Range` of the section "command-line values" (`align/commands/options.py`
turns them into argparse readers), so that `--seed -1`, `--timeout inf` or `--samples 10^21` is a `usage`
diagnostic naming the option and its range before any work starts.

This module imports nothing from `align`, so any stage can import it cheaply.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

# ----------------------------------------------------------------------------------------------- reading

MAX_SOURCE_BYTES = 128 * 1024
"""Largest spec file read (bytes); a larger file is refused (`file-too-large`) after reading at most one byte
more than this. lark's LALR parser with positions reads about 20 KB of dense tokens per second on a slow
2-core machine, so a file of the largest size parses in under 7 seconds (1 MiB would take a minute); a real
spec has a few kilobytes (the largest of the corpus 3.5 KB). The same limit bounds the JSON files that
`align run --noise-file` and `align test` read."""

MAX_CONFIG_BYTES = 1024 * 1024
"""Largest configuration file read (pyproject.toml, align.toml): a larger one is refused (`file-too-large`). A
pyproject.toml has a few kilobytes; Python's TOML reader takes about a second for a megabyte."""

MAX_PATH_COMPONENT = 255
"""Longest component of a configured glob, in bytes: the longest file name Linux, macOS and Windows allow
(NAME_MAX). A longer one could never match; it is refused (`config-value`) instead of an OSError."""

MAX_GLOB_MATCHES = 10_000
"""Most files one configured glob (`[tool.align] paths`) may match: `align verify` takes about 0.1 s per spec,
so ten thousand specs are already more than a pull request's check would verify. Past it the configuration is
refused (`config-value`) rather than read."""

MAX_GLOB_DEPTH = 32
"""Deepest folder, below the configuration's folder, that a configured glob may reach (`**` goes down one
level at a time). Repositories nest a dozen levels; symbolic links to folders are never followed, so a link
to `.` cannot make the walk endless, and this bounds a tree that is deep for real."""

MAX_GLOB_ENTRIES = 200_000
"""Most directory entries one configured glob may examine (`specs/**/*.dp` lists every folder below specs/):
about a second of listing on a slow disk. A checkout with a virtual environment inside has some tens of
thousands; past it the glob is refused (`config-value`: narrow it, e.g. `specs/**/*.dp` instead of `**/*.dp`)."""

# ----------------------------------------------------------------------------------------------- parsing

MAX_NESTING_DEPTH = 100
"""Deepest nesting of the syntax tree: every operator, call, argument list, index, list, tuple, conditional
and statement block around a piece of text is one level (parentheses alone are not). A left-associated chain
such as `a + b + c` nests one level per operator. Deeper input is refused (`nesting-too-deep`) before the
tree is turned into nodes. Every later stage (the resolver, sympy, the z3 encoder, the interpreters) walks
expressions recursively with up to about five Python frames per level; 100 levels keep them all well inside
Python's default recursion limit of 1000, with room for the caller's own frames (a test runner's, say)."""

MAX_SAMPLING_SITES = 100
"""Most sampling statements (`x ~ Dist(...)`) in one mechanism; more are refused (`too-many-sampling-sites`).
Each site costs a symbolic simplification of its cost coefficient in `align check` (about 15 ms with sympy)
and obligations C0, C3 and C4d in `align verify`; the mechanisms of the papers have one to five sites (a
sample inside a loop is one site, however many times the loop runs)."""

MAX_LITERAL_DIGITS = 100
"""Most digits in a number literal, before its exponent (`1234.5678` has 8). Longer literals are refused
(`number-too-long`): Python refuses to convert integers of more than 4300 digits from text, and no
parameter of a mechanism needs more than double precision's 17 digits."""

MAX_INTEGER_LITERAL = 2**63 - 1
"""Largest integer literal (a literal without fraction or exponent, of type `int`): the interpreter computes
with 64-bit integers, as numpy does. A larger integer literal is refused (`number-out-of-range`); write
`1e30` for a large real."""

MAX_DECIMAL_EXPONENT = 300
"""A nonzero number literal, and every constant computed from literals alone (`2^10`, `1e300 * 10`, `exp(800)`,
the last checked with an approximate value), has a
magnitude between 10^-300 and 10^301 (exclusive): written as d.ddd × 10^e, -300 <= e <= 300. Outside that
range a literal is refused (`number-out-of-range`) and a constant expression too (`constant-out-of-range`),
before any exact arithmetic on it: `1e100000000` would otherwise make an integer of a hundred million
digits, and anything past about 1.8e308 overflows the interpreter's doubles."""

MAX_CONSTANT_BITS = 4096
"""Most bits in the numerator or the denominator of the exact value of a constant computed from literals
(`1/3 + 1/7 + ...`); beyond it the constant is refused (`constant-out-of-range`). sympy and z3 work with such
constants exactly, and their cost grows with the size of the numbers."""

MAX_POWER_EXPONENT = 64
"""Largest |n| in `x ^ n` when the exponent `n` is a constant (a literal, or arithmetic on literals): the
checker and sympy multiply integer powers out (`(a + b) ^ n` has n + 1 terms after expansion, and a term
with n factors), and `2 ^ 64 ^ 64` would otherwise be a number of 10^115 digits. Larger constant
exponents are refused (`power-out-of-range`)."""

MAX_LIST_NESTING = 24
"""Deepest nesting of list values that `align run` evaluates (a list of lists of ... reals): the vectorised
interpreter gives every level an axis of a numpy array, and numpy allows 32 axes in all (64 from numpy 2).
A deeper list stops the run with `list-too-deep`. Literals cannot nest this deep without also nesting past
nothing else, but assignments (`b = [a]`, `c = [b]`, ...) can."""

MAX_LOOP_ITERATIONS = 10**5
"""Most loop iterations `align run` executes in one execution of a mechanism (for the vectorised interpreter:
one chunk of samples), all loops together; a loop whose range would take the run past it is refused before
it starts (`loop-too-long`). The interpreter steps through a loop one iteration at a time and allocates
room for the outputs and noise of the whole range at once, so `for i in 0 .. 1000000000000` would
otherwise run for days or allocate terabytes; an iteration that outputs takes about 50 µs on a slow
machine, so 10^5 iterations stay within seconds."""

MAX_ARRAY_CELLS = 1 << 28
"""Most cells (samples of a chunk × list positions) in one array of the vectorised interpreter: 2 GiB of
doubles. A statement that needs more (outputs or noise inside a long loop, a long list built per sample)
stops the run with `run-too-large`, which suggests a smaller `--chunk-size`."""

# ------------------------------------------------------------------------------------ later stages (checker)

MAX_UNROLL = 100
"""Most loop iterations (nested loops multiplied, all loops of one run added up) and comprehension indices
that the checker unrolls into z3 terms (smt/encode.py); beyond, the obligations are `unknown` with the
reason. Unrolling is superlinear: `for i in 0 .. 100 { output q + eta }` took 4 s to verify, 300 iterations
28 s, 1000 more than 100 s (tests/limits/ keeps those inputs). The front end cannot apply it, since a loop's
range is usually a parameter (`len(q)`, `k`)."""

MAX_INTEGER_POWER = MAX_POWER_EXPONENT
"""Largest integer exponent that the checker's encoders may multiply out into a product of factors (z3
terms, sympy formulas); a larger (run-time) exponent must be encoded as a power or reported `unknown`."""

# ---------------------------------------------------------------------------------- command-line values

MAX_SAMPLES = 10**9
"""Largest `--samples` of `align run` and `align test` (and `--confirm-samples` of `align verify`): a billion
executions take hours already (`align test` draws up to 2·N per input and side in its rounds, and 32·N for each
confirmation); more is certainly a typo, and numpy's counters would overflow past 2^63."""

MAX_CHUNK_SIZE = 1 << 22
"""Largest `--chunk-size` of `align run`: the interpreter keeps arrays of this many lanes per value alive,
so the chunk size bounds its memory (the default is 131072)."""

MAX_SEED = 2**128 - 1
"""Largest `--seed`: seeds are non-negative integers of at most 128 bits (numpy's SeedSequence takes any
non-negative integer; 128 bits is the entropy it keeps)."""

MAX_BOUNDED_LENGTH = 16
"""Largest `--max-length` of `align verify`: the bounded check tries every combination of list lengths up to
it (one list: 17 lengths; three lists: 17^3), and every length unrolls the loops over the list. Beyond a few
elements a counterexample is rarely new, and the induction, not a longer bound, gives a proof."""

MAX_TEST_LENGTH = 100
"""Longest private list that `align test` generates: its `--length`, and a `len(q) = N` of a spec's `example`
clause (refused there as `example-item`, at the clause). Memory and time grow with the length times the
samples: on a slow 2-core machine, `align test` of the histogram (one output per entry) at the default 64000
samples takes 0.7 GB and 5 minutes at length 100, and 5.5 GB at length 1000 with 4000 samples; past 2048
entries an array of one chunk exceeds `MAX_ARRAY_CELLS`, and `len(q) = 100000000000` asked for more memory than
any machine has. StatDP's patterns, which find the known violations, need 5 to 10 entries (the corpus's
examples have at most 7)."""

MAX_JOBS = 256
"""Most worker processes of `align test --jobs` (and of its local Dask cluster): more workers than cores only
cost memory, and each imports numpy, sympy and z3 (about 140 MB before it samples), so 256 need some 35 GB
before the first sample, as much as a large machine has; `--jobs 100000` would exhaust the process table and
the memory of any machine."""

MAX_CONFIRM_TESTS = 20
"""Most confirmation tests of `align test --confirm`: each tests one event on fresh samples 32 times the largest
round's, on both inputs of its pair (4 million executions at the defaults, 16 times the rounds of one pair),
and each one enlarges the Bonferroni correction of every test of the search (default 3)."""

MAX_TIMEOUT_S = 86_400.0
"""Largest `--timeout` (seconds) of `align verify` and `align report` (and the `timeout` of the configuration):
the wall-clock safety net of one solver query. z3 takes it as an unsigned 32-bit count of milliseconds (at
most 49.7 days), and `inf` or `1e308` would overflow the conversion; one day per query is beyond any CI job
(GitHub stops a job after 6 hours) and far above the default of 300 s. The timeout never decides a verdict on
a working machine: z3's deterministic `DEFAULT_RLIMIT` does."""

EXECUTOR_CONNECT_TIMEOUT_S = 10.0
"""How long `align test --executor dask://HOST:PORT` waits for the scheduler: first for the TCP connection
(a refused port fails at once, without Dask's retries, which took 13 s on a closed local port), then for
Dask's handshake. A safety net for a host that drops packets, never part of a verdict: the counts do not depend
on where the sampling runs."""


@dataclass(frozen=True)
class Range:
    """The numbers a numeric option (or an API argument, or a configuration key) accepts: integers or reals
    from `low` to `high`, each end included unless it is open. Reals are finite: `nan` and `inf` are in no
    range. `read` turns an option's text into a number of the range; `problem` says why a value is not one."""

    low: int | float
    high: int | float
    integer: bool = True
    low_open: bool = False
    high_open: bool = False
    high_text: str = ""
    """How `high` is written in messages, when its digits would not help (`2^128 - 1`)."""

    def describe(self) -> str:
        """`an integer between 1 and 100`, `a number greater than 0 and at most 86400`, ..."""
        kind = "an integer" if self.integer else "a number"
        high = self.high_text or (f"{self.high:g}" if isinstance(self.high, float) else str(self.high))
        if self.low_open and self.high_open:
            return f"{kind} strictly between {self.low:g} and {high}"
        if self.low_open:
            return f"{kind} greater than {self.low:g} and at most {high}"
        if self.high_open:
            return f"{kind} at least {self.low:g} and below {high}"
        return f"{kind} between {self.low:g} and {high}"

    def contains(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float) and (self.integer or not math.isfinite(value)):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def problem(self, value: object) -> str | None:
        """None when `value` is in the range, else `must be <the range>, not <value>`."""
        if self.contains(value):
            return None
        text = str(value)
        return f"must be {self.describe()}, not {text if len(text) <= 24 else text[:12] + '...' + text[-9:]}"

    def read(self, text: str) -> int | float:
        """The number an option's text gives (`12`, `0.05`, `1e-3`), if it is in the range; else ValueError
        with `problem`'s message. The text is short before Python converts it: no 5000-digit integer."""
        stripped = text.strip()
        value: object = stripped
        if len(stripped) <= 64:
            with contextlib.suppress(ValueError):  # not a number: `problem` says which numbers it takes
                value = int(stripped) if self.integer else float(stripped)
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value  # type: ignore[return-value]  # contains() checked it is an int or a float


SAMPLES = Range(0, MAX_SAMPLES)
"""`align run --samples` (0: nothing drawn, the summary of no sample)."""
TEST_SAMPLES = Range(1, MAX_SAMPLES)
"""`align test --samples` and `align verify --confirm-samples`."""
SEED = Range(0, MAX_SEED, high_text="2^128 - 1")
CHUNK_SIZE = Range(1, MAX_CHUNK_SIZE)
BOUNDED_LENGTH = Range(1, MAX_BOUNDED_LENGTH)
"""`align verify --max-length` (and the configuration's `max-length`)."""
TEST_LENGTH = Range(1, MAX_TEST_LENGTH)
"""`align test --length` (an example's `len(q) = N` may be 0: `example-item` checks it against the same maximum)."""
JOBS = Range(1, MAX_JOBS)
CONFIRM_TESTS = Range(0, MAX_CONFIRM_TESTS)
ALPHA = Range(0.0, 1.0, integer=False, low_open=True, high_open=True)
"""A significance level: a probability other than 0 (no test rejects) and 1 (every test does)."""
TIMEOUT_S = Range(0.0, MAX_TIMEOUT_S, integer=False, low_open=True)
"""`align verify --timeout`, and the configuration's `timeout` (align/config.py)."""

# ----------------------------------------------------------------------------------------------- solving

DEFAULT_MAX_LENGTH = 3
"""`align verify --max-length`: the bounded check covers every list length 0..3 unless told otherwise."""

DEFAULT_RLIMIT = 20_000_000
"""z3's deterministic resource limit per query (`smt.solver.Limits.rlimit`): the limit that binds. The
hardest query of the corpus takes about 8.3 million steps (Free Gap Algorithm 5 at length 3)."""

DEFAULT_TIMEOUT_MS = 300_000
"""Wall-clock safety net per query (`smt.solver.Limits.timeout_ms`), far above what `DEFAULT_RLIMIT`
steps take (a few seconds on a slow machine): it never decides a verdict on a working machine."""
