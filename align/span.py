"""Stage 0 (text): source files and the spans that every node and diagnostic carries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

_INVISIBLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
                        "\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]")
"""Characters a terminal would act on or not show: C0 and C1 controls (ESC starts terminal escape sequences,
CR rewrites the line, BEL rings), DEL, the bidirectional overrides and isolates of "Trojan Source" (U+202A-E,
U+2066-9), zero-width and other invisible formatting characters, line and paragraph separators, and lone
surrogates (from undecodable bytes in a path). Tab is handled by the caller."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, tab: str = "\\t") -> str:
    """`text` safe to print on a terminal and in a CI log: each character of `_INVISIBLE` becomes a visible
    escape (`\\x1b`, `\\u202e`), each tab becomes `tab`, and the `[` of `##[` becomes `\\x5b`.

    Diagnostics echo the spec's text and paths; a spec from an untrusted pull request must not be able to
    move the cursor, recolour, retitle or clear the terminal of the person who checks it, nor make the
    shown line differ from the bytes that were parsed. No line break passes, so no text can start a line;
    and GitHub's runner reads `##[command]` anywhere in a line of the log (the older form of its workflow
    commands), so that sequence never passes either.
    """
    return _INVISIBLE.sub(_escape, text.replace("\t", tab)).replace("##[", "##\\x5b")


def shown_path(path: str) -> str:
    """A path as align prints it in text: `visible`, and never the start of a CI workflow command. GitHub's
    runner takes a line of the log whose first characters after blanks are `::` as a command (a spec named
    `::stop-commands::x.dp` would silence every later annotation), so a relative path that starts with blanks
    or `:` is shown as `./path`, the same file."""
    shown = visible(path)
    return "./" + shown if shown[:1].isspace() or shown.startswith(":") else shown


@dataclass(frozen=True)
class Source:
    """The text of one specification file."""

    path: str
    """The path as the user gave it; diagnostics print it (with control characters escaped)."""
    text: str = field(repr=False)
    """The whole file."""

    @cached_property
    def _lines(self) -> list[str]:
        # Lines end at "\n" only, as lark counts them: `str.splitlines` would also split at form feeds,
        # vertical tabs, U+2028 and friends, and then a span's line number would show the wrong line.
        # Split once: a file with thousands of diagnostics must not be split once per diagnostic.
        return [line.removesuffix("\r") for line in self.text.split("\n")]

    def line(self, number: int) -> str:
        """The text of line `number` (1-based), without its line break; '' past the end."""
        lines = self._lines
        return lines[number - 1] if 1 <= number <= len(lines) else ""

    def line_count(self) -> int:
        """The number of lines, as lark counts them (a final line break does not start a line)."""
        lines = self._lines
        return len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)


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
        """`path:line:column`, the path as `shown_path` prints it."""
        return f"{shown_path(self.path)}:{self.line}:{self.column}"

    def __repr__(self) -> str:
        return f"Span({self.path}:{self.line}:{self.column}-{self.end_line}:{self.end_column})"

    def to(self, other: Span) -> Span:
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
