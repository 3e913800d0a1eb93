"""Every word true (issue 35): what the reports and outputs say holds for the verdicts they are printed with.

- Reports say only what holds: no sentence of a report names an obligation as holding (`hold`, `holds`,
  `proved`, ...) unless its verdict is proved, and the sentences about the whole verdict ("every obligation
  holds", "nothing is refuted", ...) hold of it; formulas are mathematics, never z3's text (`ToReal`).
- No Python reprs: values print in the language's own syntax (`TOP(0.5)`, `q = -3/4`) in every format and
  command, through `interp.values.format_value`.
- Notes follow the status: a verdict carries no note that speaks of another status (a refutation's "confirmed
  by replaying" on an unknown verdict).
- The LaTeX report compiles without an error or an overfull line: tables wrap in their columns, long listing
  lines are cut into continuation rows.

The corpus-wide checks share one verification per spec (tests/test_verify.py's) and render every format from it.
"""

from __future__ import annotations

import functools
import io
import json
import re
import shutil
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import align
from align.checker.verify import overall_scope, overall_status
from align.cli import main
from align.interp.values import Tag, format_value
from align.render import RENDERERS
from align.report import FORMATS, document, jupyter, render
from align.report.document import (
    DisplayMath,
    Document,
    Figure,
    Formula,
    Heading,
    Items,
    Listing,
    Paragraph,
    Table,
    inlines,
)
from align.results import FileResult, MechanismVerdict, VerifyReport
from align.status import Status

from .conftest import ROOT, SPECS, corpus, corpus_params
from .test_report_escaping import LATEX_REQUIRED, compile_tex, needs_pdflatex
from .test_verify import VERIFIED, verified

FILES = corpus()
STODDARD = SPECS / "incorrect" / "svt_stoddard_no_query_noise.dp"
SVT = SPECS / "freegap" / "alg2_svt_gap.dp"
NUMERIC_SPARSE = SPECS / "dworkroth" / "numeric_sparse.dp"

RANDOMIZED_RESPONSE = """\
# Randomized response with a public coin and no alignment: a template alignment shifts nothing, so the
# checker's refutation of C4a is about shifting no noise, and with no alignment found the verdict is unknown.
mechanism randomized_response(x: int, eps: real)
  adjacent |x - x'| <= 1
  requires eps > 0
  privacy eps
{
  p = exp(eps) / (1 + exp(eps))
  c ~ Bernoulli(p)
  if c == 1 {
    output x
  } else {
    output 1 - x
  }
}
"""


# --------------------------------------------------------------------------------------- what is claimed

NAMES = r"(?<![\w`])(C0|C1|C2|C3|C4a|C4b|C4c|C4d|C5|MIX)(\([^()]*\))?"
OBLIGATION = re.compile(NAMES + r"(?![\w])")
CLAIM = re.compile(r"\b(holds?|proved|preserves|preserved|is satisfied|is acyclic)\b", re.I)
NEGATION = re.compile(r"\b(not|no|never|neither|nor|cannot|fails?|nothing|unless|whether|if)\b", re.I)
STATED = re.compile(NAMES + r":\s*(proved|bounded|refuted|unknown)\b")
WHOLE = (  # sentences about the whole verdict, and what must hold of it for each
    (re.compile(r"\bevery obligation holds\b", re.I), lambda r: {v.status for v in r.verdicts} == {Status.PROVED}),
    (re.compile(r"\bno obligation is refuted\b|\bnothing (is )?refuted\b", re.I),
     lambda r: all(v.status != Status.REFUTED for v in r.verdicts)),
    (re.compile(r"\bnothing is proved\b", re.I), lambda r: all(v.status != Status.PROVED for v in r.verdicts)),
    (re.compile(r"\bthe proof holds\b|\bthe mechanism is ε-differentially private\b|\bthe proof below\b", re.I),
     lambda r: r.status == Status.PROVED),
    (re.compile(r"\bthis alignment\b|\bthe written alignment\b", re.I), lambda r: r.mechanism.alignment is not None),
    (re.compile(r"\bno alignment was written\b", re.I),
     lambda r: r.mechanism.alignment is None or (r.synthesis is not None and r.synthesis.role == "adopted")),
)


