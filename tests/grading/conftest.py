"""The grading tests (`make test-grading`): slow, so `make test` leaves them out (--ignore=tests/grading)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pe_helpers import grading

REPO = Path(__file__).resolve().parents[2]


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``nbgrader <args>`` in the course directory, as the lecturer types it (the venv's bin first on PATH: nbgrader
    runs alembic from there)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                          text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course directory from the notebooks (`make assignments`), its exchange beside it."""
    root = tmp_path_factory.mktemp("course")
    (root / "exchange").mkdir()
    grading.write_course(REPO / "notebooks", root / "course", root / "exchange")
    return root / "course"
