"""Notebooks from their text sources: one jupytext percent-format ``.py`` per notebook, any language edition.

Why jupytext's *percent* format (``# %%`` cells in a ``.py`` file) rather than MyST Markdown: the
sources hold most of the project's lesson code, and as ``.py`` files that code is diffed, reviewed,
grepped, linted and scanned for repeats like the rest of the package; the Markdown cells read as
comments. Notebook ``NN_name.ipynb`` (executed, checked by nbval) sits beside its source
``NN_name.py``; :func:`differences` is what ``tests/test_notebook_sources.py`` uses to fail when they
disagree (cell kinds, code or Markdown; outputs are not compared).

Translations are gettext catalogues, one per notebook and language, beside the sources:
``notebooks/locale/zh/NN_name.po``. Each entry's msgid is one English Markdown cell, its msgstr
the Chinese text that replaces it in the Chinese edition. Code is written once and never
translated: every edition runs the same code cells. Because the msgid is the English text itself,
a changed English cell no longer finds its translation: ``tests/test_notebook_sources.py`` then
fails and names the cell, so both editions change in the same commit. ``update-po`` adds the new
English cells to a catalogue (keeping every existing translation, dropping obsolete ones), and
``todo`` / ``merge`` move the untranslated cells to and from a plain JSON file for translators who
prefer it to a PO editor. Every edition but English starts with one extra code cell, tagged
``language``, that switches the package's strings (``pe_helpers.set_language("zh")``): apps,
figure labels, checker messages and errors then speak the edition's language.

Command line (``make notebooks`` runs the first)::

    python -m pe_helpers.editions build --execute               # notebooks/*.ipynb from notebooks/*.py
    python -m pe_helpers.editions build --lang zh --execute     # notebooks/zh/*.ipynb, from the same sources
    python -m pe_helpers.editions check --lang en,zh            # exit 1 and list what differs
    python -m pe_helpers.editions update-po --lang zh           # catalogues follow the English cells
    python -m pe_helpers.editions todo --lang zh --only 03 > todo.json   # untranslated cells, as JSON
    python -m pe_helpers.editions merge --lang zh --only 03 done.json    # translations back into the .po
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import jupytext
import nbformat

__all__ = ["LANGUAGES", "EDITION_DIRS", "sources", "edition", "language_cell", "read_source", "read_edition",
           "catalogue_path", "load_translations", "markdown_cells", "missing_translations", "update_catalogue",
           "differences", "build", "main"]

#: The language editions, English first (the default).
LANGUAGES = ("en", "zh")
#: Where each edition's notebooks live, relative to the sources' folder.
EDITION_DIRS = {"en": ".", "zh": "zh"}
#: Cell metadata written by jupytext or front ends that says nothing about the lesson.
_VOLATILE_METADATA = ("lines_to_next_cell", "execution", "ExecuteTime", "collapsed", "scrolled")


def sources(folder: str | Path = "notebooks") -> list[Path]:
    """The notebook sources ``NN_*.py`` in ``folder``, in teaching order."""
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.py"))


def _check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}.")
    return lang


def edition(nb: nbformat.NotebookNode, lang: str = "en", translations: dict[str, str] | None = None
            ) -> nbformat.NotebookNode:
    """The ``lang`` edition of a source notebook: each Markdown cell replaced by its translation.

    ``translations`` maps an English Markdown cell's text to its ``lang`` text (see
    :func:`load_translations`); a cell without one stays in English. Code cells are never changed.
    """
    lang = _check_lang(lang)
    out = copy.deepcopy(nb)
    for cell in out.cells:
        for key in _VOLATILE_METADATA:
            cell.metadata.pop(key, None)
        if lang != "en" and cell.cell_type == "markdown" and translations:
            cell.source = translations.get(cell.source, cell.source)
    if lang != "en":
        out.cells.insert(0, language_cell(lang))
    out.metadata.pop("jupytext", None)
    return out


def language_cell(lang: str) -> nbformat.NotebookNode:
    """The first cell of a non-English edition: switch pe_helpers' strings to ``lang``.

    It is skipped in the slide deck: as the first visible cell it would otherwise open an empty
    first slide, and the Chinese deck's slide numbers would differ from the English ones.
    """
    return nbformat.v4.new_code_cell(
        f'import pe_helpers\n\npe_helpers.set_language("{lang}")  # 界面语言：中文 (apps, figures, checkers, errors)',
        metadata={"slideshow": {"slide_type": "skip"}, "tags": ["language"]})


def read_source(source: str | Path) -> nbformat.NotebookNode:
    """The notebook a percent-format source describes (English, no outputs)."""
    return jupytext.read(Path(source), fmt="py:percent")


def read_edition(source: str | Path, lang: str = "en") -> nbformat.NotebookNode:
    """Read a percent-format source and return its ``lang`` edition (no outputs)."""
    translations = load_translations(source, lang) if lang != "en" else None
    return edition(read_source(source), lang, translations)


def catalogue_path(source: str | Path, lang: str) -> Path:
    """The translation catalogue of ``source``: ``notebooks/locale/<lang>/NN_name.po``."""
    source = Path(source)
    return source.parent / "locale" / _check_lang(lang) / (source.stem + ".po")


def _read_catalogue(source: str | Path, lang: str):  # noqa: ANN202 - babel's Catalog
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    path = catalogue_path(source, lang)
    if not path.exists():
        return Catalog(locale=lang, project=f"pe-notebooks {Path(source).stem}")
    with path.open("rb") as handle:
        return read_po(handle, locale=lang)


def load_translations(source: str | Path, lang: str) -> dict[str, str]:
    """English Markdown text -> its ``lang`` translation, from the notebook's catalogue (no fuzzy entries)."""
    return {m.id: m.string for m in _read_catalogue(source, lang)
            if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


def markdown_cells(source: str | Path) -> list[str]:
    """The English Markdown cells of a source, in order: what a catalogue translates."""
    return [c.source for c in read_source(source).cells if c.cell_type == "markdown" and c.source.strip()]


def missing_translations(source: str | Path, lang: str) -> list[str]:
    """The English Markdown cells of ``source`` that have no ``lang`` translation (empty when complete)."""
    done = load_translations(source, lang)
    return [text for text in markdown_cells(source) if text not in done]


def update_catalogue(source: str | Path, lang: str, new: dict[str, str] | None = None) -> Path:
    """Rewrite the catalogue: one entry per English Markdown cell, in notebook order.

    Existing translations are kept, ``new`` (English -> translation) is added, and entries whose
    English cell no longer exists are dropped. Returns the catalogue's path.
    """
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    old = load_translations(source, lang)
    old.update(new or {})
    # keep the catalogue's creation date, so that rewriting it changes only the entries that changed
    created = _read_catalogue(source, lang).creation_date if catalogue_path(source, lang).exists() else None
    cat = Catalog(locale=lang, project=f"pe-notebooks {Path(source).stem}", fuzzy=False, creation_date=created)
    for index, text in enumerate(markdown_cells(source)):
        cat.add(text, old.get(text, ""), auto_comments=[f"Markdown cell {index + 1} of {Path(source).name}"])
    path = catalogue_path(source, lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, cat, width=0, omit_header=False, include_lineno=False)
    return path


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
            if lang != "en" and not catalogue_path(source, lang).exists():
                continue  # no catalogue yet: no edition
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(read_edition(source, lang), path)
            written.append(path)
    if execute:
        _execute(written)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pe_helpers.editions", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("build", "check", "update-po", "todo", "merge"))
    parser.add_argument("json", nargs="?", help="merge: a JSON file {english text: translation}")
    parser.add_argument("--folder", default="notebooks")
    parser.add_argument("--lang", default="en", help="comma-separated editions (en, zh); default en")
    parser.add_argument("--execute", action="store_true", help="execute each notebook after writing it")
    parser.add_argument("--only", default="", help="comma-separated notebook numbers or names, e.g. 03,05")
    args = parser.parse_intermixed_args(argv)  # the JSON file may follow the options (merge --only 03 done.json)
    langs = [_check_lang(x.strip()) for x in args.lang.split(",") if x.strip()]
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    if args.command == "build":
        build(args.folder, langs, execute=args.execute, only=only)
        return 0
    chosen = [s for s in sources(args.folder) if not only or any(s.stem.startswith(o) for o in only)]
    if args.command in ("update-po", "todo", "merge"):
        return _catalogue_command(args.command, chosen, [x for x in langs if x != "en"], args.json)
    notes = [n for s in chosen for lang in langs if edition_path(s, lang).exists()
             for n in differences(s, edition_path(s, lang), lang)]
    print("\n".join(notes) or "every notebook matches its source")
    return 1 if notes else 0


def _catalogue_command(command: str, chosen: Sequence[Path], langs: Sequence[str], json_path: str | None) -> int:
    import json

    if not langs:
        print("give a language to translate into, e.g. --lang zh", file=sys.stderr)
        return 2
    if command == "todo":
        todo = {s.stem: {text: "" for text in missing_translations(s, lang)} for s in chosen for lang in langs}
        print(json.dumps({k: v for k, v in todo.items() if v}, ensure_ascii=False, indent=1))
        return 0
    new = {}
    if command == "merge":
        if not json_path:
            print("merge needs a JSON file: {notebook stem: {english text: translation}}", file=sys.stderr)
            return 2
        new = json.loads(Path(json_path).read_text(encoding="utf-8"))
    for s in chosen:
        for lang in langs:
            path = update_catalogue(s, lang, new.get(s.stem, {}) if new else None)
            left = len(missing_translations(s, lang))
            print(f"{path}: {left} Markdown cell(s) without a translation")
            unused = set(new.get(s.stem, {})) - set(markdown_cells(s)) if new else set()
            if unused:  # a key edited by hand, or an English cell changed since `todo`: say so, do not drop it silently
                print(f"{s.stem}: {len(unused)} JSON entr{'y' if len(unused) == 1 else 'ies'} match no English cell "
                      f"and were not merged", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