def _plain(parts) -> str:
    return "".join(str(p.expr) if isinstance(p, Formula) else p.text for p in parts)


def _sentences(doc: Document, rule: str) -> Iterator[tuple[str, str | None]]:
    """Every sentence of the document that the report writes, with the obligation a table row is about (its first
    cell) when it is in the obligations table. Not the spec's listing (its comments say what they like), the
    statement of the proof rule (a theorem: it names its conditions without claiming them) nor the obligations'
    titles (what each requires)."""
    for b in doc.blocks:
        if isinstance(b, Heading):
            yield re.sub(r"^\d+ ", "", b.text), None
        elif isinstance(b, Paragraph):
            if _plain(b.content).startswith(rule):
                continue
            yield from ((s, None) for s in _split(_plain(b.content)))
        elif isinstance(b, Items):
            for item in b.items:
                yield from ((s, None) for s in _split(_plain(item)))
        elif isinstance(b, Table):
            for r in b.rows:
                about = _plain(r.cells[0].content) if b.kind == "obligations" else None
                for c in r.cells[2:] if about else r.cells:
                    yield from ((s, about) for s in _split(_plain(c.content)))
            yield from ((s, None) for s in _split(b.caption))
        elif isinstance(b, Listing):
            if b.caption:
                yield b.caption, None
        elif isinstance(b, Figure):
            yield b.caption, None
        else:
            assert isinstance(b, DisplayMath)


def _split(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;])\s+| — ", text) if s.strip()]


def false_claims(result: MechanismVerdict, doc: Document) -> list[str]:
    """The sentences of `doc` that say more than `result`'s verdicts: an obligation named as holding while its
    verdict is not proved, an obligation stated with another status than its verdict's, a sentence about the
    whole verdict that does not hold of it."""
    by_name: dict[str, list[Status]] = {}
    for v in result.verdicts:
        by_name.setdefault(v.obligation.name, []).append(v.status)
        by_name.setdefault(v.obligation.id, []).append(v.status)
    wrong = []
    from align.rules import rule_for

    for sentence, about in _sentences(doc, rule_for(result.mechanism).name):
        for pattern, holds in WHOLE:
            if pattern.search(sentence) and not holds(result):
                wrong.append(sentence)
        named = {m.group(1) + (m.group(2) or "") for m in OBLIGATION.finditer(sentence)}
        if re.search(r"\bthe alignment is acyclic\b", sentence, re.I):  # C4b, without its name (a heading)
            named.add("C4b")
        if about is not None and OBLIGATION.fullmatch(about):
            named.add(about)
        for m in STATED.finditer(sentence):
            name = m.group(1) + (m.group(2) or "")
            if m.group(3) not in {str(s) for s in by_name.get(name, [])}:
                wrong.append(sentence)
        claims = CLAIM.search(sentence) and not NEGATION.search(sentence)
        if claims and any(s != Status.PROVED for name in named for s in by_name.get(name, [])):
            wrong.append(sentence)
    return list(dict.fromkeys(wrong))


