r"""The exercises as an nbgrader course: ``make assignments`` writes it, ``make grade`` turns submissions into marks.

``python -m pe_helpers.grading assignments`` writes an nbgrader course directory (default ``build/course``):
``nbgrader_config.py`` and ``source/<assignment>/<notebook>.ipynb``, one assignment per notebook 01–06 and
language (``nb01`` … ``nb06``, ``nb01_zh`` … ``nb06_zh``). From each teacher's notebook:

* every SOLUTION cell becomes an nbgrader solution cell. Each function body (the lines
  :func:`pe_helpers.student.stub_regions` finds, so the same lines the student edition replaces) is a
  ``### BEGIN SOLUTION`` … ``### END SOLUTION`` region followed by the student edition's
  ``raise NotImplementedError("Exercise N.M: write <name> (<title>)")``. In the teacher's version that line
  follows the body's ``return`` and is never reached; ``nbgrader generate_assignment`` removes the region, so
  the student sees the student edition's stub (nbgrader leaves one empty line where the region was);
* every CHECK cell ``assert check_xxx(fn)`` becomes a locked, autograded test cell worth the exercise's
  points, :data:`POINTS` by difficulty (★☆☆ 1, ★★☆ 2, ★★★ 3: the stars already measure the work),
  stored in the cell's nbgrader metadata. It calls :func:`graded`, which runs the checker (its child process
  and time limit) and prints the checker's one line, in the notebook's language; a failed check raises,
  which is how nbgrader scores a test cell 0. Where the checker's inputs are tensors, a hidden test
  (``### BEGIN HIDDEN TESTS``, removed from the released version, restored when grading) runs the same
  checker on other random inputs of the same shapes: the visible messages name expected entries
  ("entry [2, 3] should be 0.1234"), so answers copied from them pass the visible check only. Exercise 5.1's
  check shows the measured answer beside the student's prediction, so all of it is hidden there.

Grading keeps nbgrader's own protection (checksums, locked cells, :class:`OverwriteCells` restoring the test
cells' sources) and adds :class:`StrictOverwriteCells`: a test cell the student edited, deleted or whose
metadata was changed scores 0, with a one-line reason, instead of being silently restored. Student code that
loops, exits or floods its output inside the function is stopped by the checker; a loop at the top of a cell
by nbgrader's cell time limit (``Execute.timeout``), a flood by ``LimitOutput``. Each such case costs that
exercise only.

``python -m pe_helpers.grading export`` (the end of ``make grade``) reads the gradebook and writes
``grades.csv`` (one row per student, one column per exercise, then the total) and ``feedback/<student>.html``
(each exercise's score and the checker's line).
"""

from __future__ import annotations

import argparse
import ast
import copy
import csv
import dataclasses
import functools
import html
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from .i18n import _, set_language
from .student import (CHECK_TAG, EXERCISE_HEADING, EXERCISE_HEADING_ZH, SOLUTION_TAG, StudentEditionError,
                      _CHECK_CALL, _clear_outputs, _language, _titles, _unhide, stub_regions)

__all__ = ["COURSE_ID", "POINTS", "BEGIN_SOLUTION", "END_SOLUTION", "BEGIN_HIDDEN", "END_HIDDEN", "NotYet", "graded",
           "tampered", "TAMPERING", "ANSWER_REVEALING", "hidden_exercise", "assignment_id", "exercise_points",
           "course_notebook", "write_course", "course_config", "student_config", "StrictOverwriteCells",
           "ExerciseGrade", "gradebook_grades", "write_grades_csv", "write_feedback_html", "export",
           "released_assignments", "release", "grade", "main"]

REPO = Path(__file__).resolve().parents[1]
COURSE_ID = "pe-notebooks"
#: Points of an exercise by its difficulty stars.
POINTS = {"★☆☆": 1, "★★☆": 2, "★★★": 3}
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
#: Seconds nbgrader lets one cell of a submission run before interrupting it (a loop at the top of a cell).
CELL_TIMEOUT = 120
_SCHEMA = 3
_HIDDEN_SEED = 20250512


# --- the test cells' side: run a checker, turn its verdict into a score ----------------------------------------

