"""Pipeline: the one way from a spec to a resolved program, and from there to each command's result.

    text -> parse -> resolve -> (check | verify | run | test)

The command line (`align.commands`), the Python API (`align.api`), the workers of `align test` and the tests
all load through here, so that reading, parsing and resolving happen the same way everywhere. Each step
raises `SpecError` with located diagnostics; `load_file` turns them into a `Loaded` value instead, for the
commands that go on to the next file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from .diagnostics import Diagnostic, SpecError, diag, did_you_mean
from .files import read_source
from .floats import diagnostics, qualify
from .results import CheckedMechanism, CheckedSite, MechanismVerdict, SynthesisOutcome
from .span import Source, shown_path
from .status import Status
from .unparse import unparse

if TYPE_CHECKING:
    from .checker.synthesis import Synthesis
    from .checker.verify import Options
    from .resolve import ResolvedMechanism, ResolvedSpec
    from .stats.lrtest import Pair


def read(path: str) -> Source:
    """A spec file's text (a regular UTF-8 file of bounded size; `files.read_source`)."""
    return read_source(path)


def resolve_source(source: Source) -> ResolvedSpec:
    """Parse and resolve one source text."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from .parse import parse_source
    from .resolve import resolve

    return resolve(parse_source(source))


def load(path: str) -> ResolvedSpec:
    """Read, parse and resolve one file; raises `SpecError`."""
    return resolve_source(read(path))


def load_text(text: str, path: str = "<string>") -> ResolvedSpec:
    """Parse and resolve spec text given in memory (diagnostics name `path`); raises `SpecError`."""
    return resolve_source(Source(path, text))


@dataclass(frozen=True)
class Loaded:
    """A file after loading: its source (when it could be read) and either its resolved spec, with its
    warnings, or the diagnostics that stopped it."""

    path: str
    source: Source | None
    spec: ResolvedSpec | None
    diagnostics: tuple[Diagnostic, ...] = ()
    """The errors that stopped it (no spec), or the warnings of the spec (`float-sensitive`)."""


def load_file(path: str) -> Loaded:
    """Like `load`, but a spec error is returned (with the source, for carets), not raised."""
    source: Source | None = None
    try:
        source = read(path)
        spec = resolve_source(source)
    except SpecError as error:
        return Loaded(path, source, None, tuple(error.diagnostics))
    return Loaded(path, source, spec, tuple(d for m in spec.mechanisms for d in diagnostics(m)))


def select(spec: ResolvedSpec, name: str | None, path: str) -> ResolvedMechanism:
    """The mechanism a command works on: the one named, or the only one; raises `SpecError`."""
    names = [m.name for m in spec.mechanisms]
    if name is not None:
        for m in spec.mechanisms:
            if m.name == name:
                return m
        raise SpecError([diag("no-such-mechanism", None, path=path, name=name, hint=did_you_mean(name, names))])
    if len(spec.mechanisms) > 1:
        raise SpecError([diag("which-mechanism", None, path=path, names=", ".join(f"`{n}`" for n in names))])
    return spec.mechanisms[0]


def load_mechanism(path: str, name: str | None = None) -> ResolvedMechanism:
    """Load a file and select one of its mechanisms; raises `SpecError`."""
    return select(load(path), name, path)


def verify(mech: ResolvedMechanism, options: Options | None = None, *, source: Source | None = None,
           synthesise: bool = False) -> MechanismVerdict:
    """Discharge every obligation of one mechanism (the proof rule is chosen by `checker.verify`).

    With the mechanism's `source` (the file it was read from), a Lemma 1 mechanism without an alignment (no
    block, or `alignment NAME auto`) gets one synthesised (checker/synthesis.py). `synthesise`: also search when
    the written alignment is not proved, and when it is, for one that proves a smaller claim."""
    # lazy: loads lark, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .checker.verify import Options, overall_scope, overall_status, verify_mechanism
    from .rules import rule_for

    options = options or Options()
    verdicts = verify_mechanism(mech, options)
    result = MechanismVerdict(mech, tuple(verdicts), overall_status(verdicts), overall_scope(verdicts))
    # A vacuous verdict (no two distinct neighbours) is about the relation, not the alignment: no search helps.
    if source is not None and rule_for(mech).aligned and not result.vacuous:
        if mech.alignment is None or (synthesise and result.status != Status.PROVED):
            result = _synthesised(result, source, options)
        elif synthesise:
            result = replace(result, synthesis=_smaller_claim(mech, source, options))
    return _in_floating_point(result)


def _in_floating_point(result: MechanismVerdict) -> MechanismVerdict:
    """The verdicts as they hold for the program the interpreter runs in doubles: a proof in exact arithmetic
    that rests on a float-sensitive comparison is not a proof of it (align/floats.py)."""
    # lazy: loads lark, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .checker.verify import overall_scope, overall_status

    verdicts = qualify(result.mechanism, result.verdicts)
    if verdicts == result.verdicts:
        return result
    return replace(result, verdicts=verdicts, status=overall_status(list(verdicts)),
                   scope=overall_scope(list(verdicts)))


def _counts(found: Synthesis) -> str:
    return (f"{found.candidates} candidate(s) of {found.space} template instances, learned from {found.examples} "
            f"example(s); {found.iterations} checker call(s), {found.seconds:.1f} s")


def _outcome(found: Synthesis, text: str, role: str = "none") -> SynthesisOutcome:
    return SynthesisOutcome(found.alignment is not None, found.alignment, found.candidates, found.examples,
                            found.iterations, found.seconds, found.space, text, role)


def _synthesised(result: MechanismVerdict, source: Source, options: Options) -> MechanismVerdict:
    """The verdict of a synthesised alignment the checker proved, or the written one's (none written: its
    refutations, which are about shifting no noise, become unknown) with the search's outcome."""
    # lazy: loads lark, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .checker.synthesis import synthesise
    from .checker.verify import overall_scope, overall_status
    from .interp.values import example_arguments

    mech = result.mechanism
    found = synthesise(mech, source, example_arguments(mech.node), options)
    if found.mechanism is not None and found.alignment is not None:
        verdicts = tuple(found.verdicts)  # the checker's on the synthesised alignment, computed by the search
        proved = MechanismVerdict(found.mechanism, verdicts, overall_status(list(verdicts)),
                                  overall_scope(list(verdicts)))
        what = "proved" if proved.status == Status.PROVED else f"{proved.status.value} ({proved.scope})"
        written = "the written alignment is not proved; " if mech.alignment is not None else ""
        text = f"{written}a synthesised alignment is {what} ({_counts(found)}); paste it into the spec:"
        role = "replaces" if mech.alignment is not None else "adopted"
        return replace(proved, synthesis=_outcome(found, text, role), source=result.source)
    why = ("no instance of the template is an alignment: each breaks an obligation on one of the examples"
           if found.exhausted else "no alignment found in the template space")
    notes = "".join("; " + note for note in found.notes)
    text = (f"{why} ({_counts(found)}{notes}): unknown, not a sign that the mechanism is not private; "
            f"`align test {shown_path(source.path)}` looks for a violation")
    if mech.alignment is not None:
        return replace(result, synthesis=_outcome(found, text))
    # No alignment was written: the refutations are about shifting no noise at all, not about the mechanism.
    verdicts = tuple(replace(v, status=Status.UNKNOWN, counterexample=None,
                             reason="no alignment was written, and none was found in the template space")
                     if v.status == Status.REFUTED else v for v in result.verdicts)
    return replace(result, verdicts=verdicts, status=overall_status(list(verdicts)),
                   scope=overall_scope(list(verdicts)), synthesis=_outcome(found, text))


