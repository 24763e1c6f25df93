"""The Chinese edition's figures and apps: every app and static figure built after
``set_language("zh")`` speaks Chinese, draws it with the bundled CJK font without a single warning
(a missing glyph is a matplotlib UserWarning), and stays as legible and wide as the English one."""

from __future__ import annotations

import warnings

import matplotlib
import pytest
from matplotlib.text import Text
from test_apps_toolkit import MINE, _static_figures

from pe_helpers import i18n
from pe_helpers.apps import APPS
from pe_helpers.apps._testing import factory_kwargs
from pe_helpers.figures import _base as fb
from pe_helpers.order import ZH_PAIR


def _chinese(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def _texts(fig) -> list[str]:  # noqa: ANN001
    """Every text the figure shows as last drawn (titles, labels, legends, annotations, tick labels): call
    :func:`~pe_helpers.figures._base.min_font_css_px` first, which draws it (under the test's warning filter)."""
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.fixture
def zh():
    i18n.set_language("zh")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("name", MINE)
def test_every_app_speaks_chinese_without_a_warning(name: str, zh, text_size: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph, a font not found: all fail here
        app = APPS[name](**factory_kwargs(APPS[name]))
        try:
            smallest = fb.min_font_css_px(app.figure)  # draws it: a missing glyph would fail here
            texts = _texts(app.figure)
            assert any(_chinese(t) for t in texts), f"no Chinese label in {name}: {texts[:8]}"
            assert _chinese(app.title)
            described = [w.description for w in app.controls.values()]
            assert all(_chinese(d) or d.isidentifier() for d in described), f"untranslated control: {described}"
            assert _chinese(app.caption.value), app.caption.value
            assert smallest >= fb.MIN_FONT_CSS_PX
            assert not fb.misplaced_texts(app.figure, draw=False), "Chinese text whole, on the figure, clear of the rest"
            assert app.figure.display_width >= 0.9 * fb.DISPLAY_WIDTH_PX
        finally:
            app.close()


@pytest.mark.parametrize("name", sorted(_static_figures()))
def test_every_static_figure_speaks_chinese_without_a_warning(name: str, zh, text_size: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = _static_figures()[name]()
        smallest = fb.min_font_css_px(fig)  # draws it: a missing glyph would fail here
        texts = _texts(fig)
    assert any(_chinese(t) for t in texts), f"no Chinese label in {name}: {texts[:8]}"
    assert smallest >= fb.MIN_FONT_CSS_PX
    assert not fb.misplaced_texts(fig, draw=False), "Chinese text whole, on the figure, clear of the rest"
    assert fig.display_width >= 0.9 * fb.DISPLAY_WIDTH_PX


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_both_editions_draw_the_characters_of_the_sentence_pair(lang: str) -> None:
    """我喜欢你 as tick labels (not pinyin), in either language, with no missing-glyph warning."""
    from pe_helpers.figures.order import plot_sentence_pairs
    from pe_helpers.order import sentence_outputs

    i18n.set_language(lang)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fig = plot_sentence_pairs(sentence_outputs(list(ZH_PAIR)))
            fb.render_png(fig)
        ticks = [t.get_text() for ax in fig.axes[:2] for t in ax.get_yticklabels()]
        assert ticks[:4] == ["我", "喜", "欢", "你"] and ticks[4:] == ["你", "喜", "欢", "我"]
        assert matplotlib.rcParams["font.family"] == i18n.font_family(lang)
        assert i18n.font_family(lang)[0] == "DejaVu Sans" and len(i18n.font_family(lang)) == 2
    finally:
        i18n.set_language("en")


def test_option_labels_are_translated_and_values_stay_english(zh) -> None:
    from pe_helpers.apps import frequency_heatmap_app, learned_position_app, permutation_app

    for factory, control in ((permutation_app, "order"), (learned_position_app, "table"),
                             (frequency_heatmap_app, "channel")):
        app = factory()
        try:
            widget = app.controls[control]
            labels, values = zip(*((str(label), value) for label, value in widget.options)) \
                if isinstance(widget.options[0], tuple) else (widget._options_labels, widget._options_values)
            assert any(_chinese(label) for label in labels), labels
            assert all(not _chinese(v) for v in values), values
        finally:
            app.close()
