"""The limits of align/limits.py (docs/language.md, section 14): hostile input ends in a located diagnostic
with a registered code, exit 2, quickly; input at the limits goes through every stage without a traceback."""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from align.cli import main
from align.diagnostics import CODES, SpecError, diag
from align.limits import (
    EXECUTOR_CONNECT_TIMEOUT_S,
    MAX_BOUNDED_LENGTH,
    MAX_CHUNK_SIZE,
    MAX_CONFIRM_TESTS,
    MAX_CONSTANT_BITS,
    MAX_DECIMAL_EXPONENT,
    MAX_INTEGER_LITERAL,
    MAX_JOBS,
    MAX_LITERAL_DIGITS,
    MAX_NESTING_DEPTH,
    MAX_POWER_EXPONENT,
    MAX_SAMPLES,
    MAX_SOURCE_BYTES,
    MAX_TEST_LENGTH,
    MAX_TIMEOUT_S,
)
from align.parse import (
    exact_number,
    exact_text,
    parse_expression,
    parse_source,
    read_json,
)
from align.render.common import render_diagnostic
from align.span import Source, Span, visible

from .conftest import ROOT

SPEC = """mechanism m(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy eps
{
  eta ~ Lap(1 / eps)
  output q + eta + EXPR
}
alignment m {
  eta' = eta + (q - q')
}
"""
SVT = "specs/freegap/alg2_svt_gap.dp"
SVT_ARGS = ["--arg", "q=[3,1,4]", "--arg", "T=3", "--arg", "k=1", "--arg", "eps=1", "--arg", "theta=1/2"]
BROKEN = "specs/incorrect/svt_gap_outputs_noisy_query.dp"
HEADLINE = re.compile(r"^(?P<where>\S.*?): error\[(?P<code>[a-z0-9-]+)\]: ", re.MULTILINE)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    text = out.getvalue() + err.getvalue()
    assert "Traceback" not in text and "internal-error" not in text, text[:2000]
    return code, out.getvalue(), err.getvalue()


def codes(err: str) -> list[str]:
    return [m.group("code") for m in HEADLINE.finditer(err)]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")


def check_text(tmp_path: Path, text: str | bytes, *options: str) -> tuple[int, str, str]:
    path = tmp_path / "spec.dp"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return run("check", str(path), *options)


def test_every_limit_code_is_registered():
    for code in ("file-too-large", "nesting-too-deep", "number-too-long", "number-out-of-range",
                 "constant-out-of-range", "power-out-of-range", "write-error"):
        assert code in CODES


# ----------------------------------------------------------------------------------------------- files


@pytest.mark.parametrize("command", ["check", "verify"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, command: str):
    fifo = tmp_path / "pipe.dp"
    os.mkfifo(fifo)
    start = time.monotonic()
    code, _, err = run(command, str(fifo))
    assert code == 2 and codes(err) == ["io-error"] and "FIFO" in err
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_not_read(device: str):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    code, _, err = run("check", device)
    assert code == 2 and codes(err) == ["io-error"] and "character device" in err


def test_a_symlink_to_a_device_is_refused(tmp_path: Path):
    (tmp_path / "link.dp").symlink_to("/dev/zero")
    code, _, err = run("check", str(tmp_path / "link.dp"))
    assert code == 2 and "character device" in err


def test_noise_files_and_counterexample_files_are_read_the_same_way(tmp_path: Path):
    fifo = tmp_path / "noise.json"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo), str(tmp_path)):
        code, _, err = run("run", SVT, *SVT_ARGS, "--noise-file", target)
        assert code == 2 and "not a regular file" in err


