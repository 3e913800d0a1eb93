"""Report (document): the proof as a format-neutral document of typed blocks, which each writer walks.

`proof.build` makes a `Document` from a verdict; `markdown.py`, `html.py` and `latex.py` each implement
`Writer`, one method per block and per inline kind (abstract: mypy refuses a writer that forgets one), so a
new kind of block is added here and in the three writers, and nowhere else. Nothing here knows about proofs.

Each writer escapes every string of the document for the place its format prints it, with one function per
context, documented in its module. The one name that a writer prints and does not escape for itself is a
figure's file name, which is made here from the report's name (`figure_name`) so that it needs no escaping in
any format: a Markdown link, an `\\includegraphics` and a shell all take it as it is.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy


class Tone(Enum):
    """How a piece of text is marked: a status colour in HTML, bold or colour in TeX, emphasis in Markdown."""

    PLAIN = "plain"
    GOOD = "good"
    WARN = "warn"
    BAD = "bad"
    MUTED = "muted"


# ------------------------------------------------------------------------------------------------ inlines


@dataclass(frozen=True)
class Text:
    text: str
    tone: Tone = Tone.PLAIN
    strong: bool = False


    def accept(self, w: Writer) -> str:
        return w.text(self)

@dataclass(frozen=True)
class Code:
    """Program text (a name, an expression of the spec language)."""

    text: str


    def accept(self, w: Writer) -> str:
        return w.code(self)

@dataclass(frozen=True)
class Formula:
    """A sympy expression or relation, printed by sympy's LaTeX or MathML printer."""

    expr: sympy.Basic


    def accept(self, w: Writer) -> str:
        return w.formula(self)

Inline = Text | Code | Formula
Inlines = tuple[Inline, ...]


def inlines(*parts: Inline | str) -> Inlines:
    """Strings become `Text`, and their `backquoted` spans `Code` (the checker's prose marks code so)."""
    out: list[Inline] = []
    for p in parts:
        if not isinstance(p, str):
            out.append(p)
            continue
        for i, piece in enumerate(p.split("`") if p.count("`") % 2 == 0 else [p]):
            if piece:
                out.append(Code(piece) if i % 2 else Text(piece))
    return tuple(out)


# ------------------------------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    level: int
    """1: the title; 2: a section; 3: a subsection."""
    text: str
    anchor: str = ""


    def accept(self, w: Writer) -> str:
        return w.heading(self)

@dataclass(frozen=True)
class Paragraph:
    content: Inlines
    tone: Tone = Tone.PLAIN
    """Not plain: a call-out (the verdict, a warning)."""


    def accept(self, w: Writer) -> str:
        return w.paragraph(self)

@dataclass(frozen=True)
class Items:
    """A bulleted list, each item a line of inlines."""

    items: tuple[Inlines, ...]


    def accept(self, w: Writer) -> str:
        return w.items(self)

@dataclass(frozen=True)
class DisplayMath:
    """A chain of formulas shown on its own line: `first rel second rel third ...` (`relations[i]` joins
    `formulas[i]` and `formulas[i + 1]`: "=", "<=")."""

    formulas: tuple[sympy.Basic, ...]
    relations: tuple[str, ...] = ()

    def printed(self, formula: Callable[[sympy.Basic], str], relation: Callable[[str], str]) -> list[str]:
        """The chain printed piece by piece: formula, relation, formula, ..."""
        parts = [formula(self.formulas[0])]
        for rel, f in zip(self.relations, self.formulas[1:]):
            parts += [relation(rel), formula(f)]
        return parts


    def accept(self, w: Writer) -> str:
        return w.display_math(self)

@dataclass(frozen=True)
class Listing:
    """Numbered source lines; `marked` lines are highlighted (the first divergence, the line of a site)."""

    lines: tuple[tuple[int, str], ...]
    marked: frozenset[int] = frozenset()
    caption: str = ""


    def accept(self, w: Writer) -> str:
        return w.listing(self)

@dataclass(frozen=True)
class Cell:
    content: Inlines
    tone: Tone = Tone.PLAIN


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    marked: bool = False
    """The row the reader should look at (the first divergence, the overrun)."""


@dataclass(frozen=True)
class Table:
    kind: str
    """What the table is (`obligations`, `sites`, `trace`, ...): a CSS class in HTML, so tests can find it."""
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    caption: str = ""


    def accept(self, w: Writer) -> str:
        return w.table(self)

@dataclass(frozen=True)
class Figure:
    png: bytes
    caption: str
    alt: str


    def accept(self, w: Writer) -> str:
        return w.figure(self)

Block = Heading | Paragraph | Items | DisplayMath | Listing | Table | Figure


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        self.blocks.extend(blocks)


def cell(*parts: Inline | str, tone: Tone = Tone.PLAIN) -> Cell:
    return Cell(inlines(*parts), tone)


def row(*cells: Cell | str, marked: bool = False) -> Row:
    return Row(tuple(c if isinstance(c, Cell) else cell(c) for c in cells), marked)


# ------------------------------------------------------------------------------------------------ writers


_NOT_IN_FIGURE_NAMES = re.compile(r"[^A-Za-z0-9_-]")


def figure_name(stem: str, number: int) -> str:
    """The file name of the report's `number`-th figure: `<stem>-<number>.png`, the stem (the report's file name
    without its suffix, which a pull request may choose) with every character but ASCII letters, digits, `-`
    and `_` replaced by `_` (and no leading `-`), so that no format has to escape the name and it names no other
    folder."""
    safe = _NOT_IN_FIGURE_NAMES.sub("_", stem).lstrip("-") or "report"  # "-x-1.png" would read as an option
    return f"{safe}-{number}.png"


class Writer(ABC):
    """Turns a `Document` into one format's text: one method per block and inline kind (each block's and
    inline's `accept` calls its method: a kind without one is a type error)."""

    name: str
    """The `--format` value."""
    suffix: str
    """The file name suffix of its output."""

    def __init__(self, figure_stem: str | None = None):
        self.figure_stem = figure_stem
        """Figures are written as `figure_name(figure_stem, n)` beside the output; None (stdout): left out."""
        self.files: dict[str, bytes] = {}
        """The figure files to write beside the output, by name."""

    def figure_file(self, b: Figure) -> str | None:
        """The name of the file this figure goes to (recorded in `files`); None when there is none."""
        if self.figure_stem is None:
            return None
        name = figure_name(self.figure_stem, len(self.files) + 1)
        self.files[name] = b.png
        return name

    def write(self, doc: Document) -> str:
        return self.page(doc.title, [b.accept(self) for b in doc.blocks])

    def line(self, parts: Sequence[Inline]) -> str:
        return "".join(p.accept(self) for p in parts)

    @abstractmethod
    def page(self, title: str, blocks: list[str]) -> str: ...

    @abstractmethod
    def heading(self, b: Heading) -> str: ...

    @abstractmethod
    def paragraph(self, b: Paragraph) -> str: ...

    @abstractmethod
    def items(self, b: Items) -> str: ...

    @abstractmethod
    def display_math(self, b: DisplayMath) -> str: ...

    @abstractmethod
    def listing(self, b: Listing) -> str: ...

    @abstractmethod
    def table(self, b: Table) -> str: ...

    @abstractmethod
    def figure(self, b: Figure) -> str: ...

    @abstractmethod
    def text(self, i: Text) -> str: ...

    @abstractmethod
    def code(self, i: Code) -> str: ...

    @abstractmethod
    def formula(self, i: Formula) -> str: ...
