"""The names the language gives a meaning to before any declaration: tags, reserved names, builtins."""

from __future__ import annotations

import re

from ..builtins import BUILTIN_ARITY, COMPREHENSIONS, RESERVED

__all__ = ["BUILTIN_ARITY", "COMPREHENSIONS", "RESERVED", "TAG_PATTERN"]

TAG_PATTERN = re.compile(r"[A-Z][A-Z0-9_]+")
"""Unbound names of two or more capitals/digits (TOP, BOT, TOP1) are tags; a one-letter `T` is a name."""

