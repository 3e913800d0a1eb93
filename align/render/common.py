"""Renderers (shared): styling, located diagnostics, and the wording every format shares.

`diagnostic_line` and `render_diagnostic` are also what the command line uses for usage and internal errors,
before any format is chosen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from ..diagnostics import Diagnostic
from ..span import Source, shown_path, visible
from ..status import Status
from ..unparse import clause_text, unparse

FINDING_LEVELS: dict[Status, str] = {Status.REFUTED: "error", Status.UNKNOWN: "warning", Status.BOUNDED: "warning"}
"""The verdicts the CI formats report (a proof is not a finding), and the level of each (SARIF, GitHub)."""

if TYPE_CHECKING:
    from ..counterexample import Counterexample
    from ..resolve import ResolvedMechanism
    from ..results import Verdict


@dataclass(frozen=True)
class Style:
    """ANSI styling, off when NO_COLOR is set or the stream is not a terminal."""

    color: bool

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        wants = "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        return cls(wants and hasattr(stream, "isatty") and stream.isatty())

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def error(self, text: str) -> str:
        return self._wrap("1;31", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def accent(self, text: str) -> str:
        return self._wrap("36", text)


PLAIN = Style(False)
"""No colour: files, pipes, tests."""


# ------------------------------------------------------------------------------------------- diagnostics


def diagnostic_line(d: Diagnostic, style: Style = PLAIN) -> str:
    """`path:line:col: error[code]: message`; `path: ...` for a whole file, `align: ...` for a command-line
    value. Paths and messages may quote the spec or the command line: control characters are escaped."""
    where = f"{d.span}: " if d.span is not None else (f"{shown_path(str(d.args['path']))}: " if "path" in d.args
                                                       else "align: ")
    label = style.error(f"{d.severity.value}[{d.code}]")
    return f"{where}{label}: {visible(d.message)}"


_SNIPPET_WIDTH = 160
"""Characters of a source line shown at most; a longer line is cut around the span (`...` at the cuts)."""


def _snippet(source: Source | None, span, style: Style) -> list[str]:
    """The span's source line with carets under the span; control characters escaped, tabs as 4 spaces."""
    if source is None or span is None or span.path != source.path:
        return []
    raw = source.line(span.line)
    start = max(0, span.column - 1)
    end = span.end_column - 1 if span.end_line == span.line else len(raw)
    lo, hi = 0, len(raw)
    if hi > _SNIPPET_WIDTH:  # a minified or hostile line: show a window around the span
        lo = min(start, hi) - 40 if min(start, hi) > 40 else 0
        hi = min(hi, lo + _SNIPPET_WIDTH)
    cells = [visible(c, tab="    ") for c in raw[lo:hi]]
    prefix, suffix = ("..." if lo > 0 else ""), ("..." if hi < len(raw) else "")
    caret_at = len(prefix) + sum(len(c) for c in cells[: max(0, start - lo)])
    width = max(1, sum(len(c) for c in cells[max(0, start - lo): max(0, min(end, hi) - lo)]))
    gutter = str(span.line)
    pad = " " * len(gutter)
    return [f"{pad} |", f"{gutter} | {prefix}{''.join(cells)}{suffix}",
            f"{pad} | {' ' * caret_at}{style.error('^' * width)}"]


def render_diagnostic(d: Diagnostic, source: Source | None, style: Style = PLAIN) -> str:
    lines = [diagnostic_line(d, style)]
    lines += _snippet(source, d.span, style)
    for note in d.notes:
        where = f" ({note.span})" if note.span is not None else ""
        lines.append(visible(f"{' ' * (len(str(d.span.line)) if d.span else 1)} = note: {note.message}{where}"))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ wording


def adjacency_text(mech: ResolvedMechanism, name: str) -> str:
    param = mech.param(name)
    if param is None or param.public:
        return "public (equal on D and D')"
    return ", ".join(clause_text(adj) for adj in param.adjacency)


def proof_rule(mech: ResolvedMechanism) -> str:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..rules import POST_PROCESSING, rule_for

    name = rule_for(mech).name
    return f"{name}, for `out`; then {POST_PROCESSING.name}" if mech.release is not None else name


def requires_text(mech: ResolvedMechanism) -> str:
    domains = [f"{p.name} in {p.domain_text}" for p in mech.params if p.public and p.domain is not None]
    return ", ".join([*domains, *(unparse(r) for r in mech.requires)]) or "values"


