"""Settings for every test: Hypothesis draws the same examples on every run (``make test`` is deterministic),
every test starts from seed 0 (random, torch), and how ``make test`` shares the tests between its workers
(see pytest_xdist_make_scheduler).

The ``ci`` profile (the default) is derandomized and keeps no example database, so a run in a fresh clone
draws exactly what the previous run drew and writes no ``.hypothesis/`` folder. To search with fresh random
examples while developing: ``HYPOTHESIS_PROFILE=explore .venv/bin/python -m pytest tests/test_encodings.py``.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """Every test starts from the same random state (a test that draws ``torch.randn`` draws the same numbers)."""
    import random

    import torch

    random.seed(0)
    torch.manual_seed(0)


@pytest.fixture(params=["notebook", "slide"])
def text_size(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Figures drawn with a notebook's smallest text, then with a deck's (``make present`` sets ``PE_PRESENT=1``:
    :data:`pe_helpers.figures._base.SLIDE_FONT_PT`); the figure tests that take it run once for each."""
    from pe_helpers.figures import _base

    monkeypatch.setattr(_base, "MIN_FONT_PT", _base.NOTEBOOK_FONT_PT if request.param == "notebook" else _base.SLIDE_FONT_PT)
    return request.param


#: Every browser test runs on one xdist worker, one after another and first (``make test``: ``--dist loadfile
#: --no-loadscope-reorder``): two Chromiums with their servers and kernels at once starved each other on a two-core
#: machine, and xdist's default order (most tests first) left the longest files, these, for the end.
BROWSER_DIR = "tests/browser/"


#: Files whose tests fork a child per check (pe_helpers.checks runs the student's code in one): they run next,
#: while the other worker is still a lean process. A fork copies the page tables of the whole process: after the
#: app tests a worker holds about 2 GB and the same 300 checks took 47 s of CPU instead of 10 s.
FORKING = ("tests/test_checks_", "tests/test_bug_zoo.py", "tests/test_reasoning_exercises.py")
#: The longest single test outside the browser's (a JupyterHub, two students' servers and kernels: 15–30 s): it
#: starts first on another worker, beside the browser tests, instead of last and alone at the end of the run.
EARLY = ("tests/test_hub.py",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The browser tests first, then the hub, the forking checker tests, then the rest (with ``--no-loadscope-reorder``
    xdist hands out files in this order; ``sort`` is stable, so each group keeps its own order)."""
    items.sort(key=lambda item: 0 if item.nodeid.startswith(BROWSER_DIR) else 1 if item.nodeid.startswith(EARLY)
               else 2 if item.nodeid.startswith(FORKING) else 3)


#: The niceness every worker takes for the tests that are not the browser's (``os.nice``): the browser tests hold a
#: key on an app, drag it and wait for the kernel, Chromium and a server to answer in time, while the other worker runs
#: CPU-bound tests and nbval kernels that only need to finish. On two cores, at the same priority, the browser part took
#: 1.7 times as long as on an idle machine; niced, the others take the CPU the browser part leaves.
OTHER_TESTS_NICENESS = 5
_NICED: list[bool] = []


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _NICED and not item.nodeid.startswith(BROWSER_DIR) and os.environ.get("PYTEST_XDIST_WORKER"):
        _NICED.append(True)
        with contextlib.suppress(OSError):  # a platform without nice: the same tests, at the same priority
            os.nice(OTHER_TESTS_NICENESS)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """With ``--dist loadfile``: xdist's file scheduling, except that tests/browser/ counts as one file.

    A file's items stay on one worker (a notebook's cells share one kernel under nbval); the browser files
    run on one worker one after another, while the other worker takes the rest.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowserAsOneFile(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return BROWSER_DIR if nodeid.startswith(BROWSER_DIR) else super()._split_scope(nodeid)

    return BrowserAsOneFile(config, log)
