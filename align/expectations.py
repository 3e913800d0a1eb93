"""The corpus convention: each spec states its expected verdicts in `# expect:` header lines.

    # expect: proved                 (every obligation proved for every input)
    # expect: bounded                (every obligation proved, but only for lengths <= N: not a proof)
    # expect: not-proved C4b          (the obligation that must fail)
    # expect: unknown C4a              (the obligation that can be neither proved nor refuted: vacuous, ...)
    # expect: violation                (`align test` must confirm a privacy violation)
    # expect: mixture-rule <expr>      (the R²DP rule's exact ε, an expression over the parameters)

The test suite reads these for the whole `specs/` tree; later stages compare their verdicts against them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import nodes as n
from .diagnostics import SpecError
from .obligations import ORDER
from .parse import parse_expression
from .span import Source, Span

KINDS = ("proved", "bounded", "not-proved", "unknown", "violation", "mixture-rule")
CORRECT = ("proved", "bounded")
"""The kinds that say the mechanism is private: a proof exists, for every input or for the bounded check."""
_LINE = re.compile(r"^\s*#\s*expect:\s*(?P<body>.*?)\s*$")


@dataclass(frozen=True)
class Expectation:
    kind: str
    """One of KINDS."""
    obligation: str | None
    """For not-proved: the obligation id (C1 ... C5, C4a ...)."""
    value: n.Expr | None
    """For mixture-rule: the exact ε."""
    span: Span


class ExpectationError(ValueError):
    """A malformed `# expect:` line."""


def read_expectations(source: Source) -> tuple[Expectation, ...]:
    result = []
    for number, line in enumerate(source.text.splitlines(), start=1):
        match = _LINE.match(line)
        if not match:
            continue
        body = match.group("body")
        column = match.start("body") + 1
        span = Span(source.path, number, column, number, column + len(body))
        kind, _, rest = body.partition(" ")
        rest = rest.strip()
        if kind not in KINDS:
            raise ExpectationError(f"{span}: unknown expectation `{kind}` (one of {', '.join(KINDS)})")
        if kind in ("not-proved", "unknown"):
            if rest not in ORDER:
                raise ExpectationError(f"{span}: `{kind}` names one obligation of {', '.join(ORDER)}")
            result.append(Expectation(kind, rest, None, span))
        elif kind == "mixture-rule":
            if not rest:
                raise ExpectationError(f"{span}: `mixture-rule` needs the exact ε as an expression")
            try:
                value = parse_expression(rest, source.path, number, column + len(kind) + 1)
            except SpecError as error:
                raise ExpectationError(f"{span}: {error.diagnostics[0].message}") from None
            result.append(Expectation(kind, None, value, span))
        else:
            if rest:
                raise ExpectationError(f"{span}: `{kind}` takes nothing after it")
            result.append(Expectation(kind, None, None, span))
    return tuple(result)
