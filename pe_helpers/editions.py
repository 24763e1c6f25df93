"""Notebooks from their text sources: one jupytext percent-format ``.py`` per notebook, any language edition.

Why jupytext's *percent* format (``# %%`` cells in a ``.py`` file) rather than MyST Markdown: the
sources hold most of the project's lesson code, and as ``.py`` files that code is diffed, reviewed,
grepped, linted and scanned for repeats like the rest of the package; the Markdown cells read as
comments. Notebook ``NN_name.ipynb`` (executed, checked by nbval) sits beside its source
``NN_name.py``; :func:`differences` is what ``tests/test_notebook_sources.py`` uses to fail when they
disagree (cell kinds, code or Markdown; outputs are not compared).

Translations are gettext catalogues, one per notebook and language, beside the sources:
``notebooks/locale/zh/NN_name.po``. An entry translates one *unit* of an English Markdown cell: a
paragraph, a list item, a heading, a table, a code block or a display formula (:func:`split_units`
gives the rule). The edition cuts each English cell into its units, replaces each unit by its
translation and joins them back with the cell's own blank lines, so the cells and their layout stay
those of the English notebook. A cell whose translation does not cut into the same units (it adds a
paragraph, say) is one entry of its own, the whole cell. Code is written once and never translated:
every edition runs the same code cells.

Because a unit is small, editing a sentence touches one entry. ``update-po`` rebuilds a catalogue
from the current English: an unchanged unit keeps its translation; an edited one gets the translation
of the closest former unit (difflib, ratio at least 0.6), marked ``#, fuzzy`` with the former English
as ``#| msgid``, for a translator to review; a new one starts untranslated; units gone are dropped.
A fuzzy or untranslated unit shows in English in the edition; ``build`` (``make notebooks LANG=zh``)
and ``review`` list them with their catalogue line, and ``tests/test_notebook_sources.py`` fails
while there is one. ``todo`` / ``merge`` move them to and from a plain JSON file for translators who
prefer it to a PO editor. ``convert-po`` turns catalogues whose entries are whole cells into unit
catalogues (and leaves a unit catalogue alone). Every edition but English starts with one extra code
cell, tagged ``language``, that switches the package's strings (``pe_helpers.set_language("zh")``):
apps, figure labels, checker messages and errors then speak the edition's language.

Command line (``make notebooks`` runs the first)::

    python -m pe_helpers.editions build --execute               # notebooks/*.ipynb from notebooks/*.py
    python -m pe_helpers.editions build --lang zh --execute     # notebooks/zh/*.ipynb; lists units to review
    python -m pe_helpers.editions check --lang en,zh            # exit 1 and list what differs
    python -m pe_helpers.editions update-po --lang zh           # catalogues follow the English units
    python -m pe_helpers.editions review --lang zh              # fuzzy and untranslated units; exit 1 if any
    python -m pe_helpers.editions todo --lang zh --only 03 > todo.json   # units to translate or review, as JSON
    python -m pe_helpers.editions merge --lang zh --only 03 done.json    # translations back into the .po
    python -m pe_helpers.editions convert-po --lang zh          # whole-cell catalogues -> unit catalogues
"""

from __future__ import annotations

import argparse
import copy
import io
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import jupytext
import nbformat

__all__ = ["LANGUAGES", "EDITION_DIRS", "FUZZY_CUTOFF", "CellUnits", "Review", "Conversion", "sources", "edition",
           "language_cell", "read_source", "read_edition", "split_units", "translate_cell", "catalogue_path",
           "load_translations", "markdown_cells", "missing_translations", "needs_review", "update_catalogue",
           "convert_catalogue", "differences", "build", "main"]

#: The language editions, English first (the default).
LANGUAGES = ("en", "zh")
#: Where each edition's notebooks live, relative to the sources' folder.
EDITION_DIRS = {"en": ".", "zh": "zh"}
#: Cell metadata written by jupytext or front ends that says nothing about the lesson.
_VOLATILE_METADATA = ("lines_to_next_cell", "execution", "ExecuteTime", "collapsed", "scrolled")
#: How alike (difflib's ratio, 0..1) an edited unit and a former one must be for the former translation to be kept
#: as a fuzzy one: gettext's msgmerge and Babel use the same figure.
FUZZY_CUTOFF = 0.6


