"""Every script under bench/ starts: a refactoring that moves what a benchmark imports breaks it here, not on the
day someone measures (`--help` imports the script's modules and parses nothing else)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

SCRIPTS = sorted(p for p in (ROOT / "bench").rglob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT / "bench")))
def test_a_benchmark_script_starts(script):
    done = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower() or done.stdout.strip(), done.stdout