class NotYet(AssertionError):
    """A failed test cell: nbgrader scores the cell 0 and shows this one line as its output (no traceback)."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook: what the cell's error output shows
        return [str(self)]


def _user_namespace(depth: int = 2) -> dict[str, Any]:
    """The notebook's variables: IPython's user namespace in a kernel, else the caller's (its globals and locals)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        shell = None
    if shell is not None:
        return shell.user_ns
    frame = sys._getframe(depth)
    return {**frame.f_globals, **frame.f_locals}


def _checker(name: str) -> Callable[..., Any]:
    from . import checks

    check = getattr(checks, name, None)
    if not (name.startswith("check_") and callable(check)):
        raise ValueError(_("checker must name one of pe_helpers.checks' check_* functions, got {name!r}.")
                         .format(name=name))
    return check


def hidden_exercise(title: str) -> Any:
    """The exercise whose title is ``title`` with its tensor inputs drawn again (same shapes, dtypes and scale,
    another seed); ``None`` when none of its inputs is a floating-point tensor (nothing to hide)."""
    import torch

    from .checks._base import EXERCISES

    exercise = next((ex for ex in EXERCISES if str(ex.title) == str(title)), None)
    if exercise is None:
        return None
    gen = torch.Generator().manual_seed(_HIDDEN_SEED)

    def redraw(arg: Any) -> Any:
        if isinstance(arg, torch.Tensor) and arg.is_floating_point() and arg.numel() > 1:
            scale = float(arg.std()) or 1.0
            return torch.randn(arg.shape, generator=gen, dtype=arg.dtype) * scale
        return arg

    cases = tuple(dataclasses.replace(case, args=tuple(redraw(a) for a in case.args))
                  for case in exercise.cases if case.reference_args is None)
    if not cases or all(all(a is b for a, b in zip(new.args, old.args)) for new, old in zip(cases, exercise.cases)):
        return None
    hidden = dataclasses.replace(exercise, cases=cases)
    if EXERCISES and EXERCISES[-1] is hidden:  # a variant, not an exercise of the course
        EXERCISES.pop()
    return hidden


def _not_yet(exercise: str, message: str) -> NotYet:
    """A :class:`NotYet` whose line reads like a checker's: ``[NOT YET] Exercise N.M: <message>``."""
    from .checks._base import CheckResult

    return NotYet(str(CheckResult(_("Exercise {number}").format(number=exercise), False, message)))


def graded(checker: str, function: str, exercise: str, *, hidden: bool = False) -> None:
    """A test cell: run ``checker`` (a ``check_*`` of :mod:`pe_helpers.checks`) on the notebook's ``function``.

    Prints the checker's one line on success (and for a recorded prediction); raises :class:`NotYet` with that
    line otherwise, so nbgrader scores the cell 0. ``hidden=True`` (the hidden part of a test cell, before its
    visible call) runs the check, then the same checker on other inputs (:func:`hidden_exercise`), and prints
    nothing unless one of them fails.
    """
    from .checks._base import CheckResult, run_exercise

    if not (isinstance(exercise, str) and re.fullmatch(r"\d+\.\d+", exercise)):
        raise ValueError(_("exercise must be 'N.M', got {exercise!r}.").format(exercise=exercise))
    check = _checker(checker)
    fn = _user_namespace().get(function)
    if fn is None:
        raise _not_yet(exercise, _("{name} is not defined: run its cell, and keep the name the exercise gives.")
                       .format(name=function))
    result: CheckResult = check(fn, quiet=True)
    if result and hidden:
        variant = hidden_exercise(result.exercise)
        if variant is not None:
            again = run_exercise(variant, fn, quiet=True)
            if not again:
                raise _not_yet(exercise, _("the hidden test, on other inputs: {message}").format(message=again.message))
            result = again
    if not result:
        raise NotYet(str(result))
    if not hidden:
        print(result)


#: Why a test cell scores 0 whatever the answer (:func:`tampered`).
TAMPERING = ("edited", "deleted", "metadata")