def sources(folder: str | Path = "notebooks") -> list[Path]:
    """The notebook sources ``NN_*.py`` in ``folder``, in teaching order."""
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.py"))


def _check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}.")
    return lang


# --- Translation units: a Markdown cell cut at its paragraphs, list items, headings, tables, code and formulas ---

_QUOTE = re.compile(r"(?:[ ]{0,3}>[ ]?)*")
_HEADING = re.compile(r"[ \t]*#{1,6}(?:[ \t]|$)")
_BULLET = re.compile(r"[ \t]*[-*+](?:[ \t]|$)")
_ORDERED = re.compile(r"[ \t]*(\d{1,9})[.)](?:[ \t]|$)")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


@dataclass(frozen=True)
class CellUnits:
    """A Markdown cell cut into translation units, and what lies between them.

    ``gaps`` has one item more than ``units``: the cell is ``gaps[0] + units[0] + gaps[1] + … + units[-1] +
    gaps[-1]``, so :meth:`join` gives it back byte for byte, and ``join(translations)`` gives its translation
    with the same blank lines. ``kinds`` names each unit: ``heading``, ``paragraph``, ``item``, ``table``,
    ``code`` or ``math``, after ``>`` marks for a unit inside a block quote (``> item``).
    """

    units: tuple[str, ...]
    kinds: tuple[str, ...]
    gaps: tuple[str, ...]

    def join(self, units: Iterable[str] | None = None) -> str:
        """The cell with ``units`` (default: its own) in place of its units."""
        units = self.units if units is None else tuple(units)
        if len(units) != len(self.units):
            raise ValueError(f"units must be {len(self.units)} texts, one per unit of the cell, got {len(units)}.")
        return self.gaps[0] + "".join(unit + gap for unit, gap in zip(units, self.gaps[1:]))

    def offsets(self) -> list[int]:
        """Where each unit starts in the cell (character offsets)."""
        starts, position = [], 0
        for gap, unit in zip(self.gaps, self.units):
            starts.append(position + len(gap))
            position += len(gap) + len(unit)
        return starts


def _line_kind(content: str) -> str | None:
    """The block a line opens (``code``, ``math``, ``heading``, ``table``, ``item``), None for running text."""
    if _FENCE.match(content):
        return "code"
    stripped = content.lstrip(" \t")
    if stripped.startswith("$$"):
        return "math"
    if _HEADING.match(content):
        return "heading"
    if stripped.startswith("|"):
        return "table"
    if _BULLET.match(content) or _ORDERED.match(content):
        return "item"
    return None


def _continues(unit_kind: str, line_kind: str | None, content: str) -> bool:
    """Whether a line of kind ``line_kind`` continues an open unit of kind ``unit_kind`` (same quote depth)."""
    if unit_kind == "table":
        return line_kind == "table"
    if unit_kind not in ("paragraph", "item"):
        return False
    if line_kind in (None, "math"):  # running text, or a formula inside a paragraph
        return True
    ordered = _ORDERED.match(content) if line_kind == "item" else None
    return unit_kind == "paragraph" and ordered is not None and ordered.group(1) != "1"  # "2017. …" in running text


@dataclass
class _Open:
    first: int
    kind: str
    depth: int
    fence: str | None = None
    in_math: bool = False