def test_a_file_past_the_size_limit_is_refused_after_reading_one_byte_more(tmp_path: Path):
    text = SPEC.replace("EXPR", "1")
    at_limit = text + "#" * (MAX_SOURCE_BYTES - len(text) - 1) + "\n"
    assert len(at_limit.encode()) == MAX_SOURCE_BYTES
    assert check_text(tmp_path, at_limit)[0] == 0
    code, _, err = check_text(tmp_path, at_limit + "#")
    assert code == 2 and codes(err) == ["file-too-large"] and str(MAX_SOURCE_BYTES) in err
    huge = tmp_path / "huge.dp"
    with open(huge, "wb") as handle:  # sparse: 10 GB that must not be read
        handle.truncate(10 * 1024**3)
    start = time.monotonic()
    assert codes(run("check", str(huge))[2]) == ["file-too-large"]
    assert time.monotonic() - start < 5


def test_bytes_that_are_not_utf8_are_located(tmp_path: Path):
    code, _, err = check_text(tmp_path, SPEC.replace("EXPR", "1").encode().replace(b"output q", b"output \xe9q"))
    assert code == 2 and re.search(r"spec\.dp:7:10: error\[io-error\]: .*0xe9", err)


# -------------------------------------------------------------------------------------------- nesting

SHAPES = {
    "negate": ("-(q + ", "q", ")"),
    "call": ("abs(", "q", ")"),
    "fraction": ("1 / (1 + ", "eps", ")"),
    "ternary": ("(q > 0 ? ", "q", " : 1)"),
    "list": ("len([", "1", "])"),
    "not": ("(not (", "q", " > 0) or q > 1 ? 1 : 0)"),
}


def _deepest_accepted(before: str, inner: str, after: str) -> tuple[str, str]:
    """The spec with this shape nested as deep as the limit allows, and one level deeper."""
    def spec(n: int) -> str:
        return SPEC.replace("EXPR", before * n + inner + after * n)

    n = 1
    while True:
        try:
            parse_source(Source("t.dp", spec(n + 1)))
        except SpecError as error:
            if error.diagnostics[0].code == "nesting-too-deep":
                return spec(n), spec(n + 1)
            raise
        n += 1


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_the_deepest_accepted_spec_goes_through_every_stage(tmp_path: Path, shape: str):
    accepted, refused = _deepest_accepted(*SHAPES[shape])
    code, _, err = check_text(tmp_path, accepted)
    assert code in (0, 2) and "nesting-too-deep" not in err  # a type error is fine; a RecursionError is not
    run("run", str(tmp_path / "spec.dp"), "--arg", "q=0.5", "--arg", "eps=1", "--samples", "10")
    code, _, err = check_text(tmp_path, refused)
    assert code == 2 and codes(err) == ["nesting-too-deep"] and re.search(r"spec\.dp:7:\d+: ", err)


def test_the_deepest_accepted_spec_is_verified_without_recursion_errors(tmp_path: Path):
    accepted, _ = _deepest_accepted(*SHAPES["negate"])
    check_text(tmp_path, accepted)
    run("verify", str(tmp_path / "spec.dp"), "--max-length", "1")


def test_the_depth_limit_holds_with_little_stack_left(tmp_path: Path):
    """The stages fit in Python's default stack even when the caller has used a good part of it."""
    accepted, _ = _deepest_accepted(*SHAPES["call"])

    def nested(k: int) -> int:
        return nested(k - 1) if k else check_text(tmp_path, accepted)[0]

    assert nested(150) == 0


@pytest.mark.slow
@pytest.mark.parametrize("text", ["-" * 100000 + "1", "(" * 50000 + "1" + ")" * 50000, "[" * 50000 + "]" * 50000,
                                  " + ".join(["q"] * 20000), "abs(" * 20000 + "1" + ")" * 20000])
def test_pathological_nesting_is_refused_quickly(tmp_path: Path, text: str):
    start = time.monotonic()
    code, _, err = check_text(tmp_path, SPEC.replace("EXPR", text))
    assert code == 0 if text.startswith("(") else codes(err) == ["nesting-too-deep"]  # parentheses nest nothing
    assert time.monotonic() - start < 20


