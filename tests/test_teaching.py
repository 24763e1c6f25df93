"""TEACHING.md and TEACHING.zh.md say what the notebooks say: numbers, notebooks, sections, exercises, apps, checkers.

Every test that reads a guide runs for both (``lang`` = en, zh); the Chinese guide is checked against the
Chinese edition's headings (the notebooks' ``notebooks/locale/zh`` catalogues) and against the glossary
(``pe_helpers.glossary``), whose Chinese-first table it must contain.

Every number TEACHING.md quotes from a notebook is written between markers,
``<!--nb:KEY-->VALUE<!--/nb-->`` (invisible when rendered), and :data:`NUMBERS` says where KEY comes from:
a pattern in a notebook's *stored* outputs (the executed ``.ipynb`` that nbval checks), or notebook 05's
shipped lab reference (``pe_helpers.extrapolation.reference_results()``, the data notebook 06's closing table is
built from): ``lab.*`` keys read the copy task, ``lab.lookback.*`` keys the look-back task. The test fails when a value differs; after re-running a notebook or the lab, refresh them with

    PYTHONPATH=$PWD python tests/test_teaching.py --fill

which rewrites only the text between the markers, in both guides.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEACHING = ROOT / "TEACHING.md"
GUIDES = {"en": TEACHING, "zh": ROOT / "TEACHING.zh.md"}
NOTEBOOKS = ROOT / "notebooks"
MARKER = re.compile(r"<!--nb:(?P<key>[\w.+/-]+)-->(?P<value>.*?)<!--/nb-->")


# ---- where each number comes from -------------------------------------------------------------------------
@cache
def notebook_path(number: str) -> Path:
    found = sorted(NOTEBOOKS.glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        raise FileNotFoundError(f"expected one notebooks/{number}_*.ipynb, found {[p.name for p in found]}")
    return found[0]


@cache
def stored_text(number: str) -> str:
    """All text outputs (streams and text/plain results) stored in an executed notebook, joined."""
    cells = json.loads(notebook_path(number).read_text(encoding="utf-8"))["cells"]
    parts = []
    for cell in cells:
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            parts.append(text if isinstance(text, str) else "".join(text))
    return "\n".join(parts)


def output(number: str, pattern: str, group: int = 1, fmt: Callable[[str], str] = str) -> Callable[[], str]:
    """A value read from notebook ``number``'s stored outputs with ``pattern``."""

    def read() -> str:
        match = re.search(pattern, stored_text(number))
        if match is None:
            raise LookupError(f"pattern {pattern!r} not found in the stored outputs of {notebook_path(number).name}; "
                              "the notebook's printout changed: update NUMBERS in tests/test_teaching.py")
        return fmt(match.group(group))

    return read


@cache
def lab():
    from pe_helpers.extrapolation import reference_results

    return reference_results()


def lookback_offset() -> int:
    """How many places back the look-back task reaches (``pe_helpers.extrapolation.LOOKBACK``)."""
    from pe_helpers.extrapolation import LOOKBACK

    return LOOKBACK


def percent(x: float) -> str:
    return f"{100 * x:.1f} %"


def lab_value(fn: Callable, fmt: Callable[[float], str] = lambda x: f"{x:.2f}") -> Callable[[], str]:
    return lambda: fmt(fn(lab()))


def _far(r, e, task="copy"):
    """Mean accuracy from 2L + 1 to the last tested size (4L)."""
    return r.mean_accuracy(e, 2 * r.train_len + 1, r.test_len, task)


def _past(r, e, task="copy"):
    """Mean accuracy over L + 1 .. 2L (notebook 05's "past L")."""
    return r.mean_accuracy(e, r.train_len + 1, 2 * r.train_len, task)


