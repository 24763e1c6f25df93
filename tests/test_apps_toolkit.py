"""The figure toolkit and the App machinery (issue 12): legible, crisp, visible before running, typed values,
disabled controls, drawing in the handler, the glyph cache. Every app and every static figure builder is measured."""

from __future__ import annotations

import base64
import io

import ipywidgets as widgets
import numpy as np
import pytest
import torch
from PIL import Image

from pe_helpers.apps import APPS, dot_product_app, frequency_heatmap_app, permutation_app, phasor_app
from pe_helpers.apps import _base as app_base
from pe_helpers.apps._base import parse_number
from pe_helpers.apps._testing import factory_kwargs
from pe_helpers.figures import _base as fb
from pe_helpers.extrapolation import mixing, reference_results
from pe_helpers.extrapolation.probe import source_positions
from pe_helpers.figures.extrapolation import accuracy_figure, attention_maps_figure, build_mixing
from pe_helpers.figures.frequencies import (build_frequency_heatmap, draw_dimension_traces, draw_float32_error,
                                            draw_frequencies, draw_layouts)
from pe_helpers.figures.learned import plot_qkv_change, plot_similarity_heatmaps
from pe_helpers.figures.order import plot_sentence_pairs
from pe_helpers.figures.rope import draw_angle_error, draw_score_matrices
from pe_helpers.figures.rotation import draw_shift_matrix, plot_dot_products
from pe_helpers.order import EN_PAIR, ZH_PAIR, sentence_outputs
from pe_helpers.rope import demo_query_key
from pe_helpers.rotation import pe_dot_product

MINE = sorted(APPS)  # every app, notebook 05's (extrapolation_app, mixing_app) included


def _png_size(png: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(png)).size


@pytest.mark.parametrize("name", MINE)
def test_every_app_is_legible_full_width_and_crisp(name: str, text_size: str) -> None:
    app = APPS[name](**factory_kwargs(APPS[name]))
    try:
        width = app.figure.display_width
        assert fb.DISPLAY_WIDTH_PX * 0.9 <= width <= fb.DISPLAY_WIDTH_PX, "at most 10 % of the output left empty"
        assert app.image.layout.width == f"{width}px" and app.image.layout.max_width == "100%"
        assert _png_size(app.image.value)[0] == fb.RENDER_SCALE * width, "rendered at twice the displayed size"
        assert fb.min_font_css_px(app.figure) >= fb.MIN_FONT_CSS_PX
        assert not fb.misplaced_texts(app.figure, draw=False), "every text whole, on the figure, clear of the others"
    finally:
        app.close()


