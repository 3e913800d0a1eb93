"""Results (shared by the checker, the reports and the command line): the ordered status of a verdict.

A verdict is one of four, ordered from worst to best, and a mechanism's status is the minimum over its
obligations (CrossHair's `VerificationStatus` is the model):

- `refuted` — a counterexample breaks the obligation;
- `unknown` — neither proved nor refuted (solver limit, unsupported construct, vacuous assumptions); a proof
  whose neighbouring relation admits no two distinct inputs is *vacuous* (`results.Verdict.vacuous`, obligation
  ADJ): unknown too, since it says nothing about privacy, with "vacuous" in the verdict line;
- `bounded` — proved only for the inputs that were enumerated (every list length <= N, and the integer
  parameters that shape the program within a range): **not a proof** of ε-DP, and `align verify` exits 3
  for it unless the user accepts bounded results (`--accept-bounded`);
- `proved` — proved for every input (every input length, every parameter value that `requires` allows), or
  by construction.

The members are strings (`Status.PROVED == "proved"`), so the JSON report and older comparisons read them
as such, but they order by strength, not alphabetically.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Status(str, Enum):
    REFUTED = "refuted"
    UNKNOWN = "unknown"
    BOUNDED = "bounded"
    PROVED = "proved"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.rank >= other.rank

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def merge(statuses: Iterable[Status]) -> Status:
        """The status of a whole: its weakest part (`proved` for no parts)."""
        return min(statuses, default=Status.PROVED)


_RANK = {Status.REFUTED: 0, Status.UNKNOWN: 1, Status.BOUNDED: 2, Status.PROVED: 3}
