"""Types of the specification language, shared by resolution, the checker and the interpreter.

int widens to real; tags carry payloads (`TOP(g)` has payload (real,)); `out` is the output sequence,
whose elements have one shape per mechanism.
"""

from __future__ import annotations

from dataclasses import dataclass


class Type:
    """Base class of all types."""

    def describe(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Scalar(Type):
    name: str
    """`real`, `int` or `bool`."""

    def __str__(self) -> str:
        return self.name


REAL = Scalar("real")
INT = Scalar("int")
BOOL = Scalar("bool")


@dataclass(frozen=True)
class ListType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True)
class TupleType(Type):
    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ("," if len(self.items) == 1 else "") + ")"


@dataclass(frozen=True)
class TagType(Type):
    """A tagged value; `payloads` maps each possible tag to the types of its payload."""

    payloads: tuple[tuple[str, tuple[Type, ...]], ...]

    @property
    def tags(self) -> frozenset[str]:
        return frozenset(tag for tag, _ in self.payloads)

    def __str__(self) -> str:
        parts = []
        for tag, payload in sorted(self.payloads, key=lambda p: p[0]):
            parts.append(tag + ("(" + ", ".join(map(str, payload)) + ")" if payload else ""))
        return "tag " + " | ".join(parts)


@dataclass(frozen=True)
class IndexSetType(Type):
    def __str__(self) -> str:
        return "index set"


@dataclass(frozen=True)
class RangeType(Type):
    def __str__(self) -> str:
        return "range"


@dataclass(frozen=True)
class OutputType(Type):
    """The type of `out`: a sequence whose elements have type `elem`."""

    elem: Type

    def __str__(self) -> str:
        return f"output sequence of {self.elem}"


@dataclass(frozen=True)
class UnknownType(Type):
    """Stands for an expression whose type could not be found; suppresses follow-on errors."""

    def __str__(self) -> str:
        return "unknown"


UNKNOWN = UnknownType()
INDEX_SET = IndexSetType()
RANGE = RangeType()


def is_numeric(t: Type) -> bool:
    return t in (REAL, INT) or t is UNKNOWN


def is_discrete(t: Type) -> bool:
    """Whether every value of `t` is one of countably many (what Lemma 1 condition 5 lets alignments read)."""
    if t in (INT, BOOL) or isinstance(t, (IndexSetType, UnknownType)):
        return True
    if isinstance(t, TagType):
        return all(is_discrete(p) for _, payload in t.payloads for p in payload)
    if isinstance(t, (TupleType,)):
        return all(is_discrete(i) for i in t.items)
    if isinstance(t, ListType):
        return is_discrete(t.elem)
    return False


def join(a: Type, b: Type) -> Type | None:
    """The least type of both, or None when they do not mix (int and real join to real)."""
    if a == b:
        return a
    if a is UNKNOWN:
        return b
    if b is UNKNOWN:
        return a
    if {a, b} == {INT, REAL}:
        return REAL
    if isinstance(a, TagType) and isinstance(b, TagType):
        merged = dict(a.payloads)
        for tag, payload in b.payloads:
            if tag in merged and merged[tag] != payload:
                combined = _join_all(merged[tag], payload)
                if combined is None:
                    return None
                payload = combined
            merged[tag] = payload
        return TagType(tuple(sorted(merged.items(), key=lambda kv: kv[0])))
    if isinstance(a, ListType) and isinstance(b, ListType):
        elem = join(a.elem, b.elem)
        return ListType(elem) if elem is not None else None
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        items = _join_all(a.items, b.items)
        return TupleType(items) if items is not None else None
    return None


def _join_all(xs: tuple[Type, ...], ys: tuple[Type, ...]) -> tuple[Type, ...] | None:
    if len(xs) != len(ys):
        return None
    out = []
    for x, y in zip(xs, ys):
        j = join(x, y)
        if j is None:
            return None
        out.append(j)
    return tuple(out)


class OutElem(Type):
    """The type of `out[i]` while it is being checked for Lemma 1 condition 5."""

    def __init__(self, elem: Type):
        self.elem = elem

    def __str__(self) -> str:
        return str(self.elem)