def tampered(exercise: str, reason: str) -> None:
    """What a tampered test cell runs instead of its test: raise :class:`NotYet` saying why it scores 0.

    ``reason``: the student ``edited`` the test cell, ``deleted`` it, or changed its nbgrader ``metadata``.
    """
    if reason not in TAMPERING:
        raise ValueError(_("reason must be one of {allowed}, got {reason!r}.")
                         .format(allowed=", ".join(map(repr, TAMPERING)), reason=reason))
    why = {"edited": _("this test cell was edited in the submission, so it cannot grade the exercise: 0 points."),
           "deleted": _("this test cell was deleted from the submission: 0 points."),
           "metadata": _("this test cell's metadata was changed in the submission: 0 points.")}[reason]
    raise _not_yet(exercise, why + " " + _("Fetch the assignment again and copy your function into the new copy."))


# --- the course: source notebooks with nbgrader metadata ------------------------------------------------------

def assignment_id(notebook: str | Path, lang: str = "en") -> str:
    """``nb03`` for ``03_sinusoidal_frequencies.ipynb`` in English, ``nb03_zh`` in Chinese."""
    m = re.match(r"(\d\d)_", Path(notebook).name)
    if not m:
        raise ValueError(_("notebook must be named NN_*.ipynb, got {name!r}.").format(name=str(notebook)))
    if lang not in ("en", "zh"):
        raise ValueError(_("lang must be 'en' or 'zh', got {lang!r}.").format(lang=lang))
    return f"nb{m[1]}" + ("" if lang == "en" else f"_{lang}")


def exercise_points(nb: NotebookNode) -> dict[str, int]:
    """``{"3.1": 1, ...}``: each exercise's points (:data:`POINTS`) from its heading's stars."""
    points: dict[str, int] = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for heading in (EXERCISE_HEADING, EXERCISE_HEADING_ZH):
                for m in heading.finditer(cell.source):
                    points.setdefault(m["number"], POINTS[m["stars"]])
    return points


def _grade_id(exercise: str, kind: str) -> str:
    return f"ex{exercise.replace('.', '_')}_{kind}"


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": _SCHEMA,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def _solution_regions(source: str, exercise: str, title: str | None, where: str, lang: str) -> str:
    """``source`` with each function body wrapped in a solution region, followed by the student edition's stub line."""
    lines = source.splitlines()
    for region in reversed(stub_regions(source, exercise, title, where=where, lang=lang)):
        # the markers at column 0 (a comment may sit anywhere in a body): nbgrader's blank line is then empty
        lines[region.start:region.end] = [BEGIN_SOLUTION, *lines[region.start:region.end], END_SOLUTION,
                                          region.stub_line]
    return "\n".join(lines)


#: Checkers whose verdict shows the reference's answer (exercise 5.1 shows the measured accuracies beside the
#: prediction): in an assignment the whole check is hidden, and the student sees it in the feedback.
ANSWER_REVEALING = frozenset({"check_extrapolation_prediction"})
_HIDDEN_CHECK = {"en": "# This exercise is checked after you submit: its check shows the answer.",
                 "zh": "# 这道练习在提交之后检查：它的检查会显示答案。"}


def _test_source(check_source: str, exercise: str, where: str, lang: str = "en") -> str:
    """The test cell for ``assert check_xxx(fn)``: the visible check, and a hidden one on other inputs where the
    checker takes tensors; the whole check hidden where it would show the answer (:data:`ANSWER_REVEALING`)."""
    m = _CHECK_CALL.match(check_source.strip())
    call = ast.parse(m.group(1), mode="eval").body if m else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and len(call.args) == 1
            and isinstance(call.args[0], ast.Name) and not call.keywords):
        raise StudentEditionError(_("{where}: a check cell must be exactly `assert check_xxx(my_fn)`, got {source!r}.")
                                  .format(where=where, source=check_source.strip()[:80]))
    checker, function = call.func.id, call.args[0].id
    run = f'from pe_helpers.grading import graded\n\ngraded("{checker}", "{function}", "{exercise}")'
    if checker in ANSWER_REVEALING:
        return f"{_HIDDEN_CHECK[lang]}\n{BEGIN_HIDDEN}\n{run}\n{END_HIDDEN}"
    if not _has_hidden_test(checker):
        return run
    # the hidden part first: it runs the visible check too and stops the cell with one line if either fails, so the
    # visible call after it prints the one line of a pass
    return (f'from pe_helpers.grading import graded\n\n{BEGIN_HIDDEN}\ngraded("{checker}", "{function}", "{exercise}", '
            f'hidden=True)\n{END_HIDDEN}\ngraded("{checker}", "{function}", "{exercise}")')