@pytest.fixture(scope="module")
def randomized_response(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("words") / "randomized_response.dp"
    path.write_text(RANDOMIZED_RESPONSE)
    return path


def test_the_claim_check_finds_a_sentence_that_claims_a_refuted_obligation(randomized_response: Path):
    """The check can fail: Stoddard's C4a is refuted, and the loop invariant's old sentence said it holds; the
    old conclusion of an unknown verdict said that nothing is proved, although most obligations are."""
    result = align.verify(STODDARD)
    doc = document(result, result.source, str(STODDARD))
    assert false_claims(result, doc) == []
    doc.add(Paragraph(inlines("The checker proved every length by induction over the main loop: the invariant "
                              "below holds at the loop head, and each iteration preserves it, so C4a and C4c hold "
                              "at every length.")))
    doc.add(Paragraph(inlines("C4a: proved for every input length")))
    wrong = false_claims(result, doc)
    assert len(wrong) == 2 and "C4a and C4c hold" in wrong[0] and wrong[1] == "C4a: proved for every input length"
    unknown = align.verify(randomized_response)
    doc = document(unknown, unknown.source, "rr.dp")
    assert unknown.status == Status.UNKNOWN and false_claims(unknown, doc) == []
    doc.add(Paragraph(inlines("Some obligation could not be decided: nothing is proved and nothing refuted.")))
    assert false_claims(unknown, doc) == ["Some obligation could not be decided: nothing is proved and nothing "
                                          "refuted."]


def test_stoddard_s_loop_invariant_proves_c4c_only_and_names_no_refuted_obligation():
    result = align.verify(STODDARD)
    md, _ = render(result, "md")
    section = md.split("## 7 The loop invariant")[1].split("## 8")[0]
    assert "The checker proved C4c for every input length" in section and "C4a" not in section


@pytest.mark.slow
def test_the_loop_invariant_prints_its_formulas_as_mathematics_not_z3_text():
    """numeric_sparse's budget step b was z3's `2*(1/((2*ToReal(c))/(8/9*eps))) + ...`: it is ε/c."""
    result = align.verify(NUMERIC_SPARSE)
    md, _ = render(result, "md")
    assert "ToReal" not in md and r"b = \frac{\epsilon}{c}" in md
    (c4a,) = [v for v in result.verdicts if v.obligation.name == "C4a"]
    assert "b = eps/c" in "; ".join(c4a.notes)
    text = io.StringIO()
    main(["verify", str(NUMERIC_SPARSE)], text, io.StringIO())
    assert "ToReal" not in text.getvalue() and "b = eps/c" in text.getvalue()


# ------------------------------------------------------------------------------------------------ values

REPR = re.compile(r"\{'|Fraction\(|Tag\(|np\.(float|int|bool)|array\(|ToReal\(|numpy")


def test_values_print_in_the_language_s_syntax():
    from align.interp.values import format_values

    assert format_value(Tag("TOP", (0.5,))) == "TOP(0.5)" and format_value(Tag("BOT")) == "BOT"
    assert format_value({"tag": "TOP", "payload": [Fraction(1, 3)]}) == "TOP(1/3)"
    assert format_value([{"tag": "BOT"}, Tag("TOP", (np.float64(2.0),))]) == "[BOT, TOP(2)]"
    assert format_value(Fraction(-3, 4)) == "-3/4" and format_value(Fraction(4, 2)) == "2"
    assert format_value(np.float64(0.1)) == "0.1" and format_value(np.int64(3)) == "3"
    assert format_value(np.bool_(True)) == "true" and format_value(np.array([1.5, 2.0])) == "[1.5, 2]"
    assert format_value(0.7700566827932873) == "0.770057"
    assert format_value(0.7700566827932873, digits=None) == "0.7700566827932873"
    assert format_value([None, 1.0], digits=None) == "[-, 1]"
    assert format_value((1, frozenset({2, 0}))) == "(1, {0, 2})"
    assert format_values({"q": Fraction(-3, 4), "eps": 1}) == "q = -3/4, eps = 1"
    assert format_values({"q": [1]}, "'") == "q' = [1]"


def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    main(list(argv), out, err)
    return out.getvalue() + err.getvalue()


COMMANDS = (
    ("verify", str(STODDARD)),
    ("verify", str(SPECS / "incorrect" / "r2dp_scale_reads_data.dp")),
    ("verify", str(SPECS / "incorrect" / "sequential_parts_released_then_reassigned.dp")),
    ("run", str(SVT), "--arg", "q=[1, 2, 3]", "--arg", "T=1", "--arg", "k=1", "--arg", "eps=1", "--arg", "theta=1/2",
     "--samples", "50", "--seed", "1"),
    ("run", str(SVT), "--arg", "q=[1, 2, 3]", "--arg", "T=1", "--arg", "k=1", "--arg", "eps=1", "--arg", "theta=1/2",
     "--noise", "eta=1/2", "--noise", "xi=[0.1, 0.2, 0.3]", "--aligned", "--neighbour", "q=[2, 1, 3]"),
    ("run", str(STODDARD), "--arg", "q=[-3/4, 1]", "--arg", "T=0", "--arg", "eps=1", "--noise", "rho=0",
     "--aligned", "--neighbour", "q=[1/4, 1]"),
    ("test", str(STODDARD), "--samples", "500", "--seed", "1"),
    ("test", str(STODDARD), "--exact"),
    ("test", str(SPECS / "incorrect" / "randomized_response_private_bias.dp"), "--samples", "500", "--seed", "1"),
)


def test_a_refutation_prints_its_outputs_in_the_language_s_syntax():
    out = _cli("verify", str(STODDARD))
    assert "output 0 differs: TOP on D, BOT on D' with the aligned noise" in out
    assert "output on D [TOP], aligned run on D' [BOT]" in out and not REPR.search(out)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "concise", "json"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c[0]}-{Path(c[1]).stem}")
