"""The exercise convention of notebooks 01-06, and the student edition built from them.

Static part (no kernel): every numbered notebook exists and has >= 2 exercises, each a heading
``### Exercise N.M · title (★☆☆ easy · ~5 min)``, a hidden solution cell tagged ``solution`` with
``pe_exercise`` metadata, and after it (normally right after; a prediction is checked after the
experiment) a check cell ``assert check_xxx(fn)`` whose checker exists in :mod:`pe_helpers.checks` and
whose stored output is ``[PASS]``. The student edition turns
every solution into signature + docstring + ``raise NotImplementedError``, drops the ``assert`` of
every check, clears all outputs, and is idempotent; convention errors name the notebook and cell.

Executed part (one kernel per notebook): each student notebook runs without error up to its first
solution cell; the first exercise's stub and check cell then print the friendly "not implemented
yet" line, no traceback. The other exercises' stubs and checks run in the same kernel too.
"""

from __future__ import annotations

import ast
import copy
import inspect
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

import pe_helpers.checks as checks
from pe_helpers.student import (
    EXERCISE_HEADING,
    EXERCISE_HEADING_ZH,
    StudentEditionError,
    build_student_edition,
    main,
    student_notebook,
    stub_source,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
NUMBERS = ("01", "02", "03", "04", "05", "06")
CHECK_SOURCE = re.compile(r"^assert (check_\w+)\((\w+)\)$")
ANY_HEADING = re.compile(r"^###\s+Exercise\b.*$", re.MULTILINE)
#: Checkers of a prediction: their verdict is "[RECORDED]", never "[PASS]".
PREDICTION_CHECKERS = {"check_extrapolation_prediction"}


def _source_path(number: str) -> Path | None:
    found = sorted(NOTEBOOKS.glob(f"{number}_*.ipynb"))
    return found[0] if found else None


def _require(number: str) -> Path:
    path = _source_path(number)
    if path is None:
        pytest.skip(f"notebook {number} is missing (test_numbered_notebook_exists fails for it)")
    return path


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _tags(cell) -> list[str]:
    return list(cell.metadata.get("tags", []))


def _solution_indices(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if "solution" in _tags(c)]


def _check_of(nb) -> dict[int, int | None]:
    """Solution cell index -> index of its check cell: the first cell tagged 'check' after it, before the
    next solution. Usually the very next cell; a prediction exercise (05) checks only after the experiment."""
    solutions = _solution_indices(nb)
    found: dict[int, int | None] = {}
    for n, i in enumerate(solutions):
        stop = solutions[n + 1] if n + 1 < len(solutions) else len(nb.cells)
        found[i] = next((j for j in range(i + 1, stop) if "check" in _tags(nb.cells[j])), None)
    return found


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append("\n".join(out.traceback) + f"{out.ename}: {out.evalue}")
        else:
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def _code_without_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


# --- the source notebooks follow the convention ---------------------------------------------------

@pytest.mark.parametrize("number", NUMBERS)
def test_numbered_notebook_exists(number: str) -> None:
    assert _source_path(number) is not None, (
        f"notebooks/{number}_*.ipynb is missing: notebooks 01-06 each need >= 2 exercises")


@pytest.mark.parametrize("number", NUMBERS)
def test_notebook_follows_the_exercise_convention(number: str) -> None:
    path = _require(number)
    nb = _read(path)
    where = lambda i: f"{path.name}, cell {i + 1} (id {nb.cells[i].get('id')})"  # noqa: E731
    solutions = _solution_indices(nb)
    assert len(solutions) >= 2, f"{path.name} has {len(solutions)} solution cell(s); it needs at least 2 exercises"
    check_of = _check_of(nb)

    seen: set[str] = set()
    solution_names: set[str] = set()
    for i in solutions:
        cell = nb.cells[i]
        assert cell.cell_type == "code", f"{where(i)} is tagged 'solution' but is {cell.cell_type}"
        ex = cell.metadata.get("pe_exercise")
        assert isinstance(ex, str) and re.fullmatch(rf"{int(number)}\.\d+", ex), (
            f"{where(i)}: metadata pe_exercise must be \"{int(number)}.M\", got {ex!r}")
        assert ex not in seen, f"{where(i)}: exercise {ex} appears twice"
        seen.add(ex)
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, (
            f"{where(i)} (Exercise {ex}): the solution must be hidden: metadata jupyter.source_hidden = true")

        # the nearest exercise heading above the solution is this exercise's, in the full format
        headings = [(j, m) for j in range(i - 1, -1, -1) if nb.cells[j].cell_type == "markdown"
                    for m in reversed(ANY_HEADING.findall(nb.cells[j].source))]
        assert headings, f"{where(i)} (Exercise {ex}): no '### Exercise {ex} · ...' heading above the solution"
        j, line = headings[0]
        assert not any(k in solutions for k in range(j + 1, i)), f"{where(i)}: another solution between heading and it"
        m = EXERCISE_HEADING.fullmatch(line.strip())
        assert m and m["number"] == ex, (
            f"{where(j)}: the heading above Exercise {ex} is {line.strip()!r}; expected "
            f"'### Exercise {ex} · <title> (★☆☆ easy · ~K min)' (★★☆ medium, ★★★ hard)")
        stars = {"easy": "★☆☆", "medium": "★★☆", "hard": "★★★"}[m["level"]]
        assert m["stars"] == stars, f"{where(j)}: {m['level']} is rated {stars}, not {m['stars']}"

        # the solution is imports + documented defs only
        tree = ast.parse(cell.source)
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        others = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef))]
        assert defs and not others, (
            f"{where(i)} (Exercise {ex}): a solution cell holds only imports and top-level defs; found "
            f"{[type(n).__name__ for n in others] or 'no def'}")
        for d in defs:
            assert ast.get_docstring(d), f"{where(i)} (Exercise {ex}): def {d.name} needs a docstring (the stub keeps it)"
        names = {d.name for d in defs}
        solution_names |= names

        # its check cell (normally right after it): an existing checker called on a function of this solution
        c = check_of[i]
        assert c is not None, f"{where(i)}: no cell tagged 'check' follows solution {ex} before the next exercise"
        check = nb.cells[c]
        assert check.cell_type == "code", f"{where(c)} is tagged 'check' but is {check.cell_type}"
        cm = CHECK_SOURCE.match(check.source.strip())
        assert cm, f"{where(c)}: a check cell is exactly `assert check_xxx(my_fn)`, got {check.source.strip()!r}"
        checker, fn_name = cm.groups()
        assert callable(getattr(checks, checker, None)), f"{where(c)}: pe_helpers.checks has no {checker}"
        assert "quiet" in inspect.signature(getattr(checks, checker)).parameters, f"{checker} needs quiet="
        assert fn_name in names, f"{where(c)}: {fn_name} is not defined by solution {ex} ({sorted(names)})"
        stored = _text(check)
        verdict = "[RECORDED]" if checker in PREDICTION_CHECKERS else "[PASS]"  # a prediction is never scored
        assert stored.startswith(verdict) and stored.count("\n") == 1 and "Traceback" not in stored, (
            f"{where(c)}: the committed output of {checker} on the solution should be one '{verdict} ...' line, "
            f"got {stored[:120]!r}")

    # no orphan checks, no heading without a solution, no ordinary cell using a solution's function
    for i, cell in enumerate(nb.cells):
        if "check" in _tags(cell):
            assert i in check_of.values(), f"{where(i)}: a check cell must follow a solution cell (no orphan checks)"
        if cell.cell_type == "markdown":
            for line in ANY_HEADING.findall(cell.source):
                m = EXERCISE_HEADING.fullmatch(line.strip())
                assert m and m["number"] in seen, f"{where(i)}: heading {line.strip()!r} has no matching solution cell"
        if cell.cell_type == "code" and not {"solution", "check"} & set(_tags(cell)):
            tree = ast.parse(_code_without_magics(cell.source))
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            assert not used & solution_names, (
                f"{where(i)} uses {sorted(used & solution_names)} from a solution cell: in the student edition "
                "that is a stub, so 'Run all' would fail there")


