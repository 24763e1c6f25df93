"""Headless tests of notebook 06's app: query at m + t, key at n + t, the pair vectors and the score against t."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pe_helpers import apply_rope, inverse_frequencies, sinusoidal
from pe_helpers.apps import APPS, rope_shift_app
from pe_helpers.rope import demo_query_key

D = 16
START = {"m": 5, "n": 2, "t": 0, "pair": 0}


def _expected(m: int, n: int, t: int, pair: int) -> dict[str, np.ndarray | float]:
    """What the figure must show, computed independently of pe_helpers.figures (apply_rope and the table)."""
    q, k = demo_query_key(D)
    rq = apply_rope(q[None], [m + t])[0]
    rk = apply_rope(k[None], [n + t])[0]
    ts = torch.arange(65)
    rope_line = (apply_rope(q.expand(65, -1), m + ts) * apply_rope(k.expand(65, -1), n + ts)).sum(-1)
    pe = sinusoidal(200, D, dtype=torch.float64)
    add_line = ((q + pe[m + ts]) * (k + pe[n + ts])).sum(-1)
    return {
        "q": rq[2 * pair: 2 * pair + 2].numpy(), "k": rk[2 * pair: 2 * pair + 2].numpy(),
        "rope": rope_line.numpy(), "add": add_line.numpy(), "score": float(rq @ rk),
        "pair_score": float(rq[2 * pair: 2 * pair + 2] @ rk[2 * pair: 2 * pair + 2]),
    }


def _assert_app(app, m: int, n: int, t: int, pair: int) -> None:
    ax_s = app.artists["line_rope"].axes
    art = app.artists
    want = _expected(m, n, t, pair)
    tip_q, tip_k = art["tip_q"], art["tip_k"]
    np.testing.assert_allclose([tip_q.get_xdata()[0], tip_q.get_ydata()[0]], want["q"], atol=1e-12)
    np.testing.assert_allclose([tip_k.get_xdata()[0], tip_k.get_ydata()[0]], want["k"], atol=1e-12)
    np.testing.assert_allclose(art["ray_q"].get_xdata(), [0.0, want["q"][0]], atol=1e-12)
    np.testing.assert_allclose(art["ray_k"].get_ydata(), [0.0, want["k"][1]], atol=1e-12)
    radius_q = np.hypot(art["circle_q"].get_xdata(), art["circle_q"].get_ydata())
    np.testing.assert_allclose(radius_q, np.linalg.norm(want["q"]), atol=1e-12)  # rotation keeps the length
    line_r, line_a = art["line_rope"], art["line_additive"]
    np.testing.assert_allclose(line_r.get_xdata(), np.arange(65))
    np.testing.assert_allclose(line_r.get_ydata(), want["rope"], atol=1e-9)
    np.testing.assert_allclose(line_r.get_ydata(), want["score"], atol=1e-9)  # flat: the same for every t
    np.testing.assert_allclose(line_a.get_ydata(), want["add"], atol=1e-9)
    dot_r, dot_a = art["dot_rope"], art["dot_additive"]
    assert dot_r.get_xdata()[0] == t and dot_r.get_ydata()[0] == pytest.approx(want["score"], abs=1e-9)
    assert dot_a.get_ydata()[0] == pytest.approx(want["add"][t], abs=1e-9)
    assert list(art["marker"].get_xdata()) == [t, t]
    low, high = ax_s.get_ylim()
    assert low < min(want["add"].min(), want["score"]) and high > max(want["add"].max(), want["score"])
    readout = art["readout"].get_text()
    assert f"pair score {want['pair_score']:+.4f}" in readout
    caption = app.caption.value
    assert f"m = {m}, n = {n}, t = {t}, pair i = {pair}: offset n - m = {n - m};" in caption
    assert f"RoPE score = {want['score']:.4f} for every t" in caption


def test_defaults_and_registry() -> None:
    assert APPS["rope_shift_app"] is rope_shift_app
    app = rope_shift_app()
    try:
        assert app.renders == 1 and app.image.value
        assert app.controls["pair"].max == D // 2 - 1 and app.controls["t"].max == 64
        _assert_app(app, **START)
    finally:
        app.close()


@pytest.mark.parametrize(
    "name, values",
    [("m", [0, 33, 64, 7]), ("n", [64, 0, 31]), ("t", [64, 1, 30, 0]), ("pair", [7, 3, 0, 1])],
)
def test_each_control_redraws_with_the_right_data(name: str, values: list) -> None:
    app = rope_shift_app()
    state = dict(START)
    try:
        for v in values:
            renders, png = app.renders, app.image.value
            app.controls[name].value = v
            state[name] = v
            assert app.renders == renders + 1 and app.image.value != png
            _assert_app(app, **state)
    finally:
        app.close()


def test_shift_keeps_the_angle_between_the_pair_vectors() -> None:
    app = rope_shift_app(m=20, n=9, t=0, pair=2)
    try:
        angles = []
        for t in (0, 13, 40, 64):
            app.controls["t"].value = t
            tip_q, tip_k = app.artists["tip_q"], app.artists["tip_k"]
            q = np.array([tip_q.get_xdata()[0], tip_q.get_ydata()[0]])
            k = np.array([tip_k.get_xdata()[0], tip_k.get_ydata()[0]])
            angles.append(math.remainder(math.atan2(q[1], q[0]) - math.atan2(k[1], k[0]), 2 * math.pi))
        np.testing.assert_allclose(angles, angles[0], atol=1e-12)
        q0 = _expected(20, 9, 0, 2)["q"]
        assert not np.allclose(q, q0), "the vectors themselves did turn"
        omega = float(inverse_frequencies(D)[2])
        turned = math.atan2(q[1], q[0]) - math.atan2(q0[1], q0[0])
        assert abs(math.remainder(turned - 64 * omega, 2 * math.pi)) < 1e-9, "q turned by t·ω_i"
    finally:
        app.close()


def test_factory_validates() -> None:
    with pytest.raises(ValueError, match="m must be in 0..64"):
        rope_shift_app(m=65)
    with pytest.raises(ValueError, match="pair must be in 0..3"):
        rope_shift_app(d=8, pair=4)
    with pytest.raises(ValueError, match="even"):
        rope_shift_app(d=7)
    with pytest.raises(TypeError, match="t must be an integer"):
        rope_shift_app(t=1.5)
