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
(align.toml first). Flags on the command line override it.

A pull request may change this file, so nothing in it makes align read outside the repository: `paths` globs
are relative to the configuration's folder and never leave it (no `..`, no absolute pattern, no directory
symbolic link followed, no special file, bounded matches and depth: `files.glob`), and they are expanded only
by the commands that use them (`spec_paths`), never by `align explain`. A key that is not one of `KEYS`, a
value of the wrong type or out of range, a glob that align refuses or that matches nothing, a file that is
not TOML, not UTF-8, nested past the TOML reader's stack or larger than `MAX_CONFIG_BYTES` are diagnostics
located in the file, like every other input (exit 2).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, SpecError, diag, did_you_mean
from .files import Glob, GlobError, glob, read_source
from .limits import BOUNDED_LENGTH, MAX_CONFIG_BYTES, TIMEOUT_S
from .render import FORMATS
from .span import Source, Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover (3.10)
    import tomli as tomllib


class ConfigError(SpecError):
    """The configuration file is wrong: its diagnostics, and the file for their carets (None when the file could
    not be read as text: nothing of it is shown)."""

    def __init__(self, path: str, source: Source | None, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics)
        self.path = path
        self.source = source


def _globs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) and x for x in value)


def _address(value: Any) -> bool:
    """An http(s) URL of printable ASCII, no blanks, quotes or angle brackets (it is written into SARIF and read by
    code scanning's web page)."""
    return (isinstance(value, str) and len(value) <= 2000 and re.fullmatch(r"https?://[!#-;=?-~]+", value) is not None
            and not any(c in value for c in "\"'<>\\`"))


def _accept_bounded(value: bool | list[str] | None) -> bool | tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else value


def _glob_problem(value: list[str]) -> str | None:
    """What is wrong with the first glob that align refuses (`files.Glob.of`), as the diagnostic's `found`."""
    for x in value:
        try:
            Glob.of(x)
        except GlobError as error:
            return f"`{_clip(x)}`: {error}"
    return None


@dataclass(frozen=True)
class Key:
    name: str
    expected: str
    """What a value must be, in words (for the diagnostic)."""
    valid: Callable[[Any], bool]
    meaning: str
    problem: Callable[[Any], str | None] = lambda value: None
    """For a value of the right type: what is still wrong with it (the diagnostic's `found`), or None."""

    def check(self, value: Any) -> str | None:
        """None when `value` is valid, else what was found, in words."""
        return _value_text(value) if not self.valid(value) else self.problem(value)


KEYS: dict[str, Key] = {k.name: k for k in (
    Key("paths", "a list of globs relative to the configuration's folder", _globs,
        "the files `align verify` checks when none is given", _glob_problem),
    Key("max-length", BOUNDED_LENGTH.describe(), BOUNDED_LENGTH.contains, "`align verify --max-length`"),
    Key("accept-bounded", "true, false, or a list of globs naming the specs whose bounded results pass",
        lambda v: isinstance(v, bool) or _globs(v),
        "`align verify --accept-bounded` (for every spec, or the named ones)",
        lambda v: None if isinstance(v, bool) else _glob_problem(v)),
    Key("timeout", f"{TIMEOUT_S.describe()} (seconds)", TIMEOUT_S.contains, "`align verify --timeout`"),
    Key("output-format", "one of " + ", ".join(FORMATS), lambda v: isinstance(v, str) and v in FORMATS,
        "`--output-format`"),
    Key("docs-url", "an http(s) address without spaces or quotes", _address,
        "the address of align's docs/ folder for your readers: the `helpUri` of every SARIF rule"),
)}


@dataclass(frozen=True)
class Config:
    """The settings of one project (every field None or empty when not configured)."""

    source: Source | None = None
    """The file they come from (for the carets of diagnostics about `paths`)."""
    folder: Path | None = None
    """The configuration's folder: the globs are relative to it and never leave it."""
    patterns: tuple[str, ...] = ()
    """The `paths` globs as written (checked; expanded by `spec_paths`)."""
    in_pyproject: bool = False
    max_length: int | None = None
    accept_bounded: bool | tuple[str, ...] | None = None
    """True or False for every spec, or the globs of the specs whose bounded results are accepted (`gate`)."""
    timeout: float | None = None
    output_format: str | None = None
    docs_url: str | None = None


NONE = Config()


def find(start: Path) -> tuple[Path, bool] | None:
    """The configuration file that applies in `start`, and whether it is a pyproject.toml."""
    for directory in (start, *start.parents):
        own = directory / "align.toml"
        if own.is_file():
            return own, False
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and re.search(r"^\s*\[\s*tool\s*\.\s*align\s*\]", _text(pyproject), flags=re.M):
            return pyproject, True
        if (directory / ".git").exists():
            return None
    return None