# --- the student edition --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def student_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    assert main(["--src", str(NOTEBOOKS), "--out", str(out)]) == 0
    return out


def test_student_edition_has_every_notebook_and_is_idempotent(student_dir: Path, tmp_path: Path) -> None:
    sources = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert sorted(p.name for p in student_dir.glob("*.ipynb")) == sources
    before = {p.name: p.read_bytes() for p in student_dir.glob("*.ipynb")}
    build_student_edition(NOTEBOOKS, student_dir)  # rebuild in place: same bytes
    assert {p.name: p.read_bytes() for p in student_dir.glob("*.ipynb")} == before
    build_student_edition(student_dir, tmp_path)  # the student edition of the student edition is itself
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.ipynb")} == before


def test_student_edition_strips_answers_and_outputs(student_dir: Path) -> None:
    for src_path in sorted(NOTEBOOKS.glob("*.ipynb")):
        src, stu = _read(src_path), _read(student_dir / src_path.name)
        assert len(src.cells) == len(stu.cells), src_path.name
        for i, (a, b) in enumerate(zip(src.cells, stu.cells)):
            where = f"{src_path.name}, cell {i + 1}"
            if b.cell_type == "code":
                assert b.outputs == [] and b.execution_count is None, f"{where}: outputs not cleared"
            tags = _tags(a)
            if "solution" in tags:
                ex = a.metadata["pe_exercise"]
                assert b.metadata.get("pe_exercise") == ex and "solution" in _tags(b), where
                assert not b.metadata.get("jupyter", {}).get("source_hidden"), f"{where}: stub still hidden"
                old = {n.name: n for n in ast.parse(a.source).body if isinstance(n, ast.FunctionDef)}
                new = {n.name: n for n in ast.parse(b.source).body if isinstance(n, ast.FunctionDef)}
                assert old.keys() == new.keys(), where
                for name, fn in new.items():
                    assert ast.dump(fn.args) == ast.dump(old[name].args), f"{where}: signature of {name} changed"
                    assert ast.get_docstring(fn) == ast.get_docstring(old[name]), f"{where}: docstring of {name}"
                    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                    assert len(body) == 1 and isinstance(body[0], ast.Raise), f"{where}: {name} still has a body"
                    message = body[0].exc.args[0].value
                    assert body[0].exc.func.id == "NotImplementedError" and message.startswith(f"Exercise {ex}: "), (
                        f"{where}: {message!r}")
                imports = [ast.dump(n) for n in ast.parse(a.source).body if isinstance(n, (ast.Import, ast.ImportFrom))]
                assert imports == [ast.dump(n) for n in ast.parse(b.source).body
                                   if isinstance(n, (ast.Import, ast.ImportFrom))], f"{where}: imports changed"
            elif "check" in tags:
                assert b.source == a.source.strip().removeprefix("assert ") + ";", f"{where}: {b.source!r}"
            else:
                assert b.source == a.source, f"{where}: an ordinary cell changed"


