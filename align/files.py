"""Stage 0 (files): which files align reads, and how — the repository's boundary, bounded reads and globs.

`align verify` gates pull requests, and a pull request controls the specs, their names, symbolic links committed
beside them and the repository's configuration. Three promises rest on this module (docs/ci.md, "Security"):

- **Nothing outside the repository is read because the repository asked.** A file whose name lies inside the
  repository (as written, or by the real path of its folder) but whose real path leaves it — a committed
  symbolic link to `/etc/passwd` or to `/proc/self/environ` — is refused (`outside-repository`) before it is
  opened, whoever named it: the configuration, `$(git ls-files '*.dp')`, or the Python API. A file the user
  names outside the repository (`align verify ../other/spec.dp`, `/tmp/x.dp`) is the user's choice and is read.
- **Only regular files of bounded size are read**, never a FIFO or a device (`read_bytes`), and a file that is
  not text (NUL bytes, bytes that are not UTF-8) is refused with its location but without an excerpt of it.
- **Globs are bounded** (`glob`): relative to one directory, never above it (no `..`, no absolute pattern), no
  directory symbolic link followed (a link to `.` cannot loop), at most `MAX_GLOB_MATCHES` files,
  `MAX_GLOB_DEPTH` folders deep and `MAX_GLOB_ENTRIES` directory entries examined.

The repository is the checkout that the working directory is in (the nearest folder with `.git`), else the
working directory itself.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .diagnostics import SpecError, diag, os_reason
from .limits import MAX_GLOB_DEPTH, MAX_GLOB_ENTRIES, MAX_GLOB_MATCHES, MAX_PATH_COMPONENT, MAX_SOURCE_BYTES
from .span import Source, Span

# ------------------------------------------------------------------------------------------- the boundary


def checkout(start: Path | None = None) -> Path | None:
    """The top of the git checkout that `start` (the working directory) is in: the nearest folder up that has
    `.git`, as an absolute path without symbolic links; None outside a checkout."""
    here = Path(os.path.realpath(start or Path.cwd()))
    return next((d for d in (here, *here.parents) if os.path.lexists(d / ".git")), None)


def repository(start: Path | None = None) -> Path:
    """The repository a run works in, whose boundary reads respect: the checkout's top, else `start` itself."""
    return checkout(start) or Path(os.path.realpath(start or Path.cwd()))


def project_root(configuration_folder: Path | None = None, start: Path | None = None) -> Path:
    """The folder CI paths are relative to (GitHub annotations, SARIF's `%SRCROOT%`): the top of the git checkout,
    where GitHub resolves an annotation's `file`; without one, the configuration's folder; else `start`."""
    if configuration_folder is None or checkout(start) is not None:
        return repository(start)
    return Path(os.path.realpath(configuration_folder))


def project_path(path: str, root: Path) -> str | None:
    """`path` (as the user gave it, from the working directory) relative to `root`, with `/` between components;
    None when it is not below `root` (an absolute path elsewhere, `../other/x.dp`)."""
    written = os.path.abspath(path)
    for base in (os.path.abspath(root), os.path.realpath(root)):
        if _inside(written, base) and written != base:
            return os.path.relpath(written, base).replace(os.sep, "/")
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def escapes(path: str | os.PathLike[str], root: Path) -> bool:
    """Whether `path` is a name inside `root` whose real path is outside it: `path` written below `root`, or
    in a folder whose real path is below `root`, while symbolic links take the file itself elsewhere."""
    folder = os.path.realpath(root)
    written = os.path.abspath(path)
    parent = os.path.realpath(os.path.dirname(written))
    if not (_inside(written, os.path.abspath(root)) or _inside(parent, folder)):
        return False  # named outside the repository: the user's choice
    return not _inside(os.path.realpath(written), folder)


def check_inside(path: str, root: Path | None = None) -> None:
    """Raise `SpecError` (`outside-repository`) when `path` is a name in the repository whose real path leaves
    it. The diagnostic shows nothing of the file: it is never opened."""
    root = root or repository()
    if escapes(path, root):
        raise SpecError([diag("outside-repository", None, path=path)])