def _unit_lines(lines: Sequence[str]) -> list[tuple[int, int, str, int]]:
    """(first line, end line, kind, quote depth) of each unit of ``lines``; see :func:`split_units`."""
    spans: list[tuple[int, int, str, int]] = []
    unit: _Open | None = None
    end = 0
    for index, line in enumerate(lines):
        prefix = _QUOTE.match(line).group(0)
        depth, content = prefix.count(">"), line[len(prefix):]
        if unit is not None and (unit.fence or unit.in_math):  # inside a code block or a formula: anything goes
            end = index + 1
            if unit.fence:
                closing = content.strip()
                if closing.startswith(unit.fence) and not closing.strip(unit.fence[0]):
                    spans.append((unit.first, end, unit.kind, unit.depth))
                    unit = None
            elif line.count("$$") % 2:
                unit.in_math = False
                if unit.kind == "math":
                    spans.append((unit.first, end, unit.kind, unit.depth))
                    unit = None
            continue
        if not content.strip():  # a blank line, or a quote's empty ">" line, ends a unit
            if unit is not None:
                spans.append((unit.first, end, unit.kind, unit.depth))
                unit = None
            continue
        kind = _line_kind(content)
        if unit is None or depth != unit.depth or not _continues(unit.kind, kind, content):
            if unit is not None:
                spans.append((unit.first, end, unit.kind, unit.depth))
            unit = _Open(index, kind or "paragraph", depth)
            if kind == "code":
                unit.fence = _FENCE.match(content).group(1)
        end = index + 1
        if unit.fence:
            continue
        if line.count("$$") % 2:
            unit.in_math = True
        elif unit.kind in ("heading", "math"):  # one line: a heading, or a formula opened and closed on it
            spans.append((unit.first, end, unit.kind, unit.depth))
            unit = None
    if unit is not None:
        spans.append((unit.first, end, unit.kind, unit.depth))
    return spans


def split_units(text: str) -> CellUnits:
    """Cut a Markdown cell into translation units, by a rule that reads lines and never the words.

    - A blank line, or an empty ``>`` line inside a block quote, ends a unit; so does a change of quote depth.
    - A heading (``#`` … ``######``) is a unit of one line.
    - A list item (``-``, ``*``, ``+``, ``1.``, ``1)``) starts a unit that runs over its continuation lines; a
      nested item starts its own unit. Bullets and ``1.`` interrupt a paragraph, other numbers do not.
    - A table (consecutive lines that start with ``|``) is one unit.
    - A fenced code block (three or more backticks or tildes) is one unit up to its closing fence, and display
      maths that opens a block with ``$$`` is one unit up to its closing ``$$``, blank lines included. A formula
      inside a paragraph stays in the paragraph, which runs at least until the formula closes.
    - Every other line continues the paragraph or list item before it.

    Units keep their markers (``- ``, ``## ``, ``> ``); what lies between them is kept in ``gaps``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a Markdown cell's text (a str), got {type(text).__name__}.")
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    units, kinds, gaps, position = [], [], [], 0
    for first, end, kind, depth in _unit_lines(lines):
        begin, stop = starts[first], starts[end] - 1
        gaps.append(text[position:begin])
        units.append(text[begin:stop])
        kinds.append(f"{'>' * depth} {kind}" if depth else kind)
        position = stop
    gaps.append(text[position:])
    return CellUnits(tuple(units), tuple(kinds), tuple(gaps))


def translate_cell(text: str, translations: Mapping[str, str]) -> str:
    """A Markdown cell in another language: the cell's own translation if ``translations`` has the whole cell,
    otherwise each of its units replaced by its translation (a unit without one stays in English)."""
    if text in translations:
        return translations[text]
    cut = split_units(text)
    return cut.join(translations.get(unit, unit) for unit in cut.units)


def _paired_units(english: str, translation: str) -> list[tuple[str, str]] | None:
    """English unit -> translated unit for a cell and its translation, or None when they do not cut alike
    (not the same number of units, kinds, or blank lines between them)."""
    en, tr = split_units(english), split_units(translation)
    if len(en.units) < 2 or (en.kinds, en.gaps) != (tr.kinds, tr.gaps):
        return None
    return list(zip(en.units, tr.units))


# --- Notebooks and editions ---


def edition(nb: nbformat.NotebookNode, lang: str = "en", translations: Mapping[str, str] | None = None
            ) -> nbformat.NotebookNode:
    """The ``lang`` edition of a source notebook: each Markdown cell translated by :func:`translate_cell`.

    ``translations`` maps English units (or whole cells) to their ``lang`` text (see
    :func:`load_translations`); a unit without one stays in English. Code cells are never changed.
    """
    lang = _check_lang(lang)
    out = copy.deepcopy(nb)
    for cell in out.cells:
        for key in _VOLATILE_METADATA:
            cell.metadata.pop(key, None)
        if lang != "en" and cell.cell_type == "markdown" and translations:
            cell.source = translate_cell(cell.source, translations)
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


# --- Catalogues ---


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


def _entries(source: str | Path, lang: str) -> dict:  # msgid -> babel Message
    return {m.id: m for m in _read_catalogue(source, lang) if m.id and isinstance(m.id, str)}


def load_translations(source: str | Path, lang: str) -> dict[str, str]:
    """English unit (or whole cell) -> its ``lang`` translation, from the notebook's catalogue (no fuzzy entries)."""
    return {key: m.string for key, m in _entries(source, lang).items() if m.string and not m.fuzzy}


