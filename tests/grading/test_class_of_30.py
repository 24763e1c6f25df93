"""A class of 30 synthetic submissions of notebook 01 (26 English, 4 Chinese), autograded by nbgrader into its gradebook
with the course's own configuration; every score is known in advance.

Notebook 01 has four exercises: 1.1 (★☆☆, 1 point), 1.2 (★★☆, 2), 1.3 (★★☆, 2), 1.4 (★★★, 3). The class: a correct
submission, an untouched one, a partial one, each named mistake of 1.1 and 1.2, one that copies the visible cases'
answers (the hidden test catches it), and the hostile ones: a function that loops, exits (sys.exit, os._exit) or
floods its output, a cell that loops, exits or floods at its top level, a test cell edited, deleted, or with its
metadata changed. Each costs its own exercise only.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from pe_helpers import grading

from .conftest import nbgrader

NOTEBOOK = "01_attention_is_blind_to_order"
POINTS = {"1.1": 1, "1.2": 2, "1.3": 2, "1.4": 3}
FULL = sum(POINTS.values())

ATTENTION = "import math\n\nimport torch\n\n\ndef my_attention(q, k, v):\n    {body}\n"
PERMUTED = "import torch\n\n\ndef permuted_scores(scores, perm):\n    {body}\n"
ATTENTION_MISTAKES = {
    "no-scaling": "return torch.softmax(q @ k.T, dim=-1) @ v",
    "scaled-by-d": "return torch.softmax(q @ k.T / q.shape[-1], dim=-1) @ v",
    "softmax-over-queries": "return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=0) @ v",
    "no-softmax": "return q @ k.T / math.sqrt(q.shape[-1]) @ v",
    "scores-transposed": "return torch.softmax(k @ q.T / math.sqrt(q.shape[-1]), dim=-1) @ v",
    "returned-weights": "return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)",
}
PERMUTED_MISTAKES = {
    "rows-only": "return scores[perm]",
    "columns-only": "return scores[:, perm]",
    "inverse-permutation": "inv = torch.argsort(perm)\n    return scores[inv][:, inv]",
    "transposed": "return scores[perm][:, perm].T",
    "unchanged": "return scores",
}
# Read the checker's code, answer its three visible cases from a table, anything else unchanged.
MEMORISED = ("import torch\nfrom pe_helpers.checks.order import _PERMUTED\n\n"
             "_SEEN = {c.args[0].numpy().tobytes(): c.args[0][c.args[1]][:, c.args[1]] for c in _PERMUTED.cases}\n\n\n"
             "def permuted_scores(scores, perm):\n    return _SEEN.get(scores.numpy().tobytes(), scores)\n")


def correct_sources(course: Path, assignment: str) -> dict[str, str]:
    """Exercise -> the teacher's solution cell as a student would hand it in (no markers, no stub line)."""
    nb = nbformat.read(course / "source" / assignment / f"{NOTEBOOK}.ipynb", as_version=4)
    found = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            text = re.sub(r"^### (BEGIN|END) SOLUTION\n", "", cell.source, flags=re.MULTILINE)
            text = re.sub(r"^\s+raise NotImplementedError\(.*\)$\n?", "", text, flags=re.MULTILINE)
            found[meta["grade_id"].split("_solution")[0].removeprefix("ex").replace("_", ".")] = text
    return found


Edit = Callable[[nbformat.NotebookNode], None]


def answers(answers: dict[str, str]) -> Edit:
    """Put ``answers`` (exercise -> cell source) into the solution cells."""
    def edit(nb: nbformat.NotebookNode) -> None:
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            exercise = grade_id.removeprefix("ex").split("_solution")[0].replace("_", ".")
            if grade_id.endswith("_solution") and exercise in answers:
                cell.source = answers[exercise]
    return edit


def change_test_cell(exercise: str, change: Callable[[nbformat.NotebookNode], object]) -> Edit:
    def edit(nb: nbformat.NotebookNode) -> None:
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == f"ex{exercise.replace('.', '_')}_test":
                change(cell)
    return edit


def delete_test_cell(exercise: str) -> Edit:
    def edit(nb: nbformat.NotebookNode) -> None:
        nb.cells = [c for c in nb.cells
                    if c.metadata.get("nbgrader", {}).get("grade_id") != f"ex{exercise.replace('.', '_')}_test"]
    return edit


