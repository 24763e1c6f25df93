"""The nbgrader course (pe_helpers/grading.py) without running nbgrader's commands: the course built from every
notebook, the released stubs against the student edition's, the test cells' verdicts, the hidden test, the export,
the hub's side. With nbgrader's commands: test_class_of_30.py and test_hub_exchange.py."""

from __future__ import annotations

import copy
import csv
import re
from pathlib import Path

import nbformat
import pytest

from pe_helpers import grading, hub
from pe_helpers.student import student_notebook

REPO = Path(__file__).resolve().parents[2]


def _cells(nb: nbformat.NotebookNode, kind: str) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith(kind)]


def test_one_assignment_per_notebook_and_language_with_points_by_stars(course: Path) -> None:
    assignments = sorted(p.name for p in (course / "source").iterdir())
    assert assignments == [f"nb0{i}{s}" for i in range(1, 7) for s in ("", "_zh")]
    config = (course / "nbgrader_config.py").read_text()
    assert "StrictOverwriteCells" in config and "course_id = 'pe-notebooks'" in config
    for lang, folder in (("en", REPO / "notebooks"), ("zh", REPO / "notebooks" / "zh")):
        for path in sorted(folder.glob("0[1-6]_*.ipynb")):
            teacher = nbformat.read(path, as_version=4)
            nb = nbformat.read(course / "source" / grading.assignment_id(path, lang) / path.name, as_version=4)
            checks = [c for c in teacher.cells if "check" in c.metadata.get("tags", [])]
            tests, solutions = _cells(nb, "_test"), _cells(nb, "_solution")
            assert len(tests) == len(checks) == len(solutions) >= 3
            points = grading.exercise_points(teacher)
            for cell in tests:
                meta = cell.metadata.nbgrader
                exercise = meta["grade_id"].removeprefix("ex").removesuffix("_test").replace("_", ".")
                assert meta["grade"] and meta["locked"] and not meta["solution"] and meta["schema_version"] == 3
                assert meta["points"] == points[exercise] in (1, 2, 3)
                assert f'"{exercise}"' in cell.source and cell.outputs == []
            for cell in solutions:
                assert cell.metadata.nbgrader["solution"] and not cell.metadata.nbgrader["grade"]
                assert cell.source.count(grading.BEGIN_SOLUTION) == cell.source.count("\ndef ") + cell.source.startswith("def ")


