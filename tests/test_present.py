"""Present mode without a browser: the edition switch, the launcher's Voilà options, slide numbers.

The decks themselves are walked in Chromium by tests/browser/test_slides.py; here, what can be checked
from the files: ``make present NB=03 LANG=zh`` serves notebooks/zh/, the slide each cell lands on (the
rule of nbconvert's reveal.js exporter), that both editions number their slides alike, and that
TEACHING.md's slide table names the slides the decks really have.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pe_helpers import present

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
DECKS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("lang", "folder"), [("", "notebooks"), ("zh", "notebooks/zh"), ("zh_CN.UTF-8", "notebooks")])
def test_make_present_lang_picks_the_edition(lang: str, folder: str) -> None:
    cmd = ["make", "-n", "--no-print-directory", "-C", str(REPO), "-o", ".venv/.installed", "present", "NB=03"]
    result = subprocess.run([*cmd, f"LANG={lang}"] if lang else cmd, capture_output=True, text=True, timeout=60, check=True)
    assert f"--nb-dir '{folder}'" in result.stdout, result.stdout


def test_present_lang_zh_lists_the_chinese_decks(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(REPO)
    assert present.main(["--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert f"{Path('notebooks') / 'zh'} 中的幻灯片" in out and "Decks in" not in out  # it speaks the edition's language
    assert present.main([]) == 0 and "Decks in notebooks" in capsys.readouterr().out  # and the language is restored
    assert [line.split()[1] for line in out.splitlines() if re.match(r"\s+\d\d\s", line)] == [p.name for p in DECKS]


def test_present_rejects_an_unknown_edition(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        present.main(["03", "--lang", "fr"])
    assert "--lang" in capsys.readouterr().err


def test_voila_runs_the_deck_in_a_preheated_kernel() -> None:
    args = present.voila_arguments(Path("notebooks/03_x.ipynb"), 8866, "t")
    assert "--VoilaConfiguration.preheat_kernel=True" in args and "--VoilaConfiguration.default_pool_size=1" in args
    assert f"--VoilaKernelManager.fill_delay={present.REFILL_DELAY}" in args
    assert "--Voila.ip=127.0.0.1" in args and "--token=t" in args


@pytest.mark.parametrize("text, seconds", [("", 0.0), ("3600", 3600.0), (" 60.5 ", 60.5), ("0", 0.0)])
def test_the_refill_delay_can_be_set_from_the_environment(monkeypatch, text: str, seconds: float) -> None:  # noqa: ANN001
    monkeypatch.setenv(present.REFILL_DELAY_VARIABLE, text)
    assert f"--VoilaKernelManager.fill_delay={seconds}" in present.voila_arguments(Path("notebooks/03_x.ipynb"), 8866, "t")


@pytest.mark.parametrize("text", ["soon", "-1", "nan", "inf", "1e999", "1 h"])
def test_a_refill_delay_that_is_not_seconds_is_refused_naming_it(monkeypatch, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
                                                                  text: str) -> None:
    monkeypatch.setenv(present.REFILL_DELAY_VARIABLE, text)
    monkeypatch.chdir(REPO)
    assert present.main(["03"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("make present: PE_PRESENT_REFILL_DELAY must be a number of seconds, 0 or more") and repr(text.strip()) in err


def test_slide_numbers_follow_the_reveal_exporter() -> None:
    def cell(kind: str | None) -> dict:
        return {"metadata": {"slideshow": {"slide_type": kind}} if kind else {}}

    kinds = ["skip", None, "slide", "fragment", "notes", "subslide", "-", "skip", "slide"]
    assert present.slide_numbers([cell(k) for k in kinds]) == [None, 1, 2, 2, None, 3, 3, None, 4]
    assert present.slide_numbers([cell("skip"), cell("subslide")]) == [None, 1]


@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.name[:2])
def test_both_editions_show_each_cell_on_the_same_slide(deck: Path) -> None:
    zh = _cells(NOTEBOOKS / "zh" / deck.name)
    assert zh[0]["metadata"].get("tags") == ["language"]
    assert present.slide_numbers(zh)[1:] == present.slide_numbers(_cells(deck)) and present.slide_numbers(zh)[0] is None


#: How each guide's slide table names a section and an exercise: English ``§3`` and ``Summary``, Chinese ``第 3 节`` and
#: the Chinese edition's own headings; the headings a table leaves out (the references).
HEADINGS = {"en": {"section": "§{}", "exercise": r"^### Exercise (\d+\.\d+)", "skip": "References"},
            "zh": {"section": "第 {} 节", "exercise": r"^### 练习 (\d+\.\d+)", "skip": "参考资料"}}


def outline(cells: list[dict], lang: str = "en") -> dict[str, object]:
    """What the ``lang`` guide's slide table lists for one deck: slide count, sections, apps, exercises."""
    style = HEADINGS[lang]
    numbers = present.slide_numbers(cells)
    sections, apps, exercises = [], [], []
    for cell, number in zip(cells, numbers):
        if number is None:
            continue
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for heading in re.findall(r"^## (.+)$", source, re.M):
                numbered = re.match(r"(\d+) · ", heading)
                label = style["section"].format(numbered.group(1)) if numbered else heading.strip()
                if label != style["skip"]:
                    sections.append((label, number))
            exercises += [(ex, number) for ex in re.findall(style["exercise"], source, re.M)]
        else:
            apps += [(name, number) for name in re.findall(r"\b(\w+_app)\(", source)]
    return {"slides": max(n for n in numbers if n), "sections": sections, "apps": apps, "exercises": exercises}