def test_nested_statements_count_too(tmp_path: Path):
    body = "if q > 0 { " * 60 + "output q" + " }" * 60
    code, _, err = check_text(tmp_path, SPEC.replace("output q + eta + EXPR", body))
    assert code == 2 and codes(err) == ["nesting-too-deep"]


# -------------------------------------------------------------------------------------------- numbers


def test_exact_number_is_exact():
    assert exact_number("0.1") == Fraction(1, 10)
    assert exact_number("2.5E+2") == 250
    assert exact_number("1e-3") == Fraction(1, 1000)
    assert exact_number("0012.50") == Fraction(25, 2)
    assert exact_number("0e999999999999") == 0
    assert exact_number("1e300") == 10**300 and exact_number("1e-300") == Fraction(1, 10**300)
    assert exact_number("9" * MAX_LITERAL_DIGITS) == 10**MAX_LITERAL_DIGITS - 1
    assert exact_number("0." + "0" * 98 + "1") == Fraction(1, 10**99)
    assert exact_text(" -3 / 4 ") == Fraction(-3, 4) and exact_text("1e2/-8") == Fraction(-25, 2)


@pytest.mark.parametrize("text,code", [
    ("1" * (MAX_LITERAL_DIGITS + 1), "number-too-long"),
    ("9" * 5000, "number-too-long"),  # Python's int-string limit must never surface
    ("1e301", "number-out-of-range"), ("1e-301", "number-out-of-range"), ("123.4e299", "number-out-of-range"),
    ("1e100000000", "number-out-of-range"), ("1e-100000000", "number-out-of-range"),
    ("1e" + "9" * 5000, "number-out-of-range"), (str(MAX_INTEGER_LITERAL + 1), "number-out-of-range"),
])
def test_literals_past_the_limits(tmp_path: Path, text: str, code: str):
    start = time.monotonic()
    status, _, err = check_text(tmp_path, SPEC.replace("EXPR", text))
    assert status == 2 and codes(err) == [code] and "spec.dp:7:20: " in err
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("text", ["1e300", "9.99e300", "1e-300", "0.5e-299", str(MAX_INTEGER_LITERAL), "0e99999",
                                  "1" * (MAX_LITERAL_DIGITS - 1) + ".0", "2 ^ 64", "q ^ 64", "(q + eps) ^ -64",
                                  "exp(690)",
                                  "ln(0) + sqrt(-1) + 1 / 0", "(-8) ^ (1/3)", "exp(1) ^ 0.5"])
def test_literals_at_the_limits(tmp_path: Path, text: str):
    assert check_text(tmp_path, SPEC.replace("EXPR", text))[0] == 0


@pytest.mark.parametrize("text,code", [
    ("1e300 * 10", "constant-out-of-range"), ("1e-300 / 10", "constant-out-of-range"),
    ("-(1e300 * 1e300)", "constant-out-of-range"), ("3037000500 * 3037000500", "constant-out-of-range"),
    ("((3 ^ 64 + 1) / 3 ^ 64) ^ 64", "constant-out-of-range"),  # about 1, but 6490 bits exactly
    ("((3 ^ 64 + 1) / 3 ^ 64) ^ 32 * ((3 ^ 64 + 1) / 3 ^ 64) ^ 32", "constant-out-of-range"),
    ("2 ^ 65", "power-out-of-range"), ("q ^ 1000", "power-out-of-range"), ("q ^ -65", "power-out-of-range"),
    ("2 ^ 64 ^ 64", "power-out-of-range"), ("2 ^ (60 + 60)", "power-out-of-range"),
    ("2 ^ 1000000000", "power-out-of-range"), ("2 ^ exp(5)", "power-out-of-range"),
    ("exp(700)", "constant-out-of-range"), ("exp(-700)", "constant-out-of-range"),
    ("exp(exp(exp(exp(1e300))))", "constant-out-of-range"), ("sqrt(2) * 1e300 * 10", "constant-out-of-range"),
])
def test_constants_past_the_limits(tmp_path: Path, text: str, code: str):
    start = time.monotonic()
    status, _, err = check_text(tmp_path, SPEC.replace("EXPR", text))
    assert status == 2 and codes(err) == [code] and "spec.dp:7:" in err
    assert time.monotonic() - start < 5


