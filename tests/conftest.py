"""Shared fixtures: the spec corpus and the `--update-golden` flag that regenerates golden outputs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
PEERS = SPECS / "peers"
"""Other projects' benchmark programs as they write them (issue 37): a benchmark of what align proves today, kept
out of the corpus, whose expectations the corpus-wide tests hold align to; tests/test_peers.py checks them."""


def corpus() -> list[Path]:
    return sorted(p for p in SPECS.rglob("*.dp") if PEERS not in p.parents)


def peers() -> list[Path]:
    return sorted(PEERS.glob("*.dp"))


def load_bench(relative: str) -> ModuleType:
    """Import a script under bench/ (not a package) by path, registered under its stem so that xdist workers
    and pickling find it again; its own directory goes on sys.path for its sibling imports."""
    path = ROOT / "bench" / relative
    name = path.stem
    if name in sys.modules:
        return sys.modules[name]
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected outputs of golden tests from the current behaviour")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