def _class(right: dict[str, str], right_zh: dict[str, str]) -> dict[str, tuple[str, list[Edit], dict[str, int]]]:
    """student -> (assignment, edits of the released notebook, expected points per exercise)."""
    def score(*zero: str) -> dict[str, int]:
        return {e: 0 if e in zero else p for e, p in POINTS.items()}

    def but(**changed: str) -> dict[str, str]:
        return {**right, **{k.replace("_", "."): v for k, v in changed.items()}}

    students: dict[str, tuple[str, list[Edit], dict[str, int]]] = {
        "s01-correct": ("nb01", [answers(right)], score()),
        "s02-untouched": ("nb01", [], score(*POINTS)),
        "s03-partial": ("nb01", [answers({"1.1": right["1.1"], "1.3": right["1.3"]})], score("1.2", "1.4")),
    }
    for i, (name, body) in enumerate(ATTENTION_MISTAKES.items()):
        students[f"s{4 + i:02d}-1.1-{name}"] = ("nb01", [answers(but(**{"1_1": ATTENTION.format(body=body)}))],
                                                score("1.1"))
    for i, (name, body) in enumerate(PERMUTED_MISTAKES.items()):
        students[f"s{10 + i:02d}-1.2-{name}"] = ("nb01", [answers(but(**{"1_2": PERMUTED.format(body=body)}))],
                                                 score("1.2"))
    hostile = {
        "s15-1.2-memorised": ([answers(but(**{"1_2": MEMORISED}))], score("1.2")),
        "s16-fn-loops": ([answers(but(**{"1_1": ATTENTION.format(body="while True:\n        pass")}))], score("1.1")),
        "s17-fn-sys-exit": ([answers(but(**{"1_1": ATTENTION.format(body="import sys\n    sys.exit(3)")}))],
                            score("1.1")),
        "s18-fn-os-exit": ([answers(but(**{"1_2": PERMUTED.format(body="import os\n    os._exit(0)")}))],
                           score("1.2")),
        "s19-fn-floods": ([answers(but(**{"1_1": ATTENTION.format(body="while True:\n        print('x' * 10000)")}))],
                          score("1.1")),
        "s20-cell-loops": ([answers(but(**{"1_2": "while True:\n    pass\n\n" + right["1.2"]}))], score("1.2")),
        "s21-cell-sys-exit": ([answers(but(**{"1_1": "import sys\n\nsys.exit(1)\n\n" + right["1.1"]}))], score("1.1")),
        "s22-cell-floods": ([answers(but(**{"1_4": "while True:\n    print('x' * 10000)\n\n" + right["1.4"]}))],
                            score("1.4")),
        "s23-test-edited": ([answers(right), change_test_cell("1.1", lambda c: setattr(c, "source", "print('[PASS]')"))],
                            score("1.1")),
        "s24-test-deleted": ([answers(right), delete_test_cell("1.2")], score("1.2")),
        "s25-test-points-changed": ([answers(right), change_test_cell("1.3", lambda c: c.metadata.nbgrader.update(points=100))],
                                    score("1.3")),
        "s26-test-ungraded": ([answers(right), change_test_cell("1.4", lambda c: c.metadata.nbgrader.update(grade=False))],
                              score("1.4")),
    }
    students.update({name: ("nb01", edits, expected) for name, (edits, expected) in hostile.items()})
    butzh = {**right_zh, "1.1": ATTENTION.format(body=ATTENTION_MISTAKES["no-scaling"])}
    students.update({
        "s27-zh-correct": ("nb01_zh", [answers(right_zh)], score()),
        "s28-zh-1.1-no-scaling": ("nb01_zh", [answers(butzh)], score("1.1")),
        "s29-zh-test-edited": ("nb01_zh", [answers(right_zh), change_test_cell("1.3", lambda c: setattr(c, "source", "pass"))],
                               score("1.3")),
        "s30-zh-partial": ("nb01_zh", [answers({"1.4": right_zh["1.4"]})], score("1.1", "1.2", "1.3")),
    })
    return students


def _feedback(course: Path, student: str, assignment: str) -> dict[str, str]:
    nb = nbformat.read(course / "autograded" / student / assignment / f"{NOTEBOOK}.ipynb", as_version=4)
    lines = {}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("_test"):
            text = "".join(o.get("text", "") + "\n".join(o.get("traceback", [])) for o in cell.outputs).strip()
            lines[grade_id.removeprefix("ex").removesuffix("_test").replace("_", ".")] = text
    return lines