def load(start: Path | None = None) -> Config:
    """The configuration that applies in `start` (the working directory); raises `ConfigError` when it is wrong.
    The `paths` globs are checked here but expanded only by `spec_paths`."""
    start = start or Path.cwd()
    found = find(start)
    if found is None:
        return NONE
    path, in_pyproject = found
    shown = _shown(path, start)
    try:
        source = read_source(shown, MAX_CONFIG_BYTES)
    except SpecError as error:  # not a regular file, too large, not text, a link out of the repository
        unread = [diag("config-file", d.span or Span(shown, 1, 1, 1, 2), reason=str(d.args.get("reason", d.message)))
                  for d in error.diagnostics]
        raise ConfigError(shown, None, unread) from None
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
        raise ConfigError(shown, source, [diag("config-syntax", span, path=shown,
                                               reason=re.sub(r" \(at .*\)$", "", str(error)))]) from None
    except RecursionError:  # arrays or tables nested thousands deep
        raise ConfigError(shown, source, [diag("config-syntax", Span(shown, 1, 1, 1, 2), path=shown,
                                               reason="values nested too deeply")]) from None
    table = document.get("tool", {}).get("align", {}) if in_pyproject else document
    where = "[tool.align]" if in_pyproject else shown
    if not isinstance(table, dict):
        raise ConfigError(shown, source, [diag("config-value", _locate(source, "align", in_pyproject, top=True),
                                               key="tool.align", expected="a table", found=_value_text(table))])
    problems: list[Diagnostic] = []
    for key, value in table.items():
        at = _locate(source, key, in_pyproject)
        spec = KEYS.get(key)
        if spec is None:
            problems.append(diag("config-unknown-key", at, key=key, table=where, hint=did_you_mean(key, KEYS)))
        elif (wrong := spec.check(value)) is not None:
            problems.append(diag("config-value", at, key=key, expected=spec.expected, found=wrong))
    if problems:
        raise ConfigError(shown, source, problems)
    return Config(source=source, folder=path.parent, patterns=tuple(table.get("paths", ())),
                  in_pyproject=in_pyproject, max_length=table.get("max-length"),
                  accept_bounded=_accept_bounded(table.get("accept-bounded")),
                  timeout=float(table["timeout"]) if "timeout" in table else None,
                  output_format=table.get("output-format"), docs_url=table.get("docs-url"))


def spec_paths(config: Config, start: Path | None = None) -> tuple[str, ...]:
    """The files the `paths` globs match, in the order of the globs and sorted within each, relative to the
    working directory `start` where they are below it; raises `ConfigError` for a glob that matches nothing or
    that `files.glob` refuses."""
    if config.source is None or config.folder is None:
        return ()
    start = start or Path.cwd()
    paths: list[str] = []
    problems: list[Diagnostic] = []
    at = _locate(config.source, "paths", config.in_pyproject)
    for pattern in config.patterns:
        try:
            matched = glob(config.folder, Glob.of(pattern))
        except GlobError as error:
            problems.append(diag("config-value", at, key="paths", expected="globs of files in the configuration's "
                                 "folder", found=f"`{_clip(pattern)}`: {error}"))
            continue
        if not matched:
            problems.append(diag("config-value", at, key="paths", expected="globs that match files",
                                 found=f"`{_clip(pattern)}`, which matches none"))
        paths += [_shown(p, start) for p in matched]
    if problems:
        raise ConfigError(config.source.path, config.source, problems)
    return tuple(dict.fromkeys(paths))


def _text(path: Path) -> str:
    """The start of a file, to look for `[tool.align]`; what `load` reads of it is checked there."""
    try:
        with path.open("rb") as f:
            return f.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _shown(path: Path, start: Path) -> str:
    """`path` relative to `start` when it is below it (as a user would type it), else as it is; symbolic links
    are not followed (a link is shown where it is, not where it points)."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(start)))
    except ValueError:
        return str(path)


def _locate(source: Source, key: str, in_pyproject: bool, top: bool = False) -> Span:
    """Where `key = ...` is written: in the `[tool.align]` table of a pyproject.toml, or anywhere in align.toml;
    where it cannot be found as written (a key spelled with escapes, dotted, or in a table of its own), the
    `[tool.align]` header, else the first line."""
    lines = source.text.split("\n")
    inside = not in_pyproject or top
    pattern = re.compile(rf'^(\s*)("?){re.escape(key)}\2\s*=')
    table = None
    for number, line in enumerate(lines, start=1):
        header = re.match(r"^\s*\[([^\]]*)\]", line)
        if header and in_pyproject and not top:
            inside = header.group(1).strip() == "tool.align"
            if inside and table is None:
                table = Span(source.path, number, 1, number, len(line.rstrip()) + 1)
            continue
        m = pattern.match(line)
        if inside and m:
            column = len(m.group(1)) + 1
            return Span(source.path, number, column, number, column + len(key) + 2 * len(m.group(2)))
    return table or Span(source.path, 1, 1, 1, 2)


def _clip(text: str, width: int = 80) -> str:
    """A configured string as a diagnostic quotes it: at most `width` characters."""
    return text if len(text) <= width else text[: width - 3] + "..."


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{_clip(value)}"'
    if isinstance(value, list):
        return "a list" + ("" if all(isinstance(x, str) for x in value) else " with a value that is not a string")
    return f"{type(value).__name__} {value!r}" if isinstance(value, (int, float)) else type(value).__name__