def test_stub_source_keeps_signature_docstring_and_imports() -> None:
    source = ('import math\n\n\ndef f(\n    x: int,\n) -> int:\n    """Twice x."""\n    # secret\n'
              '    return 2 * x\n    # trailing secret\n\n\ndef g(y):\n    # hint\n    return y\n')
    stub = stub_source(source, "7.1", "Doubling")
    assert stub == ('import math\n\n\ndef f(\n    x: int,\n) -> int:\n    """Twice x."""\n'
                    '    raise NotImplementedError("Exercise 7.1: write f (Doubling)")\n\n\n'
                    'def g(y):\n    raise NotImplementedError("Exercise 7.1: write g (Doubling)")')
    assert "secret" not in stub and "hint" not in stub and "return" not in stub
    assert stub_source(stub, "7.1", "Doubling") == stub  # idempotent


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


@pytest.mark.parametrize("number", NUMBERS)
def test_the_chinese_student_edition_stubs_every_solution_with_its_chinese_title(number: str, tmp_path: Path) -> None:
    """``make student LANG=zh``: the Chinese notebooks' solutions become stubs named by their 练习 headings."""
    english = _read(_require(number))
    chinese_path = NOTEBOOKS / "zh" / _require(number).name
    chinese = _read(chinese_path)
    headings = {m["number"]: m["title"] for c in chinese.cells if c.cell_type == "markdown"
                for m in EXERCISE_HEADING_ZH.finditer(c.source)}
    solutions = [c.metadata["pe_exercise"] for c in english.cells if "solution" in _tags(c)]
    assert solutions and set(solutions) <= set(headings), (
        f"{chinese_path.name}: exercises {sorted(set(solutions) - set(headings))} have no "
        "'### 练习 N.M · 标题（★☆☆ 简单 · 约 K 分钟）' heading")
    stubbed = student_notebook(chinese, f"zh/{chinese_path.name}")
    stubs = [c for c in stubbed.cells if "solution" in _tags(c)]
    assert [c.metadata["pe_exercise"] for c in stubs] == solutions
    for cell in stubs:
        ex = cell.metadata["pe_exercise"]
        for fn in (n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)):
            raises = [s for s in fn.body if isinstance(s, ast.Raise)]
            assert len(raises) == 1 and raises[0].exc.func.id == "NotImplementedError", f"{ex}: {fn.name} kept its body"
            message = raises[0].exc.args[0].value
            assert message == f"练习 {ex}：写出 {fn.name}（{headings[ex]}）" and _cjk(headings[ex]), message
    assert student_notebook(stubbed, f"zh/{chinese_path.name}").cells == stubbed.cells  # idempotent


