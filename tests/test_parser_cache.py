"""The built LALR parser is kept in the user's cache directory (align/parse.py `_parser`): a loaded parser
parses exactly as a freshly built one, a damaged or foreign file is rebuilt, and a directory that others can
write to is never read (lark saves parsers with pickle)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lark import Lark

from align import parse
from align.span import Source

from .conftest import ROOT, corpus


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "cache"
    monkeypatch.setenv("ALIGN_CACHE_DIR", str(root))
    parse._parser.cache_clear()
    yield root
    parse._parser.cache_clear()


def _files(root: Path) -> list[Path]:
    return sorted(root.glob("parser-*.lark")) if root.is_dir() else []


def _parse_corpus() -> list[str]:
    return [repr(parse.parse_source(Source(str(p), p.read_text()))) for p in corpus()]


@pytest.mark.slow
def test_a_saved_parser_parses_the_corpus_as_a_built_one(cache: Path) -> None:
    built = _parse_corpus()
    assert len(_files(cache)) == 1, "the first use saves the built parser"
    assert os.stat(cache).st_mode & 0o777 == 0o700
    parse._parser.cache_clear()
    saved = _files(cache)[0].read_bytes()
    loaded = _parse_corpus()
    assert loaded == built
    assert _files(cache)[0].read_bytes() == saved, "a loaded parser is not saved again"


def test_a_damaged_file_is_rebuilt(cache: Path) -> None:
    parse._parser()
    [path] = _files(cache)
    path.write_bytes(path.read_bytes()[:1000])
    parse._parser.cache_clear()
    built = _parse_corpus()
    with path.open("rb") as f:
        Lark.load(f)  # the damaged file was replaced by the rebuilt parser (pickles differ run to run)
    parse._parser.cache_clear()
    assert _parse_corpus() == built


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_directory_others_can_write_is_not_used(cache: Path) -> None:
    cache.mkdir(mode=0o700)
    os.chmod(cache, 0o777)
    planted = cache / "parser-planted.lark"
    planted.write_bytes(b"not a parser")
    built = _parse_corpus()
    assert _files(cache) == [planted], "nothing is saved to, or read from, a directory others can write to"
    assert built == _parse_corpus()


@pytest.mark.slow
def test_an_unusable_location_still_parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("ALIGN_CACHE_DIR", str(blocker / "cache"))
    parse._parser.cache_clear()
    try:
        assert _parse_corpus()
    finally:
        parse._parser.cache_clear()


def test_align_check_imports_no_solver_and_no_numeric_library(tmp_path: Path) -> None:
    """`align check --output-format concise` (the pre-commit hook's) needs neither z3, sympy nor numpy: each
    costs a large part of its startup (bench/startup.py prints the times)."""
    probe = ("import sys; from align.cli import main\n"
             "try:\n    main(['check', '--output-format', 'concise', sys.argv[1]])\n"
             "except SystemExit:\n    pass\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'z3', 'sympy', 'numpy', 'scipy'}))")
    spec = ROOT / "specs" / "freegap" / "alg2_svt_gap.dp"
    env = {**os.environ, "ALIGN_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", probe, str(spec)], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert out.strip().endswith("[]"), out


def _check_imports(spec: Path, env: dict[str, str], output_format: str = "text") -> tuple[str, list[str]]:
    """(the report, the heavy libraries the process imported) of `align check` in a fresh process."""
    probe = ("import io, sys, contextlib; from align.cli import main\nbuffer = io.StringIO()\n"
             "with contextlib.redirect_stdout(buffer):\n    try:\n"
             "        main(['check', '--output-format', sys.argv[2], sys.argv[1]])\n"
             "    except SystemExit:\n        pass\n"
             "print(repr(buffer.getvalue())); "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'z3', 'sympy', 'numpy', 'scipy'}))")
    lines = subprocess.run([sys.executable, "-c", probe, str(spec), output_format], capture_output=True, text=True,
                           env=env, check=True).stdout.strip().splitlines()
    return ast.literal_eval(lines[-2]), ast.literal_eval(lines[-1])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "shown"), [
    ("alg2_svt_gap.dp", "eps1/2 = eps*(1 - theta)/(2*k)"),
    ("alg3_adaptive_svt_gap_geo.dp", "eps2/2 = eps*(1 - theta)/(4*k)"),  # -ln(1 - p), p = 1 - exp(-eps2/2)
    ("alg7_gumbel_exp_mech_gap.dp", "is not Lipschitz"),  # Gumbel: no coefficient to compute
])
def test_products_of_powers_are_printed_without_sympy(tmp_path: Path, name: str, shown: str) -> None:
    """The text report of a spec whose cost coefficients are products of powers (every correct spec of the corpus)
    imports no sympy even on its first check (align/monomials.py)."""
    spec = ROOT / "specs" / "freegap" / name
    env = {**os.environ, "ALIGN_CACHE_DIR": str(tmp_path / "cache")}
    report, imported = _check_imports(spec, env)
    assert imported == [] and shown in report
    assert not list((tmp_path / "cache").glob("coefficients-*.json"))


@pytest.mark.slow
def test_kept_coefficients_spare_sympy_and_show_the_same_texts(tmp_path: Path) -> None:
    """The text report's other cost coefficients (sympy: here a scale that reads the data, 1 + abs(q)) are kept in
    the cache directory: a second `align check` of the spec imports no sympy and prints the same report; a damaged
    file is ignored and written again."""
    spec = ROOT / "specs" / "incorrect" / "laplace_scale_reads_data.dp"
    root = tmp_path / "cache"
    env = {**os.environ, "ALIGN_CACHE_DIR": str(root)}
    first, imported = _check_imports(spec, env)
    assert "sympy" in imported and "cost coefficient c = eps/(1 + abs(q))" in first
    [kept] = root.glob("coefficients-*.json")
    second, imported = _check_imports(spec, env)
    assert imported == [] and second == first
    kept.write_text("{not json")
    third, imported = _check_imports(spec, env)
    assert "sympy" in imported and third == first
    assert json.loads(kept.read_text())  # written again, whole
