"""Translations that survive an edit: catalogue entries are units of a Markdown cell, not whole cells.

``pe_helpers.editions.split_units`` cuts a cell into paragraphs, list items, headings, tables, code blocks and
formulas; the edition joins the translated units back with the cell's own blank lines. Editing one sentence
therefore touches one entry, which ``update-po`` keeps with its former translation, marked fuzzy, until a
translator reviews it. Every test here works on copies in a temporary folder, never on the real catalogues.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from hypothesis import given
from hypothesis import strategies as st

from pe_helpers import editions

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [s for s in editions.sources(ROOT / "notebooks") if editions.catalogue_path(s, "zh").exists()]


def _between_units(cut: editions.CellUnits) -> bool:
    """Whether every gap holds only blank lines (or a quote's empty ``>`` lines): no text is left out of a unit."""
    return all(not gap.replace(">", "").strip() for gap in cut.gaps)


# --- The rule ---

@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem[:2])
def test_every_cell_and_its_translation_come_back_byte_for_byte(source):
    done = editions.load_translations(source, "zh")
    for cell in editions.markdown_cells(source):
        for text in (cell, editions.translate_cell(cell, done)):
            cut = editions.split_units(text)
            assert cut.join() == text and _between_units(cut)
            assert cut.join(cut.units) == text and editions.translate_cell(text, {}) == text


LINES = ["", " ", "para text", "more text", "  continued", "# Heading", "### Sub", "#hashtag", "- item", "* item",
         "+ item", "  - nested", "1. first", "2. second", "2017. a year", "| a | b |", "|---|---|", "```", "```python",
         "~~~", "$$", "$$x$$", "$$a = b", "c$$", "text $$ y", "+ y$$", "> quoted", "> - quoted item", ">", "> > deep",
         "**bold**", "---", "\r", "tab\tline"]


@given(st.lists(st.sampled_from(LINES), max_size=14))
def test_any_lines_come_back_byte_for_byte(lines):
    text = "\n".join(lines)
    cut = editions.split_units(text)
    assert cut.join() == text and _between_units(cut)
    assert len(cut.units) == len(cut.kinds) == len(cut.gaps) - 1
    assert all(unit.strip() for unit in cut.units)
    assert editions.translate_cell(text, {u: u.upper() for u in cut.units}) == cut.join(u.upper() for u in cut.units)


@pytest.mark.parametrize(("text", "units", "kinds"), [
    ("One line.", ["One line."], ["paragraph"]),
    ("", [], []),
    ("\n\nPadded.\n", ["Padded."], ["paragraph"]),
    ("A wrapped\nparagraph.\n\nAnother one.", ["A wrapped\nparagraph.", "Another one."], ["paragraph", "paragraph"]),
    ("## Title\nText right under it.", ["## Title", "Text right under it."], ["heading", "paragraph"]),
    ("**Lead-in**\n- one;\n- two,\n  wrapped;\n  - nested.",
     ["**Lead-in**", "- one;", "- two,\n  wrapped;", "  - nested."], ["paragraph", "item", "item", "item"]),
    ("1. first\n2. second", ["1. first", "2. second"], ["item", "item"]),
    ("Published in\n2017. A year, not an item.", ["Published in\n2017. A year, not an item."], ["paragraph"]),
    ("Text\n1. an item after all", ["Text", "1. an item after all"], ["paragraph", "item"]),
    ("| a | b |\n|---|---|\n| 1 | 2 |\nAfter.", ["| a | b |\n|---|---|\n| 1 | 2 |", "After."], ["table", "paragraph"]),
    ("```\nx = 1\n\n# two\n```\nAfter.", ["```\nx = 1\n\n# two\n```", "After."], ["code", "paragraph"]),
    ("$$a\n\n+ b$$\n\nSo.", ["$$a\n\n+ b$$", "So."], ["math", "paragraph"]),
    ("$$x$$\nthen text", ["$$x$$", "then text"], ["math", "paragraph"]),
    ("so that\n$$a\n- b$$\nholds.", ["so that\n$$a\n- b$$\nholds."], ["paragraph"]),
    ("> **Note.** A box\n> on two lines:\n> - one;\n> - two.\n>\n> End.",
     ["> **Note.** A box\n> on two lines:", "> - one;", "> - two.", "> End."],
     ["> paragraph", "> item", "> item", "> paragraph"]),
    ("> quoted\nnot quoted", ["> quoted", "not quoted"], ["> paragraph", "paragraph"]),
    ("> > deep\n> shallow", ["> > deep", "> shallow"], [">> paragraph", "> paragraph"]),
    ("```\nunclosed\n\nfence", ["```\nunclosed\n\nfence"], ["code"]),
])
def test_the_rule_on_each_kind_of_block(text, units, kinds):
    cut = editions.split_units(text)
    assert (list(cut.units), list(cut.kinds)) == (units, kinds)
    assert cut.join() == text


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="text must be a Markdown cell's text"):
        editions.split_units(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="units must be 2 texts"):
        editions.split_units("a\n\nb").join(["only one"])


