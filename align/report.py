"""Stage 4 (results -> text): render diagnostics and mechanism summaries as full text, concise lines or JSON.

Nothing here decides anything; it only formats what earlier stages produced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, TextIO

from .diagnostics import Diagnostic
from .obligations import Obligation, obligations, parameter_reads, summarize_site
from .resolve import ResolvedMechanism
from .span import Source, visible
from .unparse import unparse

FORMATS = ("full", "concise", "json")


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


# ------------------------------------------------------------------------------------------- diagnostics


def diagnostic_line(d: Diagnostic, style: Style = Style(False)) -> str:
    """`path:line:col: error[code]: message`; `path: ...` for a whole file, `align: ...` for a command-line
    value. Paths and messages may quote the spec or the command line: control characters are escaped."""
    where = f"{d.span}: " if d.span is not None else (f"{d.args['path']}: " if "path" in d.args else "align: ")
    label = style.error(f"{d.severity.value}[{d.code}]")
    return f"{visible(where)}{label}: {visible(d.message)}"


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


def render_diagnostic(d: Diagnostic, source: Source | None, style: Style = Style(False)) -> str:
    lines = [diagnostic_line(d, style)]
    lines += _snippet(source, d.span, style)
    for note in d.notes:
        where = f" ({note.span})" if note.span is not None else ""
        lines.append(visible(f"{' ' * (len(str(d.span.line)) if d.span else 1)} = note: {note.message}{where}"))
    return "\n".join(lines)


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
        "span": d.span.to_json() if d.span else None,
        "notes": [{"message": note.message, "span": note.span.to_json() if note.span else None} for note in d.notes],
    }


def report_errors(error, source: Source | None, command: str, path: str, as_json: bool, stdout: TextIO,
                  stderr: TextIO) -> None:
    """Print a stage's diagnostics: one JSON document on stdout, or located messages on stderr."""
    import json

    if as_json:
        json.dump({"command": command, "path": path, "ok": False,
                   "diagnostics": [diagnostic_json(d) for d in error.diagnostics], "exit_code": 2}, stdout, indent=2)
        stdout.write("\n")
        return
    style = Style.for_stream(stderr)
    for d in error.diagnostics:
        stderr.write(render_diagnostic(d, source, style) + "\n\n")


# ------------------------------------------------------------------------------------ mechanism summaries


def _adjacency_text(mech: ResolvedMechanism, name: str) -> str:
    param = mech.param(name)
    if param is None or param.public:
        return "public (equal on D and D')"
    parts = []
    for adj in param.adjacency:
        bound = unparse(adj.bound) if adj.bound is not None else ""
        parts.append({
            "pointwise": f"|{name}[i] - {name}'[i]| <= {bound}",
            "l1": f"sum |{name}[i] - {name}'[i]| <= {bound}",
            "scalar": f"|{name} - {name}'| <= {bound}",
            "monotone": f"monotone {name}",
        }[adj.kind])
    return ", ".join(parts)


def proof_rule(mech: ResolvedMechanism) -> str:
    if mech.mixture_sites:
        return "R²DP scale mixture (seed 002, Theorem 4.1 / Corollary 4.2)"
    return "randomness alignment, Lemma 1 (Free Gap, Section 4)"


