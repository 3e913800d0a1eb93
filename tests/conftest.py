"""Shared fixtures: the spec corpus and the `--update-golden` flag that regenerates golden outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


def corpus() -> list[Path]:
    return sorted(SPECS.rglob("*.dp"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected outputs of golden tests from the current behaviour")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
