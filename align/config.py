"""Project configuration: `[tool.align]` in pyproject.toml, or align.toml, found from the working directory up.

```toml
[tool.align]                 # in align.toml: the same keys, at the top level
paths = ["specs/**/*.dp"]    # what `align verify` checks when no file is given (globs, relative to this file)
max-length = 4               # align verify --max-length
accept-bounded = false       # align verify --accept-bounded
timeout = 20                 # align verify --timeout (seconds)
output-format = "github"     # --output-format, for the commands that have it
```

The first directory, from the working directory up to the root of the git checkout (the directory with
`.git`), that has an align.toml or a pyproject.toml with a `[tool.align]` table gives the configuration
(align.toml first). Flags on the command line override it. A key that is not one of `KEYS`, a value of the
wrong type, a glob that matches nothing and a file that is not TOML are diagnostics located in the file,
like every other input (exit 2).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, SpecError, diag, did_you_mean
from .limits import MAX_BOUNDED_LENGTH
from .render import FORMATS
from .span import Source, Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover (3.10)
    import tomli as tomllib


class ConfigError(SpecError):
    """The configuration file is wrong: its diagnostics, and the file for their carets."""

    def __init__(self, source: Source, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics)
        self.source = source


@dataclass(frozen=True)
class Key:
    name: str
    expected: str
    """What a value must be, in words (for the diagnostic)."""
    valid: Callable[[Any], bool]
    meaning: str


KEYS: dict[str, Key] = {k.name: k for k in (
    Key("paths", "a list of path globs", lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v),
        "the files `align verify` checks when none is given"),
    Key("max-length", f"an integer from 1 to {MAX_BOUNDED_LENGTH}",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_BOUNDED_LENGTH,
        "`align verify --max-length`"),
    Key("accept-bounded", "true or false", lambda v: isinstance(v, bool), "`align verify --accept-bounded`"),
    Key("timeout", "a positive number of seconds",
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0, "`align verify --timeout`"),
    Key("output-format", "one of " + ", ".join(FORMATS), lambda v: isinstance(v, str) and v in FORMATS,
        "`--output-format`"),
)}


@dataclass(frozen=True)
class Config:
    """The settings of one project (every field None or empty when not configured)."""

    source: str | None = None
    """The file they come from."""
    paths: tuple[str, ...] = ()
    """The files the `paths` globs match, sorted, relative to the working directory where they are below it."""
    max_length: int | None = None
    accept_bounded: bool | None = None
    timeout: float | None = None
    output_format: str | None = None


NONE = Config()


def find(start: Path) -> tuple[Path, bool] | None:
    """The configuration file that applies in `start`, and whether it is a pyproject.toml."""
    for directory in (start, *start.parents):
        own = directory / "align.toml"
        if own.is_file():
            return own, False
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and re.search(r"^\s*\[tool\.align\]", _text(pyproject), flags=re.M):
            return pyproject, True
        if (directory / ".git").exists():
            return None
    return None


def load(start: Path | None = None) -> Config:
    """The configuration that applies in `start` (the working directory); raises `SpecError` when it is wrong."""
    start = start or Path.cwd()
    found = find(start)
    if found is None:
        return NONE
    path, in_pyproject = found
    shown = _shown(path, start)
    from .parse import read_source

    source = read_source(shown)
    try:
        document = tomllib.loads(source.text)
    except tomllib.TOMLDecodeError as error:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        if m:
            line, column = int(m.group(1)), int(m.group(2))
        else:  # "(at end of document)": just past the last character
            lines = source.text.rstrip("\n").split("\n")
            line, column = len(lines), len(lines[-1]) + 1
        span = Span(shown, line, column, line, column + 1)
        raise ConfigError(source, [diag("config-syntax", span, path=shown,
                                        reason=re.sub(r" \(at .*\)$", "", str(error)))]) from None
    table = document.get("tool", {}).get("align", {}) if in_pyproject else document
    where = "[tool.align]" if in_pyproject else shown
    if not isinstance(table, dict):
        raise ConfigError(source, [diag("config-value", _locate(source, "align", in_pyproject, top=True),
                                        key="tool.align", expected="a table", found=type(table).__name__)])
    problems: list[Diagnostic] = []
    for key, value in table.items():
        at = _locate(source, key, in_pyproject)
        spec = KEYS.get(key)
        if spec is None:
            problems.append(diag("config-unknown-key", at, key=key, table=where, hint=did_you_mean(key, KEYS)))
        elif not spec.valid(value):
            problems.append(diag("config-value", at, key=key, expected=spec.expected, found=_value_text(value)))
    paths: list[str] = []
    if not problems and "paths" in table:
        for pattern in table["paths"]:
            matched = sorted(p for p in path.parent.glob(pattern) if p.is_file())
            if not matched:
                problems.append(diag("config-value", _locate(source, "paths", in_pyproject), key="paths",
                                     expected="globs that match files", found=f"`{pattern}`, which matches none"))
            paths += [_shown(p, start) for p in matched]
    if problems:
        raise ConfigError(source, problems)
    return Config(source=shown, paths=tuple(dict.fromkeys(paths)), max_length=table.get("max-length"),
                  accept_bounded=table.get("accept-bounded"),
                  timeout=float(table["timeout"]) if "timeout" in table else None,
                  output_format=table.get("output-format"))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _shown(path: Path, start: Path) -> str:
    """`path` relative to `start` when it is below it (as a user would type it), else as it is."""
    try:
        return str(path.resolve().relative_to(start.resolve()))
    except ValueError:
        return str(path)


def _locate(source: Source, key: str, in_pyproject: bool, top: bool = False) -> Span | None:
    """Where `key = ...` is written: in the `[tool.align]` table of a pyproject.toml, or anywhere in align.toml."""
    lines = source.text.split("\n")
    inside = not in_pyproject or top
    pattern = re.compile(rf'^(\s*)("?){re.escape(key)}\2\s*=')
    for number, line in enumerate(lines, start=1):
        header = re.match(r"^\s*\[([^\]]*)\]", line)
        if header and in_pyproject and not top:
            inside = header.group(1).strip() == "tool.align"
            continue
        m = pattern.match(line)
        if inside and m:
            column = len(m.group(1)) + 1
            return Span(source.path, number, column, number, column + len(key) + 2 * len(m.group(2)))
    return None


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "a list" + ("" if all(isinstance(x, str) for x in value) else " with a value that is not a string")
    return f"{type(value).__name__} {value!r}" if isinstance(value, (int, float)) else type(value).__name__