@functools.cache
def _has_hidden_test(checker: str) -> bool:
    """Does the checker's exercise take tensor inputs a hidden test can draw again? (One probe call, ~20 ms.)"""
    result = _checker(checker)(lambda *args: None, quiet=True)
    return hidden_exercise(result.exercise) is not None


def course_notebook(nb: NotebookNode, name: str) -> NotebookNode:
    """The nbgrader source version of teacher's notebook ``nb`` (``name`` for messages); ``nb`` is not modified.

    Raises :class:`~pe_helpers.student.StudentEditionError` where the notebook breaks the exercise convention.
    """
    out = copy.deepcopy(nb)
    titles, lang, points = _titles(out), _language(out), exercise_points(out)
    exercise = None
    for index, cell in enumerate(out.cells):
        where = f"{name}, cell {index + 1}"
        tags = cell.metadata.get("tags", [])
        if SOLUTION_TAG in tags:
            exercise = cell.metadata.get("pe_exercise")
            if not (isinstance(exercise, str) and exercise in points):
                raise StudentEditionError(_("{where}: a solution cell needs pe_exercise = \"N.M\" and a heading "
                                            "'### Exercise N.M · title (★☆☆ easy · ~5 min)' above it, got {exercise!r}.")
                                          .format(where=where, exercise=exercise))
            cell.source = _solution_regions(cell.source, exercise, titles.get(exercise), where, lang)
            cell.metadata["nbgrader"] = _nbgrader(_grade_id(exercise, "solution"), grade=False, solution=True,
                                                  locked=False)
            _unhide(cell)
        elif CHECK_TAG in tags:
            if exercise is None:
                raise StudentEditionError(_("{where}: a check cell comes before any solution cell.")
                                          .format(where=where))
            cell.source = _test_source(cell.source, exercise, where, lang)
            cell.metadata["nbgrader"] = _nbgrader(_grade_id(exercise, "test"), grade=True, solution=False,
                                                  locked=True, points=points[exercise])
            exercise = None
        _clear_outputs(cell)
    return out


def course_config(exchange: Path) -> str:
    """The course's ``nbgrader_config.py`` (nbgrader's commands run in the course directory, its root): course id,
    exchange, the strict overwrite, the cell time limit."""
    return f'''"""nbgrader's configuration for the pe-notebooks course (written by `make assignments`)."""

from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: F401 - kept in the default list below
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteKernelspec

from pe_helpers.grading import StrictOverwriteCells

c = get_config()  # noqa: F821 - nbgrader provides get_config
c.CourseDirectory.course_id = {COURSE_ID!r}
# The exchange the hub's students fetch from and submit to (one machine: a folder both sides reach).
c.Exchange.root = {str(exchange)!r}
# On a local hub every student's server runs as the same system user: the student's name is the hub's
# (JUPYTERHUB_USER, set by the hub's nbgrader configuration), not the owner of the submitted files.
c.CollectApp.check_owner = False
# The solution regions are followed by the student edition's stub line, so nbgrader adds nothing in their place.
c.ClearSolutions.code_stub = {{"python": ""}}
# nbgrader's sanitising steps, with test cells that were edited, deleted or changed scoring 0.
c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec, StrictOverwriteCells,
                                      CheckCellMetadata]
c.Execute.timeout = {CELL_TIMEOUT}
# A cell that floods its output until it is interrupted leaves the output channel busy past nbgrader's wait for it:
# go on with the next cell (that exercise scores 0) instead of failing the whole submission.
c.Execute.raise_on_iopub_timeout = False
# What a flood leaves in the graded notebook: nbgrader keeps the first lines of each cell's output.
c.LimitOutput.max_lines = 100
'''


