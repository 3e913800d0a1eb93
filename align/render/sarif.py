"""Renderer (SARIF 2.1.0): one log per invocation of `check` or `verify`, for code scanning and review tools.

One run; the tool's rules are the obligations (`obligations.KINDS`) and the diagnostic codes
(`diagnostics.CODES`), with their help text from those registries. A result for every obligation that is
refuted (level `error`), unknown or only bounded (`warning`), at the obligation's span, with the
counterexample in its message, its replay as a code flow (the run on D and the run on D' with the aligned
noise, step by step) and the line where the two runs part as related locations; and a result for every
diagnostic of a file that did not load. `invocations` records the exit code. Paths are written as the user
gave them: relative ones against `%SRCROOT%` (the directory align ran in), absolute ones as `file:` URIs,
percent-encoded as RFC 3986 asks (a space, `<`, `%`, `:`, a backslash, a line break or bytes that are not
UTF-8 in a file name are encoded, never dropped or rewritten); message texts are `visible` (control
characters escaped).
tests/test_formats.py validates the corpus's logs against the official schema (tests/data/sarif/).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .. import __version__
from ..diagnostics import CODES, Diagnostic, Severity
from ..files import project_path
from ..interp.divergence import side_by_side
from ..span import Source, Span, visible
from ..status import Status
from .base import FilesRenderer, Project
from .common import FINDING_LEVELS, finding_lines, proof_rule

if TYPE_CHECKING:
    from ..results import FileResult, MechanismVerdict, Verdict

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@cache
def rules(docs_url: str | None = None) -> list[dict[str, Any]]:
    """Every reporting descriptor: the obligations, then the diagnostic codes (the registries, in order). With the
    project's `docs-url` (the address of align's docs/ folder), each rule's `helpUri` is the page that explains it:
    checker.md for an obligation, language.md for a diagnostic code."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..obligations import KINDS  # here, not at the top: `align explain` does not load the checker's tables

    result = []
    for kind in KINDS.values():
        # Each strategy for every length covers the condition in its own way (docs/checker.md, "Scope"); what
        # a rule can say of all of them is how the induction over a loop does, and that the others exist.
        every_length = (f"A proof for every input length by induction over a loop covers it by {kind.induction}; "
                        "the other strategies (a ranking's defining relation, fixed entries, parts in sequence, "
                        "records) cover it as docs/checker.md says, and a result's message names its scope.")
        text = f"{kind.title}. A condition of the proof rule (Free Gap, Lemma 1; docs/checker.md). {every_length}"
        result.append({
            "id": str(kind.id), "name": _identifier(kind.label),
            "shortDescription": {"text": kind.title}, "fullDescription": {"text": text},
            **_help_uri(docs_url, "checker.md"),
            "help": {"text": text, "markdown": f"**{kind.id}**: {kind.title}.\n\n{every_length}"},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["differential-privacy", "obligation"]},
        })
    for code in CODES.values():
        result.append({
            "id": code.name, "name": _identifier(code.name),
            "shortDescription": {"text": code.explain()}, "fullDescription": {"text": code.explain()},
            **_help_uri(docs_url, "language.md"),
            "help": {"text": f"{code.explain()} (`align explain {code.name}`; docs/language.md)",
                     "markdown": f"`{code.name}`: {code.explain()}\n\n`align explain {code.name}` says the same."},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["diagnostic"]},
        })
    return result


def _identifier(text: str) -> str:
    """A rule's `name`: the words of its label in PascalCase (`outputs preserved` -> `OutputsPreserved`)."""
    return "".join(word[:1].upper() + word[1:] for word in text.replace("-", " ").replace("'", "").split())


@cache
def rule_index() -> dict[str, int]:
    return {rule["id"]: k for k, rule in enumerate(rules())}


def _help_uri(docs_url: str | None, page: str) -> dict[str, str]:
    return {} if docs_url is None else {"helpUri": docs_url.rstrip("/") + "/" + page}


def uri_path(path: str) -> str:
    """`path` as the path of a URI (RFC 3986): its bytes (those a file name that is not UTF-8 had, from the
    surrogates Python decodes them to) percent-encoded, but for the unreserved characters and `/`."""
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no undecodable byte gave
        raw = path.encode("utf-8", "surrogatepass")
    return quote(raw, safe="/")


def file_uri(path: str) -> str:
    """An absolute path as a `file:` URI."""
    return "file://" + ("" if path.startswith("/") else "/") + uri_path(path)


def artifact_location(path: str, root: Path) -> dict[str, Any]:
    """A file below the project's root as a URI relative to `%SRCROOT%` (the root, whatever the working directory
    was); any other as a `file:` URI."""
    relative = project_path(path, root)
    if relative is None:
        return {"uri": file_uri(os.path.abspath(path))}
    return {"uri": uri_path(relative), "uriBaseId": "%SRCROOT%"}


def _message(text: str) -> dict[str, str]:
    """A SARIF message: each line `visible` (the line breaks of a multi-line message kept)."""
    return {"text": "\n".join(visible(line) for line in text.split("\n"))}


def location(span: Span | None, path: str, root: Path, message: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": artifact_location(span.path if span is not None else path, root)}
    if span is not None:
        physical["region"] = {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line,
                              "endColumn": span.end_column}
    result: dict[str, Any] = {"physicalLocation": physical}
    if message:
        result["message"] = _message(message)
    return result


def line_location(path: str, root: Path, line: int, message: str) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": artifact_location(path, root), "region": {"startLine": line}},
            "message": _message(message)}


