"""Sized by the screen: each view of an app reports the device pixels its image covers, and the app renders enough.

The browser half (``pe_helpers/apps/_pixels.py``'s view code) is exercised by tests/browser: at devicePixelRatio 1
and 2, in JupyterLab, Notebook 7 and the decks. Here: the kernel half, with the messages a view sends and the ones
a broken or hostile front end could send.
"""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest
from PIL import Image

from pe_helpers.apps import APPS, phasor_app
from pe_helpers.apps._pixels import DevicePixels
from pe_helpers.figures import _base as fb


def _png_width(png: bytes) -> int:
    return Image.open(io.BytesIO(bytes(png))).size[0]


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGBA"))


@pytest.mark.parametrize("px, dpi", [(848, 100), (1000, 100), (1000.4, 100), (1001, 125), (1696, 175), (2000, 200),
                                     (2001, 225), (1, 100), (3999, 400), (40_000, 400), (1e12, 400)])
def test_dpi_for_width_covers_the_device_pixels_in_quarter_steps(px: float, dpi: float) -> None:
    fig = fb.new_figure(10, 3, layout=None)
    assert fb.dpi_for_width(fig, px) == dpi


@pytest.mark.parametrize("width_in", [10.0, 8.4, 7.3, 9.99, 4.0])
def test_a_png_width_gives_its_own_dpi_back(width_in: float) -> None:
    """The width of a render (``round(width_in × dpi)``) asks for that render's dpi again: a test can redo it."""
    fig = fb.new_figure(width_in, 3, layout=None)
    for steps in range(4, 17):
        dpi = steps * fb.DPI_STEP
        assert fb.dpi_for_width(fig, round(width_in * dpi)) == dpi
        assert fb.dpi_for_width(fig, _png_width(fb.render_png(fig, dpi=dpi))) == dpi


@pytest.mark.parametrize("bad", [0, -1, -0.5, float("nan"), float("inf"), "1000", None, True, [1000]])
def test_dpi_for_width_refuses_what_is_not_a_width(bad: object) -> None:
    with pytest.raises(ValueError, match=r"device_px must be a positive number of pixels, got"):
        fb.dpi_for_width(fb.new_figure(10, 3, layout=None), bad)


@pytest.mark.parametrize("bad", [0, -100, float("nan"), float("inf"), 401, 1e6, "200", True])
def test_render_png_refuses_a_resolution_it_cannot_budget(bad: object) -> None:
    with pytest.raises(ValueError, match=r"dpi must be a number in \(0, 400\], got"):
        fb.render_png(fb.new_figure(4, 2, layout=None), dpi=bad)


def _assert_shows_a_fresh_phasor_at(app, device_px: int) -> None:  # noqa: ANN001
    """``app`` shows pixel for pixel what a new phasor app of its values draws for a view of ``device_px`` pixels."""
    fresh = phasor_app(**{name: c.value for name, c in app.controls.items()})
    try:
        fresh.fit_device_width(device_px)
        np.testing.assert_array_equal(_pixels(app.image.value), _pixels(fresh.image.value))
    finally:
        fresh.close()


def _probe() -> tuple[DevicePixels, list]:
    calls: list = []
    return DevicePixels(calls.append), calls


def test_the_largest_open_view_counts_and_a_closed_view_stops_counting() -> None:
    probe, calls = _probe()
    try:
        probe._received(probe, {"view": "laptop", "px": 1696}, [])
        probe._received(probe, {"view": "projector", "px": 1000}, [])
        assert probe.width == 1696 and calls == [1696], "a smaller second view changes nothing"
        probe._received(probe, {"view": "projector", "px": 2400.2}, [])
        assert calls == [1696, 2401], "device pixels are rounded up"
        probe._received(probe, {"view": "projector", "px": 0}, [])
        probe._received(probe, {"view": "laptop", "px": 0}, [])
        assert calls == [1696, 2401, 1696, None] and probe.width is None
        probe._received(probe, {"view": "laptop", "px": 0}, [])  # closed twice
        assert calls[-1] is None and len(calls) == 4
    finally:
        probe.close()


@pytest.mark.parametrize("message", [None, "px=2000", [2000], {}, {"px": 2000}, {"view": 3, "px": 2000},
                                     {"view": "v"}, {"view": "v", "px": "2000"}, {"view": "v", "px": True},
                                     {"view": "v", "px": -5}, {"view": "v", "px": float("nan")},
                                     {"view": "v", "px": float("inf")}, {"view": "v" * 65, "px": 2000},
                                     {"view": "v", "px": None}])