def test_a_class_of_30_is_autograded_into_the_gradebook_with_the_expected_scores(course: Path) -> None:
    for assignment in ("nb01", "nb01_zh"):
        nbgrader(course, "generate_assignment", assignment)
    students = _class(correct_sources(course, "nb01"), correct_sources(course, "nb01_zh"))
    assert len(students) == 30
    for student, (assignment, edits, _expected) in students.items():
        nb = nbformat.read(course / "release" / assignment / f"{NOTEBOOK}.ipynb", as_version=4)
        for edit in edits:
            edit(nb)
        target = course / "submitted" / student / assignment / f"{NOTEBOOK}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(nb, target)

    t0 = time.monotonic()
    # A loop at the top of a cell waits for nbgrader's cell time limit; 30 s here instead of the course's 120.
    runs = [nbgrader(course, "autograde", assignment, "--Execute.timeout=30", check=False)
            for assignment in ("nb01", "nb01_zh")]
    seconds = time.monotonic() - t0
    assert all(r.returncode == 0 for r in runs), "\n".join(r.stderr[-3000:] for r in runs)

    got = {(g.student, g.exercise): g for g in grading.gradebook_grades(course)}
    wrong = [f"{s} {e}: got {got[(s, e)].score:g}, expected {p}" for s, (_a, _e, expected) in students.items()
             for e, p in expected.items() if got[(s, e)].score != p]
    assert not wrong, "\n".join(wrong)

    for student, (assignment, _edits, expected) in students.items():
        lines = _feedback(course, student, assignment)
        for exercise, points in expected.items():
            line = lines.get(exercise, "")
            assert len(line.splitlines()) == 1, f"{student} {exercise}: not one line of feedback: {line[:300]!r}"
            assert exercise in line
            if assignment.endswith("_zh"):
                assert re.search(r"[\u4e00-\u9fff]", line), f"{student} {exercise}: feedback not in Chinese: {line!r}"
            assert ("Traceback" not in line) and ("Error" not in line or points == 0)
        assert got[(student, "1.1")].feedback == lines["1.1"]
    for student, word in (("s23-test-edited", "edited"), ("s24-test-deleted", "deleted"),
                          ("s25-test-points-changed", "metadata"), ("s26-test-ungraded", "metadata")):
        exercise = {"s23": "1.1", "s24": "1.2", "s25": "1.3", "s26": "1.4"}[student[:3]]
        assert word in _feedback(course, student, "nb01")[exercise]
    assert "隐藏测试" not in _feedback(course, "s27-zh-correct", "nb01_zh")["1.2"]
    assert "hidden test" in _feedback(course, "s15-1.2-memorised", "nb01")["1.2"]
    flooded = course / "autograded" / "s22-cell-floods" / "nb01" / f"{NOTEBOOK}.ipynb"
    assert flooded.stat().st_size < 2_000_000, "nbgrader's LimitOutput keeps a flooded notebook small"

    # make grade's export: one row per student, one column per exercise; one page per student
    out = course.parent / "grades"
    table, pages = grading.export(course, out)
    rows = table.read_text(encoding="utf-8").splitlines()
    assert rows[0] == "student,1.1,1.2,1.3,1.4,total,max" and len(rows) == 31
    assert "s01-correct,1,2,2,3,8,8" in rows and "s02-untouched,0,0,0,0,0,8" in rows
    assert len(pages) == 30 and "练习" in (out / "feedback" / "s28-zh-1.1-no-scaling.html").read_text(encoding="utf-8")

    with sqlite3.connect(course / "gradebook.db") as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table' order by name")]
        counts = {t: db.execute(f'select count(*) from "{t}"').fetchone()[0] for t in tables}
    assert counts["student"] == 30 and counts["submitted_assignment"] == 30 and counts["grade"] == 30 * 4
    report = course.parent / "class-of-30.txt"
    report.write_text(f"30 submissions autograded in {seconds:.1f} s: {seconds / 30:.2f} s per submission\n"
                      f"gradebook tables: {counts}\n", encoding="utf-8")
    print(report.read_text(encoding="utf-8"))
