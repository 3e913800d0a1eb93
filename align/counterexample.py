"""Counterexamples: one concrete (D, D', H) that breaks an obligation, in a file format shared by the checker
(`align verify` writes it from a z3 model) and the interpreter (`align run --check-alignment` writes it from a
failing sample; `align run --noise-file FILE --aligned` replays it).

    {"format": "align-counterexample/1",
     "spec": "specs/incorrect/svt_gap_outputs_noisy_query.dp",
     "mechanism": "svt_gap_outputs_noisy_query",
     "obligation": "C4a",
     "args": {"q": [0, 0], "T": 0, "k": 1, "eps": 1, "theta": "1/2"},
     "neighbour": {"q": [1, 1]},
     "noise": {"eta": 0.31, "xi": [-1.2, null]},
     "note": "free text"}

`args` gives every parameter its value on D; `neighbour` gives each private parameter its value on D'; `noise`
gives each scalar noise variable a number and each family a list with a value, or null, per loop index (the
list position is the loop variable's value). Numbers are JSON numbers or strings "p/q" (exact rationals).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .diagnostics import SpecError, diag
from .files import open_output, read_bytes
from .limits import MAX_NESTING_DEPTH
from .obligations import ObligationId
from .parse import checked_number, exact_text, read_json

FORMAT = "align-counterexample/1"
OBLIGATIONS = tuple(str(o) for o in ObligationId)


class _Absent:
    """A key the document does not have (distinct from a key whose value is null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

_WITNESS_KEYS = ("length", "lengths", "shifts", "output", "aligned_output", "claim", "parameters", "epsilon",
                 "why")
"""What the checker adds to (D, D', H): which input shape, the shifts and outputs, why the obligation fails."""


@dataclass(frozen=True)
class Counterexample:
    """One (D, D', H) that breaks an obligation: what `align verify` finds (with the checker's witness), what
    `align run --check-alignment` samples, what `--noise-file` replays and `align test` tries first."""

    spec: str
    """Path of the spec file, as given to the command that found it."""
    mechanism: str
    obligation: str
    """The obligation it refutes: C4a, C4c, ... (one of OBLIGATIONS)."""
    args: dict[str, Any]
    """Every parameter's value on D (numbers, booleans, lists; `Fraction` for exact rationals)."""
    neighbour: dict[str, Any]
    """Each private parameter's value on D'."""
    noise: dict[str, Any]
    """Scalar noise: a number; a family: a list with a number or None per loop index."""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of the file that this version does not know, kept so that a load/save round trip loses nothing."""
    length: Any = ABSENT
    """The checker's input shape: the length of the list parameter (None: no list)..."""
    lengths: Any = ABSENT
    """... or the lengths of several (None: one list or none)."""
    shifts: Any = ABSENT
    """ψ of each noise value the run drew, in the shape of `noise`."""
    output: Any = ABSENT
    """The output on D, as the JSON report shows it (tags as {"tag": ..., "payload": [...]})."""
    aligned_output: Any = ABSENT
    """The output of the aligned run on D'."""
    claim: Any = ABSENT
    """The claim at this output (C4c, MIX)."""
    parameters: Any = ABSENT
    """C0: the site and its parameters in both runs."""
    epsilon: Any = ABSENT
    """MIX: the rule's ε at these parameters."""
    why: Any = ABSENT
    """Why the obligation fails here, in words."""
    replay: Any = ABSENT
    """The interpreter's replay of it: {"confirmed": ..., "detail": ...}."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": FORMAT, "spec": self.spec, "mechanism": self.mechanism,
                                "obligation": str(self.obligation)}
        data.update(self._present(("length", "lengths")))
        data.update({"args": _encode(self.args), "neighbour": _encode(self.neighbour), "noise": _encode(self.noise)})
        data.update(self._present(("shifts", "output", "aligned_output", "claim", "parameters", "epsilon", "why")))
        if self.note or all(getattr(self, k) is ABSENT for k in _WITNESS_KEYS):
            data["note"] = self.note  # the file format's free text (the checker's witness says `why` instead)
        data.update(self._present(("replay",)))
        data.update(self.extra)
        return data

    def _present(self, keys: tuple[str, ...]) -> dict[str, Any]:
        return {k: _encode(getattr(self, k)) for k in keys if getattr(self, k) is not ABSENT}

    @classmethod
    def from_json(cls, data: Any, path: str = "<counterexample>") -> Counterexample:
        def bad(reason: str) -> SpecError:
            return SpecError([diag("counterexample-format", None, path=path, reason=reason)])

        if not isinstance(data, dict):
            raise bad("the file holds no JSON object")
        if data.get("format") != FORMAT:
            raise bad(f'"format" must be "{FORMAT}"')
        for key in ("spec", "mechanism", "obligation"):
            if not isinstance(data.get(key), str):
                raise bad(f'"{key}" must be a string')
        if data["obligation"] not in OBLIGATIONS:
            raise bad(f'"obligation" must be one of {", ".join(OBLIGATIONS)}')
        parts = {}
        for key in ("args", "neighbour", "noise"):
            value = data.get(key, {})
            if not isinstance(value, dict):
                raise bad(f'"{key}" must be an object')
            try:
                parts[key] = {str(k): _decode(v) for k, v in value.items()}
            except ValueError as error:
                raise bad(f'"{key}": {error}') from None
        note = data.get("note", "")
        if not isinstance(note, str):
            raise bad('"note" must be a string')
        known = {"format", "spec", "mechanism", "obligation", "args", "neighbour", "noise", "note", "replay",
                 *_WITNESS_KEYS}
        extra = {k: v for k, v in data.items() if k not in known}
        # the checker's witness is kept as the file has it (shown, not computed with)
        witness = {k: data[k] for k in (*_WITNESS_KEYS, "replay") if k in data}
        return cls(data["spec"], data["mechanism"], data["obligation"], parts["args"], parts["neighbour"],
                   parts["noise"], note, extra, **witness)


def load(path: str) -> Counterexample:
    """Read a counterexample file; a missing or malformed file raises SpecError with a diagnostic.

    Read as spec files are (`files.read_bytes`): a regular file of bounded size, never a FIFO or a device.
    """
    raw = read_bytes(path)
    try:
        data = read_json(raw.decode("utf-8"))
    except ValueError as error:  # also UnicodeDecodeError, numbers out of range, nesting too deep
        raise SpecError([diag("counterexample-format", None, path=path,
                              reason=f"not JSON ({str(error)[:200]})")]) from None
    return Counterexample.from_json(data, path)


def save(counterexample: Counterexample, path: str) -> None:
    """Write the counterexample to the file the user named (`files.open_output`: never through a link out of
    the repository); OSError when it cannot be written."""
    with open_output(path) as handle:
        handle.write((json.dumps(counterexample.to_json(), indent=2) + "\n").encode("utf-8"))


def _encode(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def _decode(value: Any, depth: int = 0) -> Any:
    # Numbers obey the limits of spec literals (parse.exact_text, never `Fraction(text)`, which computes
    # 10^100000000 for "1e100000000"); lists nest as deep as expressions may.

    if depth > MAX_NESTING_DEPTH:
        raise ValueError(f"lists nest more than {MAX_NESTING_DEPTH} deep")
    if isinstance(value, list):
        return [_decode(v, depth + 1) for v in value]
    if isinstance(value, str):
        try:
            return exact_text(value)
        except ValueError as error:
            raise ValueError(f"{error} (write numbers as JSON numbers or \"p/q\")") from None
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return checked_number(value)
    raise ValueError(f"{json.dumps(value)[:40]} is not a number, boolean, null or list")