def test_commands_print_no_python_repr(command: tuple[str, ...], fmt: str):
    out = _cli(*command, "--output-format", fmt)
    assert not REPR.search(out), REPR.search(out)


@pytest.mark.slow
def test_the_notebook_displays_print_no_python_repr():
    result = align.verify(STODDARD)
    tested = align.test(STODDARD, {"T": 0, "eps": 1}, samples=500, seed=1)
    replayed = align.replay(STODDARD, {"q": [Fraction(-3, 4)], "T": 0, "eps": 1}, {"rho": 0},
                            neighbour={"q": [Fraction(1, 4)]})
    for shown in (jupyter.html(result), jupyter.markdown(result), jupyter.html(tested), jupyter.markdown(tested)):
        assert not REPR.search(shown), REPR.search(shown)
    for failure in replayed.failures:
        assert not REPR.search(str(failure))


# ------------------------------------------------------------------------------------------------- notes

def note_contradictions(v) -> list[str]:
    """The notes of a verdict that speak of another status than its own."""
    wrong = []
    every_length = v.status == Status.PROVED and v.scope == "for every input length"
    notes = list(v.notes)
    for note in notes:
        if note.startswith("confirmed by replaying") and v.status != Status.REFUTED:
            wrong.append(note)
        if "replay it to confirm" in note and (v.status != Status.REFUTED
                                                or any(n.startswith("confirmed by replaying") for n in notes)):
            wrong.append(note)
        if "does not reproduce" in note and v.status != Status.REFUTED:
            wrong.append(note)
        if note.startswith(("for every length:", "loop invariant:")) and not every_length:
            wrong.append(note)
        if note.startswith("no proof for every length") and v.status == Status.PROVED:
            wrong.append(note)
        if note.startswith("checked no further") and v.status not in (Status.BOUNDED, Status.UNKNOWN):
            wrong.append(note)
        if "valid but loose" in note and v.status != Status.PROVED:
            wrong.append(note)
    return wrong


def test_an_unknown_verdict_carries_no_note_of_a_refutation(randomized_response: Path):
    """Randomized response with no alignment: z3 refutes C4a for shifting no noise (with exp uninterpreted) and
    the replay confirms that; no alignment is found, so C4a is unknown, and says nothing of a refutation."""
    result = align.verify(randomized_response)
    (c4a,) = [v for v in result.verdicts if v.obligation.name == "C4a"]
    assert c4a.status == Status.UNKNOWN
    assert c4a.notes == () and note_contradictions(c4a) == []
    assert any("confirmed by replaying" in r.text for r in c4a.remarks)  # made, and not shown


@pytest.mark.parametrize("path", [SPECS / "incorrect" / name for name in (
    "vacuous_adjacency.dp", "dead_branch_sqrt_negative.dp", "argmax_of_constant_noise.dp")], ids=lambda p: p.stem)
def test_specs_without_an_alignment_carry_no_contradicting_note(path: Path):
    result = align.verify(path)
    assert [(v.obligation.name, note_contradictions(v)) for v in result.verdicts if note_contradictions(v)] == []
    doc = document(result, result.source, str(path))
    assert false_claims(result, doc) == []


# ------------------------------------------------------------------------------------------------- LaTeX

OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\)")


def latex_problems(log: str) -> list[str]:
    """The errors of a pdflatex log, and its lines overfull by more than 1 pt."""
    errors = [line for line in log.splitlines() if line.startswith("! ")]
    overfull = [m.group(0) for m in OVERFULL.finditer(log) if float(m.group(1)) > 1.0]
    return errors + overfull


OVERFULL_AT = re.compile(r"at lines? (\d+)")
ERROR_AT = re.compile(r"^l\.(\d+) ", re.MULTILINE)


