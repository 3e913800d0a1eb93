"""The typing rule of each builtin function (`builtins.BUILTINS`), one function each, checked complete."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .. import nodes as n
from ..builtins import implemented
from ..types import (
    INDEX_SET,
    INT,
    REAL,
    UNKNOWN,
    ListType,
    OutElem,
    OutputType,
    TagType,
    TupleType,
    Type,
    is_discrete,
    is_numeric,
    join,
)
from .scope import TAG_PATTERN

if TYPE_CHECKING:  # the checker calls these rules; they call back only through the object they are given
    from .check import MechanismChecker


def _list_arg(c: MechanismChecker, e: n.Call, position: int = 0) -> Type:
    t = c.value(e.args[position])
    if isinstance(t, ListType):
        return t.elem
    c.mismatch(e.args[position].span, f"argument of `{e.func}`", "a list", t)
    return UNKNOWN


def _builtin_len(c: MechanismChecker, e: n.Call) -> Type:
    # only `len(q)` of a list named alone reads no more than its length: `len(x > 0 ? [1] : [])` reads x
    bare = isinstance(e.args[0], n.Name)
    c.in_len += bare
    t = c.expr(e.args[0])
    c.in_len -= bare
    if isinstance(t, OutElem):
        t = c.value(e.args[0])
    if not isinstance(t, (ListType, OutputType)) and t is not UNKNOWN:
        c.mismatch(e.args[0].span, "argument of `len`", "a list", t)
    return INT


def _builtin_abs(c: MechanismChecker, e: n.Call) -> Type:
    return c.expect_numeric(e.args[0], "argument of `abs`")


def _min_max(c: MechanismChecker, e: n.Call) -> Type:
    if len(e.args) == 1:
        elem = _list_arg(c, e)
        if not is_numeric(elem):
            c.mismatch(e.args[0].span, f"argument of `{e.func}`", "a numeric list", ListType(elem))
            return UNKNOWN
        return elem
    return _joined_numbers(c, e)


def _joined_numbers(c: MechanismChecker, e: n.Call) -> Type:
    """Numbers, one of which is the result: int if all are int, else real."""
    result: Type = INT
    for a in e.args:
        result = join(result, c.expect_numeric(a, f"argument of `{e.func}`")) or UNKNOWN
    return result


def _arg_extreme(c: MechanismChecker, e: n.Call) -> Type:
    elem = _list_arg(c, e)
    if not is_numeric(elem):
        c.mismatch(e.args[0].span, f"argument of `{e.func}`", "a numeric list", ListType(elem))
    return INT



def _real_function(c: MechanismChecker, e: n.Call) -> Type:
    c.expect_numeric(e.args[0], f"argument of `{e.func}`")
    return REAL


def _integer_function(c: MechanismChecker, e: n.Call) -> Type:
    """floor, ceil, round: a number to an int (of an int, the int itself)."""
    c.expect_numeric(e.args[0], f"argument of `{e.func}`")
    return INT


def _builtin_top_k_with_gaps(c: MechanismChecker, e: n.Call) -> Type:
    _arg_extreme(c, e)
    c.expect(e.args[1], INT, f"second argument of `{e.func}`")
    return ListType(TupleType((INT, REAL)))


def _builtin_top_k(c: MechanismChecker, e: n.Call) -> Type:
    _arg_extreme(c, e)
    c.expect(e.args[1], INT, f"second argument of `{e.func}`")
    return ListType(INT)


def _builtin_indices(c: MechanismChecker, e: n.Call) -> Type:
    t = c.expr(e.args[0])
    elem = t.elem if isinstance(t, (ListType, OutputType)) else None
    if not (isinstance(elem, TupleType) and elem.items and elem.items[0] == INT):
        c.mismatch(e.args[0].span, "argument of `indices`", "a sequence of (index, ...) tuples",
                   t if not isinstance(t, OutElem) else t.elem)
    return INDEX_SET


def _builtin_count(c: MechanismChecker, e: n.Call) -> Type:
    t = c.expr(e.args[0])
    tag = e.args[1]
    if not isinstance(t, (ListType, OutputType)):
        c.mismatch(e.args[0].span, "first argument of `count`", "a sequence of tagged values", t)
        return INT
    if not (isinstance(tag, n.Name) and TAG_PATTERN.fullmatch(tag.id) and not tag.primed):
        c.mismatch(tag.span, "second argument of `count`", "a tag", c.value(tag))
        return INT
    c.check_tag(t.elem, tag.id, tag.span)
    c.tag(tag)
    return INT


def _builtin_payload(c: MechanismChecker, e: n.Call) -> Type:
    """`payload(v, TAG, default)`. Read from the output (`v` an element of `out`), the result is itself an
    output part: a discrete payload is a value, a continuous one may only be indexed for a discrete component
    (`payload(out[i], TOP, (0, 0))[1]`), as for tuple outputs (condition 5)."""
    t = c.expr(e.args[0])
    from_out = isinstance(t, OutElem)
    inner = t.elem if isinstance(t, OutElem) else t
    tag = e.args[1]
    if not isinstance(inner, TagType):
        c.mismatch(e.args[0].span, "first argument of `payload`", "a tagged value", inner)
        return UNKNOWN
    if not (isinstance(tag, n.Name) and TAG_PATTERN.fullmatch(tag.id) and not tag.primed):
        c.mismatch(tag.span, "second argument of `payload`", "a tag", c.value(tag))
        return UNKNOWN
    c.check_tag(inner, tag.id, tag.span)
    c.tag(tag)
    fields = dict(inner.payloads).get(tag.id)
    if fields is None:
        return UNKNOWN  # an unknown tag: reported by check_tag
    if not fields:
        c.mismatch(tag.span, "second argument of `payload`", "a tag with a payload", TagType(((tag.id, ()),)))
        return UNKNOWN
    carried = fields[0] if len(fields) == 1 else TupleType(fields)
    default = c.value(e.args[2])
    result = join(carried, default)
    if result is None:
        c.mismatch(e.args[2].span, "default of `payload`", str(carried), default)
        return UNKNOWN
    return OutElem(result) if from_out and not is_discrete(result) else result


TYPING: Mapping[str, Callable[[MechanismChecker, n.Call], Type]] = implemented("typing", {
    "len": _builtin_len, "abs": _builtin_abs, "min": _min_max, "max": _min_max, "argmax": _arg_extreme,
    "argmin": _arg_extreme, "sqrt": _real_function, "exp": _real_function, "ln": _real_function,
    "normal_cdf": _real_function, "normal_pdf": _real_function, "floor": _integer_function,
    "ceil": _integer_function, "round": _integer_function, "clamp": _joined_numbers, "top_k": _builtin_top_k,
    "top_k_with_gaps": _builtin_top_k_with_gaps, "indices": _builtin_indices, "count": _builtin_count,
    "payload": _builtin_payload,
})
"""The typing rule of each builtin."""
