"""The Python API: the commands as functions that return typed results (`align.results`), for notebooks,
scripts and other tools; in a notebook, the results show as reports (report/jupyter.py). `import align` is
cheap; the solvers load on the first call that needs them.

    import align
    result = align.verify("specs/freegap/alg2_svt_gap.dp")
    result.status                      # Status.PROVED
    [(v.obligation.id, v.status) for v in result.verdicts]
    align.test("specs/incorrect/histogram_lap_eps.dp", {"eps": 0.5}).violation      # True

A spec is a `pathlib.Path`, a string ending in `.dp` (a file), or any other string (the spec's text). Each
function works on one mechanism: the spec's only one, or the one named by `mechanism=`. Bad input raises
`align.SpecError`, whose `diagnostics` are the located diagnostics the command line prints; anything else
that goes wrong is a bug in align and raises `align.InternalError`.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from . import limits
from .diagnostics import InternalError, SpecError, diag
from .limits import Range
from .pipeline import checker_pairs, read, resolve_source, select
from .pipeline import verify as verify_mechanism
from .results import ExactReport, SampleRun
from .span import Source

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .resolve import ResolvedMechanism
    from .results import MechanismVerdict, Replay, TestReport

F = TypeVar("F", bound=Callable[..., Any])


def _api(function: F) -> F:
    """A bad spec raises `SpecError` (located diagnostics); any other exception is a bug in align and is
    raised as `InternalError` from it, so that a caller can tell the two apart."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = function(*args, **kwargs)
            _show_in_jupyter()
            return result
        except (SpecError, InternalError):
            raise
        except Exception as error:  # re-raised as what it is: a bug
            raise InternalError(f"{type(error).__name__}: {error} (this is probably a bug in align; please "
                                "report it)") from error

    return wrapper  # type: ignore[return-value]


_SHELLS: set[int] = set()
"""The IPython shells whose display formatters know the results' views."""


def _show_in_jupyter() -> None:
    """In an IPython kernel (a notebook), teach its display formatters how to show the results, once
    (report/jupyter.py). The import is lazy: the reports load sympy, and a script outside IPython never shows a
    result."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None or id(shell) in _SHELLS:
        return
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from .report import jupyter

    jupyter.register(shell)
    _SHELLS.add(id(shell))


def _check_ranges(**values: tuple[Any, Range]) -> None:
    """The numeric arguments in the ranges of the command line's options (align/limits.py), else `usage`."""
    for name, (value, allowed) in values.items():
        problem = allowed.problem(value)
        if problem is not None:
            raise SpecError([diag("usage", None, message=f"{name} {problem}")])


def _path_and_mechanism(spec: str | os.PathLike[str], mechanism: str | None) -> tuple[str, ResolvedMechanism]:
    path, _, mech = _load(spec, mechanism)
    return path, mech


def _load(spec: str | os.PathLike[str], mechanism: str | None) -> tuple[str, Source, ResolvedMechanism]:
    if isinstance(spec, os.PathLike) or spec.endswith(".dp"):
        path = os.fspath(spec)
        source = read(path)
    else:
        path, source = "<string>", Source("<string>", spec)
    return path, source, select(resolve_source(source), mechanism, path)


@_api
def check(spec: str | os.PathLike[str], *, mechanism: str | None = None) -> ResolvedMechanism:
    """Parse and resolve: the mechanism with its names bound, types known and alignment attached."""
    return _path_and_mechanism(spec, mechanism)[1]


@_api
def verify(spec: str | os.PathLike[str], *, mechanism: str | None = None, max_length: int | None = None,
           timeout: float | None = None, every_obligation: bool = False, synthesise: bool = False) -> MechanismVerdict:
    """Discharge every obligation (`align verify`): each obligation's verdict and the status of the whole
    (refuted < unknown < bounded < proved; bounded is not a proof). `every_obligation`: after a refutation,
    check the others up to `max_length` too (`--every-obligation`). A mechanism without an alignment (or with
    `alignment NAME auto`) gets one synthesised, as on the command line (`result.synthesis`); `synthesise`: also
    when the written one is not proved, and when it is, look for one proving a smaller claim (`--synthesise`)."""
    # lazy: loads lark, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .checker.verify import Options

    if max_length is not None:
        _check_ranges(max_length=(max_length, limits.BOUNDED_LENGTH))
    if timeout is not None:
        _check_ranges(timeout=(timeout, limits.TIMEOUT_S))

    _, source, mech = _load(spec, mechanism)
    options = Options.of(max_length, timeout, every_obligation)
    return replace(verify_mechanism(mech, options, source=source, synthesise=synthesise), source=source)


