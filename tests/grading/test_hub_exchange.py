"""Homework through the real hub (`make hub`): the lecturer releases notebook 01 to nbgrader's exchange on the hub
machine; three students log in, fetch it, write their answers and submit, each from their own server through the
hub, with the requests JupyterLab's Assignments panel sends; the lecturer collects, autogrades and returns feedback
(`make grade`); each student fetches their feedback. The hub runs every server as one system user
(SimpleLocalProcessSpawner), so the exchange is one folder on this machine and a student's name is the hub's."""

from __future__ import annotations

import json
import re
import sys
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pe_helpers import grading, hub
from pe_helpers.testing import hub as th

from .test_class_of_30 import ATTENTION, ATTENTION_MISTAKES, NOTEBOOK, correct_sources

pytestmark = pytest.mark.skipif(not hub.PROXY.exists(), reason="configurable-http-proxy is not installed: make "
                                "test-grading installs it (deploy/hub/package.json)")


def _assignments(student: th.Student, action: str = "") -> object:
    query = urllib.parse.urlencode({"course_id": grading.COURSE_ID, "assignment_id": "nb01"})
    path = student.server_path(f"/assignments{'/' + action if action else ''}?{query}")
    status, reply = student.request("POST" if action else "GET", path, timeout=120)
    assert status == 200, f"{student.name}: {action or 'list'} answered HTTP {status}: {str(reply)[:500]}"
    assert not (isinstance(reply, dict) and reply.get("success") is False), f"{student.name}: {reply}"
    return reply


def _do_homework(student: th.Student, answers: dict[str, str]) -> None:
    """Spawn, fetch nb01, put ``answers`` into its solution cells (saved as JupyterLab saves), submit."""
    student.spawn()
    _assignments(student, "fetch")
    path = student.server_path(f"/api/contents/nb01/{NOTEBOOK}.ipynb")
    status, model = student.request("GET", path + "?content=1")
    assert status == 200, f"{student.name}: the fetched notebook is not in their folder (HTTP {status})"
    for cell in model["content"]["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        exercise = meta.get("grade_id", "").removeprefix("ex").removesuffix("_solution").replace("_", ".")
        if meta.get("solution") and exercise in answers:
            cell["source"] = answers[exercise]
    status, _ = student.request("PUT", path, {"type": "notebook", "format": "json", "content": model["content"]})
    assert status == 200, f"{student.name}: saving answered HTTP {status}"
    _assignments(student, "submit")


def test_release_fetch_submit_collect_autograde_and_feedback_through_the_hub(course: Path) -> None:
    exchange = course.parent / "exchange"
    assert grading.release(course, ["nb01"], nbgrader=(sys.executable, "-m", "nbgrader")) == ["nb01"]  # make release
    right = correct_sources(course, "nb01")
    homework = {
        "student01": right,
        "student02": {**right, "1.1": ATTENTION.format(body=ATTENTION_MISTAKES["scores-transposed"])},
        "student03": {"1.4": right["1.4"]},
    }
    expected = {"student01": 8, "student02": 7, "student03": 3}

    running = th.start_hub(course.parent / "hub", students=3, edition="full",
                           env={"PE_HUB_EXCHANGE": str(exchange)})
    try:
        passwords = th.passwords(running.run_dir)
        students = [th.Student(running.url, name, passwords[name]) for name in homework]
        for s in students:
            s.login()
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda s: _do_homework(s, homework[s.name]), students))
        status, _ = students[0].request("GET", students[0].server_path("/formgrader"))
        assert status == 404, "a student's server offers the lecturer's formgrader"
        status, page = students[0].request("GET", students[0].server_path("/lab"))
        disabled = re.search(r'"disabledExtensions": (\[[^\]]*\])', page) if isinstance(page, str) else None
        assert disabled and "@jupyter/nbgrader:formgrader" in disabled.group(1), "the formgrader shows in a student's lab"
        inbound = sorted(p.name.split("+")[0] for p in (exchange / grading.COURSE_ID / "inbound").iterdir())
        assert inbound == sorted(homework), f"the exchange holds submissions of {inbound}"

        graded = grading.grade(course, exchange, ["nb01"], nbgrader=(sys.executable, "-m", "nbgrader"))
        assert graded == ["nb01"]
        totals: dict[str, float] = {}
        for g in grading.gradebook_grades(course):
            totals[g.student] = totals.get(g.student, 0) + g.score
        assert totals == expected

        for s in students:
            _assignments(s, "fetch_feedback")
            pages = list((running.run_dir / "users" / s.name / "nb01" / "feedback").rglob(f"{NOTEBOOK}.html"))
            assert len(pages) == 1, f"{s.name}: no feedback in their folder"
            text = pages[0].read_text(encoding="utf-8")
            assert "[PASS]" in text or "[NOT YET]" in text, f"{s.name}: the feedback holds no checker line"
            listed = json.dumps(_assignments(s))
            assert '"has_local_feedback": true' in listed, f"{s.name}: the Assignments panel shows no feedback"
        table, pages = grading.export(course, course.parent / "grades")
        rows = table.read_text(encoding="utf-8").splitlines()
        assert [r.split(",")[0] for r in rows[1:]] == sorted(homework) and len(pages) == 3
        assert re.search(r"^student02,0,2,2,3,7,8$", table.read_text(encoding="utf-8"), re.MULTILINE)
    finally:
        running.stop()
