"""The composite GitHub Action (action.yml), run here: its shell steps in order, as the runner would run them
(`bash -e`, inputs substituted, `$GITHUB_OUTPUT` collected), in a temporary repository. The `uses:` step (the
SARIF upload) cannot run outside GitHub; the test checks what it would upload against the SARIF schema."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from .conftest import ROOT, SPECS

pytestmark = pytest.mark.slow  # runs align as a program a dozen times

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())


def run_action(workspace: Path, **given: str) -> tuple[dict[str, str], list[int]]:
    """Each `run:` step's exit code (stopping at the first failure, as a job does), and the step outputs."""
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    outputs: dict[str, dict[str, str]] = {}
    codes: list[int] = []
    # the job installed align already (install: 'false'): this environment's `align` is first on the PATH
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"], "NO_COLOR": "1"}
    for step in ACTION["runs"]["steps"]:
        if "uses" in step:
            assert step["if"].startswith("always()")  # the upload runs even when verification failed
            continue
        script = step["run"]
        assert "${{" not in script  # values reach the shell as environment variables, never as script text
        values = {name: _substitute(text, inputs, outputs) for name, text in step.get("env", {}).items()}
        output_file = workspace / f".output-{len(codes)}"
        output_file.write_text("")
        done = subprocess.run(["bash", "-e", "-c", script], cwd=workspace, capture_output=True, text=True,
                              env={**env, **values, "GITHUB_OUTPUT": str(output_file)}, timeout=300)
        codes.append(done.returncode)
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in output_file.read_text().splitlines())
        if done.returncode != 0:
            break
    return {k: v for step in outputs.values() for k, v in step.items()}, codes


def _substitute(script: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    def value(m: re.Match[str]) -> str:
        expression = m.group(1).strip()
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        if expression == "github.action_path":
            return str(ROOT)
        step, _, name = expression.removeprefix("steps.").partition(".outputs.")
        return outputs[step][name]

    result = re.sub(r"\$\{\{(.*?)\}\}", value, script)
    assert "${{" not in result
    return result


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copy(SPECS / "freegap" / "example1_laplace.dp", tmp_path / "good.dp")
    shutil.copy(SPECS / "incorrect" / "svt_lee_clifton.dp", tmp_path / "broken.dp")
    shutil.copy(SPECS / "incorrect" / "noisy_answers_requires_long_input.dp", tmp_path / "bounded.dp")
    return tmp_path


def _sarif(workspace: Path) -> dict:
    log = json.loads((workspace / "align.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def test_a_proved_spec_passes_the_gate(workspace: Path):
    outputs, codes = run_action(workspace, install="false", paths="good.dp")
    assert outputs == {"exit-code": "0"} and codes == [0, 0, 0]
    assert _sarif(workspace)["runs"][0]["results"] == []


def test_a_refuted_spec_fails_the_gate_and_is_in_the_sarif_log(workspace: Path):
    outputs, codes = run_action(workspace, install="false", paths="good.dp broken.dp")
    assert outputs == {"exit-code": "1"} and codes == [0, 0, 1]
    results = _sarif(workspace)["runs"][0]["results"]
    refuted = [r for r in results if r["level"] == "error"]
    assert refuted and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.dp"
                           for r in refuted)


def test_bounded_fails_unless_accepted(workspace: Path):
    outputs, codes = run_action(workspace, install="false", paths="bounded.dp")
    assert outputs == {"exit-code": "3"} and codes[-1] == 3
    outputs, codes = run_action(workspace, install="false", paths="bounded.dp", **{"accept-bounded": "true"})
    assert outputs == {"exit-code": "0"} and codes == [0, 0, 0]


def test_the_configured_paths_are_used_when_none_is_given(workspace: Path):
    (workspace / ".git").mkdir()
    (workspace / "align.toml").write_text('paths = ["good.dp"]\n')
    outputs, codes = run_action(workspace, install="false", **{"max-length": "2"})
    assert outputs == {"exit-code": "0"} and codes == [0, 0, 0]
    artifact = _sarif(workspace)["runs"][0]
    assert artifact["invocations"][0]["exitCode"] == 0


def test_inputs_never_run_as_shell_commands(workspace: Path):
    # A workflow may pass text a pull request controls (a title, a branch name) to an input: it stays data.
    hostile = "good.dp $(touch pwned1) `touch pwned2` ; touch pwned3"
    outputs, codes = run_action(workspace, install="false", paths=hostile,
                                **{"max-length": '2"; touch pwned4; "', "sarif-file": "out$(touch pwned5).sarif"})
    assert not list(workspace.glob("pwned*"))
    assert codes[1] == 0 and outputs["exit-code"] == "2"  # the words are file names align cannot read
    assert (workspace / "out$(touch pwned5).sarif").exists()
