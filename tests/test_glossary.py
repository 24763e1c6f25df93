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
