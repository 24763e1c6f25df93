"""Languages of the user-facing strings: English (the default) and Chinese, one catalogue per language.

A notebook of the Chinese edition starts with ``pe_helpers.set_language("zh")``; from then on the
apps' captions and controls, the figures' labels, the checkers' messages and the errors a student
sees come from the Chinese catalogue, ``pe_helpers/locale/zh/LC_MESSAGES/pe_helpers.po``.

The catalogues are GNU gettext ``.po`` files, read with Babel (``babel.messages.pofile``), the
maintained library behind Python's i18n tooling, so translators use the usual tools (Poedit,
Weblate) and ``pybabel extract`` finds the strings. The ``.po`` file is read directly at run time,
so there is no compiled ``.mo`` to keep in step. In code a user-facing string is written
``_("Sinusoidal table: rows = position")``, formatted after translation:
``_("position must be in 0..{top}, got {value}.").format(top=..., value=...)``. Text made at import time
(an exercise's title, a named mistake's explanation) is marked ``lazy_("…", field=...)`` instead: it is
translated when shown, so it follows a :func:`set_language` that comes after the import.
What a notebook cell prints goes through the same catalogue: the cell calls :func:`say`
(``say("accuracy: {acc:.2f}", acc=acc)``), so the code is the same in both editions and only its output differs;
:func:`source_messages` reads the notebooks' sources as well as the package.
A string without a translation falls back to English; ``tests/test_i18n.py`` fails when a
``_()`` string has no Chinese entry, or when a catalogue entry is no longer used.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from importlib import resources

__all__ = ["LANGUAGES", "set_language", "get_language", "gettext", "_", "lazy_", "LazyText", "say", "fill", "catalogue",
           "CJK_FONT", "font_family"]

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


class LazyText:
    """A message defined at import time that speaks the language current *whenever it is used*.

    Not a ``str``: every use translates it again, so nothing can freeze it in the language of the moment it was
    made or leak the English msgid. ``str()``, ``format()``, f-strings, ``+``, ``==``, ``in``, ``len`` and every
    string method (``.split()``, ``.startswith()``, ...) work on the current translation, formatted with the fields
    it was made with; where Python insists on a real ``str`` (``", ".join([t])``), it raises ``TypeError`` instead of
    answering in the wrong language: write ``str(t)``. Made by :func:`lazy_`.
    """

    __slots__ = ("message", "args", "fields")

    def __init__(self, message: str, *args: object, **fields: object) -> None:
        self.message, self.args, self.fields = message, args, fields

    def __str__(self) -> str:
        text = gettext(self.message)
        return text.format(*self.args, **self.fields) if self.args or self.fields else text

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"lazy_({self.message!r})"

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other) if isinstance(other, (str, LazyText)) else NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __add__(self, other: object) -> str:
        return str(self) + other if isinstance(other, str) else NotImplemented

    def __radd__(self, other: object) -> str:
        return other + str(self) if isinstance(other, str) else NotImplemented

    def __contains__(self, part: str) -> bool:
        return part in str(self)

    def __len__(self) -> int:
        return len(str(self))

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(str(self), name)


def say(message: str, *args: object, **fields: object) -> None:
    """Print ``message`` in the current language, its ``{placeholders}`` filled from ``args``/``fields``.

    What a notebook cell prints goes through the catalogue like every other string a student reads:
    ``say("accuracy with learned positions: {acc:.2f}", acc=0.97)`` prints
    ``accuracy with learned positions: 0.97``, or 「使用可学习位置时的准确率：0.97」 in the Chinese edition.
    The code of a cell is the same in both editions; only what it prints differs.
    """
    text = gettext(message)
    print(text.format(*args, **fields) if args or fields else text)


#: Characters that take two columns and between which a line may break (CJK ideographs, kana, CJK and full-width
#: punctuation): Chinese has no spaces to break at.
_WIDE = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
_TOKENS = re.compile(rf"[{_WIDE}]|[^\s{_WIDE}]+|\s+")


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def fill(text: str, width: int = 100) -> str:
    """``text`` in lines of at most ``width`` terminal columns, like :func:`textwrap.fill`, in either language: a CJK
    character counts two columns (as in a monospaced font) and a line may break between two of them. Latin words are
    kept whole; the text's own line breaks are kept; runs of spaces become one."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 2:
        raise ValueError(_("width must be an integer >= 2, got {width!r}.").format(width=width))
    lines = []
    for paragraph in str(text).splitlines() or [""]:
        line = ""
        for token in _TOKENS.findall(paragraph):
            if token.isspace():
                line += " " if line and not line.endswith(" ") else ""
            elif line.strip() and _columns(line.rstrip()) + (line != line.rstrip()) + _columns(token) > width:
                lines.append(line.rstrip())
                line = token
            else:
                line += token
        lines.append(line.rstrip())
    return "\n".join(lines)


