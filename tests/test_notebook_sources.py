"""Every notebook is built from its text source (jupytext percent format): the two must agree.

``notebooks/NN_name.py`` is what people edit; ``notebooks/NN_name.ipynb`` is its executed copy that
nbval checks. A change to one without the other fails here (cell kinds, code, Markdown, cell
metadata such as tags); rebuild with ``make notebooks``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from pe_helpers import editions

ROOT = Path(__file__).resolve().parents[1]
SOURCES = editions.sources(ROOT / "notebooks")


def test_every_notebook_has_a_source_and_back():
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert notebooks and notebooks == [s.stem for s in SOURCES]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem[:2])
def test_notebook_matches_its_source(source):
    for lang in editions.LANGUAGES:
        path = editions.edition_path(source, lang)
        if lang == "en" or path.exists():
            assert editions.differences(source, path, lang) == []


def test_a_changed_cell_is_caught(tmp_path):
    source = SOURCES[0]
    nb = nbformat.read(editions.edition_path(source, "en"), as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.source += "\nx = 1"
    md = next(c for c in nb.cells if c.cell_type == "markdown")
    md.source = md.source.replace("a", "o", 1)
    changed = tmp_path / "changed.ipynb"
    nbformat.write(nb, changed)
    notes = editions.differences(source, changed)
    assert len(notes) == 2 and all("text differs" in n for n in notes)


def test_translation_replaces_the_cell_before_it_and_code_is_shared():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_markdown_cell("# 标题", metadata={"lang": "zh"}),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("untranslated"),
    ])
    en, zh = editions.edition(nb, "en"), editions.edition(nb, "zh")
    assert [c.source for c in en.cells] == ["# Title", "x = 1", "untranslated"]
    assert [c.source for c in zh.cells[1:]] == ["# 标题", "x = 1", "untranslated"]
    assert zh.cells[0].metadata["tags"] == ["language"] and 'set_language("zh")' in zh.cells[0].source
    assert all("lang" not in c.metadata for c in zh.cells)
    with pytest.raises(ValueError, match="lang must be one of"):
        editions.edition(nb, "fr")
    orphan = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x"),
                                             nbformat.v4.new_markdown_cell("孤", metadata={"lang": "zh"})])
    with pytest.raises(ValueError, match="cell 1"):
        editions.edition(orphan, "zh")
