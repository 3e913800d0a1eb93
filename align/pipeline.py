"""Pipeline: the one way from a spec to a resolved program, and from there to each command's result.

    text -> parse -> resolve -> (check | verify | run | test)

The command line (`align.commands`), the Python API (`align.api`), the workers of `align test` and the tests
all load through here, so that reading, parsing and resolving happen the same way everywhere. Each step
raises `SpecError` with located diagnostics; `load_file` turns them into a `Loaded` value instead, for the
commands that go on to the next file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .diagnostics import Diagnostic, SpecError, diag, did_you_mean
from .span import Source

if TYPE_CHECKING:
    from .checker.verify import Options
    from .resolve import ResolvedMechanism, ResolvedSpec
    from .results import MechanismVerdict


def read(path: str) -> Source:
    """A spec file's text (a regular UTF-8 file of bounded size; `parse.read_source`)."""
    from .parse import read_source

    return read_source(path)


def resolve_source(source: Source) -> ResolvedSpec:
    """Parse and resolve one source text."""
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
    """A file after loading: its source (when it could be read) and either its resolved spec or the
    diagnostics that stopped it."""

    path: str
    source: Source | None
    spec: ResolvedSpec | None
    diagnostics: tuple[Diagnostic, ...] = ()


def load_file(path: str) -> Loaded:
    """Like `load`, but a spec error is returned (with the source, for carets), not raised."""
    source: Source | None = None
    try:
        source = read(path)
        return Loaded(path, source, resolve_source(source))
    except SpecError as error:
        return Loaded(path, source, None, tuple(error.diagnostics))


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


def verify(mech: ResolvedMechanism, options: Options | None = None) -> MechanismVerdict:
    """Discharge every obligation of one mechanism (the proof rule is chosen by `checker.verify`)."""
    from .checker.verify import Options, overall_scope, overall_status, verify_mechanism
    from .results import MechanismVerdict

    verdicts = verify_mechanism(mech, options or Options())
    return MechanismVerdict(mech, tuple(verdicts), overall_status(verdicts), overall_scope(verdicts))
