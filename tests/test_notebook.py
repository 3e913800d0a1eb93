"""docs/tutorial.ipynb, the course unit, runs from top to bottom and shows what its text says.

The notebook is executed with nbclient in a kernel on this interpreter (whatever `python3` kernelspec the
machine has), from docs/ as Jupyter would run it; any cell that raises fails the test (CellExecutionError).
The assertions read what the cells print explicitly, not the results' display methods.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import nbclient
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from .conftest import ROOT

# Its module fixture runs the whole notebook once per worker: with `--dist loadgroup` one worker runs the file.
pytestmark = pytest.mark.xdist_group("test_notebook")

DOCS = ROOT / "docs"
NOTEBOOK = DOCS / "tutorial.ipynb"
TIMEOUT = 300
"""Seconds per cell; the whole notebook takes about 20 s on two cores."""


class ThisInterpreterSpecs(KernelSpecManager):
    """Every kernel name is ipykernel on the interpreter running the tests, whatever kernelspecs are installed
    (a user's `python3` may point at another Python, without align)."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        from ipykernel.kernelspec import RESOURCES, get_kernel_dict

        spec = get_kernel_dict()  # argv: [sys.executable, "-m", "ipykernel_launcher", ...]
        return KernelSpec(resource_dir=RESOURCES, name=kernel_name,
                          **{k: v for k, v in spec.items() if k in KernelSpec.class_trait_names()})


class ThisInterpreterKernel(AsyncKernelManager):
    @default("kernel_spec_manager")
    def _this_interpreter(self) -> KernelSpecManager:
        return ThisInterpreterSpecs()


def code_cells(nb: Any) -> list[Any]:
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.fixture(scope="module")
def executed() -> dict[str, Any]:
    """The notebook after execution, with a last cell appended that reports the kernel's interpreter."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys\nprint('kernel interpreter:', sys.executable)"))
    client = nbclient.NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3",
                                     kernel_manager_class=ThisInterpreterKernel,
                                     resources={"metadata": {"path": str(DOCS)}})
    started = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first cell that fails
    return {"nb": nb, "seconds": time.perf_counter() - started}


def printed(nb: Any, marker: str) -> str:
    """What the one code cell whose source contains `marker` printed (its stream outputs)."""
    cells = [c for c in code_cells(nb) if marker in c.source]
    assert len(cells) == 1, f"{len(cells)} code cells contain {marker!r}"
    return "".join(o.text for o in cells[0].outputs if o.output_type == "stream" and o.name == "stdout")


def test_the_notebook_is_stored_clean_for_python3():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert nb.metadata.kernelspec.name == "python3"
    assert len(code_cells(nb)) >= 10
    for cell in code_cells(nb):
        assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.slow
def test_it_runs_in_this_interpreter_and_without_errors(executed):
    nb = executed["nb"]
    assert printed(nb, "kernel interpreter").strip() == f"kernel interpreter: {sys.executable}"
    for cell in code_cells(nb):
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:60]
    assert executed["seconds"] < 240


@pytest.mark.slow
def test_the_laplace_mechanism_is_proved_and_too_little_noise_breaks_c4c(executed):
    nb = executed["nb"]
    assert "Laplace mechanism: PROVED for all inputs" in printed(nb, "laplace = align.verify(LAPLACE)")
    halved = printed(nb, "halved = align.verify")
    assert "C4c       REFUTED  aligned cost" in halved
    assert "C4a       PROVED" in halved
    assert "counterexample: D =" in halved


@pytest.mark.slow
def test_svt_with_gap_is_proved_for_every_length_and_the_alignment_replays(executed):
    nb = executed["nb"]
    assert "cost coefficient c = eps1/2" in printed(nb, '"-m", "align", "check"')
    svt = printed(nb, "svt = align.verify(SVT)")
    assert "SVT with Gap: PROVED for every input length" in svt
    assert "loop invariant:" in svt
    assert "same output: True" in printed(nb, "replayed = align.replay(SVT")


@pytest.mark.slow
def test_stoddard_is_refuted_on_c4a_replayed_and_a_violation_is_confirmed(executed):
    nb = executed["nb"]
    assert "Stoddard's SVT: REFUTED - refuted: C4a" in printed(nb, "stoddard = align.verify(STODDARD)")
    assert "obligation     : C4a" in printed(nb, "cx = stoddard.counterexample")
    assert "outputs differ: True  broken obligations: ['C4a']" in printed(nb, "again = align.replay(STODDARD")
    report = printed(nb, "report = align.test(STODDARD")
    assert "align.test: privacy violation confirmed" in report
    assert "so eps >=  : inf" in report


@pytest.mark.slow
def test_gumbel_noise_fails_c3_where_laplace_and_logistic_pass(executed):
    nb = executed["nb"]
    assert "Gumbel release: C3(g) REFUTED" in printed(nb, "gumbel = align.verify(GUMBEL)")
    variants = printed(nb, "for noise in")
    assert "Lap(1 / eps)           PROVED" in variants
    assert "Logistic(0, 1 / eps)   PROVED" in variants
    assert "align.test: privacy violation confirmed" in printed(nb, "gumbel_test = align.test(GUMBEL")


@pytest.mark.slow
def test_the_r2dp_mixture_rule_gives_the_closed_form(executed):
    nb = executed["nb"]
    rule = printed(nb, "mix = next(")
    assert "= (k + 1)*log(dq*theta + 1)" in rule
    assert "eps = 3*log(3/2) = 1.2163953243" in rule
    assert "MIX: PROVED" in rule


def displayed(nb: Any, mime: str) -> list[str]:
    """Every rich output of a given MIME type (a result left as a cell's last expression)."""
    return [o.data[mime] for c in code_cells(nb) for o in c.outputs
            if o.output_type == "execute_result" and mime in o.get("data", {})]


@pytest.mark.slow
def test_results_render_themselves_as_reports(executed):
    """`align.verify` and `align.test` results left as a cell's value display as the HTML report (and carry a
    Markdown form for other front ends): the proof's obligations table and its MathML, the search's findings."""
    pages = displayed(executed["nb"], "text/html")
    proofs = [p for p in pages if 'class="obligations"' in p]
    assert proofs, "no verify result was displayed as a report"
    assert all("<math" in p and "<html" not in p for p in proofs)  # a fragment with MathML, not a whole page
    assert any('class="findings"' in p for p in pages), "no align.test result was displayed"
    assert any("| obligation |" in m for m in displayed(executed["nb"], "text/markdown"))