def _near(r, e, task="copy"):
    """Mean accuracy just past L, over L + 1 .. L + L/4 (notebook 05's "just past L" for L = 8; 06's "near")."""
    return r.mean_accuracy(e, r.train_len + 1, r.train_len + max(1, r.train_len // 4), task)


NUMBERS: dict[str, Callable[[], str]] = {
    # 01 §6: the weight on <s> under a causal mask
    "01.s1": output("01", r"weight on <s> at slots 1\.\.5 = \[([-\d.]+), ([-\d.]+), ([-\d.]+)", 1),
    "01.s2": output("01", r"weight on <s> at slots 1\.\.5 = \[([-\d.]+), ([-\d.]+), ([-\d.]+)", 2),
    "01.s3": output("01", r"weight on <s> at slots 1\.\.5 = \[([-\d.]+), ([-\d.]+), ([-\d.]+)", 3),
    # 02
    "02.dQ": output("02", r"additive X \+ P: relative change\s+Q ([\d.]+)"),
    "02.dK": output("02", r"additive X \+ P: relative change\s+Q [\d.]+\s+K ([\d.]+)"),
    "02.dV": output("02", r"additive X \+ P: relative change\s+Q [\d.]+\s+K [\d.]+\s+V ([\d.]+)"),
    "02.acc_pos": output("02", r"accuracy with learned positions: ([\d.]+)"),
    "02.acc_nopos": output("02", r"without positions: ([\d.]+)"),
    "02.slot0": output("02", r"accuracy at slots 0\.\.4: \[([\d.]+)"),
    "02.newcos": output("02", r"mean \|cos\| between new and trained rows: ([\d.]+)"),
    # 03
    "03.lam16": output("03", r"d =  16, base =   10000: .*?wavelengths 6\.28 …\s+([\d.]+)", fmt=lambda s: f"{float(s):.0f}"),
    "03.lam64": output("03", r"d =  64, base =   10000: .*?wavelengths 6\.28 …\s+([\d.]+)", fmt=lambda s: f"{float(s):.0f}"),
    "03.flips0": output("03", r"sign changes over positions 1\.\.63, pairs 0\.\.11: \[(\d+)"),
    "03.err1e5": output("03", r"pos =  100000: .*?seed recipe error ≈ ([\de.+-]+)"),
    "03.err1e6": output("03", r"pos = 1000000: .*?seed recipe error ≈ ([\de.+-]+)"),
    "03.t2t_lambda": output("03", r"slowest wavelength paper (\d+)"),
    # 04
    "04.pairs": output("04", r"for (\d+) \(pos, k\) pairs"),
    "04.rise64_a": output("04", r"d =  64, base =   10000: rises from k = (\d+) to (\d+)", 1),
    "04.rise64_b": output("04", r"d =  64, base =   10000: rises from k = (\d+) to (\d+)", 2),
    # 06
    "06.s_neg3": output("06", r"offset n - m =  -3: score ([-+][\d.]+)"),
    "06.s_pos3": output("06", r"offset n - m =  \+3: score ([-+][\d.]+)"),
    "06.vchange": output("06", r"V changes by (\d+)%"),
    "06.shifts": output("06", r"identical for (\d+) shifts"),
    "06.drift32": output("06", r"angles in float32 : .*?drifts by up to ([\d.e+-]+)"),
    "06.driftbf16": output("06", r"angles in bfloat16: .*?drifts by up to ([\d.e+-]+)"),
    "06.f32_1e5": output("06", r"m =  100003: float32 angle error ([\d.e+-]+) rad"),
    "06.bound_1e5": output("06", r"m =  100003: float32 angle error [\d.e+-]+ rad <= bound ([\d.e+-]+) rad"),
    "06.bf16_10001": output("06", r"bfloat16\s+[\d.e+-]+\s+[\d.e+-]+\s+[\d.e+-]+\s+([\d.e+-]+)"),
    # notebook 05's committed lab run (the data of notebook 06's closing table)
    "lab.L": lab_value(lambda r: r.train_len, str),
    "lab.2L": lab_value(lambda r: 2 * r.train_len, str),
    "lab.chance": lab_value(lambda r: 1 / r.config.vocab_size, lambda x: f"{100 * x:.0f} %"),
    "lab.sin_in": lab_value(lambda r: r.in_distribution("sinusoidal"), percent),
    "lab.sin_far": lab_value(lambda r: _far(r, "sinusoidal"), percent),
    "lab.ext_far": lab_value(lambda r: _far(r, "learned-extended"), percent),
    "lab.learned_in": lab_value(lambda r: r.in_distribution("learned"), lambda x: f"{x:.3f}"),
    "lab.sin_in3": lab_value(lambda r: r.in_distribution("sinusoidal"), lambda x: f"{x:.3f}"),
    "lab.rope_L+1": lab_value(lambda r: r.accuracy_at("rope", r.train_len + 1)),
    "lab.rope_L+L/4": lab_value(lambda r: r.accuracy_at("rope", r.train_len + r.train_len // 4)),
    "lab.rope_2L": lab_value(lambda r: r.accuracy_at("rope", 2 * r.train_len)),
    "lab.rope_in": lab_value(lambda r: r.in_distribution("rope")),
    "lab.rope_near": lab_value(lambda r: _near(r, "rope")),
    "lab.rope_far": lab_value(lambda r: _far(r, "rope")),
    "lab.none_in": lab_value(lambda r: r.in_distribution("none")),
    "lab.4L": lab_value(lambda r: r.test_len, str),
    "lab.seeds": lab_value(lambda r: len(r.seeds), str),
    "lab.rand_in": lab_value(lambda r: r.in_distribution("randomized")),
    "lab.none_2L": lab_value(lambda r: r.accuracy_at("none", 2 * r.train_len)),
    "lab.sin_2L": lab_value(lambda r: r.accuracy_at("sinusoidal", 2 * r.train_len)),
    "lab.pi_near": lab_value(lambda r: _near(r, "rope-pi")),
    "lab.none_past": lab_value(lambda r: _past(r, "none")),
    "lab.sin_past": lab_value(lambda r: _past(r, "sinusoidal")),
    "lab.alibi_past": lab_value(lambda r: _past(r, "alibi")),
    "lab.alibi_far": lab_value(lambda r: _far(r, "alibi")),
    "lab.pi_past": lab_value(lambda r: _past(r, "rope-pi")),
    "lab.rope_past": lab_value(lambda r: _past(r, "rope")),
    "lab.rand_sampled_in": lab_value(lambda r: r.in_distribution("randomized-sampled")),
    "lab.rand_sampled_past": lab_value(lambda r: _past(r, "randomized-sampled")),
    # the same reference, look-back task (a fixed offset of LOOKBACK places)
    "lab.lookback.k": lambda: str(lookback_offset()),
    "lab.lookback.rope_past": lab_value(lambda r: _past(r, "rope", "lookback")),
    "lab.lookback.rope_far": lab_value(lambda r: _far(r, "rope", "lookback")),
    "lab.lookback.sin_past": lab_value(lambda r: _past(r, "sinusoidal", "lookback")),
    "lab.lookback.sin_far": lab_value(lambda r: _far(r, "sinusoidal", "lookback")),
    "lab.lookback.ext_far": lab_value(lambda r: _far(r, "learned-extended", "lookback")),
    "lab.lookback.none_past": lab_value(lambda r: _past(r, "none", "lookback")),
    "lab.lookback.none_far": lab_value(lambda r: _far(r, "none", "lookback")),
    "lab.lookback.alibi_past": lab_value(lambda r: _past(r, "alibi", "lookback")),
    "lab.lookback.pi_past": lab_value(lambda r: _past(r, "rope-pi", "lookback")),
    "lab.lookback.yarn_past": lab_value(lambda r: _past(r, "rope-yarn", "lookback")),
    "lab.lookback.ntk_far": lab_value(lambda r: _far(r, "rope-ntk", "lookback"), lambda x: f"{x:.3f}"),
    # notebook 05 §1: the collision and the √d scaling
    "05.ratio_normal": output("05", r"V = 37000, N\(0, 1\) init, ×√d: \|content\| / \|position\| = ([\d.]+)",
                              fmt=lambda s: f"{float(s):.0f}"),
    "05.ratio_xavier": output("05", r"V = 37000, Xavier init, ×√d: \|content\| / \|position\| = ([\d.]+)"),
}


def markers(text: str) -> list[tuple[str, str]]:
    return [(m["key"], m["value"]) for m in MARKER.finditer(text)]


def fill(text: str) -> str:
    """TEACHING.md's text with every marked value replaced by the notebooks' current one."""
    return MARKER.sub(lambda m: f"<!--nb:{m['key']}-->{NUMBERS[m['key']]()}<!--/nb-->", text)


@pytest.fixture(scope="module", params=sorted(GUIDES))
def lang(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def teaching(lang) -> str:
    return GUIDES[lang].read_text(encoding="utf-8")


# ---- the numbers ------------------------------------------------------------------------------------------
def test_teaching_quotes_numbers_from_the_notebooks(teaching):
    found = markers(teaching)
    assert len(found) >= 20, "TEACHING.md should mark the numbers it quotes from the notebooks"
    unknown = sorted({k for k, _ in found} - set(NUMBERS))
    assert not unknown, f"TEACHING.md marks numbers with no source in NUMBERS: {unknown}"
    wrong = [(k, v, NUMBERS[k]()) for k, v in found if v != NUMBERS[k]()]
    assert not wrong, ("TEACHING.md disagrees with the notebooks (key, TEACHING, notebook): "
                       f"{wrong}; run `python tests/test_teaching.py --fill`")


def test_every_number_source_is_readable():
    for key, read in NUMBERS.items():
        value = read()
        assert re.fullmatch(r"[-+]?[\d.]+(e[-+]?\d+)?( %)?", value), (key, value)


def test_markers_catch_a_wrong_number(teaching):
    key, value = markers(teaching)[0]
    tampered = teaching.replace(f"<!--nb:{key}-->{value}<!--/nb-->", f"<!--nb:{key}-->{value}9<!--/nb-->", 1)
    assert tampered != teaching and fill(tampered) == fill(teaching)
    assert any(v != NUMBERS[k]() for k, v in markers(tampered))


def test_no_unmarked_lab_percentages(teaching):
    """A percentage of the lab must come from the lab data: every 'NN.N %' in TEACHING.md is inside a marker."""
    bare = MARKER.sub("", teaching)
    assert not re.findall(r"\d+\.\d %", bare), re.findall(r".{40}\d+\.\d %", bare)


# ---- what TEACHING refers to exists -----------------------------------------------------------------------
@cache
def source(number: str) -> str:
    return notebook_path(number).with_suffix(".py").read_text(encoding="utf-8")


def sections(number: str) -> dict[str, str]:
    """Section number -> heading text, from '## 3 · Title' (and '### 1b · Title') Markdown headings."""
    found = re.findall(r"^# ###? (\d+[a-z]?) · (.+)$", source(number), re.M)
    return dict(found)


@cache
def chinese_text(number: str) -> str | None:
    """The Markdown of notebook ``number``'s Chinese edition, from its catalogue; None without a catalogue.

    Whether every cell is translated is ``tests/test_notebook_sources.py``'s concern; here an untranslated
    cell simply contributes no Chinese heading, so a guide that names it fails.
    """
    from pe_helpers import editions

    src = notebook_path(number).with_suffix(".py")
    if not editions.catalogue_path(src, "zh").exists() or editions.missing_translations(src, "zh"):
        return None  # no Chinese edition yet, or an incomplete one (its own test fails then)
    done = editions.load_translations(src, "zh")
    return "\n\n".join(editions.translate_cell(cell, done) for cell in editions.markdown_cells(src))


def chinese_sections(number: str) -> dict[str, str] | None:
    """Section number -> Chinese heading ('## 3 · 标题'), or None when the notebook has no Chinese catalogue."""
    text = chinese_text(number)
    return None if text is None else dict(re.findall(r"^###? (\d+[a-z]?) · (.+)$", text, re.M))


def cjk_pairs(text: str) -> set[str]:
    """Every two consecutive Chinese characters of ``text``: how a Chinese title is matched to a heading."""
    return {a + b for run in re.findall(r"[\u4e00-\u9fff]+", text) for a, b in zip(run, run[1:])}


def exercise_headings() -> dict[str, str]:
    """Exercise number -> its difficulty stars, from every notebook's headings."""
    out = {}
    for path in sorted(NOTEBOOKS.glob("0*.py")):
        for num, stars in re.findall(r"^# ### Exercise (\d+\.\d+) · .*?\((★[★☆]{2})", path.read_text(encoding="utf-8"), re.M):
            out[num] = stars
    return out


def test_every_notebook_named_in_teaching_exists(teaching, lang):
    named = re.findall(r"^### (\d\d) · (.+?)(?: \(|（|$)", teaching, re.M)
    assert sorted(n for n, _ in named) == [f"0{i}" for i in range(7)], f"{GUIDES[lang].name}: {named}"
    for number, title in named:
        heading = source(number).splitlines()
        assert notebook_path(number).exists()
        if lang == "en":
            first_title = next(line for line in heading if line.startswith("# # "))
            word = title.split()[0].lower()
            assert word in first_title.lower(), (number, title, first_title)
        elif chinese_text(number) is not None:  # the Chinese title shares a word with the Chinese edition's
            first_title = next((line for line in chinese_text(number).splitlines() if line.startswith("# ")), "")
            assert cjk_pairs(title) & cjk_pairs(first_title), (number, title, first_title)


def test_every_section_named_in_teaching_exists(teaching, lang):
    # "02 §5", "03 §5–6" and the per-notebook tables "| min | 3 · Title | …" under "### NN ·"
    refs = set(re.findall(r"\b(0[0-6]) §(\d+[a-z]?)", teaching))
    current = None
    for line in teaching.splitlines():
        head = re.match(r"^### (\d\d) · ", line)
        if head:
            current = head.group(1)
        elif line.startswith("## "):
            current = None
        row = re.match(r"^\| \d+ \| (\d+[a-z]?)(?: / \d+)? · ([^|]+?) \|", line)
        if current and row:
            refs.add((current, row.group(1)))
            title_words = re.findall(r"[A-Za-z]{4,}", row.group(2))
            if lang == "en" and title_words:
                heading = sections(current).get(row.group(1), "")
                assert any(w.lower() in heading.lower() for w in title_words), (current, row.groups(), heading)
            if lang == "zh" and cjk_pairs(row.group(2)) and chinese_sections(current) is not None:
                heading = chinese_sections(current).get(row.group(1), "")
                assert cjk_pairs(row.group(2)) & cjk_pairs(heading), (current, row.groups(), heading)
    assert len(refs) > 20
    missing = sorted((nb, s) for nb, s in refs if s not in sections(nb))
    assert not missing, f"TEACHING.md refers to sections that do not exist: {missing}"


def test_every_exercise_named_in_teaching_exists_and_is_listed(teaching, lang):
    existing = exercise_headings()
    named = set(re.findall(r"Exercise (\d+\.\d+)" if lang == "en" else r"练习 (\d+\.\d+)", teaching))
    assert named, f"{GUIDES[lang].name} names no exercise"
    assert named - set(existing) == set(), f"TEACHING.md names exercises that do not exist: {named - set(existing)}"
    table = dict(re.findall(r"^\| (\d+\.\d+) · .*?\| (★[★☆]{2})", teaching, re.M))
    assert set(table) == set(existing), ("TEACHING.md's exercise table and the notebooks' exercises differ: "
                                         f"missing {set(existing) - set(table)}, extra {set(table) - set(existing)}")
    assert table == existing, "difficulty stars differ between TEACHING.md's table and the notebooks' headings"


def test_apps_and_checkers_named_in_teaching_exist(teaching):
    import pe_helpers.apps as apps
    import pe_helpers.checks as checks

    for name in set(re.findall(r"`(\w+_app)`", teaching)):
        assert hasattr(apps, name), f"TEACHING.md names an app that does not exist: {name}"
    for name in set(re.findall(r"`(check_\w+)`", teaching)):
        assert hasattr(checks, name), f"TEACHING.md names a checker that does not exist: {name}"


def test_the_catalogue_checks_are_not_vacuous():
    with pytest.raises(LookupError, match="not found"):
        output("01", r"this text is in no notebook (\d+)")()
    assert sections("02")["1b"].startswith("The weights"), "sub-sections such as 1b are found too"
    assert cjk_pairs("旋转恒等式（R）") == {"旋转", "转恒", "恒等", "等式"} and not cjk_pairs("RoPE")
    assert chinese_sections("04")["2"].startswith("$PE(pos+k)"), "the Chinese edition's headings are read"


# ---- the Chinese guide: the Chinese edition and the glossary ----------------------------------------------
def test_the_two_guides_quote_the_same_numbers():
    en, zh = (sorted(markers(GUIDES[g].read_text(encoding="utf-8"))) for g in ("en", "zh"))
    assert sorted(set(zh)) == sorted(set(en)), "TEACHING.zh.md must keep every marked number of TEACHING.md"


def test_the_chinese_guide_uses_the_glossary():
    from pe_helpers.glossary import GLOSSARY, markdown_table

    zh = GUIDES["zh"].read_text(encoding="utf-8")
    assert markdown_table("zh") in zh, "TEACHING.zh.md's glossary table must be pe_helpers.glossary.markdown_table('zh')"
    prose = zh.split("## 术语表", 1)[0]  # the guide before its glossary table
    for t in GLOSSARY:
        for wrong in t.avoid:
            assert wrong not in prose.replace(t.zh, ""), f"TEACHING.zh.md writes {wrong!r}; the glossary says {t.zh!r} ({t.en})"


def test_the_english_guide_uses_the_glossary():
    from pe_helpers.glossary import markdown_table

    assert markdown_table("en") in TEACHING.read_text(encoding="utf-8")


def test_chinese_links_point_to_the_chinese_edition():
    for path in (GUIDES["zh"], ROOT / "README.zh.md"):
        links = re.findall(r"\]\((notebooks/[^)#]+\.ipynb)", path.read_text(encoding="utf-8"))
        for link in links:
            assert link.startswith("notebooks/zh/"), f"{path.name} links the English edition: {link}"
            assert (NOTEBOOKS / Path(link).with_suffix(".py").name).exists(), f"{path.name}: no source for {link}"
    readme = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    assert len(re.findall(r"\]\(notebooks/zh/\d\d_\w+\.ipynb\)", readme)) == 7
    assert "make lab LANG=zh" in readme and "make test" in readme and "TEACHING.zh.md" in readme
    assert "[README.zh.md](README.zh.md)" in (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n", 2)[1]


if __name__ == "__main__":
    if sys.argv[1:] != ["--fill"]:
        sys.exit("usage: PYTHONPATH=$PWD python tests/test_teaching.py --fill")
    for guide in GUIDES.values():
        old = guide.read_text(encoding="utf-8")
        new = fill(old)
        guide.write_text(new, encoding="utf-8")
        changed = [(k, v) for (k, v), (_, w) in zip(markers(old), markers(new)) if v != w]
        print(f"{guide.name}: {len(markers(new))} marked numbers, {len(changed)} changed: {changed}")