def test_chinese_headings_and_stub_messages() -> None:
    heading = "### 练习 7.1 · 加倍（★★☆ 中等 · 约 10 分钟）"
    m = EXERCISE_HEADING_ZH.fullmatch(heading)
    assert m and (m["number"], m["title"], m["level"], m["minutes"]) == ("7.1", "加倍", "中等", "10")
    assert EXERCISE_HEADING_ZH.fullmatch("### 练习 7.1 · 加倍（★★☆ easy · ~10 min）") is None
    source = 'def f(x):\n    """Twice x."""\n    return 2 * x\n'
    assert stub_source(source, "7.1", "加倍", lang="zh").endswith('raise NotImplementedError("练习 7.1：写出 f（加倍）")')
    with pytest.raises(ValueError, match="lang must be one of 'en', 'zh', got 'fr'"):
        stub_source(source, "7.1", lang="fr")
    nb = _tiny_notebook(nbformat.v4.new_markdown_cell(heading), _solution(source), _check("assert check_x(f)"))
    english = student_notebook(nb, "07_x.ipynb").cells[1].source
    assert 'NotImplementedError("Exercise 7.1: write f (加倍)")' in english  # no language cell: English messages
    language = nbformat.v4.new_code_cell('import pe_helpers\n\npe_helpers.set_language("zh")')
    language.metadata["tags"] = ["language"]
    nb.cells.insert(0, language)
    assert 'NotImplementedError("练习 7.1：写出 f（加倍）")' in student_notebook(nb, "07_x.ipynb").cells[2].source