def _static_figures() -> dict:
    def two(draw, **kw):
        fig, (a, b) = fb.static_figure(1, 2)
        draw(a, b, **kw)
        return fig

    def one(draw, *args, **kw):
        fig, ax = fb.static_figure()
        draw(ax, *args, **kw)
        return fig

    q, k = demo_query_key(16)
    pos = torch.tensor([10.0, 100.0, 1000.0])
    maps = [(f"n = {n}", torch.softmax(torch.randn(2 * n + 1, 2 * n + 1, generator=torch.Generator().manual_seed(n)), 1),
             source_positions("lookback", n)) for n in (8, 32)]
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    p = torch.randn(16, 32, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    return {
        "accuracy_figure": lambda: accuracy_figure(reference_results()).figure,
        "attention_maps_figure": lambda: attention_maps_figure(maps, train_len=8).figure,
        "build_mixing": lambda: build_mixing(mixing.mixing_terms(x, p), note="a note").figure,
        "plot_sentence_pairs": lambda: plot_sentence_pairs(sentence_outputs([*ZH_PAIR, *EN_PAIR])),
        "plot_qkv_change": lambda: plot_qkv_change({"additive": {"Q": 0.9, "K": 0.8, "V": 0.91},
                                                    "RoPE": {"Q": 0.7, "K": 0.7, "V": 0.0}}),
        "plot_similarity_heatmaps": lambda: plot_similarity_heatmaps({"a": torch.randn(24, 8), "b": torch.randn(24, 8)},
                                                                     trained_rows={"a": 16}),
        "build_frequency_heatmap": lambda: build_frequency_heatmap().figure,
        "draw_frequencies": lambda: two(draw_frequencies),
        "draw_layouts": lambda: two(draw_layouts),
        "draw_dimension_traces": lambda: one(draw_dimension_traces),
        "draw_float32_error": lambda: one(draw_float32_error, pos, pos * 1e-7, pos * 1e-12, pos * 1e-7),
        "draw_shift_matrix": lambda: one(draw_shift_matrix, 5, 16),
        "plot_dot_products": lambda: plot_dot_products(),
        "draw_score_matrices": lambda: two(draw_score_matrices, q=q, k=k, n=12),
        "draw_angle_error": lambda: one(draw_angle_error, pos, 16),
    }


@pytest.mark.parametrize("name", sorted(_static_figures()))
def test_every_static_figure_is_legible_and_shows_itself_crisp(name: str, text_size: str) -> None:
    fig = _static_figures()[name]()
    assert fb.min_font_css_px(fig) >= fb.MIN_FONT_CSS_PX
    assert not fb.misplaced_texts(fig, draw=False), "every text whole, on the figure, clear of the others"
    assert fig.display_width >= 0.9 * fb.DISPLAY_WIDTH_PX
    if text_size == "notebook":  # how a notebook shows it (the same code at either text size)
        data, meta = fig._repr_mimebundle_()
        assert _png_size(base64.b64decode(data["image/png"]))[0] == fb.RENDER_SCALE * meta["image/png"]["width"]


def test_min_font_css_px_follows_the_displayed_width() -> None:
    fig = fb.new_figure(10.0, 2.0)
    ax = fig.subplots()
    ax.set_axis_off()  # no tick labels: the two texts below are the only ones
    ax.set_title("t", fontsize=20)
    ax.text(0.5, 0.5, "small", fontsize=12)
    assert fb.min_font_css_px(fig, 1000) == pytest.approx(12 * 100 / 72)
    assert fb.min_font_css_px(fig, 500) == pytest.approx(6 * 100 / 72), "half the width, half the text"
    ax.text(0.1, 0.1, "tiny", fontsize=6)
    fb.render_png(fig)  # a full draw raises every text to the minimum
    assert fb.min_font_css_px(fig, 1000) >= fb.MIN_FONT_CSS_PX


def test_misplaced_texts_names_overlaps_and_texts_off_the_figure() -> None:
    fig, ax = fb.static_figure()
    ax.set_axis_off()
    ax.text(0.1, 0.5, "left label", transform=ax.transAxes)
    assert fb.misplaced_texts(fig) == []
    ax.text(0.12, 0.5, "on top of it", transform=ax.transAxes)
    ax.text(1.0, 1.0, "sticks out", transform=fig.transFigure)
    problems = fb.misplaced_texts(fig)
    assert len(problems) == 2, problems
    assert "'left label' and 'on top of it' overlap" in problems[1] and "'sticks out' runs off" in problems[0]


def test_an_app_stored_output_carries_its_figure_beside_the_widget() -> None:
    app = phasor_app()
    try:
        bundle, metadata = app._repr_mimebundle_()
        assert metadata["image/png"]["width"] == app.figure.display_width
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert base64.b64decode(bundle["image/png"]) == app.image.value
        assert "App(children" not in bundle["text/plain"] and "pos = 3" in bundle["text/plain"]
    finally:
        app.close()


class _Loop:
    """A stand-in for the kernel's io_loop: callbacks wait until :meth:`run`, timers until :meth:`run_timers`
    (which moves the clock, ``app_base._clock``, to each timer's time)."""

    def __init__(self) -> None:
        self.callbacks, self.timers, self.now = [], [], 1000.0

    def add_callback(self, fn) -> None:
        self.callbacks.append(fn)

    def call_later(self, delay: float, fn) -> None:
        self.timers.append((self.now + delay, fn))

    def run(self) -> None:
        callbacks, self.callbacks = self.callbacks, []
        for fn in callbacks:
            fn()

    def run_timers(self) -> None:
        timers, self.timers = sorted(self.timers, key=lambda t: t[0]), []
        for when, fn in timers:
            self.now = max(self.now, when)
            fn()

    def run_until(self, t: float) -> None:
        """Fire, in time order, every timer due by ``t`` (timers they set included), then move the clock to ``t``."""
        while due := sorted((x for x in self.timers if x[0] <= t), key=lambda x: x[0]):
            when, fn = due[0]
            self.timers.remove(due[0])
            self.now = max(self.now, when)
            fn()
        self.now = max(self.now, t)


def _png_width(png: bytes) -> int:
    return Image.open(io.BytesIO(png)).size[0]


def test_values_from_the_browser_are_previewed_in_their_handler_then_sharpened(monkeypatch) -> None:
    """A value from the browser is drawn inside the handler of its comm message, as a preview: ipywidgets' front end
    holds the next values of a slider until the kernel is idle after that handler (and sends only the latest), so
    a burst of presses is drawn as often as one draw's time allows, each time with the newest value."""
    monkeypatch.setattr(app_base, "PREFETCH", False)  # the next test covers it
    loop = _Loop()
    monkeypatch.setattr(app_base, "_kernel_loop", lambda: loop)
    monkeypatch.setattr(app_base, "_clock", lambda: loop.now)
    app = phasor_app()
    try:
        full = _png_width(app.image.value)
        renders = app.renders
        app.controls["k"].set_state({"value": 6})  # a key press
        app.controls["k"].set_state({"value": 10})  # the latest of the presses the front end held meanwhile
        assert app.renders == renders + 2 and not loop.callbacks, "each update drawn in its handler, nothing left over"
        assert "k = 10" in app.caption.value and len(app.artists["path"].get_xdata()) == 11, "with the latest value"
        assert app.previewing and _png_width(app.image.value) == full * fb.PREVIEW_SCALE // fb.RENDER_SCALE
        assert len(loop.timers) == 1, "one timer to sharpen it"
        loop.now += app_base.SHARPEN_AFTER_S / 2  # another press before the timer fires: the timer waits for it
        app.controls["k"].set_state({"value": 11})
        assert app.renders == renders + 3 and len(loop.timers) == 1
        loop.run_timers()  # fires at the first press's deadline, sees the later value, looks again later
        assert app.renders == renders + 3 and app.previewing and len(loop.timers) == 1
        loop.run_timers()
        assert app.renders == renders + 4 and not app.previewing and _png_width(app.image.value) == full
        assert "k = 11" in app.caption.value and not loop.timers
        app.controls["k"].set_state({"value": 12})
        app.controls["k"].value = 2  # from Python (a test, a notebook cell): drawn at once at full size, no loop
        assert app.renders == renders + 6 and "k = 2," in app.caption.value and not loop.callbacks
        assert not app.previewing and _png_width(app.image.value) == full
        loop.run_timers()  # the pending sharpen has nothing left to do
        assert app.renders == renders + 6
    finally:
        app.close()


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def test_the_values_one_key_press_away_are_prefetched_and_shown_without_drawing(monkeypatch) -> None:
    loop = _Loop()
    monkeypatch.setattr(app_base, "_kernel_loop", lambda: loop)
    monkeypatch.setattr(app_base, "_clock", lambda: loop.now)
    monkeypatch.setattr(app_base, "PREFETCH", True)
    app = phasor_app(k=5)
    k = app.controls["k"]
    try:
        k.set_state({"value": 6})
        loop.run()
        renders = app.renders
        assert app.prefetches == 0, "nothing drawn ahead before the kernel is idle"
        loop.run_until(loop.now + app_base.PREFETCH_AFTER_S + 0.1)  # both neighbours, before the sharpen is due
        assert app.prefetches == 2 and app.renders == renders and app.previewing
        assert "k = 6," in app.caption.value and len(app.artists["path"].get_xdata()) == 7, \
            "after drawing ahead the figure shows the current values again"
        k.set_state({"value": 7})  # the next key press: shown without drawing
        loop.run()
        assert app.renders == renders and app.prefetch_hits == 1 and "k = 7," in app.caption.value
        shown = app.image.value
        loop.run_until(loop.now + app_base.PREFETCH_AFTER_S + 0.1)
        assert len(app.artists["path"].get_xdata()) == 8, "the artists caught up with the shown value"
        np.testing.assert_array_equal(_pixels(shown), _pixels(fb.render_png(app.figure, preview=True)),
                                      err_msg="the prefetched preview is the figure of that value")
        k.set_state({"value": 6})  # back again: the other direction was drawn ahead too
        loop.run()
        assert app.prefetch_hits == 2 and "k = 6," in app.caption.value
        k.set_state({"value": 5})  # two presses before the kernel could draw ahead of 6: neither was drawn ahead
        k.set_state({"value": 4})
        prefetches = app.prefetches
        loop.run_until(loop.now + app_base.PREFETCH_AFTER_S / 2)
        assert app.renders == renders + 2 and "k = 4," in app.caption.value and app.prefetches == prefetches
        k.set_state({"value": 12})  # a jump (PageUp, a click on the track): drawn as before
        assert app.renders == renders + 3 and app.prefetch_hits == 2 and "k = 12," in app.caption.value
        loop.run_until(loop.now + 0.2)
        k.value = 13  # from Python: drawn at once, and what was drawn ahead is forgotten
        assert app.renders == renders + 4 and not app._prefetched
        loop.run_until(loop.now + 1.0)
        assert not app.previewing and len(app.artists["path"].get_xdata()) == 14
        assert _png_width(app.image.value) == _png_width(fb.render_png(app.figure))
    finally:
        app.close()


@pytest.mark.parametrize("control, way, expected", [
    (widgets.IntSlider(value=3, min=0, max=10), 1, [4, 2]),
    (widgets.IntSlider(value=10, min=0, max=10), 1, [9]),
    (widgets.FloatSlider(value=1.0, min=0.0, max=3.0, step=0.1), -1, [0.9, 1.1]),
    (widgets.SelectionSlider(options=[("a", 1.0), ("b", 2.0), ("c", 3.0)], value=1.0), 1, [2.0]),
])
def test_steps_are_one_key_press_each_way(control, way: int, expected: list) -> None:
    assert app_base._steps(control, way) == expected
    assert app_base._key({"x": 1.0 + 0.1}) == app_base._key({"x": 1.1}), "the browser's 1.1 finds Python's 1.0 + 0.1"


@pytest.mark.parametrize("text, value", [("10000", 1e4), ("1e4", 1e4), ("10 000", 1e4), ("1 000 000", 1e6),
                                         ("10,000", 1e4), ("10^4", 1e4), ("10**6", 1e6), (" 100 ", 100.0)])
def test_parse_number_reads_what_people_type(text: str, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["", "ten", "1e", "inf", "10 000 x"])
def test_parse_number_refuses_with_the_text(text: str) -> None:
    with pytest.raises(ValueError, match="base must be"):
        parse_number(text)


@pytest.mark.parametrize("factory", [frequency_heatmap_app, dot_product_app])
def test_typed_base_moves_the_slider_or_says_why_not(factory) -> None:
    app = factory()
    try:
        box_row = app.children[1].children[-1]
        box, message = box_row.children
        for typed, value in (("1e6", 1e6), ("10 000", 1e4), ("1 000", 1e3)):
            renders = app.renders
            box.value = typed
            assert app.controls["base"].value == value and app.renders == renders + 1 and message.value == ""
        box.value = "5000"
        assert app.controls["base"].value == 1e3, "a refused value leaves the figure as it is"
        assert "base must be one of" in message.value and "5 000" in message.value
        box.value = "abc"
        assert "base must be a number" in message.value
        app.controls["base"].value = 100.0
        assert box.value == "100" and message.value == "", "the box follows the slider"
    finally:
        app.close()


def test_seed_is_disabled_unless_the_order_is_random() -> None:
    app = permutation_app()
    try:
        seed = app.controls["seed"]
        assert seed.disabled and "random" in seed.tooltip
        app.controls["order"].value = "random"
        assert not seed.disabled
        app.controls["order"].value = "reverse"
        assert seed.disabled
    finally:
        app.close()


def test_frequency_captions_print_numbers_like_the_readout() -> None:
    app = frequency_heatmap_app(base=1e6)
    try:
        assert "base = 1 000 000" in app.caption.value and "e+" not in app.caption.value
        app.controls["seq_len"].value = 512
        image = app.artists["heatmap"]
        assert image.axes.bbox.height >= 512 and image.get_interpolation() == "nearest", "a device pixel per row"
        image.axes.figure.set_size_inches(10, 1.5)  # a panel with fewer pixels than rows averages them: no moiré
        app.refresh()
        assert image.get_interpolation() == "antialiased"
    finally:
        app.close()
    assert fb.format_number(1e6) == "1 000 000" and fb.format_number(47123.9) == "47 124"
    assert fb.format_number(6.28318) == "6.283" and fb.format_number(0.5) == "0.5"


def test_dot_product_at_p_zero_shows_both_signs_of_k() -> None:
    app = dot_product_app(p=0, k_max=64)
    try:
        mirror = app.artists["mirror_dots"]
        ks = np.asarray(mirror.get_xdata())
        assert len(ks) > 3 and (ks < 0).all()
        np.testing.assert_allclose(mirror.get_ydata(), pe_dot_product(torch.as_tensor(ks), 64).numpy(), atol=1e-9)
        app.controls["p"].value = 1000
        assert len(app.artists["mirror_dots"].get_xdata()) == 0, "every offset is on the table"
    finally:
        app.close()


def test_png_carries_dpi_and_smallest_text_for_the_browser_check() -> None:
    """render_png writes the figure's dpi (pHYs) and its smallest text in points (the browser tests read both)."""
    fig, ax = fb.static_figure(height=3.0)
    ax.set_title("title")
    ax.text(0.5, 0.5, "small", fontsize=fb.MIN_FONT_PT + 1.5)
    info = Image.open(io.BytesIO(fb.render_png(fig))).info
    assert float(info[fb.PNG_MIN_FONT_KEY]) == pytest.approx(fb.min_font_pt(fig)) == pytest.approx(fb.MIN_FONT_PT)
    assert info["dpi"][0] == pytest.approx(fig.dpi, rel=1e-3)
    ax.tick_params(labelsize=fb.MIN_FONT_PT + 4)
    for t in (ax.title, *ax.texts):
        t.set_fontsize(fb.MIN_FONT_PT + 2)
    ax.xaxis.label.set_fontsize(fb.MIN_FONT_PT + 3)
    ax.yaxis.label.set_fontsize(fb.MIN_FONT_PT + 3)
    assert float(Image.open(io.BytesIO(fb.render_png(fig))).info[fb.PNG_MIN_FONT_KEY]) == pytest.approx(fb.MIN_FONT_PT + 2)


def test_encode_png_keeps_every_pixel_and_its_metadata() -> None:
    """The toolkit's own PNG writer (faster than Pillow's): decoded by Pillow, it is the canvas pixel for pixel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig, ax = fb.static_figure(height=3.0)
    ax.imshow(np.random.default_rng(0).random((40, 60)), cmap=fb.SEQUENTIAL)  # every byte value, not flat colour
    ax.set_title("title")
    png = fb.render_png(fig)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    image = Image.open(io.BytesIO(png))
    image.load()  # Pillow checks every chunk's CRC and the zlib stream here
    np.testing.assert_array_equal(np.asarray(image.convert("RGBA")), np.asarray(canvas.buffer_rgba()))
    assert image.info["dpi"][0] == pytest.approx(fig.dpi, rel=1e-3) and fb.PNG_MIN_FONT_KEY in image.info
    odd = np.random.default_rng(1).integers(0, 256, (3, 5, 4), dtype=np.uint8)
    back = Image.open(io.BytesIO(fb.encode_png(odd, dpi=72.0, text={"k": "v"})))
    np.testing.assert_array_equal(np.asarray(back), odd)
    assert back.info["k"] == "v"
    with pytest.raises(ValueError, match=r"shape \[h, w, 4\]"):
        fb.encode_png(odd[:, :, :3], dpi=72.0)


def test_ipython_shows_toolkit_figures_with_render_png_even_after_matplotlib_inline() -> None:
    """%matplotlib inline registers a PNG formatter for every Figure, which IPython prefers to _repr_mimebundle_;
    a toolkit figure still shows itself uncropped, with its metadata, at its display width."""
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.figure import Figure

    shell = InteractiveShell.instance()
    png = shell.display_formatter.formatters["image/png"]
    png.for_type(Figure, lambda fig: "matplotlib-inline stand-in")
    try:
        fig, ax = fb.static_figure(height=3.0)
        ax.plot([0, 1])
        data, metadata = shell.display_formatter.format(fig)
        raw = data["image/png"]
        image = Image.open(io.BytesIO(base64.b64decode(raw) if isinstance(raw, str) else raw))
        assert image.size == (round(fig.get_figwidth() * fig.dpi), round(fig.get_figheight() * fig.dpi))
        assert fb.PNG_MIN_FONT_KEY in image.info and metadata["image/png"]["width"] == fig.display_width
    finally:
        png.pop(Figure, None)
        InteractiveShell.clear_instance()


def test_settle_layout_keeps_each_title_font() -> None:
    fig, (left, right) = fb.static_figure(1, 2, height=3.0)
    left.set_title("big", fontsize=15, fontweight="bold")
    right.set_title("default")
    default = right.title.get_fontsize()
    fb.settle_layout(fig)
    assert (left.title.get_fontsize(), left.title.get_fontweight()) == (15, "bold")
    assert right.title.get_fontsize() == default


@pytest.mark.parametrize("name", ["mixing_app", "frequency_heatmap_app"])  # formulas in titles; tick labels
def test_glyph_cache_paints_what_plain_agg_paints_and_is_used(name: str) -> None:
    """TextCachingRenderer replays the glyph bitmaps of a text drawn before (same string, font, size, place):
    previews and full renders are pixel for pixel what matplotlib's own Agg canvas paints, and a second draw of
    the same values rasterizes no glyph again."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from pe_helpers.apps._testing import sweep_values

    app = APPS[name](**factory_kwargs(APPS[name]))
    try:
        fig = app.figure
        assert isinstance(fig.canvas.get_renderer(), fb.TextCachingRenderer)
        control_name, control = next((n, c) for n, c in app.controls.items() if hasattr(c, "max") and not c.disabled)
        for value in sweep_values(control)[-2:]:
            control.value = value
            for preview in (True, False):
                fb.render_png(fig, preview=preview)
                cached = fb.render_png(fig, preview=preview)  # every text a hit
                FigureCanvasAgg(fig)
                fig.invalidate_background()
                fb.render_png(fig, preview=preview)
                plain = fb.render_png(fig, preview=preview)
                fb._TextCachingCanvas(fig)
                fig.invalidate_background()
                np.testing.assert_array_equal(_pixels(cached), _pixels(plain),
                                              err_msg=f"{name}: {control_name}={value!r}, preview={preview}")
        assert fig._text_bitmaps, "the figure keeps its texts' glyphs"
        renderer = fig.canvas.get_renderer()
        drawn = []
        real = renderer._renderer
        fb.render_png(fig)
        fig.invalidate_background()

        class Spy:
            def __getattr__(self, attr):
                return getattr(real, attr)

            def draw_text_image(self, *args):
                drawn.append(args[1:3])
                return real.draw_text_image(*args)

        renderer._renderer = Spy()
        try:
            from unittest import mock

            with mock.patch("matplotlib.ft2font.FT2Font._render_glyph", side_effect=AssertionError("rasterized")):
                fig.canvas.draw()  # a full draw of the same values: every glyph comes from the cache
        finally:
            renderer._renderer = real
        assert drawn, "glyphs were painted (replayed)"
    finally:
        app.close()


def test_a_preview_after_a_full_render_measures_no_text_again() -> None:
    """The canvas keeps a renderer per pixel size: an app alternates between its preview and its full render, and
    a new renderer measured every text and parsed every formula again (the mixing app's first preview after a
    full render: 65 ms instead of 24). Same renderer back, nothing measured, the same pixels."""
    from unittest import mock

    from matplotlib.backends.backend_agg import RendererAgg

    app = APPS["mixing_app"]()
    try:
        fig = app.figure
        first = fb.render_png(fig, preview=True)
        preview_renderer = fig.canvas.renderer
        fb.render_png(fig)
        assert fig.canvas.renderer is not preview_renderer, "a full render has its own pixel size"
        with mock.patch.object(RendererAgg, "get_text_width_height_descent", side_effect=AssertionError("measured")):
            again = fb.render_png(fig, preview=True)
        assert fig.canvas.renderer is preview_renderer
        np.testing.assert_array_equal(_pixels(again), _pixels(first))
        for _ in range(fb.RENDERERS_KEPT + 1):  # other sizes push the oldest out: a bounded number is kept
            fig.dpi += 1
            fb.render_png(fig)
        assert len(fig.canvas._renderers) == fb.RENDERERS_KEPT
    finally:
        app.close()
