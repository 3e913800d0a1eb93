"""README.md is a newcomer's first page: each `console` block of its tour is a command and what align prints
for it. The shown lines must be lines of today's output, in order (`...` stands for lines left out; times print
as `*.**s`, as in the goldens), so that the README cannot drift from the program."""

from __future__ import annotations

import io
import re
import shlex

import pytest

from align.cli import main

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```console\n(.*?)```", README, flags=re.S)
SECONDS = re.compile(r"\b\d+\.\d\ds\b")


def _blocks() -> list[tuple[list[str], list[str]]]:
    found = []
    for block in BLOCKS:
        command, *shown = block.rstrip("\n").split("\n")
        assert command.startswith("$ align "), command
        found.append((shlex.split(command[2:])[1:], shown))
    return found


def test_the_readme_has_a_tour():
    assert len(_blocks()) >= 3


@pytest.mark.parametrize(("argv", "shown"), _blocks(), ids=[" ".join(argv) for argv, _ in _blocks()])
def test_each_tour_block_shows_what_align_prints(argv: list[str], shown: list[str],
                                                 monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    out, err = io.StringIO(), io.StringIO()
    main(argv, out, err)
    printed = [SECONDS.sub("*.**s", line) for line in (out.getvalue() + err.getvalue()).split("\n")]
    position = 0
    for line in shown:
        if line == "...":
            continue
        assert line in printed[position:], f"not printed (after line {position}): {line}"
        position = printed.index(line, position) + 1
