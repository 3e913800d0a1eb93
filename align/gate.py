"""Gate (verdicts -> exit code): whether a bounded verdict passes `align verify`, and who accepted it.

A bounded verdict (proved only for input lengths <= N) is not a proof, so by default it fails the gate (exit 3).
A project may accept it in three ways, each reported beside the verdict:

- for every spec: `--accept-bounded`, or `accept-bounded = true` in the configuration;
- for named specs: `accept-bounded = ["specs/legacy/*.dp", ...]` in the configuration (globs relative to its
  folder, as `paths`), so that one bounded spec does not force acceptance on the whole run (as mypy's and
  ruff's per-file settings);
- in the spec itself: a comment line `# align: accept-bounded`.

An alignment that align synthesised (the spec wrote none, or `--synthesise` replaced it) and that is proved only
bounded is accepted by the spec's own acceptance alone (the last two), never by the first: a synthesised
alignment is align's guess, found on short inputs, and a broken mechanism can have one that holds up to N (a
Sparse variant that is not ε-DP did pass `--accept-bounded` so). The verdict then says the alignment was
synthesised and what would accept it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .files import Glob, project_path
from .status import Status

if TYPE_CHECKING:
    from .config import Config
    from .results import MechanismVerdict
    from .span import Source

PRAGMA = re.compile(r"^[ \t]*#[ \t]*align:[ \t]*accept-bounded[ \t]*$", re.MULTILINE)
"""The spec's own acceptance: a comment line of its own."""


@dataclass(frozen=True)
class Acceptance:
    """Who accepts bounded verdicts for one spec."""

    by: str
    """In words, for the output: `--accept-bounded`, `the spec's \\`# align: accept-bounded\\` (line 3)`, ..."""
    own: bool
    """The spec's own acceptance (its comment line, or a configuration glob that names it), which alone accepts a
    synthesised alignment; False for the acceptance of every spec."""


def pragma_line(source: Source | None) -> int | None:
    """The line of the spec's `# align: accept-bounded`, if it has one."""
    if source is None:
        return None
    match = PRAGMA.search(source.text)
    return None if match is None else source.text.count("\n", 0, match.start()) + 1


def acceptance(path: str, source: Source | None, flag: bool | None, config: Config) -> Acceptance | None:
    """Who accepts bounded verdicts for the spec at `path`: the spec's comment, a configuration glob naming it,
    then the flag or the configuration's `true`; None when nobody does."""
    line = pragma_line(source)
    if line is not None:
        return Acceptance(f"the spec's `# align: accept-bounded` (line {line})", own=True)
    configured = config.accept_bounded
    if isinstance(configured, tuple):
        pattern = _matching(path, configured, config.folder)
        if pattern is not None:
            return Acceptance(f"the configuration's accept-bounded (`{pattern}`)", own=True)
    if flag:
        return Acceptance("--accept-bounded", own=False)
    if configured is True:
        return Acceptance("the configuration's accept-bounded = true", own=False)
    return None


def _matching(path: str, patterns: tuple[str, ...], folder: Path | None) -> str | None:
    if folder is None:
        return None
    relative = project_path(path, folder)
    if relative is None:
        return None
    for pattern in patterns:
        if Glob.of(pattern).matches(relative):
            return pattern
    return None


def judge(verdict: MechanismVerdict, accepted: Acceptance | None) -> tuple[bool, str]:
    """Whether a bounded verdict passes the gate, and the sentence that says why (empty when the verdict is not
    bounded, or nobody accepted it and there is nothing more to say)."""
    if verdict.status != Status.BOUNDED or accepted is None:
        return False, ""
    synthesised = verdict.synthesis is not None and verdict.synthesis.found
    if synthesised and not accepted.own:
        return False, (f"not accepted: the alignment was synthesised, and {accepted.by} accepts only written "
                       "ones (a synthesised alignment proved for short inputs is align's guess); the spec's own "
                       "`# align: accept-bounded`, or a configuration glob naming it, accepts it")
    kind = "a synthesised alignment, " if synthesised else ""
    return True, f"accepted ({kind}bounded is not a proof for longer inputs) by {accepted.by}"