def mechanism_text(mech: ResolvedMechanism, style: Style = Style(False)) -> str:
    node = mech.node
    out = [f"{style.bold('mechanism ' + mech.name)}  {style.dim(str(node.name_span))}"]
    width = max((len(p.name) + len(str(p.type)) for p in mech.params), default=0) + 2
    out.append("  parameters")
    for p in mech.params:
        out.append(f"    {(p.name + ': ' + str(p.type)).ljust(width)}  {_adjacency_text(mech, p.name)}")
    if mech.requires:
        out.append("  requires     " + ", ".join(unparse(r) for r in mech.requires))
    out.append("  privacy      " + unparse(mech.claim))
    out.append("  proof rule   " + proof_rule(mech))
    out.append("  output       " + str(mech.output_type))
    out.append("  sampling sites")
    if not mech.noise:
        out.append("    (none)")
    summaries = [summarize_site(mech, s) for s in mech.noise]
    name_w = max((len(s.site.display) for s in summaries), default=0)
    dist_w = max((len(s.distribution_text) for s in summaries), default=0)
    for s in summaries:
        out.append(f"    {s.site.display.ljust(name_w)} ~ {s.distribution_text.ljust(dist_w)}  "
                   f"{style.dim('line ' + str(s.site.span.line))}")
        cost = f"c = {s.cost_text}" if s.site.distribution.lipschitz else s.cost_text
        out.append(f"    {' ' * name_w}   cost coefficient {cost}")
        reads = parameter_reads(mech, s.site)
        marked = reads.text() if reads.public else style.error(reads.text())
        out.append(f"    {' ' * name_w}   parameters: {marked}")
        out.append(f"    {' ' * name_w}   alignment: {s.shift_text}")
    if mech.alignment is not None:
        if mech.alignment.lets or mech.alignment.invariants:
            out.append("  alignment")
            for let in mech.alignment.lets:
                out.append(f"    let {let.name} = {unparse(let.value)}")
            for inv in mech.alignment.invariants:
                out.append(f"    invariant {unparse(inv.condition)}")
    elif not mech.mixture_sites:
        out.append("  alignment    none: no noise is shifted")
    out.append("  obligations for `align verify` (nothing is proved by `align check`)")
    for ob in obligations(mech):
        out.append(f"    {style.accent(ob.id.ljust(4))} {ob.title}  {style.dim(str(ob.span))}")
        for detail in ob.details:
            out.append(f"         {detail}")
    return "\n".join(out)


def mechanism_concise(mech: ResolvedMechanism) -> str:
    obs = obligations(mech)
    ids = " ".join(o.id + (f"({o.site})" if o.site else "") for o in obs)
    return (f"{mech.node.name_span}: mechanism {mech.name}: {len(mech.noise)} sampling site(s); "
            f"obligations {ids}")


def _obligation_json(o: Obligation) -> dict[str, Any]:
    return {"id": o.id, "title": o.title, "span": o.span.to_json(), "details": list(o.details), "site": o.site}


def mechanism_json(mech: ResolvedMechanism) -> dict[str, Any]:
    sites = []
    for s in (summarize_site(mech, site) for site in mech.noise):
        sites.append({
            "name": s.site.name, "family": s.site.family,
            "index": s.site.loop.var if s.site.loop else None,
            "distribution": s.site.distribution.name, "args": [unparse(a) for a in s.site.args],
            "lipschitz": s.site.distribution.lipschitz,
            "cost_coefficient": s.cost_text if s.site.distribution.lipschitz else None,
            "cost_note": s.site.distribution.cost_note,
            "alignment": s.shift_text, "span": s.site.span.to_json(),
            "parameters_public": parameter_reads(mech, s.site).public,
            "parameters_read": parameter_reads(mech, s.site).text(),
        })
    return {
        "name": mech.name,
        "span": mech.node.name_span.to_json(),
        "parameters": [{"name": p.name, "type": str(p.type), "adjacency": _adjacency_text(mech, p.name)}
                       for p in mech.params],
        "requires": [unparse(r) for r in mech.requires],
        "privacy": unparse(mech.claim),
        "proof_rule": proof_rule(mech),
        "output_type": str(mech.output_type),
        "sampling_sites": sites,
        "alignment": None if mech.alignment is None else {
            "lets": [{"name": let.name, "value": unparse(let.value)} for let in mech.alignment.lets],
            "shifts": [{"var": s.var, "index": s.index_var, "shift": unparse(s.shift)} for s in mech.alignment.shifts],
            "invariants": [unparse(i.condition) for i in mech.alignment.invariants],
        },
        "obligations": [_obligation_json(o) for o in obligations(mech)],
    }


# ------------------------------------------------------------------------------------------------ verdicts

_STATUS_STYLE = {"proved": "32", "bounded": "33", "refuted": "1;31", "unknown": "33"}


def _status(style: Style, status: str) -> str:
    return style._wrap(_STATUS_STYLE.get(str(status), "0"), str(status).ljust(7))


def _requires_text(mech: ResolvedMechanism) -> str:
    return ", ".join(unparse(r) for r in mech.requires) or "values"


