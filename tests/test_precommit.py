"""The pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit itself: `pre-commit try-repo` installs this
repository's committed HEAD in a hook environment, as a user's `repo:` entry would, and runs `align-verify`
on a temporary git repository with one good and one broken spec."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import ROOT, SPECS

pytestmark = pytest.mark.slow  # installs align in a fresh environment

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="try-repo installs a git checkout of align")
def test_the_align_verify_hook_passes_a_proof_and_fails_a_broken_mechanism(tmp_path: Path):
    assert PRE_COMMIT is not None, "pre-commit is a test dependency"
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "ci@example.invalid")
    _git(repo, "config", "user.name", "ci")
    shutil.copy(SPECS / "freegap" / "example1_laplace.dp", repo / "good.dp")
    shutil.copy(SPECS / "incorrect" / "svt_lee_clifton.dp", repo / "broken.dp")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "specs")
    # pre-commit builds the hook's own environment and installs align there from this repository, as for a
    # user; it finds align's dependencies (numpy, scipy, z3, sympy: most of a minute to install) already on the
    # path of the environment running the tests, so that only align itself is installed.
    site = os.pathsep.join(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1", "PYTHONPATH": site}

    def hook(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PRE_COMMIT, "try-repo", str(ROOT), "align-verify", "--files", *files],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=900)

    good = hook("good.dp")
    assert good.returncode == 0 and "Passed" in good.stdout, good.stdout + good.stderr
    broken = hook("good.dp", "broken.dp")
    assert broken.returncode == 1 and "Failed" in broken.stdout, broken.stdout + broken.stderr
    assert "broken.dp:" in broken.stdout and "refuted" in broken.stdout