def test_a_message_that_is_not_a_report_is_ignored(message: object) -> None:
    probe, calls = _probe()
    try:
        probe._received(probe, message, [])
        assert calls == [] and probe.views == {}
    finally:
        probe.close()


def test_views_are_capped_so_a_flood_of_reports_cannot_grow_the_kernel() -> None:
    probe, calls = _probe()
    try:
        for i in range(1000):
            probe._received(probe, {"view": f"v{i}", "px": 1000 + i}, [])
        assert len(probe.views) == 64 and probe.width == 1063
    finally:
        probe.close()


def test_an_app_renders_for_the_pixels_its_view_reports_and_no_more_often() -> None:
    app = phasor_app()
    try:
        assert app.dpi == fb.DISPLAY_DPI * fb.RENDER_SCALE, "before any view: 2 px per CSS px, what a notebook stores"
        renders = app.renders
        app.pixels._received(app.pixels, {"view": "a", "px": 848}, [])  # a 1× screen, the image at 848 CSS px
        assert (app.dpi, app.renders, _png_width(app.image.value)) == (100, renders + 1, 1000)
        app.pixels._received(app.pixels, {"view": "a", "px": 870}, [])  # a resize within the same step
        assert app.renders == renders + 1
        app.controls["k"].value = 7
        app.pixels._received(app.pixels, {"view": "a", "px": 1696}, [])  # the same window on a 2× screen
        assert (app.dpi, _png_width(app.image.value)) == (175, 1750)
        _assert_shows_a_fresh_phasor_at(app, 1696)
        app.pixels._received(app.pixels, {"view": "a", "px": 0}, [])  # the view closed: keep what was drawn
        assert app.dpi == 175
    finally:
        app.close()


#: Apps whose draw differs by kind: a heatmap whose interpolation is chosen by pixels, a colour bar's axes redrawn on
#: every move, lines and text over a kept background. (The browser tests fit every app to a 1× and a 2× screen.)
SIZED = ("frequency_heatmap_app", "mixing_app", "phasor_app")


@pytest.mark.parametrize("name", SIZED)
def test_apps_at_every_size_show_exactly_a_fresh_render(name: str) -> None:
    """Down to one pixel per CSS px and up again, with a move before or after each change of size: pixel for pixel
    what another app of the same values draws at the same pixels, reached in the other order (nothing left over from
    the other size's background, and an update that chooses by pixels, such as the heatmap's interpolation, chooses
    for the new size)."""
    from pe_helpers.apps._testing import factory_kwargs, sweep_values

    factory = APPS[name]
    app = factory(**factory_kwargs(factory))
    fresh = None
    try:
        control_name, control = next((n, c) for n, c in app.controls.items() if not c.disabled)
        values = sweep_values(control)
        app.fit_device_width(1000)
        control.value = values[-1]
        fresh = factory(**{**factory_kwargs(factory), **{n: c.value for n, c in app.controls.items()}})
        fresh.fit_device_width(1000)
        np.testing.assert_array_equal(_pixels(app.image.value), _pixels(fresh.image.value), err_msg=f"{name} at 1000 px")
        app.fit_device_width(2100)  # a size, then a move
        control.value = values[0]
        fresh.controls[control_name].value = values[0]  # a move, then a size
        fresh.fit_device_width(2100)
        shown = _pixels(app.image.value)
        assert shown.shape[1] >= 2100, f"{name}: {shown.shape[1]} px for 2100 device px"
        np.testing.assert_array_equal(shown, _pixels(fresh.image.value), err_msg=f"{name} at 2100 px")
    finally:
        app.close()
        if fresh is not None:
            fresh.close()


def test_a_report_and_control_moves_from_two_threads_take_turns() -> None:
    """A view's report arrives on the thread that handles widget messages while the main thread moves a control: no
    render sees the figure change under it, and at rest the image is the render of the final values at the final size."""
    app = phasor_app()
    errors: list[BaseException] = []

    def sizes() -> None:
        try:
            for px in [1000, 3000, 2000, 1500, 1250]:
                app.pixels._received(app.pixels, {"view": "v", "px": px}, [])
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    def moves() -> None:
        try:
            for k in [3, 9, 4, 12, 7, 1, 11, 5, 8]:
                app.controls["k"].set_state({"value": k})
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    try:
        threads = [threading.Thread(target=sizes, name="comm"), threading.Thread(target=moves, name="main")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert app.dpi == 125 and _png_width(app.image.value) == 1250
        _assert_shows_a_fresh_phasor_at(app, 1250)
    finally:
        app.close()
