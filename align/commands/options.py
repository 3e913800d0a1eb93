"""Command line (numeric options): every option that takes a number reads it with one of these readers.

A reader is argparse's `type=`: it turns the option's text into a number of its `Range` (align/limits.py), or
raises `argparse.ArgumentTypeError`, which the parser reports as the `usage` diagnostic, exit 2, naming the
option and the range (`argument --seed: must be an integer between 0 and 2^128 - 1, not -1`) before the
command loads a spec. One reader per range, here, instead of a check in each command: a new numeric option
takes one of them (tests/test_limits.py checks that every numeric option does).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from .. import limits
from ..limits import Range


@dataclass(frozen=True)
class Bounded:
    """argparse's `type=` for a number in `range`."""

    range: Range

    @property
    def __name__(self) -> str:  # argparse names the type in some messages
        return "integer" if self.range.integer else "number"

    def __call__(self, text: str) -> int | float:
        try:
            return self.range.read(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None


SAMPLES = Bounded(limits.SAMPLES)
TEST_SAMPLES = Bounded(limits.TEST_SAMPLES)
SEED = Bounded(limits.SEED)
CHUNK_SIZE = Bounded(limits.CHUNK_SIZE)
BOUNDED_LENGTH = Bounded(limits.BOUNDED_LENGTH)
TEST_LENGTH = Bounded(limits.TEST_LENGTH)
JOBS = Bounded(limits.JOBS)
CONFIRM_TESTS = Bounded(limits.CONFIRM_TESTS)
ALPHA = Bounded(limits.ALPHA)
TIMEOUT_S = Bounded(limits.TIMEOUT_S)
