"""Every deck, in both editions, within the slide budgets that can be read from its notebook
(:mod:`pe_helpers.present.budgets`): prose per slide and the width of every printed line. The rendered slides'
fill, tables and overflow are checked in Chromium (tests/browser/test_slides.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pe_helpers.present import budgets

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DECKS = sorted([*NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"), *(NOTEBOOKS / "zh").glob("[0-9][0-9]_*.ipynb")])


def _deck(path: Path) -> str:
    return ("zh/" if path.parent.name == "zh" else "") + path.name[:2]


@pytest.mark.parametrize("notebook", DECKS, ids=_deck)
def test_every_slide_is_within_its_budgets(notebook: Path) -> None:
    problems = budgets.over_budget(notebook, _deck(notebook))
    assert not problems, f"{_deck(notebook)}:\n  " + "\n  ".join(problems)


def test_the_measures_count_what_a_reader_reads() -> None:
    assert budgets.prose_length("## A *title*\n\nSee [the paper](https://arxiv.org/abs/1706.03762), $x + p$.") == 24  # "A title See the paper, ."
    assert budgets.prose_length("正弦位置编码") == 12  # a CJK character counts as two
    assert budgets.columns("ab 中文") == 7
    cells = [{"cell_type": "markdown", "source": "# Title", "metadata": {"slideshow": {"slide_type": "slide"}}},
             {"cell_type": "code", "source": "print()", "metadata": {"slideshow": {"slide_type": "-"}},
              "outputs": [{"output_type": "stream", "name": "stdout", "text": "x" * 111 + "\nshort\n"}]},
             {"cell_type": "markdown", "source": "word " * 200, "metadata": {"slideshow": {"slide_type": "notes"}}}]
    assert budgets.wide_printouts(cells) == [(1, 111, "x" * 111)]
    assert budgets.slide_prose(cells) == {1: 5}  # the notes are not on the slide


def test_every_exception_names_a_slide_that_exists() -> None:
    import json

    for deck, start in budgets.BUDGET_EXCEPTIONS:
        path = next(p for p in DECKS if _deck(p) == deck)
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = [" ".join("".join(c.get("source", "")).split()) for c in cells]
        assert any(s.startswith(start) for s in sources), (deck, start)
