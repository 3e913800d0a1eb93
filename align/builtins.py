"""The builtin functions and comprehension forms of the language: one record each.

A `Builtin` holds what the language says about a function: its name, how many arguments it takes, its
signature and meaning (docs/language.md section 8 shows the same), and the domain outside which evaluating it
is a `math-domain` error. Each back end keeps its own implementation (the resolver's typing rule, the scalar
and vectorised interpreters, the z3 encoder) in a table keyed by name and passes it through `implemented`,
which fails at import when the table misses a builtin or has one the language does not: adding a builtin is
one record here plus one entry per back end, and nothing runs with a back end that forgot it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar


@dataclass(frozen=True)
class Builtin:
    name: str
    arity: tuple[int, int | None]
    """The least and the most number of arguments (None: no upper bound)."""
    signature: str
    """`arguments -> result`, in the words of docs/language.md."""
    meaning: str
    domain: str | None = None
    """Where the function is defined, when not everywhere (evaluation outside it is `math-domain`)."""


BUILTINS: dict[str, Builtin] = {b.name: b for b in (
    Builtin("len", (1, 1), "a list, or `out` -> int", "number of entries; `len(out)` is the number of outputs"),
    Builtin("abs", (1, 1), "number -> same type", "absolute value"),
    Builtin("min", (1, None), "two or more numbers, or one numeric list -> int if all int, else real",
            "smallest value"),
    Builtin("max", (1, None), "two or more numbers, or one numeric list -> int if all int, else real",
            "largest value"),
    Builtin("argmax", (1, 1), "numeric list -> int", "index of the largest entry"),
    Builtin("argmin", (1, 1), "numeric list -> int", "index of the smallest entry"),
    Builtin("sqrt", (1, 1), "number -> real", "square root", domain="x >= 0"),
    Builtin("exp", (1, 1), "number -> real", "e^x"),
    Builtin("ln", (1, 1), "number -> real", "natural logarithm", domain="x > 0"),
    Builtin("normal_cdf", (1, 1), "number -> real", "Φ(x) of the standard normal distribution"),
    Builtin("normal_pdf", (1, 1), "number -> real", "φ(x) of the standard normal distribution"),
    Builtin("floor", (1, 1), "number -> int", "the largest integer <= x"),
    Builtin("ceil", (1, 1), "number -> int", "the smallest integer >= x"),
    Builtin("round", (1, 1), "number -> int", "the integer nearest x, a tie (x + 1/2 an integer) to the even one"),
    Builtin("clamp", (3, 3), "three numbers -> int if all int, else real", "x moved into [lo, hi]: min(max(x, lo), hi)",
            domain="lo <= hi"),
    Builtin("top_k", (2, 2), "numeric list, int -> int[]", "the indices of the k largest entries, largest first",
            domain="0 <= k <= len(v)"),
    Builtin("top_k_with_gaps", (2, 2), "numeric list, int -> (int, real)[]",
            "the indices of the k largest entries with the gap of each to the next (Free Gap, Algorithm 4)",
            domain="0 <= k < len(v)"),
    Builtin("indices", (1, 1), "`out` or a list of tuples with an int first component -> index set",
            "the set of first components"),
    Builtin("count", (2, 2), "`out` or a list of tagged values, and a tag -> int",
            "how many elements carry that tag"),
    Builtin("payload", (3, 3), "a tagged value, a tag with a payload, a default of the payload's type -> "
            "the payload's type (a tuple for several components)",
            "the value's payload if it carries that tag, else the default"),
)}

BUILTIN_ARITY: dict[str, tuple[int, int | None]] = {name: b.arity for name, b in BUILTINS.items()}

COMPREHENSION_MEANINGS: dict[str, str] = {
    "max": "the largest value of the body", "min": "the smallest value of the body",
    "argmax": "the index at which the body is largest", "argmin": "the index at which the body is smallest",
    "sum": "the sum of the body", "count": "how many indices satisfy the body",
    "all": "whether the body holds for every index", "any": "whether the body holds for some index",
}
"""The functions that also take a comprehension `f(l in D if c: e)`, and what each computes."""

COMPREHENSIONS = frozenset(COMPREHENSION_MEANINGS)

V = TypeVar("V")


def implemented(backend: str, table: Mapping[str, V]) -> Mapping[str, V]:
    """`table`, a back end's implementation of every builtin, once it is checked to cover exactly BUILTINS."""
    missing, unknown = BUILTINS.keys() - table.keys(), table.keys() - BUILTINS.keys()
    if missing or unknown:
        raise AssertionError(f"the {backend} builtins differ from the language's: missing {sorted(missing)}, "
                             f"unknown {sorted(unknown)}")
    return table


RESERVED = frozenset({"out", "aligned_cost"})
"""Names with a meaning in alignments and claims: the output sequence and, in invariants, the cost so far."""
