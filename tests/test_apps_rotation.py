"""Headless tests of notebook 04's apps: the phasor of one pair, and PE(p)·PE(p+k) against k."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pe_helpers import inverse_frequencies, shift_matrix, sinusoidal
from pe_helpers.apps import APPS, dot_product_app, phasor_app
from pe_helpers.figures._base import format_number

D = 16


def _pair_at(pos: int, pair: int, d: int = D) -> tuple[float, float]:
    """(sin, cos) of pair i at pos from the table (pos >= 0) or the formula (negative pos)."""
    if pos >= 0:
        row = sinusoidal(pos + 1, d, dtype=torch.float64)[pos]
        return float(row[2 * pair]), float(row[2 * pair + 1])
    w = float(inverse_frequencies(d)[pair])
    return math.sin(pos * w), math.cos(pos * w)


def _assert_phasor(app, pos: int, k: int, pair: int) -> None:
    dot_a, dot_b = app.artists["dot_a"], app.artists["dot_b"]
    sin_a, cos_a = _pair_at(pos, pair)
    sin_b, cos_b = _pair_at(pos + k, pair)
    # x = cos column (2i+1), y = sin column (2i)
    np.testing.assert_allclose([dot_a.get_xdata()[0], dot_a.get_ydata()[0]], [cos_a, sin_a], atol=1e-12)
    np.testing.assert_allclose([dot_b.get_xdata()[0], dot_b.get_ydata()[0]], [cos_b, sin_b], atol=1e-12)
    path = app.artists["path"]
    assert len(path.get_xdata()) == abs(k) + 1, "one grey dot per position from pos to pos + k"
    panel = app.artists["panel"].get_text()
    block = shift_matrix(k, D)[2 * pair: 2 * pair + 2, 2 * pair: 2 * pair + 2]
    assert f"[{float(block[0, 0]):7.4f} {float(block[0, 1]):7.4f}]" in panel
    assert f"[{float(block[1, 0]):7.4f} {float(block[1, 1]):7.4f}]" in panel
    angle = k * float(inverse_frequencies(D)[pair])
    assert f"angle k·ω_i = {angle:.4f} rad" in app.caption.value
    assert f"pos = {pos}, k = {k}, pair i = {pair}" in app.caption.value


def test_phasor_defaults_and_registry() -> None:
    assert APPS["phasor_app"] is phasor_app and APPS["dot_product_app"] is dot_product_app
    app = phasor_app()
    try:
        _assert_phasor(app, 3, 5, 1)  # default pair 1 (k = 5 on pair 0 turns by 286°, which reads as -74°)
        assert app.controls["pair"].max == D // 2 - 1
    finally:
        app.close()


@pytest.mark.parametrize(
    "name, values",
    [("pos", [0, 77, 200, 1]), ("k", [-50, -3, 0, 50, 12]), ("pair", [7, 2, 0, 5])],
)
def test_phasor_each_control(name: str, values: list) -> None:
    app = phasor_app()
    state = {"pos": 3, "k": 5, "pair": 1}
    try:
        for v in values:
            renders, png = app.renders, app.image.value
            app.controls[name].value = v
            state[name] = v
            assert app.renders == renders + 1 and app.image.value != png
            _assert_phasor(app, **state)
    finally:
        app.close()


def test_phasor_block_rotates_the_first_point_onto_the_second() -> None:
    app = phasor_app(pos=40, k=-17, pair=2)
    try:
        _assert_phasor(app, 40, -17, 2)
        block = shift_matrix(-17, D)[4:6, 4:6]
        moved = block @ torch.tensor(_pair_at(40, 2), dtype=torch.float64)
        torch.testing.assert_close(moved, torch.tensor(_pair_at(23, 2), dtype=torch.float64))
    finally:
        app.close()


def _closed_form_free(ks: np.ndarray, d: int, base: float) -> np.ndarray:
    """Σ_i [sin(0)sin(kω) + cos(0)cos(kω)] computed from the definition, independent of pe_dot_product."""
    omega = base ** (-np.arange(0, d, 2) / d)
    return np.cos(ks[:, None] * omega[None, :]).sum(axis=1)


def _assert_dot(app, d: int, base: float, p: int, k_max: int) -> None:
    ax = app.artists["curve"].axes
    curve, dots = app.artists["curve"], app.artists["dots"]
    ks = np.asarray(curve.get_xdata())
    np.testing.assert_array_equal(ks, np.arange(-k_max, k_max + 1))
    np.testing.assert_allclose(curve.get_ydata(), _closed_form_free(ks.astype(float), d, base), atol=1e-9)
    kd = np.asarray(dots.get_xdata()).astype(int)
    assert len(kd) > 3 and (p + kd >= 0).all()
    pe = sinusoidal(p + k_max + 1, d, base=base, dtype=torch.float64)
    np.testing.assert_allclose(dots.get_ydata(), (pe[p + torch.from_numpy(kd)] @ pe[p]).numpy(), atol=1e-9)
    assert ax.get_xlim() == pytest.approx((-k_max, k_max))
    low, high = ax.get_ylim()
    assert high > d / 2 and low < float(np.min(curve.get_ydata()))
    assert f"d = {d}, base = {format_number(base)}, p = {p}:" in app.caption.value


@pytest.mark.parametrize(
    "name, values",
    [
        ("d", [4, 100, 256, 64]),
        ("base", [10.0, 1e6, 100.0]),
        ("p", [500, 1000, 0, 3]),
        ("k_max", [16, 1024, 48]),
    ],
)
def test_dot_product_each_control(name: str, values: list) -> None:
    app = dot_product_app()
    state = {"d": 64, "base": 10000.0, "p": 0, "k_max": 128}
    try:
        _assert_dot(app, **state)
        for v in values:
            renders, png = app.renders, app.image.value
            app.controls[name].value = v
            state[name] = v
            assert app.renders == renders + 1 and app.image.value != png
            _assert_dot(app, **state)
    finally:
        app.close()


def test_dot_product_marks_the_first_rise() -> None:
    app = dot_product_app(d=64, base=10000.0, p=10, k_max=64)
    try:
        rise = app.artists["rise"]
        k = int(rise.get_xdata()[0])
        values = _closed_form_free(np.arange(k + 2, dtype=float), 64, 10000.0)
        assert values[k + 1] > values[k] and (np.diff(values[: k + 1]) < 0).all()
        assert f"rises from k = {k} to {k + 1}" in app.caption.value
    finally:
        app.close()


@pytest.mark.parametrize("pair", range(D // 2))
def test_phasor_labels_clear_each_other_and_both_dots(pair: int) -> None:
    """"pos" and "pos+k" once overlapped at high pair i (the points nearly coincide), and the long "pos+k" ran back
    over its own dot when it sat on the horizontal axis. Every label's box must miss the other label, both dots and
    the axes' edge, over a sweep of angles. (A label's box is measured from its text, font and position, which
    ``update`` sets: no draw is needed to read it, and the first is checked against a draw.)"""
    from pe_helpers.figures.rotation import build_phasor

    handle = build_phasor()
    fig = handle.figure
    renderer = fig.canvas.get_renderer()
    for pos in (0, 1, 3, 7, 20, 55, 120):
        for k in (-9, -1, 1, 5, 33):
            handle.update(pos=pos, k=k, pair=pair)
            if pos == 0 and k == -9:
                measured = handle["text_b"].get_window_extent(renderer).bounds
                fig.canvas.draw()
                assert handle["text_b"].get_window_extent(fig.canvas.get_renderer()).bounds == measured
            boxes = {name: handle[f"text_{name}"].get_window_extent(renderer) for name in "ab"}
            assert not boxes["a"].overlaps(boxes["b"]), f"labels overlap at pos={pos}, k={k}, pair={pair}"
            axes = handle["dot_a"].axes.get_window_extent(renderer)
            for name, box in boxes.items():
                assert axes.x0 <= box.x0 and box.x1 <= axes.x1 and axes.y0 <= box.y0 and box.y1 <= axes.y1, (
                    f"label {name} leaves the circle's panel at pos={pos}, k={k}, pair={pair}")
                for dot in "ab":
                    x, y = handle[f"dot_{dot}"].get_xydata()[0]
                    px, py = handle["dot_a"].axes.transData.transform((x, y))
                    assert not box.contains(px, py), (
                        f"label {name} covers dot {dot} at pos={pos}, k={k}, pair={pair}")
