"""Suite-wide rule: under ``CI=true`` a skipped test is a failure.

``.ci/run`` installs every real component the tests need (bubblewrap, ``node_modules``, ...), so in
CI a test that skips because its component is missing hides a broken install step. Outside CI the
same test still skips with its reason. A test that may legitimately skip in CI too (for example one
that cannot work as root, and CI runs as root) says so with ``@pytest.mark.ci_may_skip``.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "ci_may_skip: this test may skip under CI=true too (say why in the skip reason)"
    )


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not (report.skipped and _in_ci()) or hasattr(report, "wasxfail"):
        return report
    if item.get_closest_marker("ci_may_skip") is not None:
        return report
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under CI=true: {_skip_reason(report)}\n"
        ".ci/run installs every real component the tests need; a skip here hides a broken "
        "install step (mark the test ci_may_skip if it may skip in CI by design)"
    )
    return report