def student_config(exchange: Path | str) -> str:
    """The students' ``nbgrader_config.py`` on a hub (:mod:`pe_helpers.hub` puts it on their Jupyter config path):
    the course, its exchange, and the student's name from the hub (``JUPYTERHUB_USER``)."""
    return f'''"""nbgrader for the students of this hub (written by pe_helpers.hub at each start)."""
import os

c = get_config()  # noqa: F821 - nbgrader provides get_config
c.CourseDirectory.course_id = {COURSE_ID!r}
c.Exchange.root = {str(Path(exchange).resolve())!r}
# Every server of a local hub runs as the same system user: the hub's user name says who submits.
c.CourseDirectory.student_id = os.environ.get("JUPYTERHUB_USER", "*")
'''


def write_course(src: Path | str = REPO / "notebooks", course: Path | str = REPO / "build" / "course",
                 exchange: Path | str = REPO / "build" / "hub" / "exchange",
                 langs: Sequence[str] = ("en", "zh")) -> list[Path]:
    """Write the course directory: ``nbgrader_config.py`` and ``source/<assignment>/<notebook>.ipynb`` for every
    notebook 01–06 of ``src`` (English) and ``src/zh`` (Chinese). Returns the notebooks written."""
    src, course, exchange = Path(src), Path(course).resolve(), Path(exchange).resolve()
    converted: dict[Path, NotebookNode] = {}
    for lang in langs:
        folder = src if lang == "en" else src / lang
        paths = [p for p in sorted(folder.glob("[0-9][0-9]_*.ipynb")) if not p.name.startswith("00_")]
        if not paths:
            raise StudentEditionError(_("{folder} holds no notebook 01–06.").format(folder=folder))
        for path in paths:
            target = course / "source" / assignment_id(path, lang) / path.name
            converted[target] = course_notebook(nbformat.read(path, as_version=4), f"{folder.name}/{path.name}")
    course.mkdir(parents=True, exist_ok=True)
    exchange.mkdir(parents=True, exist_ok=True)  # release_assignment needs it, also before the hub's first start
    (course / "nbgrader_config.py").write_text(course_config(exchange), encoding="utf-8")
    for target, nb in converted.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.validate(nb)
        target.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return list(converted)


# --- grading: the strict overwrite ------------------------------------------------------------------------

def _released_source(source: str) -> str:
    """What the student received of a test cell's source: the hidden tests removed, as nbgrader removes them."""
    return re.sub(rf"^{re.escape(BEGIN_HIDDEN)}$.*?^{re.escape(END_HIDDEN)}$\n?", "", source,
                  flags=re.MULTILINE | re.DOTALL).strip()


def _exercise_of(grade_id: str) -> str:
    m = re.fullmatch(r"ex(\d+)_(\d+)_test", grade_id)
    return f"{m[1]}.{m[2]}" if m else grade_id


def _tampered_source(exercise: str, reason: str) -> str:
    return f'from pe_helpers.grading import tampered\n\ntampered("{exercise}", "{reason}")'