def test_constant_folding_does_not_change_the_program():
    e = parse_expression("2 ^ 10 + 1 / 3")
    assert e.__class__.__name__ == "Binary" and e.left.__class__.__name__ == "Binary"


def test_read_json_checks_numbers_as_text():
    assert read_json("[1, 2.5, \"1/3\"]") == [1, 2.5, "1/3"]
    for text in ("1e400", "9" * 5000, "NaN", "-Infinity", "[" * 100000 + "]" * 100000):
        with pytest.raises(ValueError):
            read_json(text)


def test_the_limits_are_in_the_documentation():
    doc = (ROOT / "docs" / "language.md").read_text()
    section = doc[doc.index("## 14. Limits"):]
    for text in (f"{MAX_SOURCE_BYTES // 1024} KiB", f"{MAX_NESTING_DEPTH} levels", f"| {MAX_LITERAL_DIGITS} |",
                 f"−{MAX_DECIMAL_EXPONENT} ≤ e ≤ {MAX_DECIMAL_EXPONENT}", f"{MAX_CONSTANT_BITS} bits",
                 f"−{MAX_POWER_EXPONENT} ≤ n ≤ {MAX_POWER_EXPONENT}", "2^63 − 1"):
        assert text in section, text
    for code in ("file-too-large", "nesting-too-deep", "number-too-long", "number-out-of-range",
                 "constant-out-of-range", "power-out-of-range", "example-item", "executor-unreachable", "usage"):
        assert f"`{code}`" in section
    for text in (f"at most {MAX_TEST_LENGTH}", f"1 to {MAX_JOBS}", f"0 to {MAX_CONFIRM_TESTS}",
                 f"{MAX_TIMEOUT_S:,.0f} seconds", f"1 to {MAX_BOUNDED_LENGTH}", "strictly between 0 and 1",
                 f"{EXECUTOR_CONNECT_TIMEOUT_S:g} s"):
        assert text in section, text


# ------------------------------------------------------------------------------------ terminal safety

CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("hostile", ["\x1b[2J", "\x1b]0;pwned\x07", "\r", "\x00", "\u202e", "\u2066", "\x9b31m",
                                     "\x7f", "\x0b", "\u2028"])
def test_diagnostics_never_echo_control_characters(tmp_path: Path, hostile: str):
    code, out, err = check_text(tmp_path, SPEC.replace("EXPR", f"q{hostile}q"))
    assert code == 2 and not CONTROLS.search(out + err), repr(err)
    code, out, err = check_text(tmp_path, f"# {hostile}\n" + SPEC.replace("EXPR", "zz"))
    assert code == 2 and not CONTROLS.search(out + err), repr(err)


def test_the_caret_stays_under_the_escaped_text():
    source = Source("t.dp", "output a\x1bb zz\n")
    rendered = render_diagnostic(diag("undefined-name", Span("t.dp", 1, 12, 1, 14), name="zz", hint=""), source)
    line, carets = rendered.splitlines()[2:4]
    assert line == "1 | output a\\x1bb zz"
    assert carets.index("^") == line.index("zz") and carets.count("^") == 2


def test_control_characters_in_paths_are_escaped(tmp_path: Path):
    code, _, err = run("check", str(tmp_path / "a\x1b[2Jb.dp"))
    assert code == 2 and "\x1b" not in err and "a\\x1b[2Jb.dp" in err


def test_visible_escapes_what_a_terminal_would_act_on():
    assert visible("a\x1b[31mb\tc\u202ed\x85") == "a\\x1b[31mb\\tc\\u202ed\\x85"
    assert visible("tab\there", tab="    ") == "tab    here"
    assert visible("ηé plain") == "ηé plain"