# --- Catalogues on a copy of a real notebook ---

def _copy(source: Path, folder: Path) -> Path:
    """A copy of ``source`` and its Chinese catalogue in ``folder/notebooks``; returns the copied source."""
    notebooks = folder / "notebooks"
    (notebooks / "locale" / "zh").mkdir(parents=True)
    shutil.copy(source, notebooks / source.name)
    shutil.copy(editions.catalogue_path(source, "zh"), editions.catalogue_path(notebooks / source.name, "zh"))
    return notebooks / source.name


def _chinese_cells(source: Path) -> list[str]:
    return [c.source for c in editions.read_edition(source, "zh").cells[1:] if c.cell_type == "markdown"]


def _multi_paragraph_cell(source: Path) -> tuple[int, str, int]:
    """The first Markdown cell with two paragraphs or more, and the index of one of its paragraphs to edit."""
    for number, cell in enumerate(editions.markdown_cells(source)):
        cut = editions.split_units(cell)
        paragraphs = [i for i, kind in enumerate(cut.kinds) if kind == "paragraph" and " the " in cut.units[i]
                      and len(cut.units[i]) > 60]
        if len(cut.units) >= 3 and cut.kinds.count("paragraph") >= 2 and paragraphs:
            return number, cell, paragraphs[0]
    raise AssertionError(f"{source.name} has no cell with two paragraphs")


def test_editing_one_sentence_marks_only_its_unit_for_review(tmp_path):
    """The demonstration: one English sentence of a multi-paragraph cell edited, ``update-po`` run; the rest of the
    cell keeps its translation, the edited unit keeps its former one marked fuzzy, and the edition test fails."""
    source = _copy(SOURCES[3], tmp_path)
    before = _chinese_cells(source)
    number, cell, index = _multi_paragraph_cell(source)
    cut = editions.split_units(cell)
    old_unit, old_translation = cut.units[index], editions.load_translations(source, "zh")[cut.units[index]]
    new_unit = old_unit.replace(" the ", " this ", 1)
    text = source.read_text(encoding="utf-8")
    first, rest = old_unit.split("\n")[0], new_unit.split("\n")[0]
    assert text.count(f"# {first}\n") == 1
    source.write_text(text.replace(f"# {first}\n", f"# {rest}\n"), encoding="utf-8")
    assert editions.markdown_cells(source)[number] == cut.join(new_unit if i == index else u
                                                               for i, u in enumerate(cut.units))

    assert editions.main(["update-po", "--lang", "zh", "--folder", str(source.parent)]) == 0
    review = editions.needs_review(source, "zh")
    assert [(r.state, r.text) for r in review] == [("fuzzy", new_unit)]  # one unit, in the whole notebook
    entry = read_po(editions.catalogue_path(source, "zh").open("rb"), locale="zh")[new_unit]
    assert entry.fuzzy and entry.string == old_translation
    po_text = editions.catalogue_path(source, "zh").read_text(encoding="utf-8")
    escaped = first.replace("\\", "\\\\").replace('"', '\\"')
    assert any(line.startswith("#| ") and escaped in line for line in po_text.split("\n"))  # the former English
    editions.update_catalogue(source, "zh")
    assert editions.catalogue_path(source, "zh").read_text(encoding="utf-8") == po_text  # kept on the next update
    po_lines = po_text.split("\n")
    assert po_lines[review[0].po_line - 1].startswith("msgid") and review[0].source_line
    assert source.read_text(encoding="utf-8").split("\n")[review[0].source_line - 1] == f"# {rest}"

    # the edition: the cell's other units stay in Chinese, the edited one shows in English until reviewed
    done = editions.load_translations(source, "zh")
    assert all(unit in done for i, unit in enumerate(cut.units) if i != index)
    after = _chinese_cells(source)
    assert after[:number] == before[:number] and after[number + 1:] == before[number + 1:]
    assert after[number] == before[number].replace(old_translation, new_unit, 1) != before[number]

    # the translator reviews it (here keeps the translation): nothing is left to review
    editions.update_catalogue(source, "zh", {new_unit: old_translation})
    assert editions.needs_review(source, "zh") == [] and _chinese_cells(source) == before


