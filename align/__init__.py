"""align: prove differential privacy by randomness alignment (Lemma 1 of the Free Gap paper).

Stages (each a module named after it): parse -> resolve -> obligations -> checker -> render; `pipeline` runs
them, `commands` and `cli` drive them from the command line, and `api` from Python:

    import align
    align.verify("specs/freegap/alg2_svt_gap.dp").status      # Status.PROVED

`import align` loads nothing heavy: the functions below import the solvers when called.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["InternalError", "SpecError", "Status", "__version__", "check", "compute", "replay", "run", "test",
           "verify"]

if TYPE_CHECKING:
    from .api import check, compute, replay, run, test, verify
    from .diagnostics import InternalError, SpecError
    from .status import Status

_LAZY = {"check": "api", "verify": "api", "run": "api", "replay": "api", "test": "api", "compute": "api",
         "SpecError": "diagnostics", "InternalError": "diagnostics", "Status": "status"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
