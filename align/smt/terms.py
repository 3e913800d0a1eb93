"""Checker stage (support): the z3 context of the current query set, and the constructors that build terms in it.

z3's answers depend on the history of the context they are asked in: terms created earlier change internal
ids and hence the search order, so a second verification in the same process could return another model (a
different counterexample) or, near a resource limit, another verdict. Every entry point (a verification, a
support proof of `align test`) therefore runs inside `fresh_context()`, which makes a new `z3.Context` and
makes it current for this thread of control (a `ContextVar`, so concurrent threads do not share it). Every
term is built through the constructors below, which take the current context explicitly; z3's own global
context is never used. Mixing terms of two contexts raises z3's "context mismatch" error, so a term built
outside (or kept across) a verification fails loudly instead of silently changing an answer.

Operators that combine existing terms (`If`, `Not`, `Implies`, arithmetic, comparisons) infer the context from
their arguments and need no wrapper; those that may receive no term at all (an empty `And`, `Or`, `Sum`) and
the leaf constructors (symbols, numerals, sorts, functions) must come from here.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction

import z3

from ..diagnostics import InternalError

_CURRENT: ContextVar[z3.Context | None] = ContextVar("align_z3_context", default=None)
_SOLVING: ContextVar[z3.Context | None] = ContextVar("align_z3_solving_context", default=None)


class NoContext(InternalError):
    """A z3 term was requested outside `fresh_context()`: an internal error (this is probably a bug)."""


KEPT_FREE_BYTES = 128 << 20
"""How much freed memory the C allocator keeps at the top of the heap instead of returning it to the system (glibc's
`M_TOP_PAD`, set once, when this module is imported: it serves only the checker). A z3 context takes about 17 MB
as it is made; with glibc's default (128 KB) a context's memory went back to the system when it was freed, and
every new context page-faulted its 17 MB in again: 15 ms of the 18 ms that `z3.Context()` took, four contexts a
verification, a third of a small spec's time. Kept, a new context reuses the last one's pages (2 ms).
Measured on two cores (2026-12-07), back to back in one process over the 225 specs of specs/: 125 s -> 109 s, median
0.39 -> 0.32 s. Answers do not change: only where z3's memory comes from does."""
_M_TOP_PAD = -2  # glibc's malloc.h


def _keep_freed_memory() -> None:
    """Set `M_TOP_PAD` to KEPT_FREE_BYTES where the C library is glibc (elsewhere nothing is done)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None)
        if hasattr(libc, "gnu_get_libc_version"):  # glibc's own function: musl has a mallopt that differs
            libc.mallopt(ctypes.c_int(_M_TOP_PAD), ctypes.c_int(KEPT_FREE_BYTES))
    except (AttributeError, OSError):  # no mallopt, or no C library to load
        return


_keep_freed_memory()


@contextmanager
def fresh_context() -> Iterator[z3.Context]:
    """Run a block of z3 work in a new context of its own (see the module docstring).

    Python's cyclic garbage collector is paused inside: it runs when the process's allocation counters say so,
    which depends on everything the process did before, and when it frees a z3 term, z3 reuses the term's id
    for the next one it creates. Ids order the arguments that z3's simplifier sorts and the solver's choices,
    so a collection at another moment gives another (equally valid) model: `align verify a.dp b.dp` gave
    another counterexample for b.dp than `align verify b.dp`. Without the cyclic collector, terms are freed
    by reference counting alone, at the same points on every run. (Garbage of earlier contexts is left to the
    collector once it runs again: freeing it cannot change this context's ids, and collecting the whole process
    here would cost a tenth of a second per query of `align test`.)"""
    was_enabled = gc.isenabled()
    gc.disable()
    ctx = z3.Context()
    token = _CURRENT.set(ctx)
    solving = _SOLVING.set(z3.Context())
    try:
        yield ctx
    finally:
        _SOLVING.reset(solving)
        _CURRENT.reset(token)
        if was_enabled:
            gc.enable()


@contextmanager
def fresh_solving() -> Iterator[z3.Context]:
    """Solve the queries of a block in a new context of their own (their terms are built where they are): an answer
    that depends on the query alone, not on the queries solved before it. z3 has been seen to take 37 s on a query
    after a shape's other obligations that it answers in 0.7 s alone (Free Gap Algorithm 2's scaled C4c at length
    5, `checks.scaled_cost`)."""
    ctx = z3.Context()
    token = _SOLVING.set(ctx)
    try:
        yield ctx
    finally:
        _SOLVING.reset(token)


_SCRATCH = threading.local()


@contextmanager
def scratch_context() -> Iterator[z3.Context]:
    """Run a block of small satisfiability queries in a context kept for this thread across verifications, and
    solved there too: for queries whose answer is a fact — sat or unsat, no model read, and far below the resource
    limit, where no history changes it — asked before a verification's own queries (ADJ's search for distinct
    neighbours, `verify._search`). A fresh context costs about 10 ms to make, more than the queries; and the
    verification's context is left as it was, so its queries, hence its models, are as without them."""
    pair = getattr(_SCRATCH, "pair", None)
    if pair is None:
        pair = _SCRATCH.pair = (z3.Context(), z3.Context())
    token, solving = _CURRENT.set(pair[0]), _SOLVING.set(pair[1])
    try:
        yield pair[0]
    finally:
        _SOLVING.reset(solving)
        _CURRENT.reset(token)