def _strict_overwrite_cells() -> type:
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import OverwriteCells

    class StrictOverwriteCells(OverwriteCells):
        """nbgrader's :class:`~nbgrader.preprocessors.OverwriteCells`, except that a test cell the student
        edited, deleted, or whose nbgrader metadata changed, scores 0 with a line saying so (its source becomes a
        call of :func:`tampered`) instead of being silently restored. Checksums and locked cells are nbgrader's."""

        def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
            nb, resources = super().preprocess(nb, resources)
            with Gradebook(resources["nbgrader"]["db_url"]) as gb:
                source_nb = gb.find_notebook(resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"])
                tests = [(c.name, c.max_score) for c in source_nb.grade_cells if c.name.endswith("_test")]
            present = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
            for name, points in tests:
                if name in present:
                    continue
                exercise = _exercise_of(name)
                cell = nbformat.v4.new_code_cell(_tampered_source(exercise, "deleted"))
                cell.metadata["nbgrader"] = _nbgrader(name, grade=True, solution=False, locked=True, points=points)
                after = next((i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id")
                              == _grade_id(exercise, "solution")), len(nb.cells) - 1)
                nb.cells.insert(after + 1, cell)
                self.log.warning("Test cell %s was deleted: it scores 0", name)
            return nb, resources

        def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
            reason = self._tampering(cell)
            if reason:  # the flags first: nbgrader's checksum covers them, and would not match after restoring
                grade_id = cell.metadata["nbgrader"]["grade_id"]
                graded_cell = self.gradebook.find_graded_cell(grade_id, self.notebook_id, self.assignment_id)
                cell.metadata["nbgrader"].update(_nbgrader(grade_id, grade=True, solution=False, locked=True,
                                                           points=graded_cell.max_score))
                self.update_cell_type(cell, "code")
            cell, resources = super().preprocess_cell(cell, resources, index)
            if reason:
                cell.source = _tampered_source(_exercise_of(cell.metadata["nbgrader"]["grade_id"]), reason)
                cell.outputs, cell.execution_count = [], None
                self.log.warning("Test cell %s scores 0: %s", cell.metadata["nbgrader"]["grade_id"],
                                 {"edited": "edited", "metadata": "its metadata changed"}[reason])
            return cell, resources

        def _tampering(self, cell: NotebookNode) -> str | None:
            meta = cell.metadata.get("nbgrader", {})
            grade_id = meta.get("grade_id")
            if not (isinstance(grade_id, str) and grade_id.endswith("_test")):
                return None
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
                graded_cell = self.gradebook.find_graded_cell(grade_id, self.notebook_id, self.assignment_id)
            except Exception:  # noqa: BLE001 - MissingEntry: not a cell of this assignment (nbgrader drops the id)
                return None
            expected = {"grade": True, "solution": False, "locked": True, "task": False}
            try:
                points_changed = float(meta.get("points")) != float(graded_cell.max_score)
            except (TypeError, ValueError):
                points_changed = True
            if (cell.cell_type != "code" or points_changed
                    or any(meta.get(key, False) != value for key, value in expected.items())):
                return "metadata"
            if cell.source.strip() != _released_source(source.source):
                return "edited"
            return None

    return StrictOverwriteCells


def __getattr__(name: str) -> Any:  # PEP 562: the preprocessor needs nbgrader, imported only when grading
    if name == "StrictOverwriteCells":
        cls = _strict_overwrite_cells()
        globals()[name] = cls
        return cls
    raise AttributeError(name)


# --- export: the gradebook as a table and one page per student -------------------------------------------

@dataclass(frozen=True)
class ExerciseGrade:
    """One student's score on one exercise of one assignment, and the test cell's one line of feedback."""

    student: str
    assignment: str
    exercise: str
    score: float
    max_score: float
    feedback: str


def _feedback_line(course: Path, student: str, assignment: str, notebook: str, grade_id: str) -> str:
    """The one line the test cell printed in the autograded notebook (the checker's, or why it scored 0)."""
    path = course / "autograded" / student / assignment / f"{notebook}.ipynb"
    if not path.is_file():  # nbgrader could not run it through: the submission's kernel died
        return _("[NOT YET] {assignment}: the notebook could not be run to its end (its kernel stopped, e.g. os._exit "
                 "at the top of a cell), so no exercise of it was graded.").format(assignment=assignment)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") != grade_id:
            continue
        texts = []
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                texts.append(output.text)
            elif output.output_type == "error":
                texts.append("\n".join(output.traceback) or f"{output.ename}: {output.evalue}")
        text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(texts)).strip()
        return text.splitlines()[-1] if text else ""
    return ""


def gradebook_grades(course: Path | str = REPO / "build" / "course") -> list[ExerciseGrade]:
    """Every autograded test cell of every submission in the course's gradebook (``gradebook.db``)."""
    from nbgrader.api import Gradebook

    course = Path(course)
    db = course / "gradebook.db"
    if not db.is_file():
        raise FileNotFoundError(_("no gradebook at {path}: run `nbgrader autograde` (make grade) first.")
                                .format(path=db))
    grades = []
    with Gradebook(f"sqlite:///{db}", COURSE_ID) as gb:
        for assignment in gb.assignments:
            for submission in gb.assignment_submissions(assignment.name):
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if not grade.name.endswith("_test"):
                            continue
                        grades.append(ExerciseGrade(
                            submission.student.id, assignment.name, _exercise_of(grade.name),
                            float(grade.score or 0), float(grade.max_score),
                            _feedback_line(course, submission.student.id, assignment.name, notebook.name,
                                           grade.name)))
    return grades


