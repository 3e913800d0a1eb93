"""Diagnostics for every stage: one registry of stable codes and their messages, and the exit codes.

A diagnostic is never built from free text at the call site: the call site names a code from `CODES`
and supplies the values for that code's message template. Codes are stable (tests, editors and CI logs
key on them); the wording of a message may improve.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from .distributions import DISTRIBUTIONS
from .span import Span


class ExitCode(enum.IntEnum):
    """Exit codes of every `align` command (documented in README.md and docs/language.md)."""

    OK = 0
    """Success; for `verify`, every obligation proved."""
    REFUTED = 1
    """Something was refuted (or, for `test`, a privacy violation was confirmed)."""
    ERROR = 2
    """Usage, input, parse, type or internal error."""
    UNKNOWN = 3
    """Nothing refuted, but something could not be decided, or (for `verify`) was proved only for lengths <= N
    (bounded) and `--accept-bounded` was not given."""


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Code:
    """One entry of the registry."""

    name: str
    """The stable, kebab-case code printed as `error[name]`."""
    template: str
    """`str.format` template of the message, filled with the diagnostic's arguments."""
    explanation: str
    """One or two sentences for `align explain CODE` and docs/language.md; `{distributions}` stands for the
    names of the registered distributions (`explain` fills it in)."""

    def explain(self) -> str:
        """The explanation, with the registries' current lists filled in."""
        if "{distributions}" not in self.explanation:
            return self.explanation

        *most, last = DISTRIBUTIONS
        return self.explanation.replace("{distributions}", f"{', '.join(most)} and {last}")


def _registry(*codes: Code) -> dict[str, Code]:
    return {code.name: code for code in codes}


