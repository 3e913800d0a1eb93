"""Renderers (JSON): one document on stdout per invocation, for programs (the schema is docs/language.md's)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..diagnostics import Code, Diagnostic, ExitCode
from ..span import Source
from ..unparse import unparse
from .base import Project, Renderer
from .common import adjacency_text, proof_rule

if TYPE_CHECKING:
    from ..exact.search import ExactResult
    from ..interp.alignment import AlignmentReport
    from ..resolve import ResolvedMechanism
    from ..results import CheckedMechanism, ExactReport, FileResult, Replay, SampleRun, TestReport


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
        "span": d.span.to_json() if d.span else None,
        "notes": [{"message": note.message, "span": note.span.to_json() if note.span else None} for note in d.notes],
    }


def _obligation_json(o: Any) -> dict[str, Any]:
    return {"id": o.id, "title": o.title, "span": o.span.to_json(), "details": list(o.details), "site": o.site}


def mechanism_json(checked: CheckedMechanism) -> dict[str, Any]:
    mech = checked.mechanism
    sites = []
    for s, reads in ((c.summary, c.reads) for c in checked.sites):
        sites.append({
            "name": s.site.name, "family": s.site.family,
            "index": s.site.loop.var if s.site.loop else None,
            "distribution": s.site.distribution.name, "args": [unparse(a) for a in s.site.args],
            "lipschitz": s.site.distribution.lipschitz,
            "cost_coefficient": s.cost_text if s.site.distribution.lipschitz else None,
            "cost_note": s.site.distribution.cost_note,
            "alignment": s.shift_text, "span": s.site.span.to_json(),
            "parameters_public": reads.public,
            "parameters_read": reads.text(),
        })
    return {
        "name": mech.name,
        "span": mech.node.name_span.to_json(),
        "parameters": [{"name": p.name, "type": str(p.type), "domain": p.domain_text,
                        "adjacency": adjacency_text(mech, p.name)}
                       for p in mech.params],
        "requires": [unparse(r) for r in mech.requires],
        "privacy": unparse(mech.claim),
        "example": {x.label: unparse(x.value) for x in mech.node.examples},
        "proof_rule": proof_rule(mech),
        "output_type": str(mech.output_type),
        "published_type": str(mech.published_type),
        "sampling_sites": sites,
        "alignment": None if mech.alignment is None else {
            "lets": [{"name": let.name, "value": unparse(let.value)} for let in mech.alignment.lets],
            "shifts": [{"var": s.var, "index": s.index_var, "shift": unparse(s.shift)} for s in mech.alignment.shifts],
            "invariants": [unparse(i.condition) for i in mech.alignment.invariants],
        },
        "obligations": [_obligation_json(o) for o in checked.obligations],
    }


def verdicts_json(mech: ResolvedMechanism, verdicts: list, status: str, scope: str = "") -> dict[str, Any]:
    return {
        "name": mech.name,
        "span": mech.node.name_span.to_json(),
        "proof_rule": proof_rule(mech),
        "status": str(status),
        "scope": scope or None,
        "one_sided": mech.one_sided,
        "obligations": [{**_obligation_json(v.obligation), "status": str(v.status), "scope": v.scope,
                         "reason": v.reason, "seconds": round(v.seconds, 4), "notes": v.notes,
                         "counterexample": v.counterexample.to_json() if v.counterexample is not None else None}
                        for v in verdicts],
    }


def finding_json(f: Any) -> dict:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import to_json

    return {"d": to_json(dict(f.pair.d)), "d_prime": to_json(dict(f.pair.d_prime)), "pattern": f.pair.name,
            "event": f.event.text, "count_d": f.c1, "samples_d": f.n1, "count_d_prime": f.c2,
            "samples_d_prime": f.n2, "p_value": f.p_value, "adjusted_p_value": f.adjusted_p,
            "epsilon_lower_bound": None if f.epsilon_lower_bound == -math.inf else f.epsilon_lower_bound,
            "support_mismatch": f.support_mismatch, "epsilon": getattr(f, "eps", None),
            "rejects": f.rejects,
            "epsilon_infinite": f.epsilon_bound == math.inf, "support_proof": f.impossible or None,
            "length": f.pair.length}


def skipped_json(skipped: Sequence[Any]) -> list[dict[str, Any]]:
    """The input pairs the program stopped on (left out of the search), with its error."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import to_json

    return [{"pattern": s.pair.name, "d": to_json(dict(s.pair.d)), "d_prime": to_json(dict(s.pair.d_prime)),
             "length": s.pair.length, "code": s.diagnostic.code, "reason": s.diagnostic.message} for s in skipped]