def solving() -> z3.Context:
    """The context queries are solved in (see `solver._solve`)."""
    ctx = _SOLVING.get()
    if ctx is None:
        raise NoContext("z3 query outside a verification context (this is probably a bug)")
    return ctx


def current() -> z3.Context:
    ctx = _CURRENT.get()
    if ctx is None:
        raise NoContext("z3 term built outside a verification context (this is probably a bug)")
    return ctx


def Int(name: str) -> z3.ArithRef:
    return z3.Int(name, current())


def Real(name: str) -> z3.ArithRef:
    return z3.Real(name, current())


def Bool(name: str) -> z3.BoolRef:
    return z3.Bool(name, current())


def IntVal(value: int) -> z3.IntNumRef:
    return z3.IntVal(value, current())


def RealVal(value: int | Fraction | str) -> z3.RatNumRef:
    return z3.RealVal(value, current())


def BoolVal(value: bool) -> z3.BoolRef:
    return z3.BoolVal(value, current())


def RealSort() -> z3.ArithSortRef:
    return z3.RealSort(current())


def IntSort() -> z3.ArithSortRef:
    return z3.IntSort(current())


def Function(name: str, *sorts: z3.SortRef) -> z3.FuncDeclRef:
    return z3.Function(name, *sorts)


def And(*args: z3.BoolRef | Iterable[z3.BoolRef]) -> z3.BoolRef:
    """Conjunction; `And()` / `And([])` is true (z3's own would build it in the global context)."""
    items = _items(args)
    if not items:
        return BoolVal(True)
    return items[0] if len(items) == 1 else z3.And(items)


def Or(*args: z3.BoolRef | Iterable[z3.BoolRef]) -> z3.BoolRef:
    """Disjunction; `Or()` / `Or([])` is false."""
    items = _items(args)
    if not items:
        return BoolVal(False)
    return items[0] if len(items) == 1 else z3.Or(items)


def Sum(*args: z3.ArithRef | Iterable[z3.ArithRef]) -> z3.ArithRef:
    """Sum; `Sum([])` is the integer 0."""
    items = _items(args)
    if not items:
        return IntVal(0)
    return items[0] if len(items) == 1 else z3.Sum(items)


def _items(args: tuple) -> list:
    if len(args) == 1 and not z3.is_expr(args[0]) and isinstance(args[0], Iterable):
        args = tuple(args[0])
    return [BoolVal(a) if isinstance(a, bool) else a for a in args]