def test_lines_end_at_newlines_only_as_lark_counts_them():
    source = Source("t.dp", "a\x0cb\u2028c\nd\r\ne")
    assert [source.line(k) for k in (1, 2, 3)] == ["a\x0cb\u2028c", "d", "e"]


def test_long_lines_are_cut_around_the_span(tmp_path: Path):
    code, _, err = check_text(tmp_path, SPEC.replace("EXPR", " " * 3000 + "zz + q" + " " * 3000 + "# end"))
    assert code == 2
    line = next(ln for ln in err.splitlines() if ln.startswith("7 | "))
    assert len(line) < 200 and line.startswith("7 | ...") and "zz" in line


# ---------------------------------------------------------------------------------------- align run

HOSTILE_ARGUMENTS = ["1e400", "-1e400", "1e-308", "nan", "NaN", "inf", "Infinity", "-Infinity", str(2**53 + 1),
                     str(2**63), str(2**64), "9" * 5000, "1e99999999", '"1e99999999"', '"1/0"', "1/0", "1e309",
                     "1e300*1e300", "2^65", "[" * 5000 + "]" * 5000, "[[1]]", "{}", '"abc"', "\x1b[2J", "", "[1,"]


@pytest.mark.parametrize("value", HOSTILE_ARGUMENTS)
@pytest.mark.parametrize("name", ["eps", "k", "q"])
def test_hostile_argument_values_are_usage_diagnostics(name: str, value: str):
    args = [a if not a.startswith(name + "=") else f"{name}={value}" for a in SVT_ARGS]
    code, _, err = run("run", SVT, *args, "--samples", "10")  # 2^53 + 1 is a fine eps and a fine k
    assert code in (0, 2) and not CONTROLS.search(err)
    if code == 2:
        assert codes(err) and set(codes(err)) <= {"invalid-argument", "argument-type", "requires-violated"}, err


@pytest.mark.parametrize("option,value", [("--seed", "-1"), ("--seed", str(2**128)), ("--samples", "-1"),
                                          ("--samples", str(10**12)), ("--samples", str(2**64)),
                                          ("--chunk-size", "0"), ("--chunk-size", str(2**40))])
def test_hostile_counts_and_seeds_are_usage_errors(option: str, value: str):
    code, _, err = run("run", SVT, *SVT_ARGS, option, value)
    assert code == 2 and "error[usage]" in err and option in err


def test_a_large_seed_is_fine():
    assert run("run", SVT, *SVT_ARGS, "--samples", "10", "--seed", str(2**128 - 1))[0] == 0


@pytest.mark.parametrize("content", [b'{"eta": 1e999}', b'{"eta": "1e99999999"}', b'{"eta": NaN}',
                                     b'{"eta": ' + b"9" * 5000 + b"}", b"[" * 100000, b"\xff"])
def test_hostile_noise_files(tmp_path: Path, content: bytes):
    path = tmp_path / "noise.json"
    path.write_bytes(content)
    code, _, err = run("run", SVT, *SVT_ARGS, "--noise-file", str(path))
    assert code == 2 and codes(err) == ["counterexample-format"]


# ------------------------------------------------------------------------------------- write errors


def _unwritable(tmp_path: Path) -> list[str]:
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    return [str(tmp_path / "no" / "such" / "c.json"), str(tmp_path / "adir"), str(tmp_path / "afile" / "c.json")]


@pytest.mark.slow
def test_verify_counterexample_write_errors_are_diagnosed(tmp_path: Path):
    for target in _unwritable(tmp_path):
        code, out, err = run("verify", BROKEN, "--max-length", "1", "--counterexample", target)
        assert code == 2 and codes(err) == ["write-error"] and "refuted" in out


