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
from pe_helpers.glossary import GLOSSARY

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [s for s in editions.sources(ROOT / "notebooks") if editions.catalogue_path(s, "zh").exists()]
#: The concepts the Chinese edition must always name by the glossary's term (issue 17's list): for these the
#: English name is unambiguous, so where the English cell uses it the Chinese cell must use the term.
CORE = {"token embedding", "query / key / value", "permutation equivariance", "absolute positional encoding",
        "learned position vectors", "sinusoidal positional encoding", "rotation matrix", "length extrapolation"}


def _prose(text: str) -> str:
    """Markdown without inline code and maths, where names are identifiers, not words."""
    return re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)


def _mentions(text: str, english: str) -> bool:
    text = _prose(text)
    words = re.escape(english.split(" (")[0].lower())
    return re.search(rf"(?<![a-z]){words}s?(?![a-z])", text.lower()) is not None


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem[:2])
def test_the_chinese_notebook_uses_the_glossary_terms(source):
    translations = editions.load_translations(source, "zh")
    english = "\n".join(translations)
    chinese = "\n".join(translations.values())
    missing = [f"{t.en} -> {t.zh}" for t in GLOSSARY
               if t.en.lower() in CORE and " / " not in t.en and _mentions(english, t.en) and t.zh not in chinese]
    assert not missing, f"{source.stem}: the Chinese edition does not use the glossary term for: {missing}"
    wrong = [f"{bad} (use {t.zh} for {t.en})" for t in GLOSSARY for bad in t.avoid
             if bad in chinese.replace(t.zh, "")]
    assert not wrong, f"{source.stem}: renderings the glossary says to avoid: {wrong}"


def test_the_string_catalogue_avoids_what_the_glossary_avoids():
    chinese = "\n".join(i18n.catalogue("zh").values())
    wrong = [f"{bad} (use {t.zh})" for t in GLOSSARY for bad in t.avoid if bad in chinese.replace(t.zh, "")]
    assert not wrong, f"the string catalogue uses renderings the glossary avoids: {wrong}"


def test_the_check_would_catch_an_avoided_word():
    term = next(t for t in GLOSSARY if t.avoid)
    assert term.avoid[0] in f"这里写成了{term.avoid[0]}".replace(term.zh, "")
