"""Headless test of notebook 03's app: every control moves the image and the wavelength line to the right data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pe_helpers import sinusoidal, wavelengths
from pe_helpers.apps import APPS, frequency_heatmap_app
from pe_helpers.figures.frequencies import build_frequency_heatmap


def _artists(app):
    image, wave = app.artists["heatmap"], app.artists["wavelengths"]
    return image.axes, image, wave.axes, wave


def _expected(seq_len: int, d: int, base: float, channel: str) -> np.ndarray:
    pe = sinusoidal(seq_len, d, base=base)  # interleaved: sin at 2i, cos at 2i+1
    return {"sin": pe[:, 0::2], "cos": pe[:, 1::2], "both": pe}[channel].numpy()


def _assert_state(app, seq_len: int, d: int, base: float, channel: str) -> None:
    ax_map, image, ax_wave, wave = _artists(app)
    data = np.asarray(image.get_array())
    np.testing.assert_allclose(data, _expected(seq_len, d, base, channel), atol=1e-6)
    assert image.get_extent() == pytest.approx([-0.5, d / 2 - 0.5, seq_len - 0.5, -0.5])
    assert ax_map.get_xlim() == pytest.approx((-0.5, d / 2 - 0.5))
    assert ax_map.get_ylim() == pytest.approx((seq_len - 0.5, -0.5)), "position 0 at the top"
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == "RdBu_r"
    np.testing.assert_allclose(wave.get_ydata(), wavelengths(d, base).numpy())
    np.testing.assert_allclose(wave.get_xdata(), np.arange(d // 2))
    low, high = ax_wave.get_ylim()
    assert low < 2 * math.pi and high > 2 * math.pi * base, "the 2π … 2π·base range must be in view"
    assert f"d = {d}," in app.caption.value and f"seq_len = {seq_len}," in app.caption.value


def test_registered_and_defaults() -> None:
    assert APPS["frequency_heatmap_app"] is frequency_heatmap_app
    app = frequency_heatmap_app()
    try:
        _assert_state(app, 64, 64, 10000.0, "sin")
        assert app.image.value[:4] == b"\x89PNG"
        for w in app.controls.values():
            assert w.description
    finally:
        app.close()


@pytest.mark.parametrize(
    "name, values",
    [
        ("seq_len", [8, 200, 512, 16]),
        ("d", [4, 30, 256, 64]),
        ("base", [10.0, 100.0, 1e6, 1000.0]),
        ("channel", ["cos", "both", "sin"]),
    ],
)
def test_each_control_updates_the_artists(name: str, values: list) -> None:
    app = frequency_heatmap_app()
    state = {"seq_len": 64, "d": 64, "base": 10000.0, "channel": "sin"}
    try:
        for v in values:
            before_renders, before_png = app.renders, app.image.value
            app.controls[name].value = v
            state[name] = v
            assert app.renders == before_renders + 1
            assert app.image.value != before_png
            _assert_state(app, **state)
    finally:
        app.close()


def test_controls_combine_and_keyword_values_match_a_rebuild() -> None:
    app = frequency_heatmap_app(seq_len=32, d=16, base=100.0, channel="both")
    try:
        _assert_state(app, 32, 16, 100.0, "both")
        app.controls["d"].value = 18
        app.controls["channel"].value = "cos"
        _assert_state(app, 32, 18, 100.0, "cos")
    finally:
        app.close()


def test_the_figure_is_built_once_and_edited_in_place() -> None:
    handle = build_frequency_heatmap()
    update, image = handle.update, handle["heatmap"]
    update(seq_len=100, d=10, base=1000.0, channel="cos")
    assert list(image.axes.images) == [image] and np.asarray(image.get_array()).shape == (100, 5)
    with pytest.raises(ValueError, match="d must be a positive even integer"):
        update(d=7)
    with pytest.raises(ValueError, match="channel"):
        update(channel="tan")


def test_bad_base_is_refused_with_the_allowed_values() -> None:
    with pytest.raises(ValueError, match="base must be one of"):
        frequency_heatmap_app(base=5000.0)
