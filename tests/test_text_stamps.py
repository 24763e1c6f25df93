"""Texts stamped from kept pixels (``pe_helpers/figures/_stamps.py``) look as matplotlib draws them, and are redrawn
when anything that decides their pixels changes.

"As matplotlib draws them": the same figure drawn with every text straight onto the canvas (the renderer matplotlib
gives). The stamps may differ only where two glyphs of one string share an edge pixel, by one level in 255.
"""

from __future__ import annotations

import numpy as np
import pytest

from pe_helpers.apps import APPS
from pe_helpers.apps._testing import factory_kwargs, sweep_values
from pe_helpers.figures import _base as fb
from pe_helpers.figures._stamps import STAMP_BUDGET_BYTES, TextStamps

KINDS = {
    "plain": dict(s="Hgj fi 0.125", fontsize=14),
    "cjk": dict(s="位置编码 ω", fontsize=18),
    "rotated 90": dict(s="position", rotation=90),
    "rotated 33": dict(s="k = 17", rotation=33, fontsize=20),
    "rotated -120": dict(s="-120°", rotation=-120, rotation_mode="anchor"),
    "math": dict(s=r"$\omega_i = 10000^{-2i/d}$", fontsize=16),
    "multi-line": dict(s="two\nlines", ha="center", va="center", fontsize=15),
    "multi-line rotated": dict(s="token accuracy\n(one seed)", rotation=90, ha="center", va="center"),
    "alpha colour": dict(s="faint", color="#D55E00", alpha=0.4, fontsize=22),
    "big bold": dict(s="W", fontsize=60, fontweight="bold"),
    "boxed": dict(s="boxed", bbox=dict(facecolor="#E69F00", alpha=0.5)),
    "right-aligned": dict(s="1 000 000", ha="right", va="top"),
    "blank": dict(s="   "),
    "empty": dict(s=""),
}
PLACES = [(0.3137, 0.4719), (0.97, 0.03)]  # part pixels; running off two edges


def _figure(dpi: float, x: float, y: float, **text: object) -> tuple[fb.CachedFigure, object]:
    fig = fb.new_figure(2.5, 1.2, layout=None, dpi=dpi)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.plot([0, 1], [0, 1], color="#0072B2")
    label = fig.text(x, y, text.pop("s"), **text)
    fig.set_dynamic(label)
    return fig, label