def result_json(path: str, mechanism: str, result: Any, seconds: float) -> dict:
    w, s = result.witness, result.strongest
    return {"command": "test", "path": path, "mechanism": mechanism, "ok": True,
            "claimed_epsilon": result.claimed_epsilon, "alpha": result.alpha, "seed": result.seed,
            "claim_reads_output": getattr(result, "claim_reads_output", False),
            "violation": result.violation, "tests": result.tests, "samples": result.samples,
            "rounds": result.rounds, "confirmations": getattr(result, "confirmations", 0),
            "pairs": len(result.pairs), "pair_names": [p.name for p in result.pairs],
            "skipped_pairs": skipped_json(getattr(result, "skipped", ())),
            "seconds": seconds,
            "witness": finding_json(w) if w is not None else None,
            "strongest": finding_json(s) if s is not None else None,
            "exit_code": int(ExitCode.REFUTED if result.violation else ExitCode.OK)}


def computed_json(report: ExactReport) -> dict[str, Any]:
    return {"command": "test", "mode": "exact", "path": report.path, "mechanism": report.mechanism.name, "ok": True,
            **exact_json(report.result), "seconds": report.seconds, "exit_code": int(report.exit_code)}


def exact_json(r: ExactResult) -> dict[str, Any]:
    """A computed search (align/exact/): its verdict and its strongest event with the brackets behind it."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import to_json

    def finding(f: Any) -> dict[str, Any]:
        d, d2 = f.inputs
        return {"pair": f.pair.name, "length": f.pair.length, "d": to_json(dict(d)), "d_prime": to_json(dict(d2)),
                "event": f.event.text(),
                "p": [float(f.p.lower), float(f.p.upper)], "p_prime": [float(f.p_prime.lower), float(f.p_prime.upper)],
                "epsilon_lower_bound": None if f.epsilon == math.inf else f.epsilon,
                "epsilon_infinite": f.epsilon == math.inf}

    s = r.strongest
    return {"claimed_epsilon": r.claimed_epsilon, "violation": r.violation, "paths": r.paths,
            "pairs": len(r.pairs), "pair_names": [p.name for p in r.pairs], "events": len(r.findings),
            "strongest": finding(s) if s is not None else None, "lengths": list(r.lengths),
            "length": r.length,
            "skipped_pairs": skipped_json(r.skipped), "outside": r.outside}


def _event_json(e: Any) -> dict[str, Any]:
    return {"kind": e.kind, "line": e.line, "text": e.text, "depth": e.depth}


def replay_json(r: Replay) -> dict[str, Any]:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import to_json

    doc: dict[str, Any] = {"command": "run", "mode": "replay", "path": r.path, "mechanism": r.mechanism.name,
                           "args": to_json(r.args), "noise": to_json(r.noise), "out": to_json(r.run.out),
                           "trace": [_event_json(e) for e in r.run.trace], "unused_noise": r.run.unused}
    if r.run.body_out is not None:  # a release block published r.run.out from out
        doc["out"], doc["published"] = to_json(r.run.body_out), to_json(r.run.out)
    if r.alignment is not None and r.neighbour is not None:
        alignment = r.alignment
        aligned: dict[str, Any] = {}
        if r.aligned_run is not None:
            aligned = {"out": to_json(r.aligned_run.out), "trace": [_event_json(e) for e in r.aligned_run.trace]}
        elif r.aligned_error is not None:
            aligned = {"error": diagnostic_json(r.aligned_error)}
        doc["alignment"] = {
            "neighbour": to_json(r.neighbour), "lets": {k: to_json(v) for k, v in alignment.lets.items()},
            "noise": [{"name": d.draw.display, "value": to_json(d.draw.value), "shift": to_json(d.shift),
                       "aligned": to_json(d.aligned), "c": d.coefficient, "cost": d.cost, "in_support": d.in_support,
                       "whole_shift": d.whole} for d in alignment.draws],
            "cost": alignment.cost, "claim": alignment.claim, "aligned_run": aligned,
            "failures": list(r.failures)}
    doc["exit_code"] = int(r.exit_code)
    return doc


class JsonRenderer(Renderer):
    name = "json"
    description = "one JSON document on stdout"
    one_document = True

    def __init__(self, command: str, stdout: Any, stderr: Any, project: Project | None = None):
        super().__init__(command, stdout, stderr, project)
        self.files: list[dict[str, Any]] = []
        """`check`, `verify`: one entry per file, written by `finish`."""

    def _write(self, document: dict[str, Any]) -> None:
        json.dump(document, self.stdout, indent=2, default=str)
        self.stdout.write("\n")

    def _file(self, file: FileResult, mechanisms: list[dict[str, Any]]) -> None:
        if not file.ok:
            self.files.append({"path": file.path, "ok": False, "mechanisms": [],
                               "diagnostics": [diagnostic_json(d) for d in file.diagnostics]})
        else:
            warnings = [diagnostic_json(d) for d in file.diagnostics]  # `float-sensitive`
            self.files.append({"path": file.path, "ok": True, "diagnostics": warnings, "mechanisms": mechanisms})

    def checked_file(self, file: FileResult) -> None:
        self._file(file, [mechanism_json(m) for m in file.checked])

    def verified_file(self, file: FileResult) -> None:
        mechanisms = []
        for m in file.verified:
            document = verdicts_json(m.mechanism, list(m.verdicts), m.status, m.scope)
            if m.synthesis is not None:
                document["synthesis"] = m.synthesis.to_json()
            if m.confirmation is not None:
                document["confirm"] = m.confirmation.to_json()
            if m.acceptance:
                document["accepted"] = m.accepted
                document["acceptance"] = m.acceptance
            mechanisms.append(document)
        self._file(file, mechanisms)

    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        self._write({"command": self.command, "path": path, "ok": False,
                     "diagnostics": [diagnostic_json(d) for d in diagnostics], "exit_code": int(ExitCode.ERROR)})

    def samples(self, run: SampleRun) -> None:
        # streamed: a long run's outputs never sit in memory together
        # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
        from ..interp.values import to_json

        head = {"command": "run", "path": run.path, "mechanism": run.mechanism.name, "samples": run.samples,
                "seed": run.seed, "args": to_json(run.args)}
        self.stdout.write(json.dumps(head)[:-1] + ', "outputs": [')
        for i, output in enumerate(run.outputs()):
            self.stdout.write(("" if i == 0 else ",\n  ") + json.dumps(to_json(output)))
        self.stdout.write("]}\n")

    def replay(self, replay: Replay) -> None:
        self._write(replay_json(replay))

    def alignment_check(self, path: str, mech: ResolvedMechanism, report: AlignmentReport,
                        counterexample_out: str | None) -> None:
        self._write({"command": "run", "mode": "check-alignment", **alignment_report_json(report),
                     "exit_code": int(ExitCode.OK if report.ok else ExitCode.REFUTED)})

    def tested(self, report: TestReport) -> None:
        doc = result_json(report.path, report.mechanism.name, report.result, report.seconds)
        doc["computed"] = None if report.computed is None else exact_json(report.computed)
        doc["not_computed"] = report.not_computed
        doc["lengths"] = report.lengths
        doc["length"] = report.length
        doc["violation"] = report.violation
        doc["exit_code"] = int(report.exit_code)
        self._write(doc)

    def computed(self, report: ExactReport) -> None:
        self._write(computed_json(report))

    def explained(self, code: Code) -> None:
        self._write({"command": "explain", "code": code.name, "message": code.template,
                     "explanation": code.explain()})

    def finish(self, exit_code: int) -> None:
        if self.command in ("check", "verify"):
            self._write({"command": self.command, "files": self.files, "exit_code": int(exit_code)})


def alignment_report_json(report: AlignmentReport) -> dict[str, Any]:
    return {"spec": report.spec, "mechanism": report.mechanism, "samples": report.samples, "seed": report.seed,
            "failures": report.failures, "failed_samples": report.failed_samples, "max_cost": report.max_cost,
            "max_cost_over_claim": report.max_cost_over_claim,
            "counterexamples": [c.to_json() for c in report.counterexamples]}