def test_run_counterexample_out_write_errors_are_diagnosed(tmp_path: Path):
    args = ["--arg", "q=[0.5, 2, 1]", "--arg", "T=1", "--arg", "k=1", "--arg", "eps=1", "--arg", "theta=1/2",
            "--check-alignment", "--neighbour", "q=[1.5, 2, 1]", "--samples", "2000"]
    for target in _unwritable(tmp_path):
        code, out, err = run("run", BROKEN, *args, "--counterexample-out", target)
        assert code == 2 and codes(err) == ["write-error"] and "C4a" in out  # the report is still printed
        code, out, err = run("run", BROKEN, *args, "--counterexample-out", target, "--format", "json")
        assert code == 2 and '"write-error"' in out  # one JSON document: the error


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root may write anywhere")
def test_permission_denied_is_a_write_error(tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run("verify", BROKEN, "--max-length", "1", "--counterexample", str(locked / "c.json"))
        assert code == 2 and codes(err) == ["write-error"] and "ermission" in err
    finally:
        locked.chmod(0o700)


# ------------------------------------------------------------------------------- the interpreter's limits


@pytest.mark.parametrize("body,code", [
    ("for i in 0 .. 1000000000000 { output q + eta }", "loop-too-long"),
    ("x = 0\n  for i in 0 .. 1000000000000 { x = x + 1 }\n  output q + eta + x", "loop-too-long"),
    pytest.param("for i in 0 .. 400 { for j in 0 .. 400 { output q + eta } }", "loop-too-long",
                 marks=pytest.mark.slow),  # seconds: the nested loop runs until the step count is past the limit
    ("for i in 0 .. 100000 { output q + eta }", "run-too-large"),
    ("for i in 0 .. 100000 { xi ~ Lap(1 / eps) }\n  output q + eta", "run-too-large"),
    ("a0 = [q]\n  " + "\n  ".join(f"a{i} = [a{i - 1}]" for i in range(1, 40)) + "\n  output q + eta", "list-too-deep"),
])
def test_runs_that_would_not_end_or_fit_are_refused(tmp_path: Path, body: str, code: str):
    spec = tmp_path / "spec.dp"
    spec.write_text(SPEC.replace("output q + eta + EXPR", body))
    start = time.monotonic()
    samples = "20000" if code == "run-too-large" else "10"
    status, _, err = run("run", str(spec), "--arg", "q=1", "--arg", "eps=1", "--samples", samples)
    assert status == 2 and codes(err) == [code] and "spec.dp:" in err
    assert time.monotonic() - start < 30
    if code == "loop-too-long":  # the replay (scalar evaluator) has the same limit
        status, _, err = run("run", str(spec), "--arg", "q=1", "--arg", "eps=1", "--noise", "eta=0")
        assert status == 2 and codes(err) == [code]


@pytest.mark.slow
def test_a_long_loop_within_the_limits_runs(tmp_path: Path):
    spec = tmp_path / "spec.dp"
    spec.write_text(SPEC.replace("output q + eta + EXPR", "x = 0\n  for i in 0 .. 100000 { x = x + 1 }\n  output x"))
    status, out, _ = run("run", str(spec), "--arg", "q=1", "--arg", "eps=1", "--samples", "10")
    assert status == 0 and "100000" in out


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "limits").glob("*.dp")), ids=lambda p: p.stem)
def test_the_checker_does_not_unroll_past_its_limit(path: Path):
    """These loops ran for minutes (and grew to 1.7 GB) before the checker bounded unrolling: now the
    obligations that need the loop are unknown, with the limit as the reason."""
    from align.checker.verify import Options, verify_mechanism
    from align.limits import MAX_UNROLL
    from align.parse import parse_source, read_source
    from align.resolve import resolve

    mech = resolve(parse_source(read_source(str(path)))).mechanisms[0]
    verdicts = verify_mechanism(mech, Options(max_length=1))
    unknown = [v for v in verdicts if v.status == "unknown"]
    assert unknown and all(f"more than {MAX_UNROLL} iterations" in v.reason for v in unknown)
    assert not any(v.status == "proved" and v.obligation.id in ("C4a", "C4c") for v in verdicts)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "memory").glob("*.dp")), ids=lambda p: p.stem)