def test_update_keeps_drops_and_adds_units(tmp_path):
    source = tmp_path / "09_demo.py"
    cell = "# %% [markdown]\n# ## Title\n#\n# First paragraph, which stays.\n#\n# Second paragraph, to be removed.\n"
    source.write_text(cell, encoding="utf-8")
    editions.update_catalogue(source, "zh", {"## Title": "## 标题", "First paragraph, which stays.": "第一段。",
                                             "Second paragraph, to be removed.": "第二段。"})
    assert editions.needs_review(source, "zh") == []
    source.write_text(cell.replace("Second paragraph, to be removed.", "A wholly new thought about frequencies."),
                      encoding="utf-8")
    assert [(r.state, r.text) for r in editions.needs_review(source, "zh")] == [
        ("missing", "A wholly new thought about frequencies.")]
    editions.update_catalogue(source, "zh")
    catalogue = read_po(editions.catalogue_path(source, "zh").open("rb"), locale="zh")
    assert {m.id: (m.string, m.fuzzy) for m in catalogue if m.id} == {
        "## Title": ("## 标题", False), "First paragraph, which stays.": ("第一段。", False),
        "A wholly new thought about frequencies.": ("", False)}  # not like the removed one: no fuzzy guess
    assert [(r.state, r.po_line is not None) for r in editions.needs_review(source, "zh")] == [("untranslated", True)]
    assert _chinese_cells(source) == ["## 标题\n\n第一段。\n\nA wholly new thought about frequencies."]


def _whole_cell_catalogue(source: Path, translations: dict[str, str]) -> None:
    """Write ``source``'s catalogue in the former layout: one entry per whole Markdown cell."""
    catalogue = Catalog(locale="zh", project=f"pe-notebooks {source.stem}", fuzzy=False)
    for number, cell in enumerate(editions.markdown_cells(source)):
        catalogue.add(cell, translations.get(cell, ""), auto_comments=[f"Markdown cell {number + 1} of {source.name}"])
    editions.catalogue_path(source, "zh").parent.mkdir(parents=True, exist_ok=True)
    with editions.catalogue_path(source, "zh").open("wb") as handle:
        write_po(handle, catalogue, width=0, omit_header=False, include_lineno=False)


