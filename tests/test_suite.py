"""The test suite's own machinery: what its speed and its shared caches rely on."""

from __future__ import annotations

import pytest

GROUP = "suite-grouping-check"


@pytest.mark.xdist_group(GROUP)
def test_xdist_groups_keep_their_tests_on_one_worker(request: pytest.FixtureRequest):
    """`--dist loadgroup` (pyproject.toml) sends the tests of one `xdist_group` to one worker, where they share
    their module caches (the corpus verdicts, the syntheses, the executed notebook). pytest-xdist marks each such
    test by a `@group` suffix of its node id, the key its scheduler groups by; pytest 9.2 keeps node ids where
    xdist 3.8 no longer writes them, which silently split every group over both workers and ran each shared
    computation twice (the notebook twice per suite, the corpus verdicts in both workers): pyproject.toml keeps
    pytest below 9.2 until the two agree again."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith(f"@{GROUP}"), request.node.nodeid
