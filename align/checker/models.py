"""Checker (models): a z3 model that refutes an obligation, as a counterexample in the spec's own names.

The model's values of the parameters, the neighbour, each noise draw and each shift become a `Counterexample`
(numbers exact: an integer, a Fraction, or a float for an algebraic value), and `first_false` /
`first_difference` say in words which condition or which output the model breaks.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import z3

from ..counterexample import Counterexample
from ..interp.values import format_value
from ..obligations import Obligation, ObligationId
from ..smt.encode import (
    AlignmentEval,
    Draw,
    Encoding,
    ListV,
    OutputSeq,
    Run,
    TagV,
    TupV,
    tag_name,
)


def number(model: z3.ModelRef, term: z3.ExprRef) -> Any:
    value = model.eval(term, model_completion=True)
    if z3.is_int_value(value):
        return value.as_long()
    if z3.is_rational_value(value):
        f = Fraction(value.numerator_as_long(), value.denominator_as_long())
        return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
    if z3.is_algebraic_value(value):
        return float(value.approx(20).as_decimal(17).rstrip("?"))
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    return str(value)


def show(model: z3.ModelRef, term: z3.ExprRef) -> str:
    v = number(model, term)
    if isinstance(v, str) and "/" in v:
        p, q = v.split("/")
        return f"{v} ≈ {int(p) / int(q):.6g}"
    return str(v)


def _concrete_value(model: z3.ModelRef, value: Any) -> Any:
    if isinstance(value, ListV):
        return [_concrete_value(model, v) for v in value.items]
    if isinstance(value, TupV):
        return [_concrete_value(model, v) for v in value.items]
    if isinstance(value, TagV):
        code = number(model, value.code)
        tag = tag_name(code) if isinstance(code, int) else "?"
        fields = [_concrete_value(model, f) for f in value.fields(tag)]
        return {"tag": tag, "payload": fields} if fields else {"tag": tag}
    if z3.is_expr(value):
        return number(model, value)
    return str(value)


def _index(d: Draw) -> int:
    """The index of a draw of a family member (every draw of a family has one)."""
    assert d.index is not None, f"{d.site} is a scalar noise variable"
    return d.index


def output_value(model: z3.ModelRef, out: OutputSeq) -> list:
    length = number(model, out.length)
    return [_concrete_value(model, out.slots[k]) for k in range(int(length))]


def counterexample(enc: Encoding, run1: Run, run2: Run, align: AlignmentEval, model: z3.ModelRef,
                   o: Obligation) -> Counterexample:
    mech = enc.mech
    args = {name: _concrete_value(model, value) for name, value in enc.params.items()}
    neighbour = {name: _concrete_value(model, value) for name, value in enc.neighbour.items()}
    noise: dict[str, Any] = {}
    for site in mech.noise:
        draws = [d for d in run1.draws if d.site == site.name]
        if site.family:
            size = max((_index(d) for d in draws), default=-1) + 1
            values: list[Any] = [None] * size
            for d in draws:
                if z3.is_true(model.eval(d.guard, model_completion=True)):
                    values[_index(d)] = number(model, d.value)
            noise[site.name] = values
        else:
            drawn = [d for d in draws if z3.is_true(model.eval(d.guard, model_completion=True))]
            noise[site.name] = number(model, drawn[0].value) if drawn else None
    shifts: dict[str, Any] = {}
    for site in mech.noise:
        draws = [d for d in run1.draws if d.site == site.name and
                 z3.is_true(model.eval(d.guard, model_completion=True))]
        if site.family:
            size = max((_index(d) for d in run1.draws if d.site == site.name), default=-1) + 1
            values = [None] * size
            for d in draws:
                values[_index(d)] = number(model, align.shift(d.site, d.index))
            shifts[site.name] = values
        elif draws:
            shifts[site.name] = number(model, align.shift(site.name, None))
    return Counterexample(
        mech.node.span.path, mech.name, o.id, _exact(args), _exact(neighbour), _exact(noise),
        length=enc.n if enc.lengths else None,
        lengths=enc.shape if len(enc.shape) > 1 else None,
        shifts=_exact(shifts),
        output=output_value(model, run1.output),
        aligned_output=output_value(model, run2.output),
        claim=number(model, align.claim()) if o.id == ObligationId.C4C else None,
    )


def _exact(value: Any) -> Any:
    """A model's values for a Counterexample: "p/q" as a Fraction (the file format writes it back as "p/q")."""
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v) for v in value]
    if isinstance(value, str) and "/" in value:
        p, q = value.split("/")
        return Fraction(int(p), int(q))
    return value


def first_difference(model: z3.ModelRef, a: OutputSeq, b: OutputSeq) -> str:
    out_a, out_b = output_value(model, a), output_value(model, b)
    if len(out_a) != len(out_b):
        return f"the output on D has {len(out_a)} item(s), the aligned run on D' has {len(out_b)}"
    for k, (x, y) in enumerate(zip(out_a, out_b)):
        if x != y:
            return (f"output {k} differs: {format_value(x, digits=None)} on D, {format_value(y, digits=None)} on D' "
                    "with the aligned noise")
    return "the outputs differ"


def first_false(model: z3.ModelRef, conditions: list[tuple[z3.BoolRef, str]],
                 otherwise: str | None = "a condition fails") -> str | None:
    for condition, text in conditions:
        if not z3.is_true(model.eval(condition, model_completion=True)):
            return text
    return otherwise
