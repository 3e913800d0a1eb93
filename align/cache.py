"""The user's cache directory: what a later `align` process may load instead of computing again.

Two things are kept there: the built LALR parser (`parse._parser`: building its tables is most of a cold
start) and the texts of cost coefficients (`obligations.coefficient_texts`: sympy's import alone is 0.3 s, more
than the rest of `align check`). Each file's name carries a hash of everything its content depends on, so a
file from another version is never read; a missing, damaged or foreign file is computed again. Files are
written whole and renamed into place (a concurrent process reads the old file or the new one).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO


def directory() -> str | None:
    """`$ALIGN_CACHE_DIR`, else `$XDG_CACHE_HOME/align`, else `~/.cache/align`; None when no such directory can be
    used safely. The parser is saved with pickle, so a file is read only from a directory that this user owns and
    no one else can write to (never a shared temporary directory)."""
    root = os.environ.get("ALIGN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "align")
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        info = os.stat(root)
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return root


def path(kind: str, key_parts: tuple[str, ...], suffix: str) -> str | None:
    """The file `kind-<hash of key_parts>.suffix` in the cache directory, or None where there is none."""
    root = directory()
    if root is None:
        return None
    key = hashlib.sha256("\0".join(key_parts).encode()).hexdigest()[:32]
    return os.path.join(root, f"{kind}-{key}.{suffix}")


def write(target: str, save: Callable[[IO[bytes]], object]) -> None:
    """Write the file through `save(f)` atomically; a failure leaves nothing behind (the cache is optional)."""
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                save(f)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