CODES: Mapping[str, Code] = _registry(
    # -- reading and parsing ------------------------------------------------------------------
    Code("io-error", "cannot read {path}: {reason}", "The file could not be opened, is not a regular file, or is not text (a NUL byte, bytes that are not UTF-8); the diagnostic shows nothing of a file that is not text."),
    Code("outside-repository", "{path} is a symbolic link out of the repository: align does not follow it",
         "A file named inside the repository (by the configuration, a glob, or a list of the repository's files) is a symbolic link, or lies in a linked folder, whose real path leaves the repository (the checkout that the working directory is in). A pull request could commit such a link to /etc/passwd or /proc/self/environ, so align refuses it without opening it; name the real file instead. Files named outside the repository are read."),
    Code("unexpected-character", "unexpected character {char}",
         "The lexer met a character that is not part of the language."),
    Code("unexpected-token", "unexpected {found}; expected {expected}",
         "The parser met a token that cannot continue the construct it is reading."),
    Code("unexpected-end", "unexpected end of file; expected {expected}",
         "The file ends inside a construct, usually a missing `}` or `)`."),
    Code("assignment-in-condition", "`=` assigns; to compare use `==`",
         "A condition used a single `=`."),
    Code("python-block", "blocks are written with braces: `{{ ... }}`, not `:` and indentation",
         "A statement header ended with `:` as in Python."),
    Code("python-range", "write the loop range as `for i in a .. b`, not `range(...)`",
         "Loops range over half-open integer intervals `a .. b`."),
    Code("elif", "write `else if`, not `elif`", "There is no `elif` keyword."),
    Code("missing-prime", "an alignment line must shift a noise variable: write `{name}' = {name} + ...`",
         "Inside an `alignment` block, every line is `let`, `invariant`, or a shift whose left-hand side is primed."),
    Code("missing-body", "a mechanism needs a body in braces after its clauses",
         "After the `adjacent`, `requires` and `privacy` clauses comes the body `{ ... }`."),
    Code("no-mechanism", "no mechanism in this file", "A specification file holds at least one `mechanism` block."),
    # -- limits (align/limits.py; docs/language.md, "Limits") -----------------------------------------
    Code("file-too-large", "{path} is larger than {limit} bytes, the most align reads from one file",
         "Spec files (and the JSON files of `--noise-file`) are read up to MAX_SOURCE_BYTES (align/limits.py); a real spec has a few kilobytes."),
    Code("nesting-too-deep", "this is nested more than {limit} levels deep",
         "Operators, calls, indexing, lists, conditionals and blocks nest at most MAX_NESTING_DEPTH levels (align/limits.py); a chain `a + b + c` nests one level per operator. Name intermediate results with assignments or `let`."),
    Code("too-many-sampling-sites", "mechanism `{name}` has more than {limit} sampling statements",
         "A mechanism samples noise in at most MAX_SAMPLING_SITES statements (align/limits.py); a sample inside a loop is one statement, however often the loop runs."),
    Code("number-too-long", "the number `{text}` has {digits} digits; a number literal has at most {limit}",
         "A number literal has at most MAX_LITERAL_DIGITS digits before its exponent (align/limits.py)."),
    Code("number-out-of-range", "the number `{text}` is out of range: {reason}",
         "A nonzero number literal, written d.ddd × 10^e, has |e| <= MAX_DECIMAL_EXPONENT, so that it is a finite double and exact arithmetic on it stays small; an integer literal is at most MAX_INTEGER_LITERAL = 2^63 - 1 (align/limits.py)."),
    Code("constant-out-of-range", "this constant is out of range: {reason}",
         "Arithmetic on literals alone is computed exactly; its result obeys the range of number literals, and its numerator and denominator have at most MAX_CONSTANT_BITS bits (align/limits.py)."),
    Code("power-out-of-range", "the exponent of `^` is {value}; a constant exponent is at most {limit} in absolute value",
         "`x ^ n` with a constant n is multiplied out by sympy and the checker, so |n| <= MAX_POWER_EXPONENT (align/limits.py)."),
    # -- names -------------------------------------------------------------------------------------
    Code("undefined-name", "name `{name}` is not defined{hint}",
         "A name was read before any definition of it (parameter, assignment, sample, let, loop variable)."),
    Code("duplicate-definition", "{what} `{name}` is defined twice",
         "Each parameter, noise variable, let binding, mechanism and alignment block has one definition."),
    Code("shadowed-name", "`{name}` would hide the {what} of the same name; choose another name",
         "Loop variables, comprehension and shift indices and let bindings may not reuse a name that is already visible."),
    Code("private-in-public", "{context} cannot read `{name}`: it is private (it has an `adjacent` clause)",
         "`requires`, adjacency bounds, the privacy claim and release blocks depend on public parameters only; the length of a private list (`len(q)`) is public, unless the list has an add/remove-one-record clause (`len(q') = len(q) ± 1`)."),
    Code("unknown-function", "unknown function `{name}`{hint}", "The call names no builtin function."),
    Code("call-arity", "`{name}` takes {expected}, but {found} given", "A builtin was called with the wrong number of arguments."),
    Code("unknown-distribution", "unknown distribution `{name}`{hint}",
         "Noise can be drawn from {distributions}."),
    Code("distribution-arity", "`{name}` takes {expected}, but {found} given",
         "A distribution was given the wrong number of parameters."),
    Code("unknown-tag", "tag `{name}` is never output by mechanism `{mechanism}`",
         "`out[i] is TAG` and `count(out, TAG)` must name a tag that some `output` statement produces."),
    Code("unknown-mechanism", "{what} for unknown mechanism `{name}`{hint}",
         "An `alignment` or `release` block is bound to the `mechanism` of the same name in the same file."),
    # -- types --------------------------------------------------------------------------------------
    Code("type-mismatch", "{context}: expected {expected}, found {found}",
         "Values are real, int, bool, lists, tuples, tags or index sets; int widens to real, nothing else converts."),
    Code("tuple-index", "a tuple is indexed by an integer literal between 0 and {last}",
         "Tuple components are selected by a constant index."),
    Code("output-shape", "this output is {found}, but earlier outputs are {expected}",
         "All `output` statements of a mechanism produce values of one shape (tags, tuples or numbers)."),
    Code("invalid-assignment", "cannot assign to {what} `{name}`",
         "Parameters, noise variables and loop variables are read-only."),
    Code("comprehension-domain", "cannot tell which indices `{var}` ranges over; write `{var} in a .. b`",
         "`max(l not in I: e)` takes its universe from the lists that `e` indexes with `l`."),
    # -- Lemma 1 conditions that are decided by the language itself ---------------------------------------
    Code("unbounded-loop", "`while` loops are not allowed: termination (Lemma 1, condition 1) needs bounded loops",
         "Loops are `for i in a .. b` over a bounded range; leave early with `break`."),
    Code("recursive-call", "mechanism `{name}` calls itself: termination (Lemma 1, condition 1) forbids recursion",
         "Mechanisms cannot call themselves."),
    Code("mechanism-call", "mechanism `{name}` cannot be called as a function",
         "Compose mechanisms by writing one mechanism; calls are for builtins only."),
    Code("break-outside-loop", "`break` outside a loop", "`break` leaves the innermost `for` loop."),
    Code("nested-family", "noise `{name}` is sampled inside nested loops; a noise family has one index",
         "A sample inside a `for` loop creates the family name[i] indexed by that loop's variable."),
    Code("continuous-output-read",
         "{who} reads {what}, a continuous part of the output (Lemma 1, condition 5)",
         "Local alignments may depend on the output only through its discrete parts (tags, indices, booleans, "
         "the result of a comparison), so that there are countably many of them. To tell which branch released a "
         "number, compare it: `out[i] == 0` reads a sentinel 0 released by one branch."),
    # -- exact and floating-point arithmetic (a warning: align/floats.py) ----------------------------------
    Code("float-sensitive", "{what} can be decided differently in floating point than in exact arithmetic: {reason}",
         "align proves a mechanism in exact arithmetic (0.1 is 1/10); the interpreter, like any implementation in "
         "doubles, rounds. A comparison, a ranking or a rounding to an integer (floor, ceil, round) in the "
         "mechanism's body may then go another way on some input "
         "(`0.1 + 0.2 == 0.3` is true exactly and false in doubles), unless its sides are computed without "
         "rounding (inputs, noise values, literals that are doubles, integers, and -x, abs, min, max of those) or "
         "noise with a density decides it (the difference of its sides is a + c·η with a number c != 0). The "
         "obligations that follow the program's branches are then unknown, not proved, unless a comment "
         "`# align: accept-float-sensitive` on the comparison's line (or alone on the line above) accepts it; "
         "`align verify` reports the acceptance (docs/language.md, \"Exact and floating-point arithmetic\")."),
    Code("unused-acceptance", "the comment `# align: accept-float-sensitive` accepts nothing: no comparison or "
         "ranking it marks is float-sensitive",
         "Remove it. A comment that accepts nothing would accept, without review, a float-sensitive comparison "
         "written on that line later (acceptance is per comparison, docs/language.md, \"Exact and floating-point "
         "arithmetic\")."),
    # -- alignments -------------------------------------------------------------------------------------
    Code("unknown-noise", "`{name}` is not a noise variable of mechanism `{mechanism}`{hint}",
         "A shift names a variable drawn with `~` in the mechanism."),
    Code("duplicate-shift", "noise `{name}` is shifted twice", "Each noise variable has at most one shift."),
    Code("family-index", "{message}",
         "A noise family (drawn inside a loop) is shifted as `x[i]' = x[i] + e` and read as `x[e]`; a scalar noise variable is never indexed."),
    Code("not-a-shift", "the right-hand side must add a shift to `{name}`: `{name} + e`, `e + {name}` or `{name} - e`",
         "An alignment writes each aligned noise value as the original value plus a shift."),
    Code("map-reads-output", "the alignment of `{name}` ({dist}, finitely many values) cannot read `out`",
         "Noise with finitely many values is aligned by a map of its values, costed by the values it maps where it maps the drawn one, with the output held (docs/checker.md, \"Value maps\"); the checker cannot hold the output while it varies the drawn value, so such a map reads the data, the parameters and other noise only."),
    Code("alignment-reads-state", "the alignment cannot read program variable `{name}`: it is not a constant computed from parameters alone",
         "Shifts and lets read parameters, primed parameters, `out`, noise variables, lets and constants (variables assigned once, at the top level, from parameters and other constants); invariants may read any program variable."),
    Code("claim-reads-state", "the privacy claim cannot read `{name}`: a claim depends on parameters and the discrete output only",
         "The claimed budget is an expression over parameters, parameter-derived constants and discrete parts of `out` (Free Gap Lemmas 7 and 8)."),
    Code("release-reads-state", "the release block cannot read `{name}`: it computes what is published from `out`, the public parameters and its own variables only",
         "A release block is a post-processing of the mechanism's output (Dwork & Roth, Proposition 2.1): what it publishes is private because it is a function of `out` alone. Output what it needs from the mechanism's body."),
    Code("release-samples", "the release block cannot draw noise (`{name} ~ {dist}`): draw it in the mechanism's body",
         "A release block is a deterministic function of `out` and the public parameters; the noise of the mechanism is drawn, and aligned, in its body."),
    Code("claim-reads-released", "the privacy claim cannot read `out`: mechanism `{name}` has a release block, and a claim that depends on the body's output is not carried to what it releases",
         "With a release block, the claim is a function of the public parameters only."),
    Code("public-parameter-primed", "`{name}'` is not defined: `{name}` has no `adjacent` clause, so it is public and equal on both inputs",
         "Only parameters named in an `adjacent` clause have a neighbour value."),
    # -- clauses -------------------------------------------------------------------------------------------
    Code("missing-privacy-claim", "mechanism `{name}` has no `privacy` clause",
         "The claimed budget is part of the specification: `privacy eps`."),
    Code("example-item", "`{item}` in the example clause: {reason}",
         "The `example` clause gives constant values of public parameters (`eps = 1, T = 0.5`) and lengths of private lists (`len(q) = 5`), for `align run` and `align test`."),
    Code("duplicate-clause", "second `{clause}` clause for `{name}`", "Each mechanism has at most one privacy clause and one distance clause of each kind per parameter."),
    Code("adjacency-mismatch", "{message}", "An adjacency clause compares a parameter with its own neighbour, at the same index."),
    Code("adjacency-conflict", "`{clause}` adds or removes a record of `{name}`; it cannot be combined with `{other}`",
         "An add/remove-one-record clause (`len(q') = len(q) ± 1`) is the only clause of its parameter: the two lists are equal but for one entry."),
    # -- everything else -----------------------------------------------------------------------------------
    Code("internal-error", "internal error: {error} (this is probably a bug in align; please report it)",
         "An unexpected exception inside align; the input may be fine."),
    # -- running specs: arguments, replay and runtime errors of the interpreter (`align run`) -----------------
    Code("usage", "{message}",
         "A command-line option or value the command cannot use (`align COMMAND --help` lists the options)."),
    Code("config-file", "cannot read the configuration: {reason}",
         "The configuration file (align.toml, or pyproject.toml with [tool.align]) is not a regular text file of at most a megabyte inside the repository: a link out of it, a device, a file with a NUL byte or bytes that are not UTF-8 (nothing of it is shown), or a file too large."),
    Code("config-syntax", "{path} is not valid TOML: {reason}",
         "The project configuration (align.toml, or `[tool.align]` in pyproject.toml) must be TOML."),
    Code("config-unknown-key", "unknown key `{key}` in {table}{hint}",
         "The configuration's keys are paths, max-length, accept-bounded, timeout and output-format (docs/ci.md)."),
    Code("config-value", "`{key}` must be {expected}, not {found}",
         "A configuration value of the wrong type or out of range, or a `paths` glob that align refuses: one that matches no file, leaves the configuration's folder (`..`, an absolute path), matches a special file (a FIFO, a device) or a symbolic link out of the folder, or passes a bound on the files it matches or examines (docs/ci.md)."),
    Code("no-such-mechanism", "{path} defines no mechanism `{name}`{hint}",
         "`--mechanism NAME` names one of the mechanisms the file defines."),
    Code("which-mechanism", "{path} defines {names}; choose one with --mechanism NAME",
         "A file with several mechanisms runs one of them at a time."),
    Code("missing-argument", "mechanism `{mechanism}` needs a value for `{name}` ({type}): pass {option} {name}=VALUE",
         "Every parameter needs a value to run a mechanism; private parameters also need a neighbour value for `--aligned` and `--check-alignment`."),
    Code("unknown-argument", "mechanism `{mechanism}` has no parameter `{name}`{hint}",
         "`--arg NAME=VALUE` and `--neighbour NAME=VALUE` name parameters of the mechanism."),
    Code("invalid-argument", "cannot read the value of `{name}`: {reason}",
         "Values are JSON numbers, booleans and lists, or exact expressions such as `1/3` and `[1, -2.5]`."),
    Code("argument-type", "`{name}` is {expected}, but the value given is {found}",
         "A value must have the parameter's type; an integer may be given where a real is expected, nothing else converts."),
    Code("requires-violated", "the arguments violate `requires {clause}`",
         "A mechanism runs only under its preconditions."),
    Code("outside-domain", "{value} is outside the domain of `{name}`, {domain}",
         "A parameter declared `x: int in lo .. hi` takes the integers lo, ..., hi - 1 (every entry of a list; the "
         "neighbour's too)."),
    Code("not-adjacent", "the neighbour violates `adjacent {clause}`{detail}",
         "The neighbour value of a private parameter must be adjacent to its value on D (same length, within the bounds)."),
    Code("no-alignment", "mechanism `{mechanism}` has no alignment block; {what} needs one",
         "`--aligned` and `--check-alignment` apply the alignment block of the mechanism."),
    Code("missing-noise", "the replay has no value for noise `{name}`",
         "A replay (`--noise`, `--noise-file`) gives a value for every noise variable and family member that the run draws."),
    Code("invalid-noise", "cannot use the noise value of `{name}`: {reason}",
         "A replayed noise value is a number (an integer for Geo, DLap and Bernoulli); a family is a list with a value or null per loop index."),
    Code("counterexample-format", "{path}: not a counterexample file: {reason}",
         "Counterexample files follow the `align-counterexample/1` format of docs/interpreter.md."),
    Code("loop-too-long", "this loop runs {count} times, which takes the run past {limit} loop iterations in all",
         "`align run` executes at most MAX_LOOP_ITERATIONS loop iterations in one execution, all loops together (align/limits.py)."),
    Code("run-too-large", "this needs an array of {cells} cells ({lanes} samples at once × {positions} positions), more than {limit}; lower --chunk-size",
         "The vectorised interpreter keeps every list, output sequence and noise family as an array over the samples of a chunk; one array has at most MAX_ARRAY_CELLS cells (align/limits.py)."),
    Code("list-too-deep", "this list nests more than {limit} lists deep, more than the interpreter evaluates",
         "The vectorised interpreter gives every level of a nested list an array axis; lists of lists nest at most MAX_LIST_NESTING deep (align/limits.py)."),
    Code("write-error", "cannot write {path}: {reason}",
         "An output file (`-o`, `--plot`, `--counterexample`, `--counterexample-out`) could not be written: its directory does not exist, it is a directory, permission is denied or the disk is full; or a figure of `align report` would overwrite a file (figures go only to new files: move it away, or choose another -o)."),
    Code("invalid-distribution-parameter", "the parameter {param} of {dist} must be {requirement}, but it is {value}",
         "A distribution was drawn with a parameter outside its domain (a scale that is not positive, p outside (0, 1), a >= b, ...)."),
    Code("index-out-of-range", "index {index} is out of range for {what} of length {length}",
         "A list, or the output sequence, was read at a position that does not exist."),
    Code("list-gap", "cannot assign `{name}[{index}]`: the list has length {length}, so the index must be between 0 and {length}",
         "An indexed assignment replaces an entry or appends one at the end; it cannot leave a gap."),
    Code("math-domain", "{operation} is undefined: {detail}",
         "A function or power was applied outside its domain: ln of a non-positive number, sqrt of a negative one, clamp with lo > hi, ..."),
    Code("division-by-zero", "division by zero: {detail}", "The divisor of `/`, `//` or `%` was 0."),
    Code("integer-overflow", "integer overflow: {detail}",
         "An integer result left the 64-bit range the interpreter computes in. The language's integers are exact "
         "(the checker reasons about them exactly), so the interpreter stops rather than wrap around."),
    Code("empty-reduction", "`{func}` of an empty {what}",
         "max, min, argmax and argmin need at least one value."),
    Code("too-few-entries", "`{func}` needs {need}, but k = {k} and the list has length {length}",
         "top_k(v, k) needs 0 <= k <= len(v); top_k_with_gaps(v, k) needs 0 <= k < len(v)."),
    Code("undefined-value", "`{name}` has no value here: no assignment to it ran on this path",
         "A variable assigned only in some branches or loop iterations was read where none of them ran."),
    Code("noise-not-drawn", "the alignment reads `{name}`, which this run did not draw",
         "An alignment may read only the noise that the run on D actually drew."),
    # -- testing specs (`align test`; see docs/testing.md) --------------------------------------
    Code("no-input-pair", "no input pair for mechanism `{mechanism}` satisfies its `requires` and adjacency clauses (list length {length})",
         "`align test` generates pairs of private inputs of length --length; choose another --length, or give D and D' with --arg and --neighbour."),
    Code("exact-outside", "`align test --exact` cannot compute the event probabilities of `{mechanism}`: {reason}",
         "The exact computation follows programs whose noise has a density and whose branches compare affine functions of the noise, at most one draw shared between conditions (docs/testing.md, \"Exact event probabilities\"); leave out --exact to sample instead."),
    Code("plot-needs-matplotlib", "--plot needs matplotlib, which is not installed: pip install 'align[plot]' (or pip install matplotlib)",
         "`align test --plot FILE.png` draws the figure with matplotlib, an optional extra; install it, or leave out --plot."),
    Code("executor-needs-dask", "--executor {executor} needs Dask's distributed, which is not installed: pip install 'align[dask]'",
         "`align test --executor dask` runs the sampling on a Dask cluster through `distributed`, an optional extra; install it, or use --executor local or processes."),
    Code("executor-unreachable", "no Dask scheduler answered at {address}: {reason}",
         "`align test --executor dask://HOST:PORT` connects to a running scheduler (`dask scheduler`, with workers that have align installed); check the address, or use --executor dask for a local cluster."),
)