def lazy_(message: str, *args: object, **fields: object) -> LazyText:
    """Mark ``message`` for the catalogue and translate it when shown, not now: for text defined at import
    time (an exercise's title, a named mistake's explanation), so it follows :func:`set_language` even
    when the module was imported before the switch. ``args``/``fields`` fill its ``{placeholders}`` then."""
    return LazyText(message, *args, **fields)


#: The CJK font shipped with the package: Noto Sans CJK SC Regular (SIL OFL 1.1, see ``fonts/OFL.txt``),
#: subset to the 3,755 common hanzi of GB2312 level 1 and CJK punctuation (0.8 MB instead of 16 MB).
#: Shipping it means every set-up (``make lab``, conda, Binder) has it, whatever fonts the system has.
CJK_FONT = "fonts/NotoSansCJKsc-Regular-GB2312L1.otf"


@functools.lru_cache(maxsize=1)
def _register_cjk_font() -> str:
    from matplotlib import font_manager

    import dataclasses

    path = str(resources.files("pe_helpers") / CJK_FONT)
    font_manager.fontManager.addfont(path)
    entry = next(f for f in font_manager.fontManager.ttflist if f.fname == path)
    # The subset ships one weight; list it as bold too, so bold text (a title, a label) falls back to it
    # instead of logging "findfont: Failed to find font weight bold" (a notebook would show that line). No font
    # lookup can have asked for this family yet: font_family() names it only after this function has run.
    font_manager.fontManager.ttflist.append(dataclasses.replace(entry, weight=700))
    return entry.name


def font_family(lang: str | None = None) -> list[str]:
    """matplotlib's ``font.family`` for ``lang`` (default: the current language), the same in every language.

    DejaVu Sans (matplotlib's own) first, so Latin letters, digits and maths keep their usual look, then the
    bundled CJK font, which matplotlib (≥ 3.6) falls back to per glyph. English figures need it too: the
    tokens of 我喜欢你 are tick labels in both editions.
    """
    lang = get_language() if lang is None else lang
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(map(repr, LANGUAGES))}, got {lang!r}.")
    return ["DejaVu Sans", _register_cjk_font()]


# ---- the catalogue's upkeep (a maintainer's command line, not used at run time) ----------------------

def source_messages() -> dict[str, list[str]]:
    """Every ``_("…")``, ``lazy_("…")`` and ``say("…")`` string in the package's code and in the notebooks' sources
    (``notebooks/NN_*.py``, what their cells print) -> where it is (``file:line``), via Babel's extractor."""
    from pathlib import Path

    from babel.messages.extract import extract_from_file

    root = Path(__file__).resolve().parent
    found: dict[str, list[str]] = {}
    notebooks = sorted((root.parent / "notebooks").glob("[0-9][0-9]_*.py"))
    for path in [*sorted(root.rglob("*.py")), *notebooks]:
        keywords = {"_": None, "lazy_": (1,), "say": (1,)}
        for lineno, message, _comments, _context in extract_from_file("python", str(path), keywords=keywords):
            if isinstance(message, str):
                found.setdefault(message, []).append(f"{path.relative_to(root.parent)}:{lineno}")
    return found


def _catalogue_path(lang: str):  # noqa: ANN202
    return resources.files("pe_helpers") / "locale" / lang / "LC_MESSAGES" / "pe_helpers.po"


def update_catalogue(lang: str = "zh", new: dict[str, str] | None = None) -> list[str]:
    """Rewrite ``lang``'s catalogue from the code: keep translations, add ``new``, drop unused entries.

    Returns the msgids still without a translation.
    """
    from pathlib import Path

    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    known = dict(catalogue(lang))
    known.update(new or {})
    cat = Catalog(locale=lang, project="pe-helpers", fuzzy=False)
    messages = source_messages()
    for message, places in messages.items():
        cat.add(message, known.get(message, ""), locations=[(p.rsplit(":", 1)[0], int(p.rsplit(":", 1)[1]))
                                                            for p in places])
    path = Path(str(_catalogue_path(lang)))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, cat, width=0, include_lineno=False, sort_output=True)
    catalogue.cache_clear()
    return [m for m in messages if not known.get(m)]


def main(argv: list[str] | None = None) -> int:
    """``python -m pe_helpers.i18n update|todo|merge FILE [--lang zh]``: keep the string catalogue in step."""
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(prog="python -m pe_helpers.i18n")
    parser.add_argument("command", choices=("update", "todo", "merge"))
    parser.add_argument("json", nargs="?", help="merge: a JSON file {english: translation}")
    parser.add_argument("--lang", default="zh")
    args = parser.parse_intermixed_args(argv)
    if args.command == "todo":
        done = catalogue(args.lang)
        print(json.dumps({m: "" for m in source_messages() if not done.get(m)}, ensure_ascii=False, indent=1))
        return 0
    new = json.loads(open(args.json, encoding="utf-8").read()) if args.command == "merge" else None
    left = update_catalogue(args.lang, new)
    print(f"{_catalogue_path(args.lang)}: {len(left)} string(s) without a translation", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