# ------------------------------------------------------------------------------------------------ reading

_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def read_bytes(path: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The contents of a regular file of at most `limit` bytes; anything else raises `SpecError`.

    A name in the repository whose real path leaves it is refused first (`check_inside`). A FIFO, a device
    (`/dev/zero`, `/dev/urandom`, a terminal) or a directory is refused from `fstat`, before a single byte is
    read: opening with O_NONBLOCK returns at once even for a FIFO without a writer, which a plain `open` would
    wait for forever. A regular file is read up to `limit + 1` bytes, so a file that grows while it is read
    costs no more than that either.
    """
    try:
        check_inside(path)
    except ValueError as error:  # a NUL in the path
        raise SpecError([diag("io-error", None, path=path, reason=os_reason(error))]) from None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise SpecError([diag("io-error", None, path=path, reason=os_reason(error))]) from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise SpecError([diag("io-error", None, path=path, reason=f"it is {kind}, not a regular file")])
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise SpecError([diag("io-error", None, path=path, reason=error.strerror or str(error))]) from None
    finally:
        os.close(fd)
    if size > limit:
        raise SpecError([diag("file-too-large", None, path=path, limit=limit)])
    return b"".join(chunks)


def _position(data: bytes, offset: int, path: str) -> Span:
    """The line and column of byte `offset`, as an editor counts them (the bytes before it decoded)."""
    before = data[:offset].decode("utf-8", errors="replace")
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    return Span(path, line, column, line, column + 1)


def read_source(path: str, limit: int = MAX_SOURCE_BYTES) -> Source:
    """Read a text file (a spec, a configuration) as UTF-8; raise `SpecError` (io-error, file-too-large,
    outside-repository) rather than an OSError.

    A NUL byte or bytes that are not UTF-8 are reported at their line and column, which a byte-level editor can
    find, and the file's text is not kept: a file that is not text is not a spec, and its diagnostics show no
    excerpt of it (it may be `/proc/self/environ`, named by mistake).
    """
    data = read_bytes(path, limit)
    nul = data.find(b"\0")
    if nul >= 0:
        raise SpecError([diag("io-error", _position(data, nul, path), path=path,
                              reason="it holds a NUL byte: a binary file, not a text file")])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SpecError([diag("io-error", _position(data, error.start, path), path=path,
                              reason=f"byte 0x{data[error.start]:02x} is not UTF-8 ({error.reason})")]) from None
    return Source(path, text)


# ---------------------------------------------------------------------------------------------- writing


class OutsideRepository(PermissionError):
    """An output file named in the repository whose real path leaves it (an OSError, so that every writer reports
    it as it reports a write that failed: `write-error`, with this reason)."""

    def __init__(self, path: str):
        super().__init__(errno.EPERM, "it is a symbolic link out of the repository, which align does not follow",
                         path)


def open_output(path: str, truncate: bool = True) -> BinaryIO:
    """Open a file the user named (`-o`, `--plot`, `--counterexample`, `--counterexample-out`) for writing, in
    binary. The same boundary as for reading: a name in the repository whose real path leaves it — a committed
    link to `../../.ssh/authorized_keys`, or a dangling one to `../new` — is refused (`OutsideRepository`)
    before anything is opened. A FIFO without a reader is refused at once (ENXIO) instead of blocking; a pipe
    with one, a terminal or a device the user named are written as usual. `truncate=False` opens without
    emptying the file (the caller empties it once it knows it will write)."""
    if escapes(path, repository()):
        raise OutsideRepository(path)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags | (os.O_TRUNC if truncate else 0), 0o666)
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # opened without waiting for a reader; written as any file
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


# -------------------------------------------------------------------------------------------------- globs


class GlobError(ValueError):
    """A glob that align refuses, or one whose expansion passed a bound: the reason, in words."""


@dataclass(frozen=True)
class Glob:
    """A checked glob: its components, relative to one folder (`**` alone is any number of folders)."""

    text: str
    parts: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Glob:
        """Check a glob as written in a configuration; raises `GlobError` saying what is wrong with it."""
        if text.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", text) or text.startswith("~"):
            raise GlobError("an absolute path: globs are relative to the configuration's folder")
        parts = tuple(p for p in text.split("/") if p not in ("", "."))
        if not parts:
            raise GlobError("it names no file")
        for part in parts:
            if part == "..":
                raise GlobError("`..` leaves the configuration's folder")
            if "**" in part and part != "**":
                raise GlobError("`**` must be a whole path component (`specs/**/*.dp`)")
            if len(part.encode("utf-8", "surrogateescape")) > MAX_PATH_COMPONENT:
                raise GlobError(f"a path component longer than {MAX_PATH_COMPONENT} bytes")
        if parts[-1] == "**":
            raise GlobError("it ends in `**`, which names folders, not files")
        return cls(text, parts)

    def matches(self, relative: str) -> bool:
        """Whether a path (components separated by `/`, relative to the glob's folder) is one the glob names."""
        names = tuple(p for p in relative.split("/") if p not in ("", "."))

        def match(parts: tuple[str, ...], rest: tuple[str, ...]) -> bool:
            if not parts:
                return not rest
            if parts[0] == "**":
                return any(match(parts[1:], rest[k:]) for k in range(len(rest) + 1))
            return bool(rest) and fnmatch.fnmatchcase(rest[0], parts[0]) and match(parts[1:], rest[1:])

        return match(self.parts, names)


def glob(root: Path, pattern: Glob) -> list[Path]:
    """The regular files below `root` that `pattern` matches, sorted; raises `GlobError` past a bound, or when
    a match is not a regular file (a FIFO, a device) or is a symbolic link out of `root`.

    Components match names as `fnmatch.fnmatchcase` does (`*`, `?`, `[...]`, hidden files included, as
    pathlib); `**` matches zero or more folders. Symbolic links to folders are never entered; a symbolic link
    to a file is a match when its real path is inside `root`.
    """
    matches: set[Path] = set()
    examined = 0
    real_root = os.path.realpath(root)

    def entries(folder: Path) -> list[os.DirEntry[str]]:
        nonlocal examined
        try:
            with os.scandir(folder) as listing:
                found = []
                for entry in listing:
                    examined += 1
                    if examined > MAX_GLOB_ENTRIES:
                        raise GlobError(f"it examines more than {MAX_GLOB_ENTRIES} directory entries")
                    found.append(entry)
                return found
        except OSError:  # an unreadable folder matches nothing, as for pathlib
            return []

    def match(folder: Path, parts: tuple[str, ...], depth: int) -> None:
        if depth > MAX_GLOB_DEPTH:
            raise GlobError(f"it reaches more than {MAX_GLOB_DEPTH} folders deep")
        head, rest = parts[0], parts[1:]
        if head == "**":
            match(folder, rest, depth)  # zero folders
            for entry in entries(folder):
                if entry.is_dir(follow_symlinks=False):
                    match(Path(entry.path), parts, depth + 1)
            return
        for entry in entries(folder):
            if not fnmatch.fnmatchcase(entry.name, head):
                continue
            if rest:
                if entry.is_dir(follow_symlinks=False):
                    match(Path(entry.path), rest, depth + 1)
                continue
            path = Path(entry.path)
            try:
                mode = path.stat().st_mode
            except OSError:  # a dangling link, or a loop of links: nothing to read
                continue
            if stat.S_ISDIR(mode):  # a folder (or a link to one) is not a file: no match, as for pathlib
                continue
            if not _inside(os.path.realpath(path), real_root):
                raise GlobError(f"it matches {_name(path, root)}, a symbolic link out of the configuration's folder")
            kind = kind_of(mode)
            if kind is not None:
                raise GlobError(f"it matches {_name(path, root)}, {kind}, not a regular file")
            matches.add(path)
            if len(matches) > MAX_GLOB_MATCHES:
                raise GlobError(f"it matches more than {MAX_GLOB_MATCHES} files")

    match(root, pattern.parts, 0)
    return sorted(matches)


def _name(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
