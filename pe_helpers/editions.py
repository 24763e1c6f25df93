"""Notebooks from their text sources: one jupytext percent-format ``.py`` per notebook, any language edition.

Why jupytext's *percent* format (``# %%`` cells in a ``.py`` file) rather than MyST Markdown: the
sources hold most of the project's lesson code, and as ``.py`` files that code is diffed, reviewed,
grepped, linted and scanned for repeats like the rest of the package; the Markdown cells read as
comments. Notebook ``NN_name.ipynb`` (executed, checked by nbval) sits beside its source
``NN_name.py``; :func:`differences` is what ``tests/test_notebook_sources.py`` uses to fail when they
disagree (cell kinds, code or Markdown; outputs are not compared).

Translations live beside the text they translate. A Markdown cell whose metadata says
``lang="zh"`` (``# %% [markdown] lang="zh"``) is the Chinese version of the English Markdown cell
just before it: the English edition drops it, the Chinese edition shows it *instead of* that cell.
Code cells carry no ``lang``: they are written once and are identical in every edition. A cell
with ``lang="en"`` appears in the English edition only. Every edition but English starts with one
extra code cell, tagged ``language``, that switches the package's strings
(``pe_helpers.set_language("zh")``): apps, figure labels, checker messages and errors then speak
the edition's language.

Command line (``make notebooks`` runs the first)::

    python -m pe_helpers.editions build --execute     # notebooks/*.ipynb from notebooks/*.py, executed
    python -m pe_helpers.editions check               # exit 1 and list what differs
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import jupytext
import nbformat

__all__ = ["LANGUAGES", "EDITION_DIRS", "sources", "edition", "language_cell", "read_edition", "differences", "build",
           "main"]

#: The language editions, English first (the default).
LANGUAGES = ("en", "zh")
#: Where each edition's notebooks live, relative to the sources' folder.
EDITION_DIRS = {"en": ".", "zh": "zh"}
#: Cell metadata written by jupytext or front ends that says nothing about the lesson.
_VOLATILE_METADATA = ("lines_to_next_cell", "execution", "ExecuteTime", "collapsed", "scrolled", "lang")


def sources(folder: str | Path = "notebooks") -> list[Path]:
    """The notebook sources ``NN_*.py`` in ``folder``, in teaching order."""
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.py"))


def _check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}.")
    return lang


def edition(nb: nbformat.NotebookNode, lang: str = "en") -> nbformat.NotebookNode:
    """The ``lang`` edition of a source notebook: translated Markdown replaces the cell before it.

    A ``lang="zh"`` Markdown cell must follow a Markdown cell without ``lang`` (its English original);
    anything else is an authoring error, reported with the cell's position.
    """
    lang = _check_lang(lang)
    out = copy.deepcopy(nb)
    cells: list = []
    for index, cell in enumerate(nb.cells):
        cell_lang = cell.metadata.get("lang")
        if cell_lang is None:
            cells.append(copy.deepcopy(cell))
            continue
        if cell_lang not in LANGUAGES:
            raise ValueError(f"cell {index}: metadata lang must be one of {', '.join(LANGUAGES)}, got {cell_lang!r}.")
        if cell_lang != "en" and (cell.cell_type != "markdown" or not cells or cells[-1].cell_type != "markdown"):
            raise ValueError(f"cell {index}: a lang={cell_lang!r} cell must be Markdown and follow its English "
                             "Markdown cell.")
        if cell_lang == lang:
            translated = copy.deepcopy(cell)
            if lang != "en":
                translated.metadata = {**cells[-1].metadata, **translated.metadata}
                cells[-1] = translated
            else:
                cells.append(translated)
    for cell in cells:
        for key in _VOLATILE_METADATA:
            cell.metadata.pop(key, None)
    if lang != "en":
        cells.insert(0, language_cell(lang))
    out.cells = cells
    out.metadata.pop("jupytext", None)
    return out


def language_cell(lang: str) -> nbformat.NotebookNode:
    """The first cell of a non-English edition: switch pe_helpers' strings to ``lang``."""
    return nbformat.v4.new_code_cell(
        f'import pe_helpers\n\npe_helpers.set_language("{lang}")  # 界面语言：中文 (apps, figures, checkers, errors)',
        metadata={"tags": ["language"]})


def read_edition(source: str | Path, lang: str = "en") -> nbformat.NotebookNode:
    """Read a percent-format source and return its ``lang`` edition (no outputs)."""
    return edition(jupytext.read(Path(source), fmt="py:percent"), lang)


def _shape(nb: nbformat.NotebookNode) -> list[tuple[str, str, dict]]:
    def clean(cell: nbformat.NotebookNode) -> tuple[str, str, dict]:
        meta = {k: v for k, v in cell.metadata.items() if k not in _VOLATILE_METADATA}
        return cell.cell_type, cell.source.rstrip("\n"), meta

    return [clean(c) for c in nb.cells]


def differences(source: str | Path, notebook: str | Path, lang: str = "en") -> list[str]:
    """What differs between a source (its ``lang`` edition) and an ``.ipynb``: one line per cell, empty if in step."""
    want = _shape(read_edition(source, lang))
    got = _shape(nbformat.read(Path(notebook), as_version=4))
    notes = []
    if len(want) != len(got):
        notes.append(f"{Path(notebook).name}: {len(got)} cells, its source {Path(source).name} has {len(want)}")
    for index, (w, g) in enumerate(zip(want, got)):
        for part, a, b in (("kind", w[0], g[0]), ("text", w[1], g[1]), ("metadata", w[2], g[2])):
            if a != b:
                notes.append(f"{Path(notebook).name} cell {index}: {part} differs from {Path(source).name}")
                break
    return notes


def edition_path(source: Path, lang: str) -> Path:
    """Where the ``lang`` edition of ``source`` is written: ``notebooks/NN.ipynb`` or ``notebooks/zh/NN.ipynb``."""
    return source.parent / EDITION_DIRS[_check_lang(lang)] / (source.stem + ".ipynb")


def _execute(paths: Sequence[Path]) -> None:
    from nbclient import NotebookClient

    for path in paths:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, path)
        print(f"executed {path}")


def build(folder: str | Path = "notebooks", langs: Iterable[str] = ("en",), *, execute: bool = False,
          only: Sequence[str] = ()) -> list[Path]:
    """Write every edition's ``.ipynb`` from the sources (``only``: source stems or number prefixes)."""
    written = []
    for source in sources(folder):
        if only and not any(source.stem.startswith(o) for o in only):
            continue
        for lang in langs:
            path = edition_path(source, lang)
            if lang != "en" and not any(c.metadata.get("lang") == lang for c in jupytext.read(source).cells):
                continue  # no translation yet: no edition
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(read_edition(source, lang), path)
            written.append(path)
    if execute:
        _execute(written)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pe_helpers.editions", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("build", "check"))
    parser.add_argument("--folder", default="notebooks")
    parser.add_argument("--lang", default="en", help="comma-separated editions (en, zh); default en")
    parser.add_argument("--execute", action="store_true", help="execute each notebook after writing it")
    parser.add_argument("--only", default="", help="comma-separated notebook numbers or names, e.g. 03,05")
    args = parser.parse_args(argv)
    langs = [_check_lang(x.strip()) for x in args.lang.split(",") if x.strip()]
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    if args.command == "build":
        build(args.folder, langs, execute=args.execute, only=only)
        return 0
    notes = [n for s in sources(args.folder) for lang in langs if edition_path(s, lang).exists()
             for n in differences(s, edition_path(s, lang), lang)]
    print("\n".join(notes) or "every notebook matches its source")
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main())