def latex_problems_by_part(parts: list[str], folder: Path) -> list[list[str]]:
    """The problems of each of several LaTeX reports (`latex_problems`), compiled as one document: pdflatex
    starts in a third of a second, which for every corpus report was a minute of the suite. The reports'
    preambles must be the same but for each one's `\\title`, which moves to the start of its part (with a
    `\\clearpage`, so that each starts on a page of its own); a problem is the part's whose lines the log
    names (`at lines 12--14` in an overfull line's message, `l.12` after an error), and one the log gives no
    line for is every part's."""
    head = None
    lines = []
    starts = []
    for tex in parts:
        preamble, _, rest = tex.partition("\\begin{document}\n")
        title = re.search(r"^\\title\{.*\}$", preamble, re.MULTILINE)
        assert title is not None and rest.endswith("\\end{document}\n"), tex[:500]
        preamble = preamble.replace(title.group(0) + "\n", "")
        assert head is None or preamble == head, "the reports' preambles differ"
        head = preamble
        starts.append(len(lines))
        lines += ["\\clearpage", title.group(0), *rest.removesuffix("\\end{document}\n").splitlines()]
    offset = (head or "").count("\n") + 1  # the preamble's lines and `\\begin{document}`
    log = _compiled((head or "") + "\\begin{document}\n" + "\n".join(lines) + "\n\\end{document}\n", folder)
    found: list[list[str]] = [[] for _ in parts]
    for chunk in re.split(r"(?=^! |^Overfull \\hbox)", log, flags=re.MULTILINE)[1:]:
        first = chunk.split("\n", 1)[0]
        problems = latex_problems(first)
        if not problems:
            continue
        where = (ERROR_AT.search(chunk) if first.startswith("! ") else OVERFULL_AT.search(first))
        line = None if where is None else int(where.group(1)) - offset - 1
        owner = None if line is None or line < 0 else max(k for k, s in enumerate(starts) if s <= line)
        for k in range(len(parts)) if owner is None else [owner]:
            found[k] += problems
    return found


