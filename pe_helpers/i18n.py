"""Languages of the user-facing strings: English (the default) and Chinese, one catalogue per language.

A notebook of the Chinese edition starts with ``pe_helpers.set_language("zh")``; from then on the
apps' captions and controls, the figures' labels, the checkers' messages and the errors a student
sees come from the Chinese catalogue, ``pe_helpers/locale/zh/LC_MESSAGES/pe_helpers.po``.

The catalogues are GNU gettext ``.po`` files, read with Babel (``babel.messages.pofile``), the
maintained library behind Python's i18n tooling, so translators use the usual tools (Poedit,
Weblate) and ``pybabel extract`` finds the strings. The ``.po`` file is read directly at run time,
so there is no compiled ``.mo`` to keep in step. In code a user-facing string is written
``_("Sinusoidal table: rows = position")``, formatted after translation:
``_("position must be in 0..{top}, got {value}.").format(top=..., value=...)``.
A string without a translation falls back to English; ``tests/test_i18n.py`` fails when a
``_()`` string has no Chinese entry, or when a catalogue entry is no longer used.
"""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["LANGUAGES", "set_language", "get_language", "gettext", "_", "catalogue", "CJK_FONT", "font_family"]

#: The languages a user can switch to; English is the default and the language of the msgids.
LANGUAGES = ("en", "zh")
_state = {"lang": "en"}


def set_language(lang: str) -> str:
    """Switch every user-facing string of pe_helpers to ``lang`` (``"en"`` or ``"zh"``); returns it.

    Figures built afterwards use a bundled CJK font for Chinese (see :mod:`pe_helpers.figures._base`).
    """
    if not isinstance(lang, str) or lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(map(repr, LANGUAGES))}, got {lang!r}.")
    _state["lang"] = lang
    return lang


def get_language() -> str:
    """The current language (``"en"`` unless :func:`set_language` changed it)."""
    return _state["lang"]


@functools.lru_cache(maxsize=None)
def catalogue(lang: str) -> dict[str, str]:
    """``msgid -> translation`` of ``lang``'s ``.po`` file (empty for English and for missing files)."""
    if lang == "en":
        return {}
    from babel.messages.pofile import read_po

    path = resources.files("pe_helpers") / "locale" / lang / "LC_MESSAGES" / "pe_helpers.po"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        cat = read_po(handle, locale=lang)
    return {m.id: m.string for m in cat if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


def gettext(message: str) -> str:
    """``message`` in the current language (itself when English, or when no translation exists)."""
    if _state["lang"] == "en":
        return message
    return catalogue(_state["lang"]).get(message, message)


#: The conventional short name, for marking strings: ``_("…")``.
_ = gettext


#: The CJK font shipped with the package: Noto Sans CJK SC Regular (SIL OFL 1.1, see ``fonts/OFL.txt``),
#: subset to the 3,755 common hanzi of GB2312 level 1 and CJK punctuation (0.8 MB instead of 16 MB).
#: Shipping it means every set-up (``make lab``, conda, Binder) has it, whatever fonts the system has.
CJK_FONT = "fonts/NotoSansCJKsc-Regular-GB2312L1.otf"


@functools.lru_cache(maxsize=1)
def _register_cjk_font() -> str:
    from matplotlib import font_manager

    path = resources.files("pe_helpers") / CJK_FONT
    font_manager.fontManager.addfont(str(path))
    return font_manager.FontProperties(fname=str(path)).get_name()


def font_family(lang: str | None = None) -> list[str]:
    """matplotlib's ``font.family`` for ``lang`` (default: the current language).

    English: DejaVu Sans (matplotlib's own). Chinese: DejaVu Sans first, so Latin letters, digits and
    maths keep their usual look, then the bundled CJK font, which matplotlib falls back to per glyph.
    """
    lang = get_language() if lang is None else lang
    if lang == "en":
        return ["DejaVu Sans"]
    return ["DejaVu Sans", _register_cjk_font()]
