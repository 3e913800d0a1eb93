"""Where `align test` runs its sampling units: in this process, in a pool of processes, or on a Dask cluster.

A unit (one round of one input pair, `lrtest.run_unit`) draws from seeds that depend only on (seed, round, pair),
so the counts are the same wherever it runs; an executor only changes the wall time. Each kind is one record of
`EXECUTORS`; `open_executor` turns `align test --executor` (and `--jobs`) into a `concurrent.futures.Executor`,
or None for this process, and closes what it started.

- `local`: this process (the default with `--jobs 1`);
- `processes`: `concurrent.futures.ProcessPoolExecutor` with `--jobs` workers (the default with `--jobs` > 1);
- `dask`: a `distributed.LocalCluster` of `--jobs` worker processes, one thread each, started for the run and
  closed after it (its dashboard on a free port: `dashboard_address=None` does not turn it off in distributed
  2026.8, and the default port 8787 may be taken); `dask://HOST:PORT` (or `tcp://HOST:PORT`): the Dask
  scheduler at that address, whose workers must have align installed. Both through
  `distributed.Client.get_executor(pure=False)` (with the default `pure=True`, Dask tokenizes every unit, the
  whole resolved mechanism, to name its task); `pip install 'align[dask]'`.

A scheduler address is checked before anything connects (`executor_problem`: a host, and a port 1..65535), and
the connection is tried first with a plain TCP socket: a refused port fails at once, where Dask's client retries
until its timeout (`EXECUTOR_CONNECT_TIMEOUT_S`, align/limits.py).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass

from ..diagnostics import SpecError, diag
from ..limits import EXECUTOR_CONNECT_TIMEOUT_S

DASK_SCHEMES = ("dask://", "tcp://")
"""Prefixes of a scheduler address: `dask://` is ours (it becomes `tcp://`), `tcp://` is Dask's own."""


@dataclass(frozen=True)
class ExecutorKind:
    name: str
    description: str
    open: Callable[[str, int], AbstractContextManager[Executor | None]]
    """(the --executor text, --jobs) -> a context that yields the executor (None: this process)."""


@contextmanager
def _local(text: str, jobs: int) -> Iterator[Executor | None]:
    yield None


@contextmanager
def _processes(text: str, jobs: int) -> Iterator[Executor | None]:
    with ProcessPoolExecutor(jobs) as pool:
        yield pool


@contextmanager
def _dask(text: str, jobs: int) -> Iterator[Executor | None]:
    try:
        # lazy: loads distributed only when this runs (start-up; tests/test_layers.py)
        from distributed import Client, LocalCluster
    except ImportError:
        raise SpecError([diag("executor-needs-dask", None, executor=text)]) from None
    with ExitStack() as stack:
        if text == "dask":
            cluster = stack.enter_context(LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                                       dashboard_address=":0", silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        else:
            host, port = scheduler_address(text)
            address = f"tcp://{f'[{host}]' if ':' in host else host}:{port}"
            try:
                # A refused port answers at once here; Dask's client would retry it until its timeout.
                socket.create_connection((host, port), timeout=EXECUTOR_CONNECT_TIMEOUT_S).close()
                client = stack.enter_context(Client(address, timeout=f"{EXECUTOR_CONNECT_TIMEOUT_S:g}s"))
            except OSError as error:  # refused, unreachable, an unknown host, a timeout (TimeoutError)
                reason = error.strerror or str(error) or type(error).__name__
                raise SpecError([diag("executor-unreachable", None, address=address, reason=reason)]) from None
        yield client.get_executor(pure=False)


EXECUTORS: dict[str, ExecutorKind] = {k.name: k for k in (
    ExecutorKind("local", "this process", _local),
    ExecutorKind("processes", "a pool of --jobs processes", _processes),
    ExecutorKind("dask", "a local Dask cluster of --jobs worker processes, or the scheduler at dask://HOST:PORT",
                 _dask),
)}


_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,252}[A-Za-z0-9])?")
"""A host name or IPv4 address as a scheduler address may write it (letters, digits, `.`, `-`, `_`)."""


def scheduler_address(text: str) -> tuple[str, int]:
    """(host, port) of `dask://HOST:PORT` or `tcp://HOST:PORT` (an IPv6 host in brackets: `dask://[::1]:8786`);
    ValueError saying what is wrong with the address (no port, a port outside 1..65535, a path...)."""
    rest = text
    for scheme in DASK_SCHEMES:
        rest = rest.removeprefix(scheme)
    if rest.startswith("["):
        host, bracket, port_text = rest[1:].partition("]")
        if not bracket or not port_text.startswith(":"):
            raise ValueError("an IPv6 host is written in brackets, followed by the port: dask://[::1]:8786")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"{host[:60]!r} is not an IPv6 address") from None
        port_text = port_text[1:]
    else:
        host, colon, port_text = rest.rpartition(":")
        if not colon:
            raise ValueError("the address needs a port: dask://HOST:PORT (a Dask scheduler listens on 8786)")
        if not _HOST_NAME.fullmatch(host):
            raise ValueError(f"{host[:60]!r} is not a host name or an IPv4 address (an IPv6 one goes in brackets)")
    if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5 and 1 <= int(port_text) <= 65535):
        raise ValueError(f"the port must be a number between 1 and 65535, not {port_text[:20]!r}")
    return host, int(port_text)


def executor_problem(text: str) -> str | None:
    """Why `--executor TEXT` names no executor (for the `usage` diagnostic), or None."""
    if text.startswith(DASK_SCHEMES):
        try:
            scheduler_address(text)
        except ValueError as error:
            return f"--executor {text[:80]!r}: {error}"
        return None
    if text not in EXECUTORS:
        return f"--executor must be one of {', '.join(EXECUTORS)}, or dask://HOST:PORT"
    return None


def kind_of(text: str) -> ExecutorKind | None:
    """The kind an --executor value names (`dask://HOST:PORT` is `dask`), or None."""
    if text.startswith(DASK_SCHEMES) and len(text) > len("dask://"):
        return EXECUTORS["dask"]
    return EXECUTORS.get(text)


def open_executor(text: str | None, jobs: int) -> AbstractContextManager[Executor | None]:
    """The executor of `--executor TEXT --jobs J`: without --executor, `processes` when J > 1, else `local`.
    The caller has checked `executor_problem(text)`."""
    text = text or ("processes" if jobs > 1 else "local")
    kind = kind_of(text)
    assert kind is not None, f"unknown executor {text}"
    return kind.open(text, jobs)