def code_flows(m: MechanismVerdict, v: Verdict, path: str,
               root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A refutation's counterexample replayed (`interp.divergence`): a code flow with one thread flow per run
    (on D with H, on D' with φ(H)), the step where they part `essential`; and that step as related locations."""
    if v.status is not Status.REFUTED or v.counterexample is None or not v.counterexample.args:
        return [], []
    steps = side_by_side(m.mechanism, v.counterexample)
    if steps is None or steps.replay is None or not steps.steps:
        return [], []
    threads = []
    for run, name in (("on_d", "the run on D with the noise H"), ("on_d_prime", "the run on D' with φ(H)")):
        locations = []
        for k, step in enumerate(steps.steps):
            text = getattr(step, run)
            if not text:
                continue
            line = step.line if run == "on_d" else step.line_d_prime
            locations.append({"location": line_location(path, root, line, text), "nestingLevel": step.depth,
                              "executionOrder": k + 1, "importance": "essential" if step.diverges else "important"})
        threads.append({"id": run, "message": {"text": name}, "locations": locations})
    flows = [{"message": {"text": "the counterexample replayed by the interpreter, two runs side by side"},
              "threadFlows": threads}]
    related = []
    if steps.divergence is not None:
        step = steps.steps[steps.divergence]
        related.append(line_location(path, root, step.line, f"the runs part here: on D `{step.on_d}`"))
        if step.on_d_prime:
            related.append(line_location(path, root, step.line_d_prime, f"on D' with φ(H) `{step.on_d_prime}`"))
    return flows, related


def diagnostic_result(d: Diagnostic, path: str, root: Path) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code, "ruleIndex": rule_index()[d.code],
        "level": "error" if d.severity is Severity.ERROR else "warning",
        "message": _message(d.message),
        "locations": [location(d.span, path, root)],
    }
    related = [location(note.span, path, root, note.message) for note in d.notes if note.span is not None]
    if related:
        result["relatedLocations"] = [{"id": k, **r} for k, r in enumerate(related)]
    return result


def verdict_result(m: MechanismVerdict, v: Verdict, path: str, root: Path) -> dict[str, Any]:
    o = v.obligation
    lines = finding_lines(v)
    lines[0] = f"mechanism {m.mechanism.name}: {o.name} {lines[0]}"
    if m.confirmation is not None and v.status is Status.REFUTED:
        lines.append(f"align test: {m.confirmation.text}")
    related = [location(m.mechanism.node.name_span, path, root, f"mechanism {m.mechanism.name}")]
    alignment = m.mechanism.alignment
    if alignment is not None:
        related.append(location(alignment.node.span, path, root, f"alignment for {m.mechanism.name}"))
    release = m.mechanism.release
    if release is not None and release.release_node is not None:
        related.append(location(release.release_node.span, path, root,
                                f"release block of {m.mechanism.name} (the obligations are about out)"))
    flows, parting = code_flows(m, v, path, root)
    related += parting
    properties: dict[str, Any] = {"mechanism": m.mechanism.name, "status": str(v.status),
                                  "proofRule": proof_rule(m.mechanism)}
    if v.scope:
        properties["scope"] = v.scope
    if v.status is Status.BOUNDED and m.acceptance:
        properties["accepted"] = m.accepted
        lines.append(m.acceptance)
    if v.counterexample is not None:
        properties["counterexample"] = v.counterexample.to_json()
    result = {
        "ruleId": str(o.id), "ruleIndex": rule_index()[str(o.id)], "kind": "fail", "level": FINDING_LEVELS[v.status],
        "message": _message("\n".join(lines)),
        "locations": [location(o.span, path, root)],
        "relatedLocations": [{"id": k, **r} for k, r in enumerate(related)],
        "properties": properties,
    }
    if flows:
        result["codeFlows"] = flows
    return result


class SarifRenderer(FilesRenderer):
    name = "sarif"
    description = "a SARIF 2.1.0 log (check, verify), for code scanning"
    one_document = True

    def __init__(self, command: str, stdout: Any, stderr: Any, project: Project | None = None):
        super().__init__(command, stdout, stderr, project)
        self.results: list[dict[str, Any]] = []

    def _diagnostics(self, path: str, diagnostics: Sequence[Diagnostic]) -> None:
        self.results += [diagnostic_result(d, path, self.project.root) for d in diagnostics]

    def checked_file(self, file: FileResult) -> None:
        self._diagnostics(file.path, file.diagnostics)

    def verified_file(self, file: FileResult) -> None:
        self._diagnostics(file.path, file.diagnostics)
        for m in file.verified:
            self.results += [verdict_result(m, v, file.path, self.project.root) for v in m.verdicts
                             if v.status in FINDING_LEVELS]

    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        self._diagnostics(path or "", diagnostics)

    def finish(self, exit_code: int) -> None:
        log = {
            "$schema": SCHEMA, "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {"name": "align", "version": __version__, "semanticVersion": __version__,
                                    "rules": rules(self.project.docs_url)}},
                "originalUriBaseIds": {"%SRCROOT%": {
                    "uri": file_uri(str(self.project.root)).rstrip("/") + "/",
                    "description": {"text": "the top of the git checkout (else the folder of the align "
                                            "configuration), from which the paths of the results start"}}},
                # Called only when the command ran to its end (a usage or internal error writes no log).
                "invocations": [{"executionSuccessful": True, "exitCode": int(exit_code)}],
                "columnKind": "unicodeCodePoints",
                "results": self.results,
            }],
        }
        json.dump(log, self.stdout, indent=2)
        self.stdout.write("\n")