_SUMMARY = {
    "proved": "ε-differentially private ({scope})",
    "bounded": "no obligation refuted, but proved only {scope}: not a proof of ε-DP (longer inputs are not "
               "covered; `--accept-bounded` accepts this)",
    "refuted": "this alignment does not prove the claim (the mechanism may still be private; `align test` looks "
               "for a violation)",
    "unknown": "some obligation could not be decided",
}


def verdict_summary(status: str, scope: str) -> str:
    """The verdict line's text: it names one scope, the one the whole verdict has."""
    return _SUMMARY[str(status)].format(scope=scope)


def verdicts_text(mech: ResolvedMechanism, verdicts: list, status: str, scope: str = "",
                  style: Style = Style(False)) -> str:
    out = [f"{style.bold('mechanism ' + mech.name)}  {style.dim(str(mech.node.name_span))}",
           f"  proof rule   {proof_rule(mech)}",
           f"  parameters   symbolic, for all {_requires_text(mech)}",
           f"  claim        ε = {unparse(mech.claim)}"]
    for v in verdicts:
        ob = v.obligation
        label = ob.id + (f"({ob.site})" if ob.site else "")
        detail = v.scope if str(v.status) in ("proved", "bounded") else v.reason
        out.append(f"  {style.accent(label.ljust(10))} {_status(style, v.status)} {detail}  "
                   f"{style.dim(f'{v.seconds:.2f}s  {ob.span}')}")
        out.append(f"  {' ' * 10} {style.dim(ob.title)}")
        for note in v.notes:
            out.append(f"  {' ' * 10} note: {note}")
        if str(v.status) == "refuted" and v.counterexample is not None:
            out += ["  " + " " * 10 + " " + line for line in counterexample_lines(v.counterexample)]
    total = sum(v.seconds for v in verdicts)
    out.append(f"  verdict      {_status(style, status).strip()} — {verdict_summary(status, scope)}  "
               f"{style.dim(f'{total:.2f}s')}")
    return "\n".join(out)


def counterexample_lines(cex: dict) -> list[str]:
    lines = [f"counterexample ({cex.get('why', '')})"]
    if cex.get("lengths"):
        lines.append("  lengths " + ", ".join(f"{k}: {v}" for k, v in cex["lengths"].items()))
    elif cex.get("length") is not None:
        lines.append(f"  length {cex['length']}")
    for key in ("args", "neighbour", "noise", "shifts"):
        values = cex.get(key) or {}
        if values:
            prime = "'" if key == "neighbour" else ""
            lines.append(f"  {key}: " + ", ".join(f"{name}{prime} = {_plain(value)}" for name, value in values.items()))
    if "output" in cex:
        lines.append(f"  output on D: {_plain(cex['output'])}")
    if "aligned_output" in cex and cex.get("obligation") == "C4a":
        lines.append(f"  output on D' with aligned noise: {_plain(cex['aligned_output'])}")
    return lines


def _plain(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    if isinstance(value, dict) and "tag" in value:
        payload = value.get("payload")
        return value["tag"] + ("(" + ", ".join(_plain(p) for p in payload) + ")" if payload else "")
    if value is None:
        return "-"
    return str(value)


def verdicts_concise(mech: ResolvedMechanism, verdicts: list, status: str, scope: str = "") -> str:
    parts = [f"{v.obligation.id}{'(' + v.obligation.site + ')' if v.obligation.site else ''}={v.status}"
             for v in verdicts]
    shown = f"{status} ({scope})" if scope else str(status)
    return f"{mech.node.name_span}: mechanism {mech.name}: {shown}: " + " ".join(parts)


def verdicts_json(mech: ResolvedMechanism, verdicts: list, status: str, scope: str = "") -> dict[str, Any]:
    return {
        "name": mech.name,
        "span": mech.node.name_span.to_json(),
        "proof_rule": proof_rule(mech),
        "status": str(status),
        "scope": scope or None,
        "obligations": [{**_obligation_json(v.obligation), "status": str(v.status), "scope": v.scope,
                         "reason": v.reason, "seconds": round(v.seconds, 4), "notes": v.notes,
                         "counterexample": v.counterexample} for v in verdicts],
    }
