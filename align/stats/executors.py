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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass

from ..diagnostics import SpecError, diag

CONNECT_TIMEOUT = "10s"
"""How long `dask://HOST:PORT` waits for the scheduler to answer."""
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
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs) as pool:
        yield pool


@contextmanager
def _dask(text: str, jobs: int) -> Iterator[Executor | None]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SpecError([diag("executor-needs-dask", None, executor=text)]) from None
    with ExitStack() as stack:
        if text == "dask":
            cluster = stack.enter_context(LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                                       dashboard_address=":0", silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        else:
            address = "tcp://" + text.removeprefix("dask://").removeprefix("tcp://")
            try:
                client = stack.enter_context(Client(address, timeout=CONNECT_TIMEOUT))
            except OSError as error:
                raise SpecError([diag("executor-unreachable", None, address=address, reason=str(error))]) from None
        yield client.get_executor(pure=False)


EXECUTORS: dict[str, ExecutorKind] = {k.name: k for k in (
    ExecutorKind("local", "this process", _local),
    ExecutorKind("processes", "a pool of --jobs processes", _processes),
    ExecutorKind("dask", "a local Dask cluster of --jobs worker processes, or the scheduler at dask://HOST:PORT",
                 _dask),
)}


def kind_of(text: str) -> ExecutorKind | None:
    """The kind an --executor value names (`dask://HOST:PORT` is `dask`), or None."""
    if text.startswith(DASK_SCHEMES) and len(text) > len("dask://"):
        return EXECUTORS["dask"]
    return EXECUTORS.get(text)


def open_executor(text: str | None, jobs: int) -> AbstractContextManager[Executor | None]:
    """The executor of `--executor TEXT --jobs J`: without --executor, `processes` when J > 1, else `local`.
    The caller has checked `kind_of(text)`."""
    text = text or ("processes" if jobs > 1 else "local")
    kind = kind_of(text)
    assert kind is not None, f"unknown executor {text}"
    return kind.open(text, jobs)