SMALLER_CLAIMS = (Fraction(1, 2), Fraction(1, 4), Fraction(1, 8))
"""The fractions of a proved claim that `--synthesise` tries in turn, while an alignment proves them."""


def _smaller_claim(mech: ResolvedMechanism, source: Source, options: Options) -> SynthesisOutcome:
    """Whether an alignment of the template space proves the written claim times 1/2 (then 1/4, 1/8): the
    smallest proved, or why none is."""
    # lazy: loads lark, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .checker.synthesis import synthesise
    from .interp.values import example_arguments

    public = example_arguments(mech.node)
    best = None
    for factor in SMALLER_CLAIMS:
        found = synthesise(mech, source, public, options, claim_factor=factor)
        if found.status != Status.PROVED:
            break
        best = (factor, found)
    claim = unparse(mech.claim)
    if best is None:  # `found` is the search at the first factor
        why = "no alignment of the template space proves" if found.exhausted else "no alignment was found that proves"
        return _outcome(found, f"the written alignment is proved; {why} a smaller claim, {SMALLER_CLAIMS[0]} * "
                               f"({claim}) ({_counts(found)})")
    factor, found = best
    return _outcome(found, f"a better alignment exists: it proves the smaller claim {factor} * ({claim}) "
                           f"({_counts(found)}); paste it into the spec with that claim:", "suggested")


def checker_pairs(mech: ResolvedMechanism) -> list[Pair]:
    """The input pairs of the checker's counterexamples (`align verify` looking only for D != D', lengths
    <= 3), which `align test` tries first (its `extra_pairs`, after the user's): one per refuted obligation,
    distinct, named `counterexample (C4a)`.
    A refutation is a pair on which the alignment breaks, often where the mechanism leaks (design.md §4).
    Cached per mechanism (resolved mechanisms are frozen and hashable): it does not depend on the seed or the
    samples."""
    return list(_checker_pairs(mech))


@lru_cache(maxsize=32)
def _checker_pairs(mech: ResolvedMechanism) -> tuple[Pair, ...]:
    # lazy: loads lark, numpy, scipy, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .checker.verify import Options, verify_mechanism
    from .rules import rule_for
    from .stats.lrtest import counterexample_pair

    if mech.alignment is None or not rule_for(mech).counterexample_pairs:
        return ()
    try:
        verdicts = verify_mechanism(mech, Options(distinct_inputs=True))
    except SpecError:
        return ()
    pairs: list[Pair] = []
    for v in verdicts:
        data = v.counterexample
        if v.status != Status.REFUTED or data is None or not data.neighbour:
            continue
        try:
            _, pair = counterexample_pair(mech, data, f"counterexample ({v.obligation.id})")
        except SpecError:
            continue
        # D = D' (an alignment that breaks even without a change of input) cannot show a loss
        if pair.d and pair.d != pair.d_prime and all((pair.d, pair.d_prime) != (q.d, q.d_prime) for q in pairs):
            pairs.append(pair)
    return tuple(pairs)


def check(mech: ResolvedMechanism) -> CheckedMechanism:
    """`align check` of one resolved mechanism: its proof rule, each sampling site's summary and reads, the
    obligations `align verify` will discharge (computed here, printed by every format)."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from .obligations import parameter_reads, summarize_site
    from .rules import rule_for

    rule = rule_for(mech)
    sites = tuple(CheckedSite(summarize_site(mech, s), parameter_reads(mech, s)) for s in mech.noise)
    return CheckedMechanism(mech, rule, sites, rule.obligations(mech))
