"""`align test` on a real Dask cluster (align/stats/executors.py): a `distributed.LocalCluster` of two worker
processes runs the sampling units and gives exactly the counts of the in-process run for the same seed, through
the Python API and through `align test --executor dask://ADDRESS` and `--executor dask`."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator

import pytest
from distributed import Client, LocalCluster

from align.cli import main
from align.stats.lrtest import search

from .conftest import SPECS
from .test_align_test import _ref

# Its module fixture starts a Dask cluster once per worker: with `--dist loadgroup` one worker runs the file.
pytestmark = pytest.mark.xdist_group("test_dask")

SPEC = SPECS / "incorrect" / "noisy_max_running_sum.dp"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as c:
        yield c


def _counts(result) -> list[tuple]:
    return [(f.pair.name, str(f.event), f.forward, f.c1, f.n1, f.c2, f.n2) for f in result.findings]


@pytest.mark.slow
def test_a_local_cluster_gives_the_in_process_counts(cluster: LocalCluster):
    mech = _ref(SPEC)
    # two rounds (no early stop), several pairs: units of different sizes land on both workers
    here = search(mech, {"eps": 1.0}, length=4, samples=4_000, seed=3, stop_early=False)
    with Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        there = search(mech, {"eps": 1.0}, length=4, samples=4_000, seed=3, stop_early=False,
                       executor=client.get_executor())
    assert here.rounds == there.rounds == 2 and len(here.pairs) > 2
    assert (here.samples, _counts(here)) == (there.samples, _counts(there))


def _test(*flags: str) -> tuple[int, dict]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["test", str(SPEC), "--arg", "eps=1", "--length", "5", "--samples", "4000", "--output-format",
                 "json", *flags], stdout=out, stderr=err)
    report = json.loads(out.getvalue())
    report.pop("seconds", None)
    return code, report


@pytest.mark.slow
def test_align_test_on_a_scheduler_address_and_on_its_own_cluster(cluster: LocalCluster):
    code, local = _test()
    assert code == 1  # the violation is confirmed
    assert _test("--executor", "dask://" + cluster.scheduler_address.removeprefix("tcp://")) == (code, local)
    assert _test("--executor", "dask", "--jobs", "2") == (code, local)


def test_an_unreachable_scheduler_is_a_diagnostic_at_once():
    """A refused port answers at once, and so does the diagnostic: no waiting for Dask's connect timeout."""
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    code = main(["test", str(SPEC), "--arg", "eps=1", "--executor", "dask://127.0.0.1:1"], stdout=out, stderr=err)
    assert code == 2
    assert "error[executor-unreachable]: no Dask scheduler answered at tcp://127.0.0.1:1" in err.getvalue()
    assert time.monotonic() - start < 3


@pytest.mark.parametrize("address", ["dask://127.0.0.1:99999", "dask://127.0.0.1:0", "dask://[::1",
                                     "dask://[::1]:99999", "dask://127.0.0.1:port", "dask://:8786",
                                     "dask://127.0.0.1:8786/path", "dask://user@127.0.0.1:8786", "tcp://a b:1"])
def test_a_malformed_scheduler_address_is_a_usage_error(address: str):
    err = io.StringIO()
    start = time.monotonic()
    assert main(["test", str(SPEC), "--arg", "eps=1", "--executor", address], stdout=io.StringIO(), stderr=err) == 2
    assert "error[usage]" in err.getvalue() and "--executor" in err.getvalue(), err.getvalue()
    assert time.monotonic() - start < 3


@pytest.mark.slow
def test_an_unknown_executor_is_a_usage_error():
    err = io.StringIO()
    assert main(["test", str(SPEC), "--arg", "eps=1", "--executor", "threads"], stdout=io.StringIO(), stderr=err) == 2
    assert "--executor must be one of local, processes, dask, or dask://HOST:PORT" in err.getvalue()
