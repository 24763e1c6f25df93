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


def test_translation_replaces_markdown_and_code_is_shared():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("untranslated"),
    ])
    en = editions.edition(nb, "en")
    zh = editions.edition(nb, "zh", {"# Title": "# 标题"})
    assert [c.source for c in en.cells] == ["# Title", "x = 1", "untranslated"]
    assert [c.source for c in zh.cells[1:]] == ["# 标题", "x = 1", "untranslated"]
    assert zh.cells[0].metadata["tags"] == ["language"] and 'set_language("zh")' in zh.cells[0].source
    with pytest.raises(ValueError, match="lang must be one of"):
        editions.edition(nb, "fr")


def test_catalogue_round_trip_and_a_changed_english_unit_turns_fuzzy(tmp_path):
    source = tmp_path / "09_demo.py"
    source.write_text('# %% [markdown]\n# # Title\n\n# %%\nx = 1\n\n# %% [markdown]\n# Some "text".\n',
                      encoding="utf-8")
    editions.update_catalogue(source, "zh", {"# Title": "# 标题"})
    assert editions.missing_translations(source, "zh") == ['Some "text".']
    editions.update_catalogue(source, "zh", {'Some "text".': "一些“文字”。"})
    assert editions.missing_translations(source, "zh") == []
    zh = editions.read_edition(source, "zh")
    assert [c.source for c in zh.cells[1:]] == ["# 标题", "x = 1", "一些“文字”。"]
    source.write_text(source.read_text(encoding="utf-8").replace("Some", "More"), encoding="utf-8")
    assert editions.missing_translations(source, "zh") == ['More "text".']
    editions.update_catalogue(source, "zh")  # the edited unit keeps its translation, fuzzy; the title stays done
    assert editions.load_translations(source, "zh") == {"# Title": "# 标题"}
    assert [(r.state, r.text) for r in editions.needs_review(source, "zh")] == [("fuzzy", 'More "text".')]
    assert '#| msgid "Some \\"text\\"."' in editions.catalogue_path(source, "zh").read_text(encoding="utf-8")


TRANSLATED = [s for s in SOURCES if editions.catalogue_path(s, "zh").exists()]


@pytest.mark.parametrize("source", TRANSLATED, ids=lambda p: p.stem[:2])
def test_every_markdown_cell_has_its_chinese_translation(source):
    """Fails while a unit of the Chinese edition is fuzzy (its English changed), untranslated, or not in the
    catalogue at all."""
    review = editions.needs_review(source, "zh")
    assert not review, (f"{len(review)} unit(s) of {source.name} to translate or review; run `python -m "
                        f"pe_helpers.editions update-po --lang zh`, then translate them and remove their `#, fuzzy` "
                        f"marks:\n" + "\n".join(map(str, review[:20])))


@pytest.mark.parametrize("source", TRANSLATED, ids=lambda p: p.stem[:2])
def test_both_editions_run_the_same_code(source):
    def code(path):
        nb = nbformat.read(path, as_version=4)
        return [c.source for c in nb.cells if c.cell_type == "code" and "language" not in c.metadata.get("tags", [])]

    zh = nbformat.read(editions.edition_path(source, "zh"), as_version=4)
    assert zh.cells[0].metadata.get("tags") == ["language"]
    assert code(editions.edition_path(source, "en")) == code(editions.edition_path(source, "zh"))


def test_every_source_is_translated():
    assert [s.stem for s in TRANSLATED] == [s.stem for s in SOURCES], "notebooks without a Chinese catalogue"