_SUMMARY = {
    "proved": "ε-differentially private ({scope})",
    "bounded": "no obligation refuted, but proved only {scope}: not a proof of ε-DP (longer inputs are not "
               "covered; `--accept-bounded` accepts this)",
    "refuted": "this alignment does not prove the claim (the mechanism may still be private; `align test` looks "
               "for a violation)",
    "unknown": "some obligation could not be decided",
    "vacuous": "vacuous: no two distinct neighbours D ≠ D' satisfy the assumptions where the proof looked, so "
               "the proofs say nothing about privacy (see ADJ)",
}


def verdict_summary(status: str, scope: str, mech: ResolvedMechanism | None = None, vacuous: bool = False) -> str:
    """The verdict line's text: it names one scope, the one the whole verdict has, and for a one-sided
    neighbouring relation, the side the bound is for. `vacuous` (`results.vacuous`): an unknown verdict whose
    neighbouring relation admits no two distinct inputs says so."""
    text = _SUMMARY["vacuous" if vacuous and str(status) == "unknown" else str(status)].format(scope=scope)
    if str(status) == "refuted" and mech is not None:
        text = text.replace("this alignment", refuted_subject(mech), 1)
    if mech is not None and mech.one_sided and str(status) in ("proved", "bounded"):
        text += f"; one-sided: for neighbours with {one_sided_text(mech)} only (the reverse bound is not claimed)"
    if mech is not None and mech.release is not None:
        text += _RELEASED.get(str(status), "")
    return text


_RELEASED = {
    "proved": "; the proof is of `out`, and what the release block publishes, a function of `out` alone, is "
              "private by post-processing",
    "bounded": "; the checks are of `out`, and what the release block publishes, a function of `out` alone, "
               "inherits them by post-processing",
    "refuted": "; the obligations are about `out`, which the release block post-processes: a privacy violation of "
               "what it publishes is a separate question",
}
"""What a verdict adds for a mechanism with a release block: the obligations are about `out`."""


def refuted_subject(mech: ResolvedMechanism) -> str:
    """What a refuted verdict says does not prove the claim: the written alignment, or, with none written,
    shifting no noise (Lemma 1 reads a missing alignment so) or the proof rule that needs none (R²DP)."""
    if mech.alignment is not None:
        return "this alignment"
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..rules import rule_for

    rule = rule_for(mech)
    if rule.aligned:
        return "shifting no noise (no alignment was written)"
    return f"the proof rule ({rule.name})"


def one_sided_text(mech: ResolvedMechanism) -> str:
    """The one-sided clauses of a mechanism, as written (`q'[i] <= q[i]`)."""
    return ", ".join(a.rule.text(p.name) for p in mech.params for a in p.adjacency if a.rule.one_sided)


def finding_lines(v: Verdict) -> list[str]:
    """What the CI formats say of one open obligation: its title, status, scope and reason, then the
    counterexample (as the text report shows it)."""
    scope = f" ({v.scope})" if v.scope else ""
    lines = [f"{v.obligation.title}: {v.status}{scope}" + (f": {v.reason}" if v.reason else "")]
    if v.counterexample is not None:
        lines += counterexample_lines(v.counterexample)
    return lines


def counterexample_lines(counterexample: Counterexample) -> list[str]:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import format_value, format_values
    from ..obligations import ObligationId

    cex = counterexample.to_json()  # the values as the file and the JSON report write them
    lines = [f"counterexample ({cex.get('why', '')})"]
    if cex.get("lengths"):
        lines.append("  lengths " + ", ".join(f"{k}: {v}" for k, v in cex["lengths"].items()))
    elif cex.get("length") is not None:
        lines.append(f"  length {cex['length']}")
    for key in ("args", "neighbour", "noise", "shifts"):
        values = cex.get(key) or {}
        if values:
            prime = "'" if key == "neighbour" else ""
            lines.append(f"  {key}: " + format_values(values, prime, digits=None))
    if "output" in cex:
        lines.append(f"  output on D: {format_value(cex['output'], digits=None)}")
    if "aligned_output" in cex and cex.get("obligation") == ObligationId.C4A:
        lines.append(f"  output on D' with aligned noise: {format_value(cex['aligned_output'], digits=None)}")
    return lines
