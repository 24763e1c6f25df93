"""The Chinese edition speaks the glossary's language (pe_helpers.glossary).

For every glossary concept: a Chinese notebook cell that translates an English cell naming the concept
uses the glossary's Chinese term (at least once per notebook where the English uses it), and no Chinese
cell or string of the package's catalogue uses a rendering the glossary says to avoid.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pe_helpers import editions, i18n
from pe_helpers.glossary import GLOSSARY, Term

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [s for s in editions.sources(ROOT / "notebooks") if editions.catalogue_path(s, "zh").exists()]
#: Where a notebook's English names a glossary concept and its Chinese edition rightly does not use the term:
#: (notebook number, English term) -> why. Every entry must still be needed (tested).
EXCEPTIONS = {
    ("06", "interleaved layout (sin, cos, sin, cos, …)"): "in 06 the interleaved layout is RoPE's pairing of "
                     "dimensions 2i, 2i+1, for which the glossary's own term is 相邻配对",
}


def _prose(text: str) -> str:
    """Markdown without inline code and maths, where names are identifiers, not words."""
    return re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)


def english_names(term: Term) -> list[str]:
    """The English names of a concept, as the notebooks write them: without the parenthesised gloss or maths,
    and split where the glossary lists several (``encoder / decoder``, ``query, key, value``)."""
    base = re.sub(r"\s*\([^)]*\)|\$[^$]*\$|\\", "", term.en).strip()
    return [n.strip() for n in re.split(r"\s+/\s+|,\s+", base) if n.strip()]


def chinese_names(term: Term) -> list[str]:
    """The Chinese terms, split like :func:`english_names` (``查询/键/值``), plus a Chinese alternative name."""
    names = [re.sub(r"（[^）]*）", "", n).strip() for n in re.split(r"\s*/\s*", term.zh)]
    if re.search(r"[\u4e00-\u9fff]", term.zh_gloss):
        names.append(term.zh_gloss)
    return names


def _find(text: str, english: str) -> list[re.Match]:
    return list(re.finditer(rf"(?<![a-z]){re.escape(english.lower())}(?:s|es)?(?![a-z])", text.lower()))


def mentions(text: str, term: Term) -> list[str]:
    """The names of ``term`` that the English ``text`` uses on their own, not only inside a longer glossary term
    (``embedding`` inside ``token embedding``, ``attention`` inside ``self-attention``)."""
    text = _prose(text)
    longer = [n for t in GLOSSARY if t is not term for n in english_names(t)]
    used = []
    for name in english_names(term):
        inside = [n for n in longer if name.lower() in n.lower() and n.lower() != name.lower()]
        spans = {(m.start(), m.end()) for n in inside for m in _find(text, n)}
        if any(not any(a <= m.start() and m.end() <= b for a, b in spans) for m in _find(text, name)):
            used.append(name)
    return used


def _missing(source: Path) -> list[str]:
    translations = editions.load_translations(source, "zh")
    english = "\n".join(translations)
    chinese = "\n".join(translations.values())
    missing = []
    for t in GLOSSARY:
        en, zh = english_names(t), chinese_names(t)
        for name in mentions(english, t):
            wanted = [zh[en.index(name)]] if len(en) == len(zh) else zh
            if not any(w in chinese for w in wanted):
                missing.append((t.en, name, wanted))
    return missing


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem[:2])
def test_the_chinese_notebook_uses_the_glossary_terms(source):
    """Every glossary concept the English notebook names has the glossary's Chinese term in its Chinese edition."""
    assert editions.load_translations(source, "zh"), f"{source.stem}: the Chinese catalogue is empty"
    missing = [f"{name} -> {' / '.join(wanted)}" for en, name, wanted in _missing(source)
               if (source.stem[:2], en) not in EXCEPTIONS]
    assert not missing, f"{source.stem}: the Chinese edition does not use the glossary term for: {missing}"
    chinese = "\n".join(editions.load_translations(source, "zh").values())
    wrong = [f"{bad} (use {t.zh} for {t.en})" for t in GLOSSARY for bad in t.avoid
             if bad in chinese.replace(t.zh, "")]
    assert not wrong, f"{source.stem}: renderings the glossary says to avoid: {wrong}"


def test_every_exception_is_still_needed():
    by_number = {s.stem[:2]: s for s in SOURCES}
    for (number, en), why in EXCEPTIONS.items():
        assert number in by_number and why, (number, en)
        assert en in {t.en for t in GLOSSARY}, f"{en!r} is no longer a glossary term"
        assert en in {m[0] for m in _missing(by_number[number])}, f"exception ({number}, {en!r}) is not needed any more"


