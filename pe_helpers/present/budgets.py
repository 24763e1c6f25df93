"""What one slide of a deck may hold, measured from a notebook's cells (both editions, no browser).

A slide read from the back row carries little prose, shows numbers as tables or figures rather than as wide
printed text, and is not nearly empty. The deck walk (``tests/browser/test_slides.py``) measures the rendered
slides; this module measures what can be known from the ``.ipynb`` alone, for every deck in both languages
(``tests/test_slide_budgets.py``):

* **prose**: the characters of a slide's Markdown as a reader sees them (formulas, links' targets, Markdown
  syntax and HTML tags left out; a CJK character counts as two, about what it carries against a Latin letter),
  at most :data:`PROSE_BUDGET`; speaker notes are not on the slide;
* **printouts**: every line a code cell on a slide prints fits :data:`PRINT_COLUMNS` columns of the slides'
  monospace text (a CJK character takes two), so it never wraps.

``python -m pe_helpers.present.budgets notebooks/05_*.ipynb`` prints each slide's measures.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path

from . import slide_numbers

__all__ = ["PROSE_BUDGET", "MIN_FILLED", "PRINT_COLUMNS", "BUDGET_EXCEPTIONS", "FILL_EXCEPTIONS", "prose_length", "columns",
           "slide_prose", "wide_printouts", "over_budget"]

#: On-screen prose per slide, in characters.
PROSE_BUDGET = 600
#: The least share of the frame's height a content slide spans (measured in the browser; a title slide is exempt).
MIN_FILLED = 0.25
#: The widest printed line, in monospace columns: the slides' output text (17 px) in a 1280 px frame, with margins.
PRINT_COLUMNS = 110
#: Slides allowed over the prose budget, by deck (``"05"``, ``"zh/05"``) and the start of the slide's first cell, with why.
BUDGET_EXCEPTIONS: dict[tuple[str, str], str] = {}
#: Slides allowed under :data:`MIN_FILLED`, by deck and the start of the slide's text on screen, with why.
FILL_EXCEPTIONS: dict[tuple[str, str], str] = {}

_FORMULA = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_SYNTAX = re.compile(r"^\s{0,3}(#{1,6}\s|>\s?|[-*+]\s|\d+\.\s)|[*_`|]|^\s*:?-{3,}:?\s*$", re.M)


def _text(source: str | Sequence[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def prose_length(markdown: str) -> int:
    """Characters of ``markdown`` a reader reads: formulas, link targets, tags and Markdown syntax removed,
    runs of white space counted as one, a CJK character as two (:func:`columns`)."""
    text = _SYNTAX.sub("", _TAG.sub("", _LINK.sub(r"\1", _FORMULA.sub("", markdown))))
    return columns(re.sub(r"\s+", " ", text).strip())


def columns(line: str) -> int:
    """The width of ``line`` in monospace columns: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def slide_prose(cells: Sequence[Mapping]) -> dict[int, int]:
    """Characters of prose on each slide (1-based, as :func:`pe_helpers.present.slide_numbers` counts them)."""
    totals: dict[int, int] = {}
    for cell, number in zip(cells, slide_numbers(cells)):
        if number is not None and cell.get("cell_type") == "markdown":
            totals[number] = totals.get(number, 0) + prose_length(_text(cell.get("source", "")))
    return totals


def _printed(cell: Mapping) -> list[str]:
    lines: list[str] = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            lines += _text(output.get("text", "")).splitlines()
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data", {})
            if set(data) <= {"text/plain"}:  # a rich output (an image, a widget, HTML) is not printed text
                lines += _text(data.get("text/plain", "")).splitlines()
        elif output.get("output_type") == "error":
            lines.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
    return lines


def wide_printouts(cells: Sequence[Mapping]) -> list[tuple[int, int, str]]:
    """``(slide, columns, line)`` for every printed line on a slide wider than :data:`PRINT_COLUMNS`."""
    wide = []
    for cell, number in zip(cells, slide_numbers(cells)):
        if number is None or cell.get("cell_type") != "code":
            continue
        wide += [(number, columns(line), line) for line in _printed(cell) if columns(line) > PRINT_COLUMNS]
    return wide


def _slide_starts(cells: Sequence[Mapping]) -> dict[int, str]:
    starts: dict[int, str] = {}
    for cell, number in zip(cells, slide_numbers(cells)):
        if number is not None and number not in starts:
            starts[number] = " ".join(_text(cell.get("source", "")).split())[:60]
    return starts


def over_budget(notebook: Path, deck: str) -> list[str]:
    """What breaks a budget in ``notebook`` (``deck`` names it in :data:`BUDGET_EXCEPTIONS`), one line each."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    starts = _slide_starts(cells)
    excused = {number for number, start in starts.items()
               if any(d == deck and start.startswith(s) for d, s in BUDGET_EXCEPTIONS)}
    problems = [f"slide {n} ({starts[n][:40]!r}): {chars} characters of prose (at most {PROSE_BUDGET}; the rest "
                f"belongs in the speaker notes)" for n, chars in slide_prose(cells).items()
                if chars > PROSE_BUDGET and n not in excused]
    problems += [f"slide {n} ({starts[n][:40]!r}): a printed line of {width} columns (at most {PRINT_COLUMNS}): "
                 f"{line[:60]!r}" for n, width, line in wide_printouts(cells)]
    return problems


def _report(path: Path) -> None:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    starts, prose = _slide_starts(cells), slide_prose(cells)
    wide: dict[int, int] = {}
    for n, width, _line in wide_printouts(cells):
        wide[n] = max(wide.get(n, 0), width)
    print(f"{path}: {len(starts)} slides (prose budget {PROSE_BUDGET}, print width {PRINT_COLUMNS})")
    for n, start in starts.items():
        flags = ("  PROSE" if prose.get(n, 0) > PROSE_BUDGET else "") + (f"  WIDE {wide[n]}" if n in wide else "")
        print(f"{n:3d} {prose.get(n, 0):5d}  {start[:60]}{flags}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        _report(Path(arg))