@_api
def run(spec: str | os.PathLike[str], args: Mapping[str, Any], *, mechanism: str | None = None,
        samples: int = 10_000, seed: int = 0) -> SampleRun:
    """Sample the mechanism (`align run`): drawn lazily, as `.outputs()` (one per sample) or `.summary()`."""
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from .interp.runner import Sampling, prepare_arguments

    _check_ranges(samples=(samples, limits.SAMPLES), seed=(seed, limits.SEED))
    path, mech = _path_and_mechanism(spec, mechanism)
    values = prepare_arguments(mech, dict(args))
    return SampleRun(path, mech, values, samples, seed, Sampling(mech, values, samples, seed))


@_api
def replay(spec: str | os.PathLike[str], args: Mapping[str, Any], noise: Mapping[str, Any], *,
           neighbour: Mapping[str, Any] | None = None, mechanism: str | None = None) -> Replay:
    """Replay one execution with the given noise (`align run --noise`); with `neighbour` (the private
    parameters on D'), also apply the alignment and replay D' on φ(H) (`--aligned`)."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from .interp.replay import replay as replay_mechanism

    path, mech = _path_and_mechanism(spec, mechanism)
    return replay_mechanism(mech, path, dict(args), dict(noise), None if neighbour is None else dict(neighbour))


@_api
def test(spec: str | os.PathLike[str], args: Mapping[str, Any], *, mechanism: str | None = None,
         length: int = 5, samples: int = 64_000, alpha: float = 0.05, seed: int = 0,
         executor: Executor | None = None, checker: bool = True, exact: bool = True,
         max_length: int | None = None) -> TestReport:
    """Search for a privacy violation (`align test`): `args` are the public parameters; input pairs come from
    the checker's counterexamples and StatDP's patterns. The result does not depend on the executor. With
    `exact`, when the sampling finds no violation, the loss is also computed from the paths where the program
    allows it (`report.computed`). When nothing is found at `length`, the patterns of longer lengths are tried,
    doubling up to `max_length` (default 4 times `length`; `report.lengths`, `report.length`)."""
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from .exact.search import Computed
    from .stats.lrtest import default_max_length, search

    _check_ranges(length=(length, limits.TEST_LENGTH), samples=(samples, limits.TEST_SAMPLES),
                  alpha=(alpha, limits.ALPHA), seed=(seed, limits.SEED))
    if max_length is not None:
        _check_ranges(max_length=(max_length, limits.Range(length, limits.MAX_TEST_LENGTH)))
    path, mech = _path_and_mechanism(spec, mechanism)
    started = time.perf_counter()
    pairs = checker_pairs(mech) if checker else []
    computed = Computed(mech, dict(args), length, pairs, True, enabled=exact)
    result = search(mech, dict(args), length=length, samples=samples, alpha=alpha, seed=seed, executor=executor,
                    extra_pairs=pairs, max_length=default_max_length(length) if max_length is None else max_length,
                    computed=computed.at)
    return computed.report(path, result, time.perf_counter() - started)


@_api
def compute(spec: str | os.PathLike[str], args: Mapping[str, Any], *, mechanism: str | None = None,
            length: int = 5, checker: bool = True) -> ExactReport:
    """The privacy loss computed from the mechanism's paths (`align test --exact`): `args` are the public
    parameters; input pairs as for `test`. Deterministic bounds; raises SpecError (`exact-outside`) for a program
    outside the class the computation follows (docs/testing.md)."""
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from .exact.search import compute as compute_loss

    _check_ranges(length=(length, limits.TEST_LENGTH))
    path, mech = _path_and_mechanism(spec, mechanism)
    started = time.perf_counter()
    result = compute_loss(mech, dict(args), length=length, extra_pairs=checker_pairs(mech) if checker else ())
    return ExactReport(path, mech, result, time.perf_counter() - started, dict(args))