@pytest.mark.parametrize("real", [SOURCES[0], SOURCES[-1]], ids=lambda p: p.stem[:2])
def test_convert_splits_whole_cells_and_is_idempotent(tmp_path, real):
    source = _copy(real, tmp_path)
    chinese = _chinese_cells(source)
    cells = editions.markdown_cells(source)
    _whole_cell_catalogue(source, dict(zip(cells, chinese)))
    assert _chinese_cells(source) == chinese
    done = editions.convert_catalogue(source, "zh")
    assert done.split > 0 and done.cells == len(cells) and done.entries > done.cells
    assert _chinese_cells(source) == chinese and editions.needs_review(source, "zh") == []
    path = editions.catalogue_path(source, "zh")
    written = path.read_bytes(), path.stat().st_mtime_ns
    again = editions.convert_catalogue(source, "zh")
    assert again.split == 0 and (again.entries, again.whole) == (done.entries, done.whole)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == written  # a unit catalogue is left alone
    editions.update_catalogue(source, "zh")
    assert path.read_bytes() == written[0]  # and update-po writes it the same


def test_a_cell_whose_translation_does_not_pair_stays_whole_and_is_reviewed_whole(tmp_path):
    source = tmp_path / "09_demo.py"
    source.write_text("# %% [markdown]\n# Para one.\n#\n# Para two.\n\n# %% [markdown]\n# Same line.\n#\n# Other.\n\n"
                      "# %% [markdown]\n# Same line.\n#\n# More.\n", encoding="utf-8")
    one, two, three = editions.markdown_cells(source)
    _whole_cell_catalogue(source, {one: "第一段。\n\n第二段。\n\n译者加的一段。",      # three units for two
                                   two: "同一行。\n\n别的。", three: "同一行，另一种说法。\n\n更多。"})  # a conflict
    chinese = _chinese_cells(source)
    done = editions.convert_catalogue(source, "zh")
    assert (done.cells, done.entries, done.whole, done.split) == (3, 3, 3, 0)
    assert done.kept_whole == ("Para one.", "Same line.", "Same line.")
    assert _chinese_cells(source) == chinese
    # an edited whole cell stays whole, with its former translation marked fuzzy
    source.write_text(source.read_text(encoding="utf-8").replace("Para two.", "Para 2."), encoding="utf-8")
    editions.update_catalogue(source, "zh")
    review = editions.needs_review(source, "zh")
    assert [(r.state, r.text) for r in review] == [("fuzzy", "Para one.\n\nPara 2.")]
    assert "whole" in review[0].where


def test_review_and_build_list_the_units_to_review(tmp_path, capsys):
    source = _copy(SOURCES[1], tmp_path)
    assert editions.main(["review", "--lang", "zh", "--folder", str(source.parent)]) == 0
    heading = next(u for u in editions.load_translations(source, "zh") if u.startswith("## "))
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace(f"# {heading}\n", f"# {heading} (edited)\n", 1), encoding="utf-8")
    capsys.readouterr()
    assert editions.main(["review", "--lang", "zh", "--folder", str(source.parent)]) == 1
    listed = capsys.readouterr().err
    assert f"{editions.catalogue_path(source, 'zh')}: missing: {source}:" in listed and "(edited)" in listed
    editions.update_catalogue(source, "zh")
    editions.build(source.parent, ["zh"])
    listed = capsys.readouterr().err
    catalogue, copied = (re.escape(str(p)) for p in (editions.catalogue_path(source, "zh"), source))
    assert re.search(rf"{catalogue}:\d+: fuzzy: {copied}:\d+ \(Markdown cell \d+ of .*\(heading\)\): ## .*\(edited\)",
                     listed), listed
    assert (source.parent / "zh" / f"{source.stem}.ipynb").exists()


def test_todo_and_merge_carry_fuzzy_units(tmp_path, capsys):
    import json

    source = tmp_path / "09_demo.py"
    source.write_text("# %% [markdown]\n# A sentence about positions.\n", encoding="utf-8")
    editions.update_catalogue(source, "zh", {"A sentence about positions.": "一句关于位置的话。"})
    source.write_text("# %% [markdown]\n# A sentence about the positions.\n", encoding="utf-8")
    editions.update_catalogue(source, "zh")
    assert editions.main(["todo", "--lang", "zh", "--folder", str(tmp_path)]) == 0
    todo = json.loads(capsys.readouterr().out)
    assert todo == {"09_demo": {"A sentence about the positions.": "一句关于位置的话。"}}
    done = tmp_path / "done.json"
    done.write_text(json.dumps({"09_demo": {"A sentence about the positions.": "一句关于这些位置的话。"}}), encoding="utf-8")
    assert editions.main(["merge", "--lang", "zh", "--folder", str(tmp_path), str(done)]) == 0
    assert editions.needs_review(source, "zh") == [] and _chinese_cells(source) == ["一句关于这些位置的话。"]