def _compiled(tex: str, folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.tex"
    path.write_text(tex)
    log, _ = compile_tex(path)
    assert (folder / "report.pdf").exists(), log[-2000:]
    return log


@needs_pdflatex
def test_the_overfull_check_finds_a_table_too_wide(tmp_path: Path):
    """The check can fail: the old obligations table (`|l|l|l|l|l|`) ran 565 pt off the page."""
    wide = ("\\documentclass{article}\\begin{document}\\begin{tabular}{|l|l|}" + "x" * 400 + " & y\\\\"
            "\\end{tabular}\\end{document}\n")
    (problem,) = latex_problems(_compiled(wide, tmp_path))
    assert problem.startswith("Overfull \\hbox (")


@needs_pdflatex
def test_reports_compiled_together_each_get_their_own_problems(tmp_path: Path):
    """The corpus reports are compiled as one document: an overfull line and an error are found in the report
    they are in, and not in the others; a preamble that differs is refused."""
    def report(title: str, body: str, preamble: str = "\\usepackage{amsmath}\n") -> str:
        return (f"\\documentclass{{article}}\n{preamble}\\title{{{title}}}\n\\begin{{document}}\n"
                f"\\raggedright\n{body}\n\\end{{document}}\n")
    clean = report("a", "Some words.\n\nMore words.")
    wide = report("b", "First line.\n\n\\begin{tabular}{|l|l|}" + "x" * 400 + " & y\\\\\\end{tabular}")
    broken = report("c", "Words.\n\n\\undefinedcommand")
    found = latex_problems_by_part([clean, wide, clean, broken, clean], tmp_path)
    assert found[0] == found[2] == found[4] == []
    (problem,) = found[1]
    assert problem.startswith("Overfull \\hbox (")
    assert found[3] == ["! Undefined control sequence."]
    with pytest.raises(AssertionError, match="preambles differ"):
        latex_problems_by_part([clean, report("d", "x", preamble="")], tmp_path / "other")


@pytest.mark.slow
@needs_pdflatex
@pytest.mark.parametrize("path", [SVT, STODDARD, SPECS / "r2dp" / "trunc_gaussian.dp"], ids=lambda p: p.stem)
def test_a_latex_report_compiles_with_every_line_within_the_page(path: Path, tmp_path: Path):
    result = align.verify(path)
    tex, _ = render(result, "tex")
    assert latex_problems(_compiled(tex, tmp_path)) == []


@needs_pdflatex
def test_a_long_listing_line_is_cut_into_continuation_rows(tmp_path: Path):
    long_comment = "# " + "a very long comment that goes on " * 8
    spec = tmp_path / "long.dp"
    spec.write_text(STODDARD.read_text().replace("  eps1 = eps / 2\n", f"  eps1 = eps / 2  {long_comment}\n"))
    result = align.verify(spec)
    tex, _ = render(result, "tex")
    assert "{+}" in tex or "~+}" in tex
    assert latex_problems(_compiled(tex, tmp_path / "out")) == []


# ------------------------------------------------------------------------------------------ the corpus


@functools.cache
def _formats(path: Path) -> tuple[MechanismVerdict, Document, dict[str, str]]:
    """One verification (shared with tests/test_verify.py), every renderer of `align verify` and every report
    format, from it."""
    source, mech, verdicts = verified(path)
    result = MechanismVerdict(mech, tuple(verdicts), overall_status(verdicts), overall_scope(verdicts))
    file = FileResult(str(path.relative_to(ROOT)), source, verified=(result,))
    code = int(VerifyReport((file,)).exit_code)
    texts = {}
    for name, cls in RENDERERS.items():
        out = io.StringIO()
        renderer = cls("verify", out, io.StringIO())
        renderer.verified_file(file)
        renderer.finish(code)
        texts[name] = out.getvalue()
    doc = document(result, source, file.path)
    for fmt in ("md", "html", "tex"):
        texts[fmt] = FORMATS[fmt]().write(doc)
    return result, doc, texts


@pytest.fixture(scope="session")
def corpus_latex(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[Path, list[str]]:
    """The LaTeX problems of the corpus reports that this session checks (`latex_problems_by_part`: one compile
    for all of them), by spec."""
    paths = [item.callspec.params["path"] for item in request.session.items
             if getattr(item, "originalname", None) == test_every_corpus_output_says_only_what_its_verdicts_are.__name__
             and item.path == Path(__file__)]
    found = latex_problems_by_part([_formats(path)[2]["tex"] for path in paths], tmp_path_factory.mktemp("latex"))
    return dict(zip(paths, found, strict=True))


@VERIFIED
@pytest.mark.parametrize("path", corpus_params(FILES))
def test_every_corpus_output_says_only_what_its_verdicts_are(path: Path, request: pytest.FixtureRequest):
    result, doc, texts = _formats(path)
    assert false_claims(result, doc) == []
    assert [(v.obligation.name, note_contradictions(v)) for v in result.verdicts if note_contradictions(v)] == []
    for name, text in texts.items():
        found = REPR.search(text)
        assert found is None, (name, text[max(0, found.start() - 200):found.end() + 100])
    json.loads(texts["json"])
    if LATEX_REQUIRED or shutil.which("pdflatex") is not None:  # CI requires it (ALIGN_REQUIRE_LATEX)
        assert request.getfixturevalue("corpus_latex")[path] == []


@pytest.mark.parametrize("role", ["adopted", "replaces", "suggested"])
def test_the_synthesised_alignment_is_described_as_what_the_verdicts_are_about(role: str):
    """A synthesised alignment the verdicts are about (none written, or the written one not proved), or one that
    only proves a smaller claim beside the written one's verdicts: the report says which, and says "the proof"
    only of a proof."""
    from dataclasses import replace

    from align.results import SynthesisOutcome

    result = align.verify(STODDARD)  # refuted: whatever the synthesis, no "proof below"
    outcome = SynthesisOutcome(True, "alignment svt_stoddard_no_query_noise {\n  rho' = rho\n}", 3, 2, 1, 0.1, 9,
                               "a better alignment exists", role)
    shown = replace(result, synthesis=outcome)
    doc = document(shown, shown.source, str(STODDARD))
    text = " ".join(s for s, _ in _sentences(doc, "randomness alignment"))
    assert ("No alignment was written" in text) == (role == "adopted")
    assert ("about the written alignment" in text) == (role == "suggested")
    assert "the proof below" not in text and false_claims(shown, doc) == []