def _released(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What `nbgrader generate_assignment` does to the cells, with the course's configuration."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = copy.deepcopy(nb)
    nb, _ = ClearSolutions(code_stub={"python": ""}).preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    return nb


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_released_stubs_are_the_student_editions(course: Path, lang: str) -> None:
    folder = REPO / "notebooks" / ("" if lang == "en" else lang)
    for path in sorted(folder.glob("0[1-6]_*.ipynb")):
        released = _released(nbformat.read(course / "source" / grading.assignment_id(path, lang) / path.name, 4))
        student = student_notebook(nbformat.read(path, as_version=4), path.name)
        stubs = [c.source for c in student.cells if "solution" in c.metadata.get("tags", [])]
        mine = [c.source for c in _cells(released, "_solution")]
        assert len(stubs) == len(mine)
        for ours, theirs in zip(mine, stubs):
            # nbgrader leaves one empty line where each solution region was
            assert [ln for ln in ours.splitlines() if ln] == [ln for ln in theirs.splitlines() if ln]
            assert ours.count("\n") == theirs.count("\n") + theirs.count("raise NotImplementedError")
        for cell in _cells(released, "_test"):
            assert "hidden=True" not in cell.source and "HIDDEN" not in cell.source


def test_a_test_cell_prints_the_checkers_line_or_fails_with_it(capsys: pytest.CaptureFixture[str]) -> None:
    import math

    import torch

    def my_attention(q, k, v):  # noqa: ANN001, ANN202 - a student's function
        return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v

    grading.graded("check_attention", "my_attention", "1.1")
    assert capsys.readouterr().out.startswith("[PASS]")
    grading.graded("check_attention", "my_attention", "1.1", hidden=True)
    assert capsys.readouterr().out == ""  # the hidden part adds a line only when it fails

    def no_scaling(q, k, v):  # noqa: ANN001, ANN202
        return torch.softmax(q @ k.T, dim=-1) @ v

    my_attention = no_scaling  # noqa: F841 - looked up by name, as in a notebook
    with pytest.raises(grading.NotYet) as failed:
        grading.graded("check_attention", "my_attention", "1.1")
    assert failed.value._render_traceback_() == [str(failed.value)] and "\n" not in str(failed.value)
    with pytest.raises(grading.NotYet, match="not_there is not defined"):
        grading.graded("check_attention", "not_there", "1.1")
    with pytest.raises(ValueError, match="check_nothing"):
        grading.graded("check_nothing", "my_attention", "1.1")
    with pytest.raises(ValueError, match="'1'"):
        grading.graded("check_attention", "my_attention", "1")


def test_the_hidden_test_catches_answers_copied_from_the_visible_cases() -> None:
    from pe_helpers.checks.order import _PERMUTED

    seen = {c.args[0].numpy().tobytes(): c.args[0][c.args[1]][:, c.args[1]] for c in _PERMUTED.cases}

    def permuted_scores(scores, perm):  # noqa: ANN001, ANN202 - answers the three visible cases from a table
        return seen.get(scores.numpy().tobytes(), scores)

    grading.graded("check_permuted_scores", "permuted_scores", "1.2")
    with pytest.raises(grading.NotYet, match="hidden test"):
        grading.graded("check_permuted_scores", "permuted_scores", "1.2", hidden=True)
    hidden = grading.hidden_exercise(_PERMUTED.title)
    assert [tuple(c.args[0].shape) for c in hidden.cases] == [tuple(c.args[0].shape) for c in _PERMUTED.cases]
    assert all(c.args[1] is o.args[1] for c, o in zip(hidden.cases, _PERMUTED.cases))  # permutations kept
    assert grading.hidden_exercise("no such exercise") is None


def test_tampering_reads_in_the_notebooks_language() -> None:
    from pe_helpers.i18n import set_language

    for reason in grading.TAMPERING:
        with pytest.raises(grading.NotYet, match=reason if reason != "metadata" else "metadata"):
            grading.tampered("2.1", reason)
    set_language("zh")
    try:
        with pytest.raises(grading.NotYet, match="练习 2.1.*删除"):
            grading.tampered("2.1", "deleted")
    finally:
        set_language("en")
    with pytest.raises(ValueError, match="'lost'"):
        grading.tampered("2.1", "lost")


@pytest.mark.parametrize("bad", ["notebook.ipynb", "1_x.ipynb", ""])
def test_assignment_ids_name_the_bad_notebook(bad: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        grading.assignment_id(bad)
    with pytest.raises(ValueError, match="'fr'"):
        grading.assignment_id("03_x.ipynb", "fr")
    assert grading.assignment_id("03_x.ipynb", "zh") == "nb03_zh"


def test_the_export_takes_the_best_language_and_escapes_names(tmp_path: Path) -> None:
    g = grading.ExerciseGrade
    grades = [g("ann", "nb01", "1.1", 0, 1, "[NOT YET] ..."), g("ann", "nb01_zh", "1.1", 1, 1, "[通过] ..."),
              g("ann", "nb01", "1.10", 3, 3, "ok"), g("ann", "nb01", "1.2", 2, 2, "ok"),
              g("<b>", "nb01", "1.2", 0, 2, "<script>")]
    table = grading.write_grades_csv(grades, tmp_path / "grades.csv")
    rows = list(csv.reader(table.open(encoding="utf-8")))
    assert rows == [["student", "1.1", "1.2", "1.10", "total", "max"], ["<b>", "", "0", "", "0", "2"],
                    ["ann", "1", "2", "3", "6", "6"]]
    pages = grading.write_feedback_html(grades, tmp_path / "feedback")
    bad = (tmp_path / "feedback" / "<b>.html").read_text(encoding="utf-8")
    assert "<script>" not in bad and "&lt;script&gt;" in bad and len(pages) == 2
    with pytest.raises(FileNotFoundError, match="gradebook"):
        grading.gradebook_grades(tmp_path)


def test_the_hubs_students_submit_under_their_hub_name(tmp_path: Path) -> None:
    from traitlets.config import Config

    c = Config()
    hub.configure(c, env={"PE_HUB_DIR": str(tmp_path), "PE_HUB_EXCHANGE": str(tmp_path / "ex")})
    folder = Path(c.Spawner.environment["JUPYTER_CONFIG_PATH"])
    text = (folder / "nbgrader_config.py").read_text()
    assert str((tmp_path / "ex").resolve()) in text and 'os.environ.get("JUPYTERHUB_USER"' in text
    assert (tmp_path / "ex").is_dir()
    import json

    server = json.loads((folder / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert server == {"nbgrader.server_extensions.formgrader": False, "nbgrader.server_extensions.course_list": False}
    lab = json.loads((folder / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert set(lab) == {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                        "@jupyter/nbgrader:create-assignment"}
    namespace: dict = {"get_config": lambda: Config()}
    exec(compile(text, "nbgrader_config.py", "exec"), namespace)  # noqa: S102 - the file nbgrader will run
    assert namespace["c"].CourseDirectory.course_id == grading.COURSE_ID


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("0[1-6]_*.ipynb")), ids=lambda p: p.name[:2])
def test_every_solution_passes_its_hidden_test(path: Path) -> None:
    """The teacher's solutions (each solution cell run on its own) pass the hidden tests as they pass the visible
    ones: the redrawn inputs stay inside what each exercise asks for."""
    from pe_helpers import checks
    from pe_helpers.checks._base import run_exercise

    namespace: dict = {}
    exec("from pe_helpers import *", namespace)  # noqa: S102 - what the notebook's first cell imports
    hidden = 0
    for cell in nbformat.read(path, as_version=4).cells:
        tags = cell.metadata.get("tags", [])
        if "solution" in tags:
            exec(cell.source, namespace)  # noqa: S102 - the teacher's solution
        elif "check" in tags:
            checker, function = re.fullmatch(r"assert (check_\w+)\((\w+)\)", cell.source.strip()).groups()
            if checker in grading.ANSWER_REVEALING:
                continue
            result = getattr(checks, checker)(namespace[function], quiet=True)
            variant = grading.hidden_exercise(result.exercise)
            assert result, result
            if variant is not None:
                again = run_exercise(variant, namespace[function], quiet=True)
                assert again, again
                hidden += 1
    # 03 and 04 take sizes and angles, not tensors; 05's 5.1 is hidden whole and 5.2 takes integer tokens
    assert hidden == {"01": 4, "02": 3, "03": 0, "04": 0, "05": 1, "06": 3}[path.name[:2]]
