"""Results (what the commands produce and the renderers print): typed, frozen records.

A command computes one of these and hands it to a renderer (`align.render`); the Python API (`align.api`)
returns them, and Jupyter shows them through `report/jupyter.py`. Statuses are `status.Status` (ordered:
refuted < unknown < bounded < proved). The records are data: this module imports no back end and no renderer
(the layers in pyproject.toml's import contract); the back ends fill the records, the renderers read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .diagnostics import Diagnostic, ExitCode, Severity
from .status import Status

if TYPE_CHECKING:
    from .counterexample import Counterexample
    from .exact.search import ExactResult
    from .interp.runner import Summary
    from .interp.scalar import ScalarAlignment, ScalarRun
    from .obligations import Obligation, ObligationId, ParameterReads, SiteSummary
    from .resolve import ResolvedMechanism
    from .rules import ProofRule
    from .span import Source
    from .stats.lrtest import Result, Skipped


@dataclass(frozen=True)
class Note:
    """A remark on one obligation's verdict, which speaks of some of its statuses only: "confirmed by replaying
    the counterexample" of a refutation, "for every length: a loop invariant ..." of a proof. A verdict shows a
    note only while its status is one of them (`Verdict.notes`), so a verdict whose status changes later (a
    refutation of no written alignment becomes unknown, a proof is downgraded) never says what it no longer is."""

    text: str
    about: frozenset[Status] = frozenset(Status)
    """The statuses of which the note is true (every status: a fact about the check, whatever it decided)."""


@dataclass(frozen=True)
class Conjunct:
    """One conjunct of a loop invariant that an induction proved: a relation in the spec's names and the proof's
    (`aligned_cost`: the cost Σ cᵢ·|ψᵢ| of the alignment so far; `claim`: ε; a primed name: its value in the run
    on D'), with the formulas it names as formulas, so that a report prints them as mathematics."""

    text: str
    """The relation as program text; a letter of `where` (`b`) stands for its formula."""
    where: tuple[tuple[str, Any], ...] = ()
    """(letter, sympy formula of the parameters) for each formula `text` names."""

    def __str__(self) -> str:
        # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
        from .symbolic import show

        return self.text + "".join(f", {name} = {show(formula)}" for name, formula in self.where)

    def within(self, label: str) -> Conjunct:
        """The conjunct of one part of a program run part by part (`lines 20–23 (claim eps1)`)."""
        return Conjunct(f"{label}: {self.text}", self.where)


@dataclass(frozen=True)
class Verdict:
    """The outcome for one obligation."""

    obligation: Obligation
    status: Status
    scope: str = ""
    """For proved and bounded: what the proof covers: "by construction", "for every input length", "for all
    inputs", or (bounded) "for lengths <= N" with the ranges of the integer parameters that were enumerated."""
    seconds: float = 0.0
    reason: str = ""
    """For refuted and unknown: why."""
    counterexample: Counterexample | None = None
    remarks: tuple[Note, ...] = ()
    """Every note the checker made, each with the statuses it speaks of; `notes` are those true of `status`."""
    value: Any = None
    """MIX: the rule's ε (a sympy expression of the parameters)."""
    invariant: tuple[Conjunct, ...] = ()
    """C4a, C4c proved by induction: the conjuncts of the loop invariant (also in `notes`, as one line)."""
    vacuous: bool = False
    """For an obligation proved by a model (`ObligationKind.witness`, ADJ): unknown because none exists where it was
    searched, so every other obligation's proof is about no pair of distinct neighbours: the verdict is vacuous."""

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes that speak of this verdict's status, in the order they were made."""
        return tuple(note.text for note in self.remarks if self.status in note.about)


def vacuous(verdicts: Iterable[Verdict]) -> bool:
    """Whether a mechanism's verdicts prove nothing about privacy: its neighbouring relation admits no two distinct
    inputs where the proof looked (the verdict line says "vacuous"; the status is unknown, exit 3)."""
    return any(v.vacuous for v in verdicts)


@dataclass(frozen=True)
class Confirmation:
    """`align verify --confirm`: the likelihood-ratio test run on a refuted obligation's input pair."""

    violation: bool | None
    """True: a privacy violation is confirmed; False: none found; None: nothing could be tested."""
    text: str
    """One sentence for the text report."""
    p: float | None = None
    samples: int | None = None
    epsilon_infinite: bool | None = None
    epsilon_lower_bound: float | None = None
    claimed_epsilon: float | None = None
    smallest_p: float | None = None
    search: Result | None = field(default=None, compare=False, repr=False)
    """The likelihood-ratio search itself (its findings draw the privacy-loss plot); None when nothing ran."""

    def to_json(self) -> dict[str, Any]:
        keys = ("violation", "p", "samples", "epsilon_infinite", "epsilon_lower_bound", "claimed_epsilon",
                "smallest_p", "text")
        return {k: getattr(self, k) for k in keys if k in ("violation", "text") or getattr(self, k) is not None}


@dataclass(frozen=True)
class SynthesisOutcome:
    """`align verify --synthesise`: an alignment searched for in the template space (checker/synthesis.py)."""

    found: bool
    """True: the mechanism's verdicts are those of the synthesised alignment, which the checker proved (for every
    length, or for bounded lengths: the verdict's scope says which)."""
    alignment: str | None
    """The synthesised alignment block, as `.dp` text to paste into the spec."""
    candidates: int
    """Candidates the learner proposed."""
    examples: int
    """Examples (input pairs with noise, found by z3) the candidates were learned from."""
    iterations: int
    """Checker calls."""
    seconds: float
    space: int
    """Size of the template space."""
    text: str
    """One sentence for the reports."""
    role: str = "none"
    """What the verdicts are about: "adopted" (none was written: the verdicts are the synthesised alignment's),
    "replaces" (the written one is not proved: the verdicts are the synthesised one's), "suggested" (the verdicts
    are the written alignment's; the synthesised one proves a smaller claim), "none" (nothing was found)."""

    def to_json(self) -> dict[str, Any]:
        keys = ("found", "alignment", "candidates", "examples", "iterations", "seconds", "space", "text")
        return {k: getattr(self, k) for k in keys}


@dataclass(frozen=True)
class MechanismVerdict:
    """Every obligation of one mechanism, decided, and the verdict on the whole."""

    mechanism: ResolvedMechanism
    verdicts: tuple[Verdict, ...]
    """Each obligation's, in report order; a quiet one (`ObligationKind.quiet`: ADJ) only when it does not hold."""
    status: Status
    """The weakest obligation's status."""
    scope: str
    """What a proof covers ("for every input length", "for lengths <= 3", ...); empty when not proved."""
    confirmation: Confirmation | None = None
    synthesis: SynthesisOutcome | None = None
    source: Source | None = field(default=None, compare=False, repr=False)
    """The spec's text, for the listing of a report (set by the Python API; the commands pass their own)."""
    accepted: bool = False
    """A bounded verdict that passes the gate (`gate.judge`: the project accepted it)."""
    acceptance: str = ""
    """For a bounded verdict someone accepted: who, or why their acceptance does not apply (`gate.judge`)."""

    @property
    def exit_code(self) -> ExitCode:
        return exit_code(self.status, accept_bounded=self.accepted)

    @property
    def vacuous(self) -> bool:
        """No two distinct neighbours satisfy the assumptions where the proof looked: it proves nothing."""
        return vacuous(self.verdicts)

    @property
    def counterexample(self) -> Counterexample | None:
        """The first refutation's counterexample that gives the inputs (what `--counterexample` writes and
        `--confirm` tests); None when nothing is refuted with one."""
        return next((v.counterexample for v in self.verdicts if v.status == Status.REFUTED
                     and v.counterexample is not None and v.counterexample.args), None)


def exit_code(status: Status, accept_bounded: bool) -> ExitCode:
    """`align verify`'s exit code for a status: bounded is not proved, so it exits like unknown (3) unless the
    user accepts bounded results."""
    if status == Status.REFUTED:
        return ExitCode.REFUTED
    if status == Status.UNKNOWN or (status == Status.BOUNDED and not accept_bounded):
        return ExitCode.UNKNOWN
    return ExitCode.OK


@dataclass(frozen=True)
class CheckedSite:
    """One sampling site as `align check` shows it: its distribution, cost coefficient and shift as text, and
    what its parameters read (C0)."""

    summary: SiteSummary
    reads: ParameterReads


@dataclass(frozen=True)
class CheckedMechanism:
    """`align check`: what a proof of one mechanism must establish (`pipeline.check`), computed once; every
    format prints it, none recomputes it. Proves nothing."""

    mechanism: ResolvedMechanism
    rule: ProofRule
    """The proof rule `align verify` will use (`rules.rule_for`)."""
    sites: tuple[CheckedSite, ...]
    """Each sampling site, in program order."""
    obligations: tuple[Obligation, ...]
    """What the rule must establish, in report order."""


@dataclass(frozen=True)
class FileResult:
    """One input file of `check` or `verify`: the errors that stopped it, or its mechanisms' results and their
    warnings."""

    path: str
    source: Source | None
    diagnostics: tuple[Diagnostic, ...] = ()
    checked: tuple[CheckedMechanism, ...] = ()
    """`check`: what a proof of each mechanism must establish."""
    verified: tuple[MechanismVerdict, ...] = ()
    """`verify`: each mechanism's verdict."""

    @property
    def ok(self) -> bool:
        """No error (warnings, such as `float-sensitive`, leave a file ok)."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


@dataclass(frozen=True)
class VerifyReport:
    """`align verify` over several files."""

    files: tuple[FileResult, ...]

    @property
    def status(self) -> Status:
        return Status.merge(m.status for f in self.files for m in f.verified)

    @property
    def exit_code(self) -> ExitCode:
        """2 when a file did not load; else 1 when a mechanism is refuted, else 3 when one is unknown or bounded
        and not accepted (each bounded one passes when its spec's acceptance does: `gate.judge`), else 0."""
        if any(not f.ok for f in self.files):
            return ExitCode.ERROR
        codes = {m.exit_code for f in self.files for m in f.verified}
        return next((code for code in (ExitCode.REFUTED, ExitCode.UNKNOWN) if code in codes), ExitCode.OK)


@dataclass(frozen=True)
class TestReport:
    """`align test`: the search's result for one mechanism."""

    path: str
    mechanism: ResolvedMechanism
    result: Result
    seconds: float
    args: dict[str, Any] = field(default_factory=dict)
    """The public parameters the search ran with."""
    computed: ExactResult | None = None
    """When the sampling found no violation: the loss computed from the paths (align/exact/), if the program is
    in that class."""
    not_computed: str | None = None
    """Why it was not computed (a program outside the class), when the sampling found no violation."""
    computed_lengths: tuple[int, ...] = ()
    """The lengths computed from the paths (also when a longer length sampled afterwards shows the violation)."""

    @property
    def violation(self) -> bool:
        """Confirmed by the sampling, or computed after it."""
        return bool(self.result.violation) or (self.computed is not None and self.computed.violation)

    @property
    def lengths(self) -> list[int]:
        """The lengths searched, sampled or computed, in order (the search escalates from the first)."""
        return sorted(set(self.result.lengths) | set(self.computed_lengths))

    @property
    def length(self) -> int | None:
        """The length of the patterns whose pair shows the violation; None without one, or when that pair was
        not generated (the checker's, a counterexample file's, the user's: its lists are shown)."""
        if self.result.violation and self.result.witness is not None:
            return self.result.witness.pair.length
        return self.computed.length if self.computed is not None else None

    @property
    def skipped(self) -> list[Skipped]:
        """The pairs the program stopped on, each once: the sampling's, then those only the computation met."""
        more = [k for k in self.computed.skipped if k.pair not in [j.pair for j in self.result.skipped]] \
            if self.computed is not None else []
        return list(self.result.skipped) + more

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.REFUTED if self.violation else ExitCode.OK


@dataclass(frozen=True)
class ExactReport:
    """`align test --exact`: the privacy loss computed from the mechanism's paths for one mechanism."""

    path: str
    mechanism: ResolvedMechanism
    result: ExactResult
    seconds: float
    args: dict[str, Any] = field(default_factory=dict)
    """The public parameters the computation ran with."""

    @property
    def violation(self) -> bool:
        return self.result.violation

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.REFUTED if self.violation else ExitCode.OK


class Sampler(Protocol):
    """A run of the interpreter drawn lazily, chunk by chunk, as a renderer reads it (`interp.runner.Sampling`)."""

    def outputs(self) -> Iterator[list[Any]]: ...

    def summary(self) -> Summary: ...


@dataclass(frozen=True)
class SampleRun:
    """`align run` (sampling), drawn lazily in chunks when a renderer asks for the outputs or their summary."""

    path: str
    mechanism: ResolvedMechanism
    args: dict[str, Any]
    """Every parameter's value."""
    samples: int
    seed: int
    sampler: Sampler = field(compare=False, repr=False)
    """The interpreter's run of these samples (`interp.runner.Sampling`), drawn when read."""

    def outputs(self) -> Iterator[list[Any]]:
        """Each sample's output, in order."""
        return self.sampler.outputs()

    def summary(self) -> Summary:
        """Frequencies of the discrete outputs and quantiles of the real ones, over every sample."""
        return self.sampler.summary()


@dataclass(frozen=True)
class Replay:
    """`align run --noise`: one execution on D with given noise H and, with `--aligned`, the alignment φ(H)
    and the run on D' with it."""

    path: str
    mechanism: ResolvedMechanism
    args: dict[str, Any]
    noise: dict[str, Any]
    run: ScalarRun
    neighbour: dict[str, Any] | None = None
    """The private parameters' values on D' (`--aligned` only)."""
    alignment: ScalarAlignment | None = None
    aligned_run: ScalarRun | None = None
    """The run on D' with φ(H); None when it stopped with `aligned_error`."""
    aligned_error: Diagnostic | None = None
    output_match: bool = False
    failures: tuple[ObligationId, ...] = ()
    """The obligations this H breaks (C0, C2, C3, C4a, C4c, C4d), in the order found."""
    different_density: str | None = None
    """C0: a value drawn in both runs with other parameters, described (None: every shared draw agrees)."""

    @property
    def cost_ok(self) -> bool:
        """C4c for this H: the cost is at most the claim, up to rounding (`obligations.cost_within_claim`)."""
        # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
        from .obligations import cost_within_claim

        assert self.alignment is not None, "only an aligned replay has a cost"
        return bool(cost_within_claim(self.alignment.cost, self.alignment.claim))

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.REFUTED if self.failures else ExitCode.OK