@dataclass(frozen=True)
class Note:
    """A secondary location attached to a diagnostic, such as the first of two definitions."""

    span: Span | None
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One located message from any stage."""

    code: str
    """A key of `CODES`."""
    span: Span | None
    """Where the problem is; None only for file-level problems such as an unreadable file."""
    args: Mapping[str, object] = field(default_factory=dict)
    """Values for the code's message template."""
    notes: tuple[Note, ...] = ()
    """Related locations."""
    severity: Severity = Severity.ERROR

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise KeyError(f"unregistered diagnostic code {self.code!r}")

    @property
    def message(self) -> str:
        return CODES[self.code].template.format(**self.args)


def diag(code: str, span: Span | None, *notes: Note, **args: object) -> Diagnostic:
    """Build an error diagnostic; the keyword arguments fill the code's template."""
    return Diagnostic(code, span, args, tuple(notes))


def os_reason(error: OSError | ValueError) -> str:
    """Why opening or writing a file failed, for `io-error` and `write-error`: the system's words ("No such file
    or directory"), or the ValueError's (a NUL in the path)."""
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


class InternalError(Exception):
    """A bug in align, not a problem with the input: the command line reports it as `internal-error` (exit 2)
    and the Python API raises it (with the original exception as its cause), never a `SpecError`."""


class SpecError(Exception):
    """Raised by a stage that cannot produce its output; carries every diagnostic found so far."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


def did_you_mean(name: str, candidates: object) -> str:
    """A `; did you mean ...?` hint for the closest candidate, or ''."""
    matches = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)  # type: ignore[call-overload]  # any iterable of names
    return f"; did you mean `{matches[0]}`?" if matches else ""