def _straight(fig: fb.CachedFigure, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """``fig`` with every text drawn straight onto the canvas: matplotlib's own draw."""
    with monkeypatch.context() as patch:
        patch.setattr(fb.CachedFigure, "stamping", lambda self, renderer: renderer)
        fig.invalidate_background()
        pixels = fb.render_rgba(fig)
    fig.invalidate_background()
    return pixels


def _assert_as_drawn(stamped: np.ndarray, straight: np.ndarray) -> None:
    differ = np.abs(stamped.astype(int) - straight.astype(int)).max(-1)
    inked = (straight[..., :3] < 250).any(-1).sum()
    assert differ.max() <= 1, f"a stamped text differs by {differ.max()} levels from the text drawn straight"
    assert (differ > 0).sum() <= max(4, inked // 100), f"{(differ > 0).sum()} pixels differ of {inked} inked"


@pytest.mark.parametrize("dpi", [100, 400])
@pytest.mark.parametrize("kind", KINDS)
def test_a_stamped_text_is_the_text_matplotlib_draws(kind: str, dpi: float, monkeypatch: pytest.MonkeyPatch) -> None:
    for x, y in PLACES:
        fig, _ = _figure(dpi, x, y, **KINDS[kind])
        first = fb.render_rgba(fig)  # a whole draw, stamping every text
        again = fb.render_rgba(fig)  # the kept background, the text stamped from what was kept
        np.testing.assert_array_equal(again, first)
        _assert_as_drawn(again, _straight(fig, monkeypatch))


def test_a_redraw_lays_out_no_text_it_has_drawn_before(monkeypatch: pytest.MonkeyPatch) -> None:
    fig, label = _figure(100, 0.4, 0.5, s="a")
    for word in ("a", "bb", "ccc"):
        label.set_text(word)
        fb.render_rgba(fig)
    misses = fig.text_stamps.misses
    for word in ("bb", "a", "ccc", "a"):
        label.set_text(word)
        pixels = fb.render_rgba(fig)
        _assert_as_drawn(pixels, _straight(fig, monkeypatch))
    assert fig.text_stamps.misses == misses


@pytest.mark.parametrize("change", ["size", "colour", "weight", "angle", "dpi", "part pixel", "family"])
def test_anything_that_decides_a_texts_pixels_draws_it_anew(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fig, label = _figure(100, 0.4, 0.5, s="Text 42", fontsize=14)
    before = fb.render_rgba(fig)
    if change == "size":
        label.set_fontsize(19)
    elif change == "colour":
        label.set_color("#CC79A7")
    elif change == "weight":
        label.set_fontweight("bold")
    elif change == "angle":
        label.set_rotation(15)
    elif change == "dpi":
        fig.set_dpi(125)
    elif change == "part pixel":
        label.set_x(0.4 + 0.3 / fig.bbox.width)
    elif change == "family":
        label.set_fontfamily("DejaVu Serif")
    fig.invalidate_background()
    after = fb.render_rgba(fig)
    if change != "dpi":
        assert (after != before).any(), f"changing the {change} changed nothing: the test does not test"
    _assert_as_drawn(after, _straight(fig, monkeypatch))


def test_a_font_changed_in_place_is_not_served_from_its_old_stamp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts share FontProperties objects that matplotlib may change later: a stamp keeps a copy of its font."""
    fig, label = _figure(100, 0.4, 0.5, s="Text", fontsize=14)
    fb.render_rgba(fig)
    label.get_fontproperties().set_size(30)
    _assert_as_drawn(fb.render_rgba(fig), _straight(fig, monkeypatch))


def test_a_clipped_text_is_drawn_straight(monkeypatch: pytest.MonkeyPatch) -> None:
    fig, label = _figure(100, 0.45, 0.5, s="clipped by its axes", fontsize=20)
    label.set_clip_box(fig.axes[0].bbox)
    label.set_clip_on(True)
    fb.render_rgba(fig)
    np.testing.assert_array_equal(fb.render_rgba(fig), _straight(fig, monkeypatch))
    assert not any(key[0] == label.get_text() for key in fig.text_stamps._kept)


def test_the_budget_holds_and_texts_beyond_it_are_drawn_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    fig, label = _figure(175, 0.3, 0.5, s="0", fontsize=20)
    fig.text_stamps = TextStamps(budget=6000)
    fig._stamping = None
    for n in range(40):
        label.set_text(f"{n * 37}")
        pixels = fb.render_rgba(fig)
        assert fig.text_stamps.bytes <= 6000
        assert sum(stamp[0].nbytes for stamp in fig.text_stamps._kept.values()) == fig.text_stamps.bytes
    _assert_as_drawn(pixels, _straight(fig, monkeypatch))
    label.set_fontsize(90)  # its own canvas is larger than the whole budget: drawn straight, and nothing kept for it
    kept = len(fig.text_stamps)
    np.testing.assert_array_equal(fb.render_rgba(fig), _straight(fig, monkeypatch))
    assert len(fig.text_stamps) == kept
    misses = fig.text_stamps.misses
    fb.render_rgba(fig)
    assert fig.text_stamps.misses == misses, "a text drawn straight was tried alone again on the next render"


@pytest.mark.parametrize("name", ["permutation_app", "dot_product_app", "frequency_heatmap_app", "mixing_app"])
def test_an_app_moved_back_lays_out_no_text_again(name: str) -> None:
    """Four kinds of changing text: tokens moving between slots, axes whose ticks move, a heatmap's ticks and title, a
    colour bar's ticks. Each slider across its range, then across it again: the second time, every text is kept."""
    app = APPS[name](**factory_kwargs(APPS[name]))
    try:
        for control in app.controls.values():
            if not hasattr(control, "min"):
                continue
            values = sweep_values(control)
            for value in values:
                control.value = value
            misses = app.figure.text_stamps.misses
            for value in values:
                control.value = value
            assert app.figure.text_stamps.misses == misses, f"{name}: texts it had drawn were laid out again"
        assert 0 < app.figure.text_stamps.bytes <= STAMP_BUDGET_BYTES
    finally:
        app.close()


def test_a_figure_drawn_once_keeps_no_stamps() -> None:
    fig, ax = fb.static_figure()
    ax.set_title("drawn once")
    fb.render_png(fig)
    assert len(fig.text_stamps) == 0


@pytest.mark.parametrize("budget, error", [(-1, ValueError), (1.5, TypeError), ("16 MB", TypeError), (True, TypeError)])
def test_a_bad_budget_is_named(budget: object, error: type) -> None:
    with pytest.raises(error, match="budget"):
        TextStamps(budget)
