"""User-facing strings: every one is marked for translation, and the Chinese catalogue translates it.

"User-facing" is read off the code: the message of every exception a public module raises, the
text of figure titles, axis labels, legends and annotations, the descriptions and tooltips of
app controls, and the messages of the checkers. A literal in one of those places must be wrapped
in ``_()``; every ``_()`` string must have a Chinese entry whose ``{placeholders}`` match; the
catalogue keeps no entry the code no longer uses; and the bundled CJK font has every Chinese
character the catalogue uses (so no figure shows a missing-glyph box).
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from pe_helpers import i18n

PACKAGE = Path(i18n.__file__).resolve().parent
#: Calls whose first positional argument a user reads.
TEXT_CALLS = {"set_title", "set_xlabel", "set_ylabel", "suptitle", "set_text", "text", "annotate", "set_label",
              "passed", "failed", "not_yet", "note", "refuse"}
#: Keyword arguments a user reads.
TEXT_KEYWORDS = {"title", "description", "tooltip", "label", "xlabel", "ylabel", "placeholder", "message"}
#: Modules that are maintainer tools or front ends with their own (English) command-line help.
SKIP = {"cli.py", "editions.py", "student.py", "i18n.py", "glossary.py", "_testing.py"}
#: The same, named by path: the slide budgets' test messages and the browser tests' helpers.
SKIP_PATHS = {"present/budgets.py", "testing/__init__.py", "testing/browser.py", "testing/hub.py"}


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def _has_words(text: str) -> bool:
    """Prose, not a symbol, unit, format or a single identifier: two or more words of letters."""
    if re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*", text):  # one identifier (an argument name: seq_len, k_max)
        return False
    return len(re.findall(r"[A-Za-z]{2,}", text)) >= 2


def unmarked_strings() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in SKIP or path.relative_to(PACKAGE).as_posix() in SKIP_PATHS or "locale" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        places = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                places.append(node.exc.args[0])
            elif isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name in TEXT_CALLS and node.args:
                    places.append(node.args[-1] if name in ("text",) else node.args[0])
                places += [kw.value for kw in node.keywords if kw.arg in TEXT_KEYWORDS]
        for node in places:
            text = _literal(node)
            if text is not None and _has_words(text):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {text[:70]!r}")
    return found


def test_every_user_facing_string_is_marked_for_translation():
    missing = unmarked_strings()
    assert not missing, f"{len(missing)} user-facing string(s) not wrapped in _():\n" + "\n".join(missing[:40])


def test_the_scan_finds_an_unmarked_string(tmp_path, monkeypatch):
    fake = tmp_path / "pe_helpers"
    fake.mkdir()
    (fake / "demo.py").write_text('def f(x):\n    raise ValueError(f"x must be positive, got {x}.")\n')
    monkeypatch.setattr(i18n, "__file__", str(fake / "i18n.py"))
    global PACKAGE
    saved, PACKAGE = PACKAGE, fake
    try:
        assert len(unmarked_strings()) == 1
    finally:
        PACKAGE = saved


def _fields(text: str) -> list[str]:
    return sorted(f"{name}!{conv}:{spec}" for _, name, spec, conv in string.Formatter().parse(text) if name is not None)


def test_every_marked_string_has_a_chinese_translation_with_the_same_placeholders():
    messages = i18n.source_messages()
    zh = i18n.catalogue("zh")
    untranslated = [m for m in messages if not zh.get(m)]
    assert not untranslated, (f"{len(untranslated)} string(s) without a Chinese translation (run `python -m "
                              f"pe_helpers.i18n todo`): " + "; ".join(repr(m[:60]) for m in untranslated[:10]))
    wrong = [m for m in messages if _fields(m) != _fields(zh[m])]
    assert not wrong, "placeholders differ between English and Chinese: " + "; ".join(repr(m[:60]) for m in wrong[:10])


def test_the_catalogue_has_no_unused_entries():
    unused = set(i18n.catalogue("zh")) - set(i18n.source_messages())
    assert not unused, f"{len(unused)} catalogue entries no longer in the code (run `python -m pe_helpers.i18n update`)"


def test_the_cjk_font_has_every_chinese_character_of_the_catalogue():
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(PACKAGE / i18n.CJK_FONT))["cmap"].getBestCmap()
    chars = {c for text in i18n.catalogue("zh").values() for c in text if ord(c) > 0x2E80}
    missing = sorted(c for c in chars if ord(c) not in cmap)
    assert not missing, f"characters missing from the bundled CJK font: {''.join(missing)} (see pe_helpers/fonts/README.md)"


def test_switching_language_translates_and_english_is_the_default():
    assert i18n.get_language() == "en"
    zh = i18n.catalogue("zh")
    message = next(iter(zh))
    try:
        i18n.set_language("zh")
        assert i18n.gettext(message) == zh[message]
    finally:
        i18n.set_language("en")
    assert i18n.gettext(message) == message
    with pytest.raises(ValueError, match="lang must be one of 'en', 'zh'"):
        i18n.set_language("fr")


def test_lazy_text_speaks_the_current_language_in_every_use_and_cannot_leak_the_other() -> None:
    """A lazy message is translated whenever it is used; where Python needs a real str it refuses, never answering
    in the language it was made in."""
    t = i18n.lazy_("{count} seeds", count=1)
    try:
        for lang, want in (("en", "1 seeds"), ("zh", "1 个种子")):
            i18n.set_language(lang)
            assert str(t) == f"{t}" == format(t, "") == t + "" == "" + t == want
            assert t == want and len(t) == len(want) and want[-1] in t and t.split()[0] == "1"
            assert ", ".join([str(t)]) == want
            with pytest.raises(TypeError):
                ", ".join([t])  # a str is required: never the msgid in the wrong language
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize(("lang", "expected"), [("en", "two trainings: 2.5 s elapsed"), ("zh", "两次训练：用时 2.5 s")])
def test_say_prints_a_notebook_line_in_the_current_language(lang: str, expected: str, capsys) -> None:  # noqa: ANN001
    i18n.set_language(lang)
    try:
        i18n.say("two trainings: {seconds:.1f} s elapsed", seconds=2.51)
    finally:
        i18n.set_language("en")
    assert capsys.readouterr().out == expected + "\n"


def test_the_notebooks_printed_lines_are_in_the_catalogue():
    """``say("…")`` in a notebook source is a msgid like any ``_()`` of the package."""
    places = i18n.source_messages()
    assert any(p.startswith("notebooks/01_") for p in places["{count} non-identity permutations: max|f(ΠX) - Π f(X)| < 1e-5 "
                                                                 "without positions, >= {broken:.2f} with them"])


def test_fill_wraps_by_terminal_columns_in_either_language():
    import unicodedata

    def columns(line: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)

    chinese = "长度为 17 的序列需要位置 0..16，但这张可学习位置表只有 max_len=16 行（位置 0..15）。" * 4
    english = "a sequence of length 17 needs positions 0..16, but this learned table has max_len=16 rows. " * 4
    for text in (chinese, english):
        lines = i18n.fill(text, width=60).splitlines()
        assert len(lines) > 2 and all(columns(line) <= 60 for line in lines), lines
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # nothing lost, words whole
    assert "max_len=16" in i18n.fill(english, width=60)
    assert i18n.fill("one\ntwo", width=10) == "one\ntwo"
    with pytest.raises(ValueError, match="width"):
        i18n.fill("x", width=0)