DEMO = """# %% [markdown]
# ## 3 · Frequencies of the table
#
# The first paragraph says what the table holds, over two
# lines of the source.
#
# The second paragraph says why the frequencies fall geometrically.
#
# - one item about the fast pairs;
# - another item about the slow pairs.

# %%
x = 1

# %% [markdown]
# | scheme | where |
# |---|---|
# | learned | added to the input |
#
# $$\\omega_i = \\text{base}^{-2i/d}$$
"""
DEMO_ZH = {"## 3 · Frequencies of the table": "## 3 · 表的频率",
           "The first paragraph says what the table holds, over two\nlines of the source.": "第一段说明表里有什么。",
           "The second paragraph says why the frequencies fall geometrically.": "第二段说明频率为什么按等比下降。",
           "- one item about the fast pairs;": "- 关于快维度组的一项；",
           "- another item about the slow pairs.": "- 关于慢维度组的另一项。",
           "| scheme | where |\n|---|---|\n| learned | added to the input |": "| 方案 | 位置 |\n|---|---|\n| 可学习 | 加到输入上 |",
           "$$\\omega_i = \\text{base}^{-2i/d}$$": "$$\\omega_i = \\text{base}^{-2i/d}$$"}
FIRST, SECOND = ("# The first paragraph says what the table holds, over two\n# lines of the source.\n",
                 "# The second paragraph says why the frequencies fall geometrically.\n")


@pytest.mark.parametrize(("edit", "review"), [
    (lambda t: t.replace("fast pairs", "fastest pairs"), [("fuzzy", "item")]),
    (lambda t: t.replace("of the table", "of the sinusoidal table"), [("fuzzy", "heading")]),
    (lambda t: t.replace("added to the input", "added to the token"), [("fuzzy", "table")]),
    (lambda t: t.replace("-2i/d}", "-2i/d_{model}}"), [("fuzzy", "math")]),
    (lambda t: t.replace("over two\n# lines", "over\n# two lines"), [("fuzzy", "paragraph")]),  # rewrapped
    (lambda t: t.replace(FIRST + "#\n" + SECOND, SECOND + "#\n" + FIRST), []),  # paragraphs swapped
    (lambda t: t.replace("#\n" + SECOND, ""), []),  # a paragraph removed
    (lambda t: t.replace(SECOND, SECOND + "#\n# A third paragraph, all new, on wavelengths.\n"),
     [("untranslated", "paragraph")]),
], ids=["list item", "heading", "table", "formula", "rewrapped", "swapped", "removed", "added"])
def test_each_kind_of_edit_touches_only_its_unit(tmp_path, edit, review):
    source = tmp_path / "09_demo.py"
    source.write_text(DEMO, encoding="utf-8")
    editions.update_catalogue(source, "zh", DEMO_ZH)
    assert editions.needs_review(source, "zh") == []
    source.write_text(edit(DEMO), encoding="utf-8")
    editions.update_catalogue(source, "zh")
    found = editions.needs_review(source, "zh")
    assert [(r.state, r.where.rsplit("(", 1)[-1].rstrip(")")) for r in found] == review
    units = {unit for cell in editions.markdown_cells(source) for unit in editions.split_units(cell).units}
    assert editions.load_translations(source, "zh") == {u: DEMO_ZH[u] for u in units if u in DEMO_ZH}  # the rest kept
    catalogue = editions.catalogue_path(source, "zh").read_text(encoding="utf-8")
    assert "#~" not in catalogue  # no obsolete entries are kept
