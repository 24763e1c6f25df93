r"""Write the student edition: every notebook with its exercise solutions replaced by stubs.

``python -m pe_helpers.student [--src notebooks] [--out student]`` (or ``make student``) copies
each notebook of ``--src`` into ``--out`` and, following the exercise convention of the collection:

* every SOLUTION cell (tag ``solution``, metadata ``pe_exercise = "N.M"``) keeps its imports and, for
  each top-level ``def``, the signature and docstring; the body becomes
  ``raise NotImplementedError("Exercise N.M: write <name> (<exercise title>)")``. The cell's source
  is un-hidden (``jupyter.source_hidden`` removed) so the student sees the stub; its other metadata is kept;
* every CHECK cell (tag ``check``, source ``assert check_xxx(my_fn)``) loses its ``assert`` and gets a
  trailing ``;``: on a stub the checker prints one friendly ``[NOT YET] ... not implemented yet`` line
  instead of stopping "Run all" with an ``AssertionError``;
* all outputs and execution counts are cleared, and the per-cell execution timings dropped.

The build is deterministic and idempotent: rebuilding gives the same bytes, and rebuilding from a
student edition gives the student edition again. A student notebook someone has edited since it was
generated (a student's answers) is never overwritten, unless ``--force``.

A notebook that breaks the convention (a solution cell with no ``def``, or with other top-level code;
a notebook other than ``00_*`` with no exercise; a check cell that is not one ``assert check_xxx(...)``)
stops the build with an error naming the notebook and the cell; nothing is written then.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

__all__ = [
    "StudentEditionError",
    "EXEMPT_PREFIXES",
    "SOLUTION_TAG",
    "CHECK_TAG",
    "EXERCISE_HEADING",
    "EXERCISE_HEADING_ZH",
    "StubRegion",
    "stub_regions",
    "stub_source",
    "student_check_source",
    "student_notebook",
    "StudentEdition",
    "build_student_edition",
    "main",
]

SOLUTION_TAG = "solution"
CHECK_TAG = "check"
#: Notebooks whose file name starts with one of these may have no exercise (the introduction).
EXEMPT_PREFIXES: tuple[str, ...] = ("00_",)
#: The Markdown heading of an exercise: ``### Exercise N.M · <title> (★☆☆ easy · ~5 min)``.
EXERCISE_HEADING = re.compile(
    r"^###\s+Exercise\s+(?P<number>\d+\.\d+)\s+·\s+(?P<title>.+?)\s+"
    r"\((?P<stars>★☆☆|★★☆|★★★)\s+(?P<level>easy|medium|hard)\s+·\s+~(?P<minutes>\d+)\s+min\)\s*$",
    re.MULTILINE,
)
#: The same heading in the Chinese edition: ``### 练习 N.M · <标题>（★☆☆ 简单 · 约 5 分钟）``.
EXERCISE_HEADING_ZH = re.compile(
    r"^###\s+练习\s*(?P<number>\d+\.\d+)\s+·\s+(?P<title>.+?)\s*"
    r"[（(](?P<stars>★☆☆|★★☆|★★★)\s+(?P<level>简单|中等|困难)\s+·\s+约\s*(?P<minutes>\d+)\s*分钟[）)]\s*$",
    re.MULTILINE,
)
_ANY_EXERCISE_HEADING = re.compile(r"^###\s+(?:Exercise\s+|练习\s*)(?P<number>\d+\.\d+)(?![\d.])\W*(?P<rest>.*)$",
                                   re.MULTILINE)
#: The stub's message per edition language: ``Exercise N.M: write <name> (<title>)``, ``练习 N.M：写出 <name>（<title>）``.
_STUB_MESSAGE = {"en": ("Exercise {exercise}: write {name}", " ({title})"),
                 "zh": ("练习 {exercise}：写出 {name}", "（{title}）")}
#: The language cell a non-English edition starts with (``pe_helpers.editions.language_cell``).
_SET_LANGUAGE = re.compile(r"""set_language\(\s*["'](?P<lang>[a-z]+)["']\s*\)""")
_CHECK_CALL = re.compile(r"^(?:assert\s+)?(check_\w+\(.*\))\s*;?\s*$", re.DOTALL)
_EDITION_KEY = "pe_edition"
_DIGEST_KEY = "pe_edition_sources"
_ALLOWED_IN_SOLUTION = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)


class StudentEditionError(ValueError):
    """A notebook does not follow the exercise convention; the message names the notebook and the cell."""


@dataclass(frozen=True)
class _Where:
    notebook: str
    index: int  # 0-based cell index
    cell_id: str | None

    def __str__(self) -> str:
        ident = f", id {self.cell_id}" if self.cell_id else ""
        return f"{self.notebook}, cell {self.index + 1}{ident}"


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _raise_line(indent: str, message: str) -> str:
    quoted = message.replace("\\", "\\\\").replace('"', '\\"')
    return f'{indent}raise NotImplementedError("{quoted}")'


@dataclass(frozen=True)
class StubRegion:
    """Lines ``start:end`` (0-based, end exclusive) of a solution cell that its stub replaces by one ``raise`` line.

    The region is a top-level function's body after its signature and docstring; ``stub_line`` is the
    ``raise NotImplementedError("<message>")`` that takes its place, indented as the body (``indent``).
    The nbgrader course (:mod:`pe_helpers.grading`) marks the same regions as solution regions.
    """

    name: str
    start: int
    end: int
    indent: str
    stub_line: str


def stub_regions(source: str, exercise: str, title: str | None = None, *, where: str = "solution cell",
                 lang: str = "en") -> list[StubRegion]:
    """The regions :func:`stub_source` replaces, top to bottom, one per top-level def of ``source``.

    Raises :class:`StudentEditionError` (naming ``where``) if the source does not parse, has no def, has
    top-level code other than imports and defs, or a def whose body is on its ``def`` line.
    """
    if lang not in _STUB_MESSAGE:
        raise ValueError(f"lang must be one of {', '.join(map(repr, _STUB_MESSAGE))}, got {lang!r}.")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise StudentEditionError(f"{where} (Exercise {exercise}): the solution does not parse: {exc.msg} "
                                  f"(line {exc.lineno}).") from None
    for node in tree.body:
        if not isinstance(node, _ALLOWED_IN_SOLUTION):
            raise StudentEditionError(
                f"{where} (Exercise {exercise}): line {node.lineno} is a top-level {type(node).__name__}; a solution "
                "cell may contain only imports and top-level `def` functions (with docstrings), so the stub "
                "reveals nothing. Move other code into the function or into an ordinary cell.")
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        raise StudentEditionError(f"{where} (Exercise {exercise}): the solution cell defines no function; it must "
                                  "contain at least one top-level `def` for the student to write.")
    lines = source.splitlines()
    regions = []
    for node in defs:
        body = node.body
        head, tail = _STUB_MESSAGE[lang]
        message = head.format(exercise=exercise, name=node.name) + (tail.format(title=title) if title else "")
        if body[0].lineno == node.lineno:
            raise StudentEditionError(f"{where} (Exercise {exercise}): put the body of {node.name} on its own lines "
                                      "(not on the `def` line), so it can be replaced by a stub.")
        indent = " " * body[0].col_offset
        if _is_docstring(body[0]):
            keep_until = body[0].end_lineno  # 1-based, inclusive
        else:
            keep_until = body[0].lineno - 1
            while keep_until > node.lineno and lines[keep_until - 1].strip().startswith("#"):
                keep_until -= 1  # comments just above the first statement belong to the body
        end = node.end_lineno
        # indented comment lines right after the last statement still belong to the body
        while end < len(lines) and lines[end].startswith((" ", "\t")) and lines[end].strip().startswith("#"):
            end += 1
        regions.append(StubRegion(node.name, keep_until, end, indent, _raise_line(indent, message)))
    return regions


def stub_source(source: str, exercise: str, title: str | None = None, *, where: str = "solution cell",
                lang: str = "en") -> str:
    """The solution ``source`` with every top-level def reduced to signature + docstring + ``raise NotImplementedError``.

    Imports and comments outside the functions are kept. ``exercise`` is ``"N.M"``; the stub's message
    reads ``"Exercise N.M: write <name> (<title>)"``, or in the Chinese edition (``lang="zh"``)
    ``"练习 N.M：写出 <name>（<title>）"``. Raises :class:`StudentEditionError` (naming
    ``where``) if the source does not parse, has no def, or has top-level code other than imports and defs
    (:func:`stub_regions`).
    """
    lines = source.splitlines()
    for region in reversed(stub_regions(source, exercise, title, where=where, lang=lang)):  # bottom-up
        lines[region.start:region.end] = [region.stub_line]
    stub = "\n".join(lines)
    ast.parse(stub)  # the stub must itself be valid Python
    return stub


def student_check_source(source: str, *, where: str = "check cell") -> str:
    """``assert check_xxx(my_fn)`` becomes ``check_xxx(my_fn);`` (prints the verdict once, never raises)."""
    match = _CHECK_CALL.match(source.strip())
    if not match:
        raise StudentEditionError(f"{where}: a check cell must be exactly `assert check_xxx(my_fn)`, got "
                                  f"{source.strip()[:80]!r}.")
    return match.group(1) + ";"


def _titles(nb: NotebookNode) -> dict[str, str]:
    """Exercise number -> title, from the ``### Exercise N.M · title (...)`` headings (or ``### 练习 N.M · 标题（…）``)."""
    found: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for heading in (EXERCISE_HEADING, EXERCISE_HEADING_ZH):
            for m in heading.finditer(cell.source):
                found.setdefault(m["number"], m["title"])
        for m in _ANY_EXERCISE_HEADING.finditer(cell.source):  # a heading off the pattern still names the task
            found.setdefault(m["number"], re.split(r"\s[(（]|[（]", m["rest"])[0].strip() or None)
    return {k: v for k, v in found.items() if v}


def _language(nb: NotebookNode) -> str:
    """The edition's language: the one its language cell switches to (tag ``language``), else English."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "language" in cell.metadata.get("tags", []):
            m = _SET_LANGUAGE.search(cell.source)
            if m and m["lang"] in _STUB_MESSAGE:
                return m["lang"]
    return "en"


def _clear_outputs(cell: NotebookNode) -> None:
    cell.metadata.pop("execution", None)  # timings of the run whose outputs we drop
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None


def _unhide(cell: NotebookNode) -> None:
    jup = cell.metadata.get("jupyter")
    if isinstance(jup, dict):
        jup.pop("source_hidden", None)
        if not jup:
            del cell.metadata["jupyter"]


def student_notebook(nb: NotebookNode, name: str) -> NotebookNode:
    """The student edition of notebook ``nb`` (``name`` is used in error messages). ``nb`` is not modified."""
    out = copy.deepcopy(nb)
    titles = _titles(out)
    lang = _language(out)
    exercises = 0
    for index, cell in enumerate(out.cells):
        where = _Where(name, index, cell.get("id"))
        tags = cell.metadata.get("tags", [])
        if SOLUTION_TAG in tags:
            if cell.cell_type != "code":
                raise StudentEditionError(f"{where}: tagged {SOLUTION_TAG!r} but is a {cell.cell_type} cell.")
            exercise = cell.metadata.get("pe_exercise")
            if not isinstance(exercise, str) or not re.fullmatch(r"\d+\.\d+", exercise):
                raise StudentEditionError(f"{where}: a solution cell needs metadata pe_exercise = \"N.M\" "
                                          f"(e.g. \"3.1\"), got {exercise!r}.")
            cell.source = stub_source(cell.source, exercise, titles.get(exercise), where=str(where), lang=lang)
            _unhide(cell)
            exercises += 1
        elif CHECK_TAG in tags:
            if cell.cell_type != "code":
                raise StudentEditionError(f"{where}: tagged {CHECK_TAG!r} but is a {cell.cell_type} cell.")
            cell.source = student_check_source(cell.source, where=str(where))
        _clear_outputs(cell)
    if exercises == 0 and not Path(name).name.startswith(EXEMPT_PREFIXES):
        raise StudentEditionError(f"{name}: no exercise found (no code cell tagged {SOLUTION_TAG!r}); every notebook "
                                  f"except {', '.join(p + '*' for p in EXEMPT_PREFIXES)} needs at least one.")
    out.metadata[_EDITION_KEY] = "student"
    out.metadata[_DIGEST_KEY] = _sources_digest(out)
    return out


@dataclass(frozen=True)
class StudentEdition:
    """What :func:`build_student_edition` did: notebooks ``written`` (or already up to date), and ``kept``.

    A notebook is *kept* (not overwritten) when the file in ``out`` was edited after it was generated,
    e.g. a student's answers, or is not a student edition at all; ``force=True`` overwrites it anyway.
    """

    written: list[Path]
    kept: list[Path]


def _sources_digest(nb: NotebookNode) -> str:
    """A short hash of every cell's type and source: tells a generated notebook from an edited one."""
    h = hashlib.sha256()
    for cell in nb.cells:
        h.update(cell.cell_type.encode() + b"\0" + cell.source.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


def _generated_and_untouched(path: Path) -> bool:
    """True if ``path`` is a student edition whose cell sources are still as generated."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - unreadable: not ours to overwrite
        return False
    return nb.metadata.get(_EDITION_KEY) == "student" and nb.metadata.get(_DIGEST_KEY) == _sources_digest(nb)


def build_student_edition(src: str | Path = "notebooks", out: str | Path = "student", *,
                          force: bool = False) -> StudentEdition:
    """Write the student edition of every ``src/*.ipynb`` into ``out``.

    Every notebook is converted before anything is written, so a convention error leaves ``out``
    untouched. A file in ``out`` is only overwritten if it is a student edition nobody has edited
    since (its cell sources match the digest stored at generation), unless ``force``: a student's
    answers are never lost to a rebuild. Unedited student notebooks whose source notebook no longer
    exists are removed.
    """
    src, out = Path(src), Path(out)
    if not src.is_dir():
        raise StudentEditionError(f"src={str(src)!r} is not a directory of notebooks.")
    if out.exists() and src.resolve() == out.resolve():
        raise StudentEditionError(f"out={str(out)!r} is the source directory; choose another folder (e.g. student).")
    paths = sorted(src.glob("*.ipynb"))
    if not paths:
        raise StudentEditionError(f"src={str(src)!r} holds no .ipynb notebook.")
    converted: dict[str, NotebookNode] = {}
    errors: list[str] = []
    for path in paths:
        try:
            converted[path.name] = student_notebook(nbformat.read(path, as_version=4), f"{src.name}/{path.name}")
        except StudentEditionError as exc:
            errors.append(str(exc))
    if errors:
        raise StudentEditionError("the student edition was not written:\n  - " + "\n  - ".join(errors))
    out.mkdir(parents=True, exist_ok=True)
    for stale in sorted(out.glob("*.ipynb")):
        if stale.name not in converted and _generated_and_untouched(stale):
            stale.unlink()
    written, kept = [], []
    for name, nb in converted.items():
        target = out / name
        nbformat.validate(nb)
        text = nbformat.writes(nb) + "\n"
        if target.exists() and target.read_text(encoding="utf-8") == text:
            written.append(target)
            continue
        if target.exists() and not force and not _generated_and_untouched(target):
            kept.append(target)
            continue
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return StudentEdition(written, kept)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m pe_helpers.student [--src notebooks] [--out student] [--force]``."""
    parser = argparse.ArgumentParser(prog="python -m pe_helpers.student", description=__doc__.splitlines()[0])
    parser.add_argument("--src", default="notebooks", help="folder of the teacher's notebooks (default: notebooks)")
    parser.add_argument("--out", default="student", help="folder to write the student edition to (default: student)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite student notebooks even if they were edited since they were generated")
    args = parser.parse_args(argv)
    try:
        edition = build_student_edition(args.src, args.out, force=args.force)
    except StudentEditionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"student edition in {args.out}/: {len(edition.written)} notebooks written or up to date"
          + (f", {len(edition.kept)} kept" if edition.kept else ""))
    for path in edition.kept:
        print(f"kept {path}: it was edited after it was generated (someone's answers?). Move it away, or run "
              f"`python -m pe_helpers.student --force` to overwrite it.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