def _exercise_key(exercise: str) -> tuple[int, ...]:
    return tuple(int(p) for p in exercise.split("."))


def write_grades_csv(grades: Iterable[ExerciseGrade], path: Path | str) -> Path:
    """``student, 1.1, 1.2, …, total, max``: one row per student, an exercise's best score over the languages
    it was submitted in (empty: not submitted)."""
    grades = list(grades)
    exercises = sorted({g.exercise for g in grades}, key=_exercise_key)
    best: dict[tuple[str, str], ExerciseGrade] = {}
    for g in grades:
        key = (g.student, g.exercise)
        if key not in best or g.score > best[key].score:
            best[key] = g
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["student", *exercises, "total", "max"])
        for student in sorted({g.student for g in grades}):
            mine = [best.get((student, e)) for e in exercises]
            out.writerow([student, *("" if g is None else f"{g.score:g}" for g in mine),
                          f"{sum(g.score for g in mine if g):g}", f"{sum(g.max_score for g in mine if g):g}"])
    return path


def write_feedback_html(grades: Iterable[ExerciseGrade], folder: Path | str) -> list[Path]:
    """``folder/<student>.html``: every exercise the student submitted, its score and the test's one line."""
    by_student: dict[str, list[ExerciseGrade]] = {}
    for g in grades:
        by_student.setdefault(g.student, []).append(g)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for student, mine in sorted(by_student.items()):
        mine.sort(key=lambda g: (_exercise_key(g.exercise), g.assignment))
        rows = "\n".join(
            f"<tr><td>{html.escape(g.assignment)}</td><td>{html.escape(g.exercise)}</td>"
            f"<td>{g.score:g} / {g.max_score:g}</td><td>{html.escape(g.feedback)}</td></tr>" for g in mine)
        total, most = sum(g.score for g in mine), sum(g.max_score for g in mine)
        title = html.escape(_("Feedback for {student}").format(student=student))
        summary = html.escape(_("Total: {total:g} of {most:g} points.").format(total=total, most=most))
        heads = "".join(f"<th>{html.escape(h)}</th>" for h in (_("Assignment"), _("Exercise"), _("Points"),
                                                               _("Feedback")))
        page = (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
                "<style>body{font-family:sans-serif;margin:2em}td,th{border-bottom:1px solid #ccc;padding:.3em .6em;"
                "text-align:left;vertical-align:top}</style></head><body>\n"
                f"<h1>{title}</h1>\n<p>{summary}</p>\n<table><tr>{heads}</tr>\n{rows}\n</table></body></html>\n")
        path = folder / f"{student}.html"
        path.write_text(page, encoding="utf-8")
        written.append(path)
    return written


def export(course: Path | str = REPO / "build" / "course",
           out: Path | str = REPO / "build" / "grades") -> tuple[Path, list[Path]]:
    """``out/grades.csv`` and ``out/feedback/<student>.html`` from the course's gradebook."""
    grades = gradebook_grades(course)
    return write_grades_csv(grades, Path(out) / "grades.csv"), write_feedback_html(grades, Path(out) / "feedback")


def released_assignments(exchange: Path | str) -> list[str]:
    """The assignments released to the exchange (``nbgrader release_assignment``), in order."""
    outbound = Path(exchange) / COURSE_ID / "outbound"
    return sorted(p.name for p in outbound.iterdir() if p.is_dir()) if outbound.is_dir() else []