GUIDES = {"en": REPO / "TEACHING.md", "zh": REPO / "TEACHING.zh.md"}


def teaching_rows(lang: str = "en") -> dict[str, dict[str, object]]:
    """The ``lang`` guide's slide table, parsed: deck number -> the same fields as :func:`outline` (the Chinese table
    writes ``第 1 节：2，…`` and ``1.1（3）``)."""
    text = GUIDES[lang].read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        match = re.match(r"\| \*\*(\d\d)\*\* [^|]+\| (\d+) \| ([^|]*) \| ([^|]*) \| ([^|]*) \|$", line)
        if not match:
            continue
        deck, slides, sections, apps, exercises = match.groups()
        rows[deck] = {
            "slides": int(slides),
            "sections": [(label.strip(), int(n)) for label, n in re.findall(r"([^,:，：]+)[:：] ?(\d+)", sections)],
            "apps": [(name, int(n)) for name, n in re.findall(r"`(\w+)` ?[(（](\d+)[)）]", apps)],
            "exercises": [(ex, int(n)) for ex, n in re.findall(r"(\d+\.\d+) ?[(（](\d+)[)）]", exercises)],
        }
    return rows


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_teaching_slide_table_names_the_real_slides(lang: str) -> None:
    rows = teaching_rows(lang)
    guide = GUIDES[lang].name
    assert sorted(rows) == [p.name[:2] for p in DECKS], f"{guide}'s slide table needs one row per deck"
    for deck in DECKS:
        expected = outline(_cells(deck if lang == "en" else NOTEBOOKS / "zh" / deck.name), lang)
        assert rows[deck.name[:2]] == expected, (
            f"{guide}'s slide row for deck {deck.name[:2]} does not match the {lang} deck of notebooks/{deck.stem}.py:\n"
            f"  table: {rows[deck.name[:2]]}\n  deck:  {expected}")


@pytest.mark.parametrize(("env", "points"), [("1", 14.0), ("", 10.5)])
def test_pe_present_sets_the_decks_text_size(env: str, points: float) -> None:
    """``make present`` starts its kernels with ``PE_PRESENT=1``: their figures draw text of at least 14 pt (the
    figure tests run at both sizes through the ``text_size`` fixture; the decks measure it on the screen)."""
    code = "from pe_helpers.figures import _base; print(_base.MIN_FONT_PT)"
    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PE_PRESENT": env}, capture_output=True,
                            text=True, timeout=60, check=True)
    assert float(result.stdout) == points