def markdown_cells(source: str | Path) -> list[str]:
    """The English Markdown cells of a source, in order: what a catalogue translates."""
    return [c.source for c in read_source(source).cells if c.cell_type == "markdown" and c.source.strip()]


@dataclass(frozen=True)
class _Unit:
    """One entry a catalogue needs: a unit of Markdown cell ``cell`` (0-based), or the whole cell."""

    text: str
    cell: int
    index: int  # the unit's number in its cell, 0-based
    count: int  # how many units the cell has; 1 for a cell translated whole
    kind: str
    offset: int  # where the unit starts in its cell

    def describe(self, source_name: str) -> str:
        where = f"Markdown cell {self.cell + 1} of {source_name}"
        if self.kind == "cell":
            return f"{where}, whole (its translation does not cut into the same units)"
        return f"{where}, unit {self.index + 1} of {self.count} ({self.kind})" if self.count > 1 else where


_PO_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _previous_id(message) -> list[str]:  # noqa: ANN001 - babel's Message
    """The English a fuzzy entry's translation was made for: its ``#| msgid`` lines, which Babel writes but reads
    back as translator comments (``| msgid "…"`` and ``| "…"`` continuation lines)."""
    if message.previous_id:
        return list(message.previous_id)
    lines = [c[1:].strip() for c in message.user_comments if c.startswith("|")]
    if not lines or not lines[0].startswith("msgid "):
        return []
    quoted = [lines[0].removeprefix("msgid ").strip()] + [line for line in lines[1:] if line.startswith('"')]
    text = "".join(q[1:-1] for q in quoted if len(q) >= 2)
    return [re.sub(r"\\(.)", lambda m: _PO_ESCAPES.get(m.group(1), m.group(1)), text)]


def _notes(message) -> list[str]:  # noqa: ANN001 - babel's Message
    """A translator's own comments on an entry (``# …``), without the ``#| msgid`` lines."""
    return [c for c in message.user_comments if not c.startswith("|")]


def _similarity(a: str, b: str) -> float:
    matcher = SequenceMatcher(None, a, b, autojunk=False)  # autojunk would ignore a long text's common letters
    if matcher.real_quick_ratio() < FUZZY_CUTOFF or matcher.quick_ratio() < FUZZY_CUTOFF:
        return 0.0
    return matcher.ratio()


def _closest(text: str, candidates: Mapping[str, object], prefer: set[str] = frozenset()) -> str | None:
    """The candidate most like ``text`` (difflib ratio at least :data:`FUZZY_CUTOFF`), ``prefer`` winning ties."""
    scored = [(_similarity(text, key), key in prefer, -n, key) for n, key in enumerate(candidates)]
    best = max(scored, default=None)
    return best[3] if best and best[0] >= FUZZY_CUTOFF else None