def test_names_and_mentions_follow_the_glossary_layout():
    term = {t.en: t for t in GLOSSARY}
    assert english_names(term["query, key, value (Q, K, V)"]) == ["query", "key", "value"]
    assert chinese_names(term["query, key, value (Q, K, V)"]) == ["查询", "键", "值"]
    assert english_names(term["maximum length / training length"]) == ["maximum length", "training length"]
    assert chinese_names(term["single precision (float32) / bfloat16"]) == ["单精度浮点", "bfloat16"]
    assert "可学习绝对位置编码" in chinese_names(term["learned position vectors (learned absolute positional encoding)"])
    assert mentions("the token embedding table", term["embedding"]) == []
    assert mentions("an embedding, then the `embedding` call", term["embedding"]) == ["embedding"]
    assert mentions("tokens and `dot product`", term["dot product"]) == []


def test_the_string_catalogue_avoids_what_the_glossary_avoids():
    chinese = "\n".join(i18n.catalogue("zh").values())
    wrong = [f"{bad} (use {t.zh})" for t in GLOSSARY for bad in t.avoid if bad in chinese.replace(t.zh, "")]
    assert not wrong, f"the string catalogue uses renderings the glossary avoids: {wrong}"


def test_the_check_would_catch_an_avoided_word():
    term = next(t for t in GLOSSARY if t.avoid)
    assert term.avoid[0] in f"这里写成了{term.avoid[0]}".replace(term.zh, "")


# ---- the Chinese texts beyond the notebooks: the guides, and their typography and references ------------------

ZH_DOCS = [ROOT / "TEACHING.zh.md", ROOT / "README.zh.md"]
_CODE_OR_MATHS = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|<!--.*?-->", re.S)


def chinese_texts() -> dict[str, str]:
    """Every Chinese text a reader reads, by where it is: each notebook's catalogue entries, the string catalogue's,
    TEACHING.zh.md and README.zh.md (the glossary table of TEACHING.zh.md is the glossary itself, left out)."""
    texts = {f"{s.stem[:2]}.po #{i}": zh for s in SOURCES
             for i, zh in enumerate(editions.load_translations(s, "zh").values())}
    texts.update({f"pe_helpers.po: {en[:40]!r}": zh for en, zh in i18n.catalogue("zh").items()})
    for doc in ZH_DOCS:
        text = doc.read_text(encoding="utf-8")
        head, _sep, rest = text.partition("## 术语表")
        texts[doc.name] = head + "\n## " + rest.partition("\n## ")[2] if _sep else text
    return texts


def prose(text: str) -> str:
    """Chinese text without code and maths (where a comma, a quote or a name is code)."""
    return _CODE_OR_MATHS.sub(" ", text)


#: Style rules of the Chinese texts: a pattern that must not occur in prose, and what to write instead.
STYLE = {
    r"\bet al\.?": "等人 (Vaswani 等人 2017), not et al.",
    r"笔记本 ?0\d(?![\d.])": "第 05 本笔记, not 笔记本 05",
    r"原文 ?第? ?\d+(?:\.\d+)* ?节|\d+\.\d+ ?节": "the seed's and a book's sections as 原文 §4.3, 《动手学深度学习》§10.6",
    r"[\u4e00-\u9fff][,;](?! ?[A-Za-z0-9])|[\u4e00-\u9fff], ?[\u4e00-\u9fff]": "full-width ，； between Chinese words",
    r"（[^（）\n]*（[^（）\n]*）[^（）\n]*）": "no brackets inside brackets: （旋转位置编码，RoPE）",
    r'(?<![\w=(\[])"[^"\n]*"': "Chinese quotes “…” (「…」 for the seed's words), never ASCII \" in prose",
    r"「[^」]*[“”][^」]*」": "『…』 inside 「…」, not “…”",
    r"动手学深度学习》[^。；\n]{0,12}11\.6": "《动手学深度学习》 has self-attention and positional encoding at §10.6",
    r"train now|NOT YET|not implemented yet": "the Chinese edition's words: 现在训练, [还没通过], 还没有实现",
}


def style_problems(texts: dict[str, str]) -> list[str]:
    return [f"{where}: {match.group()!r} (write {rule})" for where, text in texts.items()
            for pattern, rule in STYLE.items() for match in re.finditer(pattern, prose(text))]


def test_the_chinese_texts_follow_the_style_rules():
    problems = style_problems(chinese_texts())
    assert not problems, f"{len(problems)} style problem(s):\n" + "\n".join(problems[:30])


