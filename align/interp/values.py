"""Interpreter (values): the Python values of one execution, arguments, and how values are printed and stored.

One execution (the scalar evaluator, traces, replays, counterexamples) uses plain Python values:

| language type | Python value |
|---|---|
| `real` | `float` (IEEE double, as numpy's float64) |
| `int` | `int` |
| `bool` | `bool` |
| `T[]` | `list` |
| tuple | `tuple` |
| tag `TOP(g)`, `BOT` | `Tag("TOP", (g,))`, `Tag("BOT", ())` |
| index set (`indices(out)`) | `frozenset` of int |

Argument values (`--arg q=[3,1,4]`, counterexample files) are read without `eval`: as JSON, or else as a
literal expression of the spec language (`1/3`, `-2`, `[1, 2/3]`) evaluated exactly with `Fraction`s. Either
way a value obeys the limits of spec literals (align/limits.py): numbers are finite, nonzero magnitudes lie
between 1e-300 and 1e301, exact values have at most 4096 bits, lists nest at most 100 deep; anything else is
`invalid-argument`, never an OverflowError or a hang further on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .. import nodes as n
from ..diagnostics import SpecError, diag, did_you_mean
from ..limits import MAX_NESTING_DEPTH
from ..parse import checked_number, exact_text, parse_expression, read_json
from ..resolve import ResolvedParam
from ..resolve.constants import literal_value
from ..span import Span
from ..types import BOOL, INT, REAL, ListType, Type
from .errors import fail


@dataclass(frozen=True)
class Tag:
    """A tagged output value: `TOP(g)` is Tag("TOP", (g,)), `BOT` is Tag("BOT", ())."""

    name: str
    payload: tuple = ()

    def __str__(self) -> str:
        return format_value(self)


# ------------------------------------------------------------------------------------------------ printing


def format_number(x: Any, digits: int | None = 6) -> str:
    """A number as the language writes it: `true`, `3`, `-3/4` (an exact rational), a real to `digits`
    significant digits (None: the shortest text that reads back as the same double)."""
    if type(x).__module__ == "numpy":
        x = x.item()  # a numpy scalar: its Python value
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, Fraction):
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    x = float(x)
    if digits is None:
        text = repr(x)
        return text[:-2] if text.endswith(".0") else text
    return f"{x:.{digits}g}"


def format_value(v: Any, digits: int | None = 6) -> str:
    """A value in the language's own syntax, for every text meant for a person (traces, summaries, reasons,
    counterexamples, reports): `TOP(0.5)`, `[1, 2/3]`, `true`. It takes the interpreter's values (`Tag`, lists,
    tuples, index sets), their JSON data form (a tag as {"tag": name, "payload": [...]}, a rational as "p/q"),
    exact `Fraction`s and numpy scalars and arrays; `None` (a noise value that was not drawn) is `-`. Reals have
    `digits` significant digits (None: as many as the double needs to read back)."""
    if isinstance(v, Tag):
        return v.name + (f"({', '.join(format_value(p, digits) for p in v.payload)})" if v.payload else "")
    if isinstance(v, dict) and "tag" in v:
        payload = v.get("payload") or ()
        return str(v["tag"]) + (f"({', '.join(format_value(p, digits) for p in payload)})" if payload else "")
    if isinstance(v, dict):
        return format_values(v, digits=digits)
    if type(v).__module__ == "numpy":
        v = v.tolist()  # a numpy scalar or array: its Python value (lists for arrays)
    if isinstance(v, tuple):
        return "(" + ", ".join(format_value(x, digits) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(format_value(x, digits) for x in v) + "]"
    if isinstance(v, (frozenset, set)):
        return "{" + ", ".join(format_value(x, digits) for x in sorted(v)) + "}"
    if v is None:
        return "-"
    if isinstance(v, (int, float, bool, Fraction)):
        return format_number(v, digits)
    return str(v)


def format_values(values: Mapping[str, Any], prime: str = "", digits: int | None = 6) -> str:
    """Named values as the language writes them: `q = [1, 2], eps = 1/2` (`prime`: `q' = ...`)."""
    return ", ".join(f"{name}{prime} = {format_value(value, digits)}" for name, value in values.items())


def to_json(v: Any) -> Any:
    """A value as JSON data: tags are {"tag": name, "payload": [...]}, tuples and sets are lists."""
    if isinstance(v, Tag):
        return {"tag": v.name, "payload": [to_json(p) for p in v.payload]}
    if isinstance(v, (tuple, list)):
        return [to_json(x) for x in v]
    if isinstance(v, frozenset):
        return sorted(v)
    if isinstance(v, Fraction):
        return str(v) if v.denominator != 1 else v.numerator
    return v


# ---------------------------------------------------------------------------------------------- arguments


DEFAULT_TEST_LENGTH = 5
"""The length of the private lists `align test` generates when neither --length nor an example gives one."""


def example_arguments(mech: n.Mechanism) -> dict[str, Any]:
    """The public values of the mechanism's `example` clause (`eps = 1, T = 0.5`), as `--arg eps=1 --arg T=0.5`
    gives them (ints, floats, lists of them): `align run` and `align test` use them for every public parameter not
    given with --arg."""
    return {ex.name: _plain(_example(ex)) for ex in mech.examples if not ex.length}


def _plain(v: Any) -> Any:
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return float(v) if isinstance(v, Fraction) else v


def example_length(mech: n.Mechanism) -> int:
    """The length of the private lists that `align test` generates: the longest `len(q) = N` of the `example`
    clause, else DEFAULT_TEST_LENGTH."""
    return max((int(_example(ex)) for ex in mech.examples if ex.length), default=DEFAULT_TEST_LENGTH)


def _example(ex: n.Example) -> Any:
    """An example's exact value; the resolver has refused an example without one (`example-item`), so this
    error is only for a caller that skipped the resolver."""
    try:
        return literal_value(ex.value)
    except ValueError as error:
        raise SpecError([diag("example-item", ex.value.span, item=ex.label, reason=str(error))]) from None


def read_value_text(name: str, text: str) -> Any:
    """Read an argument or noise value given on the command line (JSON, or a literal expression)."""
    try:
        data = read_json(text)
    except json.JSONDecodeError:  # not JSON: perhaps an expression such as `1/3`
        pass
    except ValueError as error:  # JSON, with a number out of range or nested too deeply
        raise fail("invalid-argument", None, name=name, reason=str(error)) from None
    else:
        try:
            return from_json(data)
        except ValueError as error:
            raise fail("invalid-argument", None, name=name, reason=str(error)) from None
    try:
        return literal_value(parse_expression(text, path=f"<{name}>"))
    except SpecError as error:
        raise fail("invalid-argument", None, name=name, reason=error.diagnostics[0].message) from None
    except ValueError as error:
        raise fail("invalid-argument", None, name=name, reason=str(error)) from None


def from_json(data: Any, depth: int = 0) -> Any:
    """JSON data to values: strings "p/q" are exact rationals; anything else but numbers, booleans, null and
    lists is rejected, and numbers obey the limits of spec literals."""
    if depth > MAX_NESTING_DEPTH:
        raise ValueError(f"lists nest more than {MAX_NESTING_DEPTH} deep")
    if isinstance(data, str):
        return exact_text(data)
    if isinstance(data, list):
        return [from_json(x, depth + 1) for x in data]
    if data is None or isinstance(data, bool):
        return data
    if isinstance(data, (int, float)):
        return checked_number(data)
    raise ValueError(f"{json.dumps(data)[:40]} is not a number, boolean or list")


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the bool {str(value).lower()}"
    if isinstance(value, int):
        return f"the int {value}"
    if isinstance(value, (float, Fraction)):
        return f"the real {value}"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return type(value).__name__


def convert(name: str, t: Type, value: Any) -> Any:
    """Check a value against a parameter type and convert it (real -> float, int -> int, lists elementwise)."""
    if isinstance(t, ListType):
        if not isinstance(value, list):
            raise fail("argument-type", None, name=name, expected=f"a list ({t})", found=describe(value))
        return [convert(f"{name}[{k}]", t.elem, x) for k, x in enumerate(value)]
    if t == BOOL:
        if not isinstance(value, bool):
            raise fail("argument-type", None, name=name, expected="bool", found=describe(value))
        return value
    if t == INT:
        if isinstance(value, Fraction) and value.denominator == 1:
            value = value.numerator
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail("argument-type", None, name=name, expected="int", found=describe(value))
        if not -(2 ** 63) <= value < 2 ** 63:
            raise fail("argument-type", None, name=name, expected="int (64-bit)", found=describe(value))
        return value
    if t == REAL:
        if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
            raise fail("argument-type", None, name=name, expected="real", found=describe(value))
        x = float(value)
        if not math.isfinite(x):
            raise fail("argument-type", None, name=name, expected="a finite real", found=describe(value))
        return x
    raise fail("argument-type", None, name=name, expected=str(t), found=describe(value))


def convert_arguments(mechanism: str, params: tuple[ResolvedParam, ...], values: dict[str, Any],
                      option: str = "--arg", only: set[str] | None = None, span: Span | None = None) -> dict[str, Any]:
    """Typed values for the parameters (all of them, or those in `only`); errors name the parameter's span."""
    wanted = [p for p in params if only is None or p.name in only]
    names = {p.name for p in wanted}
    for name in values:
        if name not in names:
            hint = did_you_mean(name, names)
            if only is not None and any(p.name == name for p in params):
                hint = " that is private (only private parameters have a neighbour value)"
            raise fail("unknown-argument", span, mechanism=mechanism, name=name, hint=hint)
    result = {}
    for p in wanted:
        if p.name not in values:
            raise fail("missing-argument", p.span, mechanism=mechanism, name=p.name, type=str(p.type), option=option)
        try:
            result[p.name] = convert(p.name, p.type, values[p.name])
        except SpecError as error:
            d = error.diagnostics[0]
            raise fail(d.code, p.span, None, **d.args) from None
    return result