def test_the_checker_stays_within_bounded_memory(path: Path):
    """Specs that once grew `align verify` past 12 GB: under a 3 GB address-space limit, a verdict (refuted)."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2 ** 30, 3 * 2 ** 30))

    done = subprocess.run([sys.executable, "-m", "align", "verify", "--output-format", "concise", str(path)],
                          capture_output=True, text=True, preexec_fn=limit, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "C0(w)=refuted" in done.stdout


# ----------------------------------------------------------------------------------- example values

EXAMPLE_SPEC = """mechanism m(q: real[], k: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0, k >= 1
  privacy eps
  example VALUES
{
  eta ~ Lap(1 / eps)
  output q[0] + eta
}
"""
HOSTILE_EXAMPLES = [
    ("eps = 1/0", "example-item"), ("eps = 1 / (2 - 2)", "example-item"), ("eps = 0/0", "example-item"),
    ("eps = 0^-1", "example-item"), ("eps = ln(0)", "example-item"), ("eps = sqrt(-1)", "example-item"),
    ("eps = ln(2)", "example-item"), ("eps = 1e308*10", "number-out-of-range"),
    ("eps = 1e300*1e300", "constant-out-of-range"), ("eps = exp(800)", "constant-out-of-range"),
    ("k = 7 // 0", "example-item"), ("k = 7 % 0", "example-item"), ("k = 2 ^ -1", "type-mismatch"),
    ("len(q) = 100000000000", "example-item"), ("len(q) = 1 // 0", "example-item"), ("len(q) = -2", "example-item"),
]


def _example_spec(tmp_path: Path, values: str) -> str:
    defaults = {"eps": "eps = 1", "k": "k = 1", "len(q)": "len(q) = 3"}
    given = values.split(" = ")[0]
    items = [values] + [text for name, text in defaults.items() if name != given]
    path = tmp_path / "spec.dp"
    path.write_text(EXAMPLE_SPEC.replace("VALUES", ", ".join(items)))
    return str(path)


@pytest.mark.parametrize("values,code", HOSTILE_EXAMPLES, ids=[v for v, _ in HOSTILE_EXAMPLES])
def test_hostile_example_values_are_located_at_the_clause(tmp_path: Path, values: str, code: str):
    spec = _example_spec(tmp_path, values)
    start = time.monotonic()
    status, _, err = run("check", spec)
    assert status == 2 and codes(err) == [code], err
    assert err.startswith(f"{spec}:5:"), err  # at the example clause, with its caret
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("command", [["run", "--arg", "q=[1, 2]", "--samples", "10"], ["test", "--samples", "2000"],
                                     ["test", "--exact"], ["verify"], ["report"]],
                         ids=lambda c: " ".join(c[:2]))
def test_every_command_refuses_a_division_by_zero_in_an_example(tmp_path: Path, command: list[str]):
    """The example values reach the interpreter, the synthesis of an alignment (verify and report: this spec has
    none), the exact computation and the sampling search; the resolver refuses them first."""
    spec = _example_spec(tmp_path, "eps = 1/0")
    status, out, err = run(command[0], spec, *command[1:])
    assert status == 2 and codes(err) == ["example-item"], out + err
    assert err.startswith(f"{spec}:5:") and "divides by zero" in err


def test_the_longest_example_length_is_accepted(tmp_path: Path):
    assert run("check", _example_spec(tmp_path, f"len(q) = {MAX_TEST_LENGTH}"))[0] == 0
    status, _, err = run("check", _example_spec(tmp_path, f"len(q) = {MAX_TEST_LENGTH + 1}"))
    assert status == 2 and codes(err) == ["example-item"] and str(MAX_TEST_LENGTH) in err


# -------------------------------------------------------------------------- numbers on the command line

NUMERIC_OPTIONS = {  # every numeric option of every command, with values just past its limits
    "run": {"--samples": ["-1", str(MAX_SAMPLES + 1), str(10**21)], "--seed": ["-1", str(2**128)],
            "--chunk-size": ["0", str(MAX_CHUNK_SIZE + 1)]},
    "test": {"--length": ["0", str(MAX_TEST_LENGTH + 1), "100000000"], "--samples": ["0", str(10**21)],
             "--max-length": ["0", str(MAX_TEST_LENGTH + 1)],
             "--confirm": ["-1", str(MAX_CONFIRM_TESTS + 1)], "--alpha": ["0", "1", "nan", "inf", "-0.5"],
             "--seed": ["-1"], "--jobs": ["0", "100000"]},
    "verify": {"--max-length": ["0", str(MAX_BOUNDED_LENGTH + 1)],
               "--timeout": ["inf", "1e308", "nan", "-1", "0", str(MAX_TIMEOUT_S + 1)],
               "--confirm-samples": ["0", str(10**21)], "--jobs": ["0", "100000"]},
    "report": {"--max-length": ["0"], "--timeout": ["inf", "nan"], "--confirm-samples": ["0"]},
}


@pytest.mark.parametrize("command,option,value", [(c, o, v) for c, options in NUMERIC_OPTIONS.items()
                                                   for o, values in options.items() for v in values])
def test_numeric_options_outside_their_range_are_usage_errors(command: str, option: str, value: str):
    start = time.monotonic()
    code, out, err = run(command, SVT, *(SVT_ARGS if command == "run" else []), option, value)
    assert code == 2 and out == "" and codes(err) == ["usage"], err
    assert f"argument {option}: " in err and ("between" in err or "at most" in err), err  # the option, its range
    assert time.monotonic() - start < 5


def test_every_numeric_option_is_bounded():
    """Every option that takes a number is read by a bounded reader of align/commands/options.py, so that no
    command can be given a number it was not written for; and the table above tries each."""
    from align.cli import _build_parser
    from align.commands.options import Bounded

    parser, _ = _build_parser(io.StringIO())
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, sub in subparsers.choices.items():
        for action in sub._actions:
            numeric = action.type in (int, float) or (isinstance(action.default, (int, float)) and
                                                       not isinstance(action.default, bool) and action.nargs != 0)
            if numeric or isinstance(action.type, Bounded):
                assert isinstance(action.type, Bounded), (command, action.option_strings)
                if command in NUMERIC_OPTIONS:
                    assert action.option_strings[0] in NUMERIC_OPTIONS[command], (command, action.option_strings)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["run", SVT, *SVT_ARGS, "--samples", "0"],
                                  ["verify", "specs/freegap/example1_laplace.dp", "--timeout", "1e-3"],
                                  # one sample: a test sample's Poisson size is often 0 (found by bench/fuzz.py)
                                  ["test", "specs/freegap/example1_laplace.dp", "--samples", "1", "--confirm", "0",
                                   "--no-exact"],
                                  ["verify", "specs/incorrect/svt_gap_outputs_noisy_query.dp", "--max-length", "1",
                                   "--confirm", "--confirm-samples", "1"]])
def test_numbers_at_their_limits_are_fine(argv: list[str]):
    code, _, err = run(*argv)
    assert code in (0, 1, 3) and "internal-error" not in err, err


@pytest.mark.parametrize("value", ["inf", "1e308", "nan"])
@pytest.mark.parametrize("command", ["verify", "report"])
def test_a_configured_timeout_out_of_range_is_not_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    value: str, command: str):
    """align/config.py reads `timeout`; whatever it lets through, the proof options check it against the range of
    `--timeout` (limits.TIMEOUT_S) before a solver sees it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "align.toml").write_text(f"timeout = {value}\n")
    spec = tmp_path / "spec.dp"
    spec.write_text((ROOT / "specs" / "freegap" / "example1_laplace.dp").read_text())
    monkeypatch.chdir(tmp_path)
    code, _, err = run(command, str(spec))
    assert code == 2 and codes(err) in (["usage"], ["config-value"]) and "timeout" in err, err