def _tiny_notebook(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    return nb


def _solution(source: str, ex: str = "7.1") -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata.update({"tags": ["solution"], "pe_exercise": ex, "jupyter": {"source_hidden": True}})
    return cell


def _check(source: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["check"]
    return cell


@pytest.mark.parametrize(("cells", "expected"), [
    ([_solution("import torch\n"), _check("assert check_x(f)")], r"07_bad\.ipynb, cell 1\b.*defines no function"),
    ([_solution("X = 3\n\ndef f():\n    '''Doc.'''\n    return X\n"), _check("assert check_x(f)")],
     r"07_bad\.ipynb, cell 1\b.*line 1 is a top-level Assign"),
    ([_solution("def f(): return 1\n"), _check("assert check_x(f)")], r"cell 1\b.*own lines"),
    ([_solution("def f(:\n"), _check("assert check_x(f)")], r"cell 1\b.*does not parse"),
    ([_solution("def f():\n    '''D.'''\n    return 1\n", ex="seven"), _check("assert check_x(f)")],
     r"cell 1\b.*pe_exercise"),
    ([_solution("def f():\n    '''D.'''\n    return 1\n"), _check("print(check_x(f))")], r"cell 2\b.*assert check_xxx"),
    ([nbformat.v4.new_markdown_cell("# no exercise"), nbformat.v4.new_code_cell("1 + 1")],
     r"07_bad\.ipynb: no exercise found"),
])
def test_convention_errors_name_the_notebook_and_cell(cells, expected: str, tmp_path: Path, capsys) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    nbformat.write(_tiny_notebook(*copy.deepcopy(cells)), src / "07_bad.ipynb")
    nbformat.write(_tiny_notebook(nbformat.v4.new_markdown_cell("# intro")), src / "00_intro.ipynb")  # exempt
    with pytest.raises(StudentEditionError, match=expected):
        build_student_edition(src, out)
    assert not out.exists(), "nothing may be written when a notebook breaks the convention"
    assert main(["--src", str(src), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "07_bad.ipynb" in err and "Traceback" not in err


def test_exempt_intro_and_bad_arguments(tmp_path: Path) -> None:
    intro = _tiny_notebook(nbformat.v4.new_markdown_cell("# start"), nbformat.v4.new_code_cell("print(1)"))
    out = student_notebook(intro, "notebooks/00_start_here.ipynb")
    assert out.metadata["pe_edition"] == "student"
    with pytest.raises(StudentEditionError, match="no exercise found"):
        student_notebook(intro, "notebooks/05_limits.ipynb")
    with pytest.raises(StudentEditionError, match="is not a directory"):
        build_student_edition(tmp_path / "nope", tmp_path / "out")
    with pytest.raises(StudentEditionError, match="is the source directory"):
        build_student_edition(NOTEBOOKS, NOTEBOOKS)


def test_a_rebuild_never_overwrites_edited_student_notebooks(tmp_path: Path, capsys) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    body = 'def f(x):\n    """Twice x."""\n    return 2 * x\n'
    for name in ("07_mine.ipynb", "08_other.ipynb"):
        nbformat.write(_tiny_notebook(_solution(body), _check("assert check_x(f)")), src / name)
    first = build_student_edition(src, out)
    assert [p.name for p in first.written] == ["07_mine.ipynb", "08_other.ipynb"] and first.kept == []

    answered = _read(out / "07_mine.ipynb")  # a student fills in the stub and saves
    answered.cells[0].source = answered.cells[0].source.replace("raise NotImplementedError(", "return 2 * x  # (")
    nbformat.write(answered, out / "07_mine.ipynb")
    foreign = (out / "08_other.ipynb").read_text().replace('"pe_edition": "student"', '"pe_edition": "mine"')
    (out / "08_other.ipynb").write_text(foreign)  # no longer a generated student edition
    saved = (out / "07_mine.ipynb").read_bytes()
    nbformat.write(_tiny_notebook(_solution(body.replace("Twice", "Double")), _check("assert check_x(f)")),
                   src / "07_mine.ipynb")  # the teacher updates the source

    again = build_student_edition(src, out)
    assert sorted(p.name for p in again.kept) == ["07_mine.ipynb", "08_other.ipynb"]
    assert (out / "07_mine.ipynb").read_bytes() == saved and (out / "08_other.ipynb").read_text() == foreign
    assert main(["--src", str(src), "--out", str(out)]) == 0
    assert "--force" in capsys.readouterr().err
    forced = build_student_edition(src, out, force=True)
    assert forced.kept == [] and "Double x." in (out / "07_mine.ipynb").read_text()

    (src / "08_other.ipynb").unlink()  # a generated, unedited student notebook without a source is removed
    build_student_edition(src, out)
    assert sorted(p.name for p in out.glob("*.ipynb")) == ["07_mine.ipynb"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_student_target_runs_the_generator() -> None:
    dry = subprocess.run(["make", "-n", "student"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "-m pe_helpers.student --src notebooks --out student" in dry.stdout


# --- executing the student edition (one kernel, reset between notebooks) --------------------------

#: First cell of every trial in the shared kernel: nothing of the previous notebook's namespace is left (a missing
#: import still fails), and its figures are closed. Module caches (a training run) may be shared: they only save time.
RESET_CELL = "%reset -f\nimport matplotlib.pyplot as _plt\n_plt.close('all')\ndel _plt"


@pytest.fixture(scope="module")
def student_kernel(student_dir: Path) -> Iterator[object]:
    """One kernel for the seven student notebooks (a kernel start with torch costs seconds on this machine)."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(student_dir), env={**os.environ, "MPLBACKEND": "Agg"})
    try:
        yield km
    finally:
        km.shutdown_kernel(now=True)


@pytest.mark.parametrize("number", NUMBERS)
def test_student_notebook_runs_to_the_first_exercise_and_stubs_say_not_implemented(
        number: str, student_dir: Path, student_kernel: object) -> None:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    name = _require(number).name
    nb = _read(student_dir / name)
    nb.cells.insert(0, nbformat.v4.new_code_cell(RESET_CELL))
    solutions = _solution_indices(nb)
    assert solutions, f"{name}: no exercise in the student edition"
    check_of = _check_of(nb)
    first = solutions[0]
    # as a student runs it: every cell before exercise 1, its stub and its check; then every other stub + check.
    # (A check that comes later, after an experiment, is run right after its stub: the rest is too slow here.)
    run = [*nb.cells[:first]]
    at: dict[int, int] = {}
    for n, i in enumerate(solutions):
        if n == 1:
            run.append(nbformat.v4.new_code_cell("from pe_helpers.checks import *"))
        assert check_of[i] is not None, f"{name}: solution cell {i} has no check cell"  # 1-based: cell 0 is the reset
        at[i] = len(run)
        run += [nb.cells[i], nb.cells[check_of[i]]]
    trial = copy.deepcopy(nb)
    trial.cells = copy.deepcopy(run)
    client = NotebookClient(trial, km=student_kernel, timeout=120, allow_errors=False,
                            resources={"metadata": {"path": str(student_dir)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"student edition of {name} failed before/at its exercises:\n{str(exc)[-1500:]}")

    for index, cell in enumerate(trial.cells[:first]):
        if "raises-exception" not in _tags(cell):
            assert not [o for o in cell.get("outputs", []) if o.output_type == "error"], f"{name}, cell {index} raised"
    for i, k in at.items():
        ex = nb.cells[i].metadata["pe_exercise"]
        stub_out, check_cell = trial.cells[k], trial.cells[k + 1]
        assert stub_out.outputs == [], f"{name}, Exercise {ex}: the stub cell printed {_text(stub_out)!r}"
        text = _text(check_cell)
        where = f"{name}, Exercise {ex} ({check_cell.source})"
        assert "Traceback" not in text and not [o for o in check_cell.outputs if o.output_type == "error"], (
            f"{where}: a traceback reached the student: {text[:300]!r}")
        assert "not implemented yet" in text and text.startswith("[NOT YET]"), f"{where}: {text!r}"
        assert text.count("\n") == 1, f"{where}: the verdict should be printed once, on one line: {text!r}"


# --- the teacher's guide names the real exercises and apps ----------------------------------------

GUIDE = ROOT / "TEACHING.md"
GLOSSARY_TERMS = ("置换等变", "绝对位置编码", "可学习位置向量", "外推", "旋转矩阵", "相对位置编码", "频率", "波长",
                  "注意力", "掩码", "旋转位置编码")


def test_teaching_guide_lists_every_exercise_and_app() -> None:
    from pe_helpers.apps import APPS

    guide = GUIDE.read_text(encoding="utf-8")
    for path in sorted(NOTEBOOKS.glob("0*.ipynb")):
        for cell in _read(path).cells:
            if cell.cell_type != "markdown":
                continue
            for m in EXERCISE_HEADING.finditer(cell.source):
                row = f"| {m['number']} · {m['title']} | {m['stars']} {m['level']} | ~{m['minutes']} min |"
                assert row in guide, f"TEACHING.md's exercise table lacks (or misstates) {row!r} from {path.name}"
    named = set(re.findall(r"`(\w+_app)`", guide))
    assert named <= set(APPS), f"TEACHING.md names apps that do not exist: {sorted(named - set(APPS))}"
    assert set(APPS) <= named, f"TEACHING.md never says when to project {sorted(set(APPS) - named)}"
    sources = "".join(c.source for p in NOTEBOOKS.glob("0*.ipynb") for c in _read(p).cells)
    unused = [a for a in named if f"{a}(" not in sources]
    assert not unused, f"TEACHING.md projects apps that no notebook shows: {unused}"
    glossary = guide.split("## Glossary", 1)[-1]
    missing = [t for t in GLOSSARY_TERMS if t not in glossary]
    assert not missing, f"the glossary lacks {missing}"


# --- a stub states the task, never the answer -----------------------------------------

#: For each exercise, how its answer reads when written out (values, formula, key expression): none may
#: appear in the docstring the student edition keeps. Exercises not listed get the generic checks only.
GIVEAWAYS = {
    "1.1": ("softmax(", "√d", "sqrt"),
    "1.2": ("[perm][:, perm]", "P S Pᵀ", "PSPᵀ", "perm]["),
    "1.3": ("max", "|f(PX) - P f(X)|", "f(x[perm])", "f(x)[perm]"),
    "2.1": ("X + P", "x + table", "P[:n]", "table[:"),
    "2.2": ("‖", "norm", "p_i·p_j"),
    "3.1": ("10000^(", "sin(pos", "2i/d", "**"),
    "3.2": ("d/2", "[0,", "0, 4, 1, 5"),
    "4.1": ("[[cos", "-sin", "cos kω,"),
    "4.2": ("diag(", "[[cos", "-sin", "10000^(-2i/d)"),
    "5.1": ("0.3", "0.2", "0.25"),
    "5.2": ("<= t", "<= 2", "n_b", "2n", "2 n", "2 * n"),
    "6.1": ("a cos", "a·cos", "b sin", "- b"),
    "6.2": ("apply_rope(k", "R_(n-m)", "R_{n-m}", "single rotation"),
    "6.3": ("untouched", "not rotated", "softmax(", "√d"),
}


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _answer_expressions(fn: ast.FunctionDef) -> list[str]:
    """The solution's returned and assigned expressions, as source without spaces (the code of the answer)."""
    found = []
    for node in ast.walk(fn):
        value = node.value if isinstance(node, (ast.Return, ast.Assign)) else None
        if value is not None and not isinstance(value, ast.Constant):
            found.append(_compact(ast.unparse(value)))
    return [e for e in found if len(e) >= 6]


@pytest.mark.parametrize("number", NUMBERS)
def test_no_stub_docstring_gives_the_answer_away(number: str) -> None:
    path = _require(number)
    nb = _read(path)
    stub = student_notebook(nb, path.name)
    for i in _solution_indices(nb):
        ex = nb.cells[i].metadata["pe_exercise"]
        solution = {n.name: n for n in ast.parse(nb.cells[i].source).body if isinstance(n, ast.FunctionDef)}
        for node in ast.parse(stub.cells[i].source).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            doc = ast.get_docstring(node) or ""
            assert doc.strip(), f"{path.name}, Exercise {ex}: the stub of {node.name} has no docstring stating the task"
            for expression in _answer_expressions(solution[node.name]):
                assert expression not in _compact(doc), (
                    f"{path.name}, Exercise {ex}: the docstring of {node.name} holds the solution's code {expression!r}")
            for giveaway in GIVEAWAYS.get(ex, ()):
                assert giveaway not in doc, (
                    f"{path.name}, Exercise {ex}: the docstring of {node.name} gives the answer away ({giveaway!r}): "
                    f"{doc!r}. State the task, not its solution.")


def test_the_giveaway_check_catches_the_old_docstrings() -> None:
    old = {  # docstrings that gave the answer away, one per exercise they named
        "3.2": "Column order with concatenated[:, order] == interleaved: [0, d/2, 1, d/2 + 1, 2, d/2 + 2, ...].",
        "4.1": "The block B = [[cos kω, sin kω], [-sin kω, cos kω]] with B·[sin pω, cos pω] = [sin (p+k)ω, cos (p+k)ω].",
        "4.2": "R(k) = diag(B_0(k), ..., B_{d/2-1}(k)) with B_i = [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]].",
        "5.2": "Return mask[b, t] = (n_b <= t <= 2 n_b - 1): the positions whose next token is a copied token.",
    }
    for ex, doc in old.items():
        assert any(g in doc for g in GIVEAWAYS[ex]), ex