def _plan(cells: Sequence[str], old: Mapping[str, object], *, fuzzy: bool) -> list[_Unit]:
    """The entries a catalogue needs for ``cells``, given its entries ``old`` (msgid -> babel Message).

    A cell is cut into units (:func:`split_units`) unless ``old`` translates it whole; with ``fuzzy``, also
    unless fewer than half of its units are in ``old`` and it is close to a whole cell of ``old`` that no cell
    has any more (an edited cell that was translated whole: it stays whole, marked fuzzy).
    """
    current = set(cells)
    wholes = {key: m for key, m in old.items()
              if m.string and key not in current and len(split_units(key).units) > 1} if fuzzy else {}
    plan = []
    for number, cell in enumerate(cells):
        cut = split_units(cell)
        known = sum(unit in old for unit in cut.units)
        if len(cut.units) > 1 and ((cell in old and old[cell].string)
                                   or (2 * known < len(cut.units) and _closest(cell, wholes) is not None)):
            plan.append(_Unit(cell, number, 0, 1, "cell", 0))
            continue
        plan += [_Unit(unit, number, index, len(cut.units), kind, offset)
                 for index, (unit, kind, offset) in enumerate(zip(cut.units, cut.kinds, cut.offsets()))]
    return plan


def _split_whole_entries(old: dict) -> tuple[dict, int]:
    """``old`` (msgid -> babel Message) with every translated whole-cell entry that cuts into the same units as
    its translation replaced by one entry per unit, and how many entries were split.

    An entry stays whole when it is fuzzy, when the two texts do not cut alike, or when one of its units would get
    another translation than the catalogue or another cell already gives it.
    """
    from babel.messages.catalog import Message

    pairs = {key: _paired_units(key, m.string) for key, m in old.items() if m.string and not m.fuzzy}
    pairs = {key: units for key, units in pairs.items() if units}
    seen: dict[str, set[str]] = {}
    for key, m in old.items():
        if m.string and key not in pairs:
            seen.setdefault(key, set()).add(m.string)
    for units in pairs.values():
        for en, tr in units:
            seen.setdefault(en, set()).add(tr)
    split = {key: units for key, units in pairs.items() if all(len(seen[en]) == 1 for en, _ in units)}
    if not split:
        return old, 0
    new = {key: m for key, m in old.items() if key not in split}
    for units in split.values():
        for en, tr in units:
            if en not in new or not new[en].string:
                new[en] = Message(en, tr)
    return new, len(split)


def _cell_lines(source: str | Path) -> list[int | None]:
    """The line of the source file on which each non-empty Markdown cell's text starts (1-based), or Nones when
    the source's ``# %% [markdown]`` markers do not match its cells one to one."""
    cells = [c.source for c in read_source(source).cells if c.cell_type == "markdown"]
    markers = [n for n, line in enumerate(Path(source).read_text(encoding="utf-8").splitlines(), start=1)
               if re.match(r"# %% \[(markdown|md)\]", line)]
    if len(markers) != len(cells):
        return [None] * sum(1 for c in cells if c.strip())
    return [n + 1 for n, c in zip(markers, cells) if c.strip()]


@dataclass(frozen=True)
class Review:
    """A unit that needs a translator: ``state`` is ``fuzzy``, ``untranslated`` or ``missing`` (not in the
    catalogue: run ``update-po``); ``po_line`` is its line in the catalogue (None when missing), ``source_line``
    the line of the English source where it starts (None when unknown)."""

    state: str
    text: str
    catalogue: Path
    po_line: int | None
    source: Path
    source_line: int | None
    where: str

    def __str__(self) -> str:
        place = f"{self.catalogue}:{self.po_line}" if self.po_line else str(self.catalogue)
        origin = f"{self.source}:{self.source_line}" if self.source_line else str(self.source)
        first = self.text.strip().split("\n")[0]
        return f"{place}: {self.state}: {origin} ({self.where}): {first[:70]}{'…' if len(first) > 70 else ''}"


def needs_review(source: str | Path, lang: str) -> list[Review]:
    """The units of ``source`` whose ``lang`` translation is fuzzy, empty or absent, in notebook order."""
    old = _entries(source, lang)
    cells = markdown_cells(source)
    lines = _cell_lines(source)
    found = []
    for unit in _plan(cells, old, fuzzy=False):
        entry = old.get(unit.text)
        state = "missing" if entry is None else "untranslated" if not entry.string else "fuzzy" if entry.fuzzy else ""
        if state:
            line = lines[unit.cell] + cells[unit.cell][:unit.offset].count("\n") if lines[unit.cell] else None
            found.append(Review(state, unit.text, catalogue_path(source, lang), getattr(entry, "lineno", None),
                                Path(source), line, unit.describe(Path(source).name)))
    return found