def _nbgrader_env() -> dict[str, str]:
    """The environment for nbgrader's commands: they run alembic, installed beside the Python that runs them."""
    import os

    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def release(course: Path | str, assignments: Sequence[str], nbgrader: Sequence[str] = ("nbgrader",)) -> list[str]:
    """nbgrader's ``generate_assignment`` and ``release_assignment`` for each of ``assignments``, in the course
    directory: the student version (solutions and hidden tests removed, checksums added) goes to the exchange."""
    if not assignments:
        raise ValueError(_("name the assignments to release, e.g. nb03 nb03_zh."))
    known = {p.name for p in (Path(course) / "source").iterdir()} if (Path(course) / "source").is_dir() else set()
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise ValueError(_("no assignment {names} in {course}/source (make assignments writes them): the course has "
                           "{known}.").format(names=", ".join(unknown), course=course, known=", ".join(sorted(known))))
    for name in assignments:
        # --force: a release after changing the notebooks replaces the old student version
        subprocess.run([*nbgrader, "generate_assignment", name, "--force"], cwd=course, env=_nbgrader_env(), check=True)
        subprocess.run([*nbgrader, "release_assignment", name, "--force"], cwd=course, env=_nbgrader_env(), check=True)
    return list(assignments)


def grade(course: Path | str, exchange: Path | str, assignments: Sequence[str] = (),
          nbgrader: Sequence[str] = ("nbgrader",)) -> list[str]:
    """nbgrader's own commands, in the course directory, for each released assignment (or ``assignments``):
    ``collect``, ``autograde``, ``generate_feedback``, ``release_feedback``. Returns the assignments graded."""
    names = list(assignments) or released_assignments(exchange)
    if not names:
        raise FileNotFoundError(_("no assignment was released to {path}: run `nbgrader release_assignment "
                                  "<assignment>` in the course directory first.").format(path=exchange))
    env = _nbgrader_env()
    for name in names:
        for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
            # autograde exits non-zero when one submission could not be graded; the others are graded all the same
            subprocess.run([*nbgrader, step, name], cwd=course, env=env,
                           check=step not in ("autograde", "generate_feedback"))
    return names


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pe_helpers.grading assignments|export [--course build/course] ...``."""
    parser = argparse.ArgumentParser(prog="python -m pe_helpers.grading", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("assignments", help="write the nbgrader course directory from the notebooks")
    build.add_argument("--src", default=str(REPO / "notebooks"))
    build.add_argument("--course", default=str(REPO / "build" / "course"))
    build.add_argument("--exchange", default=str(REPO / "build" / "hub" / "exchange"),
                       help="nbgrader's exchange folder, shared with the hub (default: build/hub/exchange)")
    step = sub.add_parser("release", help="generate_assignment and release_assignment: the students can fetch it")
    step.add_argument("--course", default=str(REPO / "build" / "course"))
    step.add_argument("assignments", nargs="*", help="e.g. nb03 nb03_zh")
    for command, text in (("grade", "collect, autograde and return feedback with nbgrader, then export"),
                          ("export", "grades.csv and one feedback page per student, from the gradebook")):
        step = sub.add_parser(command, help=text)
        step.add_argument("--course", default=str(REPO / "build" / "course"))
        step.add_argument("--out", default=str(REPO / "build" / "grades"))
        step.add_argument("--lang", default="en", choices=("en", "zh"),
                          help="language of the feedback pages' headings")
        if command == "grade":
            step.add_argument("--exchange", default=str(REPO / "build" / "hub" / "exchange"))
            step.add_argument("assignments", nargs="*", help="default: every released assignment")
    args = parser.parse_args(argv)
    try:
        if args.command == "assignments":
            written = write_course(args.src, args.course, args.exchange)
            names = sorted({p.parent.name for p in written})
            print(f"course in {args.course}/: {len(names)} assignments ({', '.join(names)}); next: "
                  "make release ASSIGNMENTS=<assignment>")
        elif args.command == "release":
            names = release(args.course, args.assignments, nbgrader=(sys.executable, "-m", "nbgrader"))
            print(f"released: {', '.join(names)}")
        else:
            if args.command == "grade":
                names = grade(args.course, args.exchange, args.assignments,
                              nbgrader=(sys.executable, "-m", "nbgrader"))
                print(f"graded: {', '.join(names)}")
            set_language(args.lang)
            table, pages = export(args.course, args.out)
            print(f"grades: {table}; feedback: {len(pages)} pages in {Path(args.out) / 'feedback'}/")
    except (StudentEditionError, FileNotFoundError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
