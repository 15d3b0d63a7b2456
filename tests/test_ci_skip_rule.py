"""The suite-wide rule of ``tests/conftest.py``: under ``CI=true`` a skip fails, unless marked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

SAMPLE = """
import pytest

def test_missing_component():
    pytest.skip("component X is not installed")

@pytest.mark.ci_may_skip
def test_may_skip_by_design():
    pytest.skip("cannot work as root")

@pytest.mark.skipif(True, reason="marker skip")
def test_marker_skip():
    pass

def test_passes():
    assert True
"""


def run_sample(tmp_path: Path, ci: str | None) -> tuple[int, str]:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout


def test_outside_ci_skips_stay_skips(tmp_path: Path) -> None:
    code, out = run_sample(tmp_path, ci=None)
    assert code == 0, out
    assert out.strip().splitlines()[-1].startswith("1 passed, 3 skipped")


def test_under_ci_a_skip_fails_unless_marked(tmp_path: Path) -> None:
    code, out = run_sample(tmp_path, ci="true")
    assert code == 1, out
    assert "FAILED test_sample.py::test_missing_component - skipped under CI=true" in out
    assert "ERROR test_sample.py::test_marker_skip - skipped under CI=true" in out
    assert "SKIPPED [1] test_sample.py:9: cannot work as root" in out
    assert out.strip().splitlines()[-1].startswith("1 failed, 1 passed, 1 skipped, 1 error")