def missing_translations(source: str | Path, lang: str) -> list[str]:
    """The English units of ``source`` without a finished ``lang`` translation (fuzzy, empty or absent), in order."""
    return list(dict.fromkeys(r.text for r in needs_review(source, lang)))


def update_catalogue(source: str | Path, lang: str, new: Mapping[str, str] | None = None) -> Path:
    """Rewrite the catalogue from the current English: one entry per unit, in notebook order.

    Whole-cell entries that cut into the same units as their translation are split first. A unit found in the
    catalogue keeps its entry (translation, fuzzy mark); ``new`` (English -> translation) adds finished
    translations; any other unit takes the translation of the most similar entry (:data:`FUZZY_CUTOFF`), marked
    fuzzy with that entry's English as its previous msgid, or starts empty. Entries no unit uses are dropped.
    Returns the catalogue's path.
    """
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    path = catalogue_path(source, lang)
    old_catalogue = _read_catalogue(source, lang)
    old, _ = _split_whole_entries(_entries(source, lang))
    new = {k: v for k, v in (new or {}).items() if v}
    plan = _plan(markdown_cells(source), old, fuzzy=True)
    used = {unit.text for unit in plan}
    candidates = {key: m for key, m in old.items() if m.string}
    placeholders: dict[str, str] = {}  # former English -> its placeholder in the written text
    # keep the catalogue's creation date, so that rewriting it changes only the entries that changed
    cat = Catalog(locale=lang, project=f"pe-notebooks {Path(source).stem}", fuzzy=False,
                  creation_date=old_catalogue.creation_date if path.exists() else None)
    unused = set(candidates) - used  # entries of units gone: an edited unit's former self is most likely among them
    for unit in plan:
        string, flags, previous, notes = "", set(), [], []
        if unit.text in old:
            string, previous, notes = old[unit.text].string, _previous_id(old[unit.text]), _notes(old[unit.text])
            flags = {"fuzzy"} if old[unit.text].fuzzy else set()
        elif (like := _closest(unit.text, candidates, prefer=unused)) is not None:
            string, flags, notes = candidates[like].string, {"fuzzy"}, _notes(candidates[like])
            previous = (candidates[like].fuzzy and _previous_id(candidates[like])) or [like]
        if unit.text in new:  # a finished translation: no longer fuzzy
            string, flags = new[unit.text], set()
        if "fuzzy" in flags and previous:  # a placeholder, replaced by the #| lines once written
            previous = [placeholders.setdefault(previous[0], f"@@previous-{len(placeholders)}@@")]
        cat.add(unit.text, string, auto_comments=[unit.describe(Path(source).name)], user_comments=notes,
                flags=flags, previous_id=previous if "fuzzy" in flags else ())
    buffer = io.BytesIO()
    write_po(buffer, cat, width=0, omit_header=False, include_lineno=False, include_previous=True,
             ignore_obsolete=True)
    text = buffer.getvalue().decode("utf-8")
    for english, token in placeholders.items():
        text = text.replace(f'#| msgid "{token}"', "\n".join(f"#| {line}" for line in _po_string("msgid", english)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def _po_string(keyword: str, text: str) -> list[str]:
    """``keyword "text"`` as PO lines, one per line of ``text`` (the layout write_po gives with ``width=0``).

    Babel writes a fuzzy entry's former msgid (``#|``) as one comment wrapped at 76 columns, which it cannot read
    back; these lines follow gettext's layout and :func:`_previous_id` reads them.
    """
    escaped = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r").replace('"', '\\"')
    lines = escaped.split("\n")
    if len(lines) == 1:
        return [f'{keyword} "{escaped}"']
    return [f'{keyword} ""'] + [f'"{line}\\n"' for line in lines[:-1]] + ([f'"{lines[-1]}"'] if lines[-1] else [])


@dataclass(frozen=True)
class Conversion:
    """What :func:`convert_catalogue` did to one catalogue: ``split`` whole-cell entries cut into units
    (0: the catalogue was left alone), and the catalogue's shape afterwards."""

    cells: int
    entries: int
    whole: int
    split: int
    kept_whole: tuple[str, ...] = ()  # the first line of each cell kept whole


def convert_catalogue(source: str | Path, lang: str) -> Conversion:
    """Turn a catalogue whose entries are whole Markdown cells into one of units (see :func:`_split_whole_entries`).

    A catalogue with nothing to split (one already in units) is not rewritten. Otherwise it is rewritten as
    :func:`update_catalogue` writes it, and each cell's translation stays exactly what it was.
    """
    _, split = _split_whole_entries(_entries(source, lang))
    if split:
        update_catalogue(source, lang)
    plan = _plan(markdown_cells(source), _entries(source, lang), fuzzy=False)
    kept = tuple(u.text.strip().split("\n")[0] for u in plan if u.kind == "cell")
    return Conversion(len(markdown_cells(source)), len(plan), len(kept), split, kept)


# --- Checking and building ---


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
    """Write every edition's ``.ipynb`` from the sources (``only``: source stems or number prefixes).

    For an edition other than English, the units that need a translator (:func:`needs_review`) are listed on
    stderr: they show in English until their catalogue entry is translated and its fuzzy mark removed.
    """
    written, review = [], []
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
            review += needs_review(source, lang) if lang != "en" else []
    if review:
        _print_review(review)
    if execute:
        _execute(written)
    return written


def _print_review(review: Sequence[Review]) -> None:
    print(f"{len(review)} translation unit(s) to review (fuzzy: an edited English unit with its former translation; "
          f"untranslated; missing: run update-po); they show in English until done:", file=sys.stderr)
    for item in review:
        print(f"  {item}", file=sys.stderr)


COMMANDS = ("build", "check", "update-po", "review", "todo", "merge", "convert-po")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pe_helpers.editions", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("json", nargs="?", help="merge: a JSON file {notebook stem: {english unit: translation}}")
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
    if args.command != "check":
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
    pairs = [(s, lang) for s in chosen for lang in langs]
    if command == "review":
        review = [r for s, lang in pairs for r in needs_review(s, lang)]
        if review:
            _print_review(review)
        else:
            print("every unit is translated")
        return 1 if review else 0
    if command == "convert-po":
        for s, lang in pairs:
            done = convert_catalogue(s, lang)
            what = f"split {done.split} whole-cell entries" if done.split else "already in units, left alone"
            print(f"{catalogue_path(s, lang)}: {what}; {done.cells} Markdown cells -> {done.entries} units, "
                  f"{done.whole} cell(s) kept whole")
            for first in done.kept_whole:  # its translation does not cut into the same units as the English
                print(f"  kept whole: {first[:70]}")
        return 0
    if command == "todo":  # fuzzy units come with their former translation, to correct or keep
        todo = {}
        for s, lang in pairs:
            entries = _entries(s, lang)
            todo[s.stem] = {r.text: entries[r.text].string if r.text in entries else "" for r in needs_review(s, lang)}
        print(json.dumps({k: v for k, v in todo.items() if v}, ensure_ascii=False, indent=1))
        return 0
    new = {}
    if command == "merge":
        if not json_path:
            print("merge needs a JSON file: {notebook stem: {english unit: translation}}", file=sys.stderr)
            return 2
        new = json.loads(Path(json_path).read_text(encoding="utf-8"))
    for s, lang in pairs:
        path = update_catalogue(s, lang, new.get(s.stem, {}) if new else None)
        review = needs_review(s, lang)
        print(f"{path}: {sum(r.state == 'fuzzy' for r in review)} fuzzy and "
              f"{sum(r.state != 'fuzzy' for r in review)} untranslated unit(s)")
        units = {u.text for u in _plan(markdown_cells(s), _entries(s, lang), fuzzy=False)}
        unused = set(new.get(s.stem, {})) - units if new else set()
        if unused:  # a key edited by hand, or an English unit changed since `todo`: say so, do not drop it silently
            print(f"{s.stem}: {len(unused)} JSON entr{'y' if len(unused) == 1 else 'ies'} match no English unit "
                  f"and were not merged", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
