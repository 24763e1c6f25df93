"""The figure toolkit and the App machinery: legible, crisp, visible before running, typed values, disabled
controls, drawing in the handler, one thread at a time. Every app and every static figure builder is measured."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
import torch
from PIL import Image

from pe_helpers.apps import APPS, dot_product_app, frequency_heatmap_app, permutation_app, phasor_app
from pe_helpers.apps import _base as app_base
from pe_helpers.apps._base import parse_number
from pe_helpers.apps._testing import factory_kwargs
from pe_helpers.figures import _base as fb
from pe_helpers import mixing
from pe_helpers.extrapolation import reference_results
from pe_helpers.extrapolation.probe import source_positions
from pe_helpers.figures.extrapolation import accuracy_figure, attention_maps_figure
from pe_helpers.figures.mixing import build_mixing
from pe_helpers.figures.frequencies import (build_frequency_heatmap, draw_dimension_traces, draw_float32_error,
                                            draw_frequencies, draw_layouts)
from pe_helpers.figures.learned import plot_qkv_change, plot_similarity_heatmaps
from pe_helpers.figures.order import plot_sentence_pairs
from pe_helpers.figures.rope import draw_angle_error, draw_rope_decay, draw_score_matrices
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
        "draw_rope_decay": lambda: one(draw_rope_decay, torch.logspace(0, 6, 200).round().unique(), 128, (1e4, 5e5)),
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
        stored = base64.b64decode(bundle["image/png"])
        assert np.array_equal(_pixels(stored), _pixels(bytes(app.image.value)))  # the figure shown, plus its texts
        texts = json.loads(Image.open(io.BytesIO(stored)).text[fb.PNG_TEXTS_KEY])
        assert texts and texts == fb.figure_texts(app.figure)
        assert "App(children" not in bundle["text/plain"] and "pos = 3" in bundle["text/plain"]
    finally:
        app.close()


def _png_width(png: bytes) -> int:
    return Image.open(io.BytesIO(png)).size[0]


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def _assert_shows_a_fresh_render(app, factory, why: str) -> None:  # noqa: ANN001
    """``app``'s image is pixel for pixel what ``factory`` draws when made with ``app``'s control values."""
    fresh = factory(**{name: c.value for name, c in app.controls.items()})
    try:
        np.testing.assert_array_equal(_pixels(app.image.value), _pixels(fresh.image.value), err_msg=why)
    finally:
        fresh.close()


def test_a_value_from_the_browser_is_drawn_whole_and_sharp_in_its_handler() -> None:
    """A value from the browser (``set_state``, what ipywidgets' comm handler calls) is drawn inside that handler,
    at full resolution: when the handler returns, the image is the figure of the new value. ipywidgets' front end
    holds the next values of a slider until the kernel is idle after it, and sends only the latest."""
    app = phasor_app()
    try:
        full = _png_width(app.image.value)
        renders = app.renders
        app.controls["k"].set_state({"value": 6})  # a key press
        app.controls["k"].set_state({"value": 10})  # the latest of the presses the front end held meanwhile
        assert app.renders == renders + 2, "each update drawn in its handler"
        assert "k = 10" in app.caption.value and len(app.artists["path"].get_xdata()) == 11, "with the latest value"
        assert _png_width(app.image.value) == full == round(app.figure.display_width * fb.RENDER_SCALE)
        _assert_shows_a_fresh_render(app, phasor_app, "what the browser shows is a fresh render of the same values")
    finally:
        app.close()


@pytest.mark.parametrize("name", MINE)
def test_every_app_after_moves_shows_exactly_a_fresh_render_of_its_values(name: str) -> None:
    """After every control was moved (each to its last sweep value), the image is pixel for pixel what a new app
    built with those values shows: nothing drawn over, nothing left behind from earlier values, full resolution."""
    from pe_helpers.apps._testing import sweep_values

    factory = APPS[name]
    app = factory(**factory_kwargs(factory))
    start = {n: c.value for n, c in app.controls.items()}
    first_image = app.image.value
    try:
        for control in app.controls.values():
            if not control.disabled:
                control.value = sweep_values(control)[-1]
        values = {n: c.value for n, c in app.controls.items()}
        fresh = factory(**{**factory_kwargs(factory), **values})
        try:
            shown = _pixels(app.image.value)
            assert shown.shape[1] == round(app.figure.display_width * fb.RENDER_SCALE)
            np.testing.assert_array_equal(shown, _pixels(fresh.image.value), err_msg=f"{name} with {values}")
            for control_name, value in start.items():  # and back: an app built elsewhere shows the start as built
                fresh.controls[control_name].value = value
            np.testing.assert_array_equal(_pixels(fresh.image.value), _pixels(first_image), err_msg=f"{name} back to {start}")
        finally:
            fresh.close()
    finally:
        app.close()


def test_two_threads_driving_one_app_take_turns_and_the_last_value_is_shown(monkeypatch) -> None:
    """A kernel may handle widget messages on a thread of its own while the main thread runs a cell: two threads
    set values and redraw one app at once. No update may change the figure while a render of it runs (the figure
    drawn from two threads blurred JupyterLab's apps), and the image at rest is the render of the final values."""
    import threading
    import time

    app = phasor_app()
    rendering = []  # one entry per render running now, in any thread
    seen: list[str] = []
    real_render, real_update = app_base.render_png, app._update

    def slow_render(fig, **kwargs):  # noqa: ANN001, ANN202 - a render that leaves a window open for a race
        rendering.append(threading.current_thread().name)
        try:
            time.sleep(0.002)
            return real_render(fig, **kwargs)
        finally:
            rendering.remove(threading.current_thread().name)

    def watched_update(**values):  # noqa: ANN202
        if rendering:
            seen.append(f"update({values}) in {threading.current_thread().name} while {rendering} rendered")
        return real_update(**values)

    monkeypatch.setattr(app_base, "render_png", slow_render)
    app._update = watched_update
    errors: list[BaseException] = []

    def drive(control: str, values: list, browser: bool) -> None:
        try:
            for v in values:
                if browser:
                    app.controls[control].set_state({"value": v})
                else:
                    app.controls[control].value = v
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    try:
        threads = [threading.Thread(target=drive, args=("k", [3, 9, 4, 12, 7, 1, 11] * 3, True), name="comm"),
                   threading.Thread(target=drive, args=("pos", [0, 5, 2, 9, 6, 3] * 3, False), name="main")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors
        assert not seen, seen[:3]
        values = {name: c.value for name, c in app.controls.items()}
        assert (values["k"], values["pos"]) == (11, 3)
        _assert_shows_a_fresh_render(app, phasor_app, "at rest: the render of the final values")
    finally:
        app.close()


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