def test_the_style_rules_catch_each_slip():
    slips = ["Vaswani et al. 2017", "见笔记本 05。", "原文第 4.3 节", "（词元, 位置）", "（旋转位置编码（RoPE））",
             '选 "random"', "「模型很难区分“我喜欢你”」", "《动手学深度学习》§11.6", "按 **train now**"]
    assert len(style_problems({str(i): s for i, s in enumerate(slips)})) == len(slips)
    fine = ["Vaswani 等人 2017", "第 05 本笔记", "原文 §4.3", "（词元，位置）", "（旋转位置编码，RoPE）", "“random”",
            "「模型很难区分『我喜欢你』」", "`f(x, y)`，$(a, b)$", "《动手学深度学习》§10.6", "**现在训练**"]
    assert style_problems({str(i): s for i, s in enumerate(fine)}) == []


def test_the_guides_avoid_what_the_glossary_avoids():
    for doc in ZH_DOCS:
        text = chinese_texts()[doc.name]
        wrong = [f"{bad} (use {t.zh} for {t.en})" for t in GLOSSARY for bad in t.avoid if bad in text.replace(t.zh, "")]
        assert not wrong, f"{doc.name}: renderings the glossary avoids: {wrong}"


# ---- controls: the prose names a control by the label the app shows in that language ---------------------------

@pytest.fixture(scope="module")
def control_labels() -> dict[str, str]:
    """English label -> Chinese label of every control and option the apps show where the two differ (read off the
    apps built in Chinese; the English is the catalogue's msgid of the Chinese label), plus the live seed's button."""
    import ipywidgets

    from pe_helpers.apps import APPS
    from pe_helpers.apps._testing import factory_kwargs

    english = {zh: en for en, zh in i18n.catalogue("zh").items()}
    shown = []
    i18n.set_language("zh")
    try:
        for factory in APPS.values():
            app = factory(**factory_kwargs(factory))
            try:
                for control in app.controls.values():
                    shown.append(control.description)
                    if not isinstance(control, ipywidgets.SelectionSlider):
                        shown += [str(o[0]) for o in getattr(control, "options", ()) if isinstance(o, tuple)]
            finally:
                app.close()
        shown.append(i18n._("train now"))
    finally:
        i18n.set_language("en")
    return {english[zh]: zh for zh in shown if zh in english and english[zh] != zh}


#: A control's English label in the Chinese prose that names something else: (where, the words around it).
CONTROL_EXCEPTIONS = {("03.po", "返回列顺序 `order`")}  # the exercise's return value, not the app's control


def control_mentions(text: str, labels: dict[str, str]) -> list[tuple[str, str]]:
    """(English label, its context) for each place the Chinese ``text`` names a control by its English label: in bold,
    italics or backticks, or between Chinese words; not in a gloss （copy）."""
    text = re.sub(r"```.*?```|\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)
    names = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    cjk = r"[\u4e00-\u9fff，。：；、]"
    pattern = rf"(\*\*|\*|`)({names})\1|(?<={cjk}) ?({names}) ?(?={cjk})"
    found = []
    for match in re.finditer(pattern, text):
        label = match.group(2) or match.group(3)
        context = text[max(0, match.start() - 12):match.end() + 12]
        if not re.search(rf"（[^（）]*{re.escape(label)}[^（）]*）", context):
            found.append((label, context))
    return found


def test_the_chinese_prose_names_controls_as_the_apps_show_them(control_labels):
    assert {"reverse": "倒序", "add p_i": "加上 p_i", "pair i": "维度组 i", "train now": "现在训练"}.items() \
        <= control_labels.items(), control_labels
    wrong = []
    for where, text in chinese_texts().items():
        if where.startswith("pe_helpers.po"):  # messages name controls by their code names (seq_len, pair)
            continue
        for label, context in control_mentions(text, control_labels):
            if not any(where.startswith(w) and c in context for w, c in CONTROL_EXCEPTIONS):
                wrong.append(f"{where}: {label!r} -> {control_labels[label]!r} in …{context}…")
    assert not wrong, f"{len(wrong)} control(s) named by another label than the app shows:\n" + "\n".join(wrong)


def test_control_mentions_find_a_label_and_skip_a_gloss():
    labels = {"reverse": "倒序", "copy": "复制", "add p_i": "加上 p_i"}
    assert [m[0] for m in control_mentions("把顺序选为 reverse，再勾选 **add p_i**。", labels)] == ["reverse", "add p_i"]
    assert control_mentions("复制任务（copy）与 `x_copy`，$copy$", labels) == []
