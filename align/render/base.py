"""What every output format implements: `Renderer` (every command's results) and `FilesRenderer` (the CI
formats, for `check` and `verify` only), and the `Project` a run is in. The formats (text.py, concise.py,
json.py, sarif.py, github.py) subclass these; the registry of formats is render/__init__.py."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TextIO

from ..diagnostics import Code, Diagnostic, InternalError
from ..files import project_root

if TYPE_CHECKING:
    from ..interp.alignment import AlignmentReport
    from ..resolve import ResolvedMechanism
    from ..results import ExactReport, FileResult, Replay, SampleRun, TestReport
    from ..span import Source


@dataclass(frozen=True)
class Project:
    """Where a run is, for the formats that name files to a CI system: the folder their paths are relative to
    (`files.project_root`: the checkout's top, else the configuration's folder), and the address of align's
    documentation, if the project gives one (`[tool.align] docs-url`: SARIF's `helpUri`)."""

    root: Path
    docs_url: str | None = None

    @classmethod
    def here(cls) -> Project:
        return cls(project_root())


class Renderer(ABC):
    """Renders the results of one invocation of one command."""

    name: ClassVar[str]
    """The `--output-format` value."""
    description: ClassVar[str]
    """One line for `--help`."""
    one_document: ClassVar[bool] = False
    """The whole output is one document: an error after the results replaces them (JSON)."""
    commands: ClassVar[frozenset[str] | None] = None
    """The commands this format can express (None: every command); the command line refuses the others."""

    def __init__(self, command: str, stdout: TextIO, stderr: TextIO, project: Project | None = None):
        self.command = command
        self.stdout = stdout
        self.stderr = stderr
        self._project = project

    @property
    def project(self) -> Project:
        """The project the run is in (found from the working directory when the command line gave none)."""
        if self._project is None:
            self._project = Project.here()
        return self._project

    @abstractmethod
    def checked_file(self, file: FileResult) -> None:
        """`check`: one file's resolved mechanisms, or the diagnostics that stopped it."""

    @abstractmethod
    def verified_file(self, file: FileResult) -> None:
        """`verify`: one file's verdicts, or the diagnostics that stopped it."""

    @abstractmethod
    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        """`run`, `test`: the diagnostics that stopped the command (`source` for carets, when it was read)."""

    @abstractmethod
    def samples(self, run: SampleRun) -> None:
        """`run`: sampled executions, drawn lazily: a format takes every output (`run.outputs()`, streamed)
        or their summary (`run.summary()`)."""

    @abstractmethod
    def replay(self, replay: Replay) -> None:
        """`run --noise`: one execution replayed, and with `--aligned` the neighbour's run on φ(H)."""

    @abstractmethod
    def alignment_check(self, path: str, mech: ResolvedMechanism, report: AlignmentReport,
                        counterexample_out: str | None) -> None:
        """`run --check-alignment`: the sampled alignment check (`counterexample_out`: the file the first
        counterexample was written to, when asked for)."""

    @abstractmethod
    def tested(self, report: TestReport) -> None:
        """`test`: the search for a violation."""

    @abstractmethod
    def computed(self, report: ExactReport) -> None:
        """`test --exact`: the privacy loss computed from the paths."""

    @abstractmethod
    def explained(self, code: Code) -> None:
        """`explain CODE`."""

    def finish(self, exit_code: int) -> None:  # noqa: B027 (a hook: most formats write as they go)
        """Called once at the end with the command's exit code."""


class FilesRenderer(Renderer):
    """A format for the results of `check` and `verify` only (the CI formats): the command line refuses it for
    the other commands (`commands`), so their methods are never called."""

    commands: ClassVar[frozenset[str] | None] = frozenset({"check", "verify"})

    def _refused(self, what: str) -> None:
        raise InternalError(f"{what} has no {self.name} form: the command line offers {self.name} for check and "
                            "verify only")

    def samples(self, run: SampleRun) -> None:
        self._refused("align run")

    def replay(self, replay: Replay) -> None:
        self._refused("align run --noise")

    def alignment_check(self, path: str, mech: ResolvedMechanism, report: AlignmentReport,
                        counterexample_out: str | None) -> None:
        self._refused("align run --check-alignment")

    def tested(self, report: TestReport) -> None:
        self._refused("align test")

    def computed(self, report: ExactReport) -> None:
        self._refused("align test --exact")

    def explained(self, code: Code) -> None:
        self._refused("align explain")
