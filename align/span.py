"""Stage 0 (text): source files and the spans that every node and diagnostic carries."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    """The text of one specification file."""

    path: str
    """The path as the user gave it; diagnostics print it unchanged."""
    text: str = field(repr=False)
    """The whole file."""

    def line(self, number: int) -> str:
        """The text of line `number` (1-based), without its newline; '' past the end."""
        lines = self.text.splitlines()
        return lines[number - 1] if 1 <= number <= len(lines) else ""


@dataclass(frozen=True)
class Span:
    """A half-open region of a source file; lines and columns are 1-based, as editors show them."""

    path: str
    """The file the region belongs to."""
    line: int
    """First line."""
    column: int
    """Column of the first character."""
    end_line: int
    """Last line."""
    end_column: int
    """Column one past the last character (on `end_line`)."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def __repr__(self) -> str:
        return f"Span({self.path}:{self.line}:{self.column}-{self.end_line}:{self.end_column})"

    def to(self, other: "Span") -> "Span":
        """The span from the start of this one to the end of `other`."""
        return Span(self.path, self.line, self.column, other.end_line, other.end_column)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
        }
