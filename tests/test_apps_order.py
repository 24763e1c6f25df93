"""Notebook 01's compute (pe_helpers.order sentences and orders) and its permutation app, headless."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from pe_helpers import SelfAttention, attention_scores, permutation_matrix
from pe_helpers.apps import permutation_app
from pe_helpers.order import (
    APP_SENTENCE,
    EN_PAIR,
    ORDERS,
    ZH_PAIR,
    is_reordering,
    named_order,
    permutation_view,
    random_positions,
    reordering,
    token_vectors,
    tokens,
)

# --- compute ------------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b, perm", [(*ZH_PAIR, [3, 1, 2, 0]), (*EN_PAIR, [2, 1, 0])])
def test_reordering_finds_the_permutation(a: str, b: str, perm: list[int]) -> None:
    p = reordering(a, b)
    assert p.tolist() == perm
    assert [tokens(a)[i] for i in p] == tokens(b)
    torch.testing.assert_close(permutation_matrix(p) @ token_vectors(a), token_vectors(b))


def test_i_love_you_is_not_a_reordering_of_you_love_me() -> None:
    assert not is_reordering("I love you", "you love me")
    assert is_reordering(*ZH_PAIR) and is_reordering(*EN_PAIR)
    with pytest.raises(ValueError, match="not a reordering"):
        reordering("I love you", "you love me")


def test_token_vectors_depend_on_the_token_only() -> None:
    a, b = token_vectors("dog bites man"), token_vectors("man bites dog")
    torch.testing.assert_close(a[0], b[2])
    torch.testing.assert_close(a[1], b[1])
    assert not torch.allclose(a[0], a[2])
    assert not torch.allclose(token_vectors("dog", seed=1), token_vectors("dog", seed=0))
    with pytest.raises(TypeError, match="sentence"):
        token_vectors(3)
    with pytest.raises(ValueError, match="at least one token"):
        token_vectors("  ")


def test_named_orders() -> None:
    toks = tokens(APP_SENTENCE)
    assert named_order("original", toks).tolist() == [0, 1, 2, 3, 4, 5]
    assert [toks[i] for i in named_order("swap 0 and 2", toks)][:3] == ["man", "bites", "dog"]
    assert named_order("reverse", toks).tolist() == [5, 4, 3, 2, 1, 0]
    assert named_order("rotate by one", toks).tolist() == [5, 0, 1, 2, 3, 4]
    assert [toks[i] for i in named_order("sort alphabetically", toks)] == sorted(toks)
    assert named_order("random", toks, seed=3).tolist() == named_order("random", toks, seed=3).tolist()
    assert sorted(named_order("random", toks, seed=3).tolist()) == list(range(6))
    with pytest.raises(ValueError, match="order must be one of"):
        named_order("sideways", toks)


def test_permutation_view_is_equivariant_without_positions_and_not_with() -> None:
    toks = tokens(APP_SENTENCE)
    x, head = token_vectors(toks), SelfAttention(8, seed=0)
    for seed in range(5):
        perm = named_order("random", toks, seed=seed)
        view = permutation_view(x, toks, perm, head)
        assert view.output_error < 1e-5 and view.score_error < 1e-5
        torch.testing.assert_close(view.permuted_scores, view.scores[perm][:, perm])
    view = permutation_view(x, toks, named_order("reverse", toks), head, random_positions(6, 8))
    assert view.output_error > 0.05 and view.score_error > 0.05


# --- the app ------------------------------------------------------------------------------------


def _panels(app):
    by_title = {ax.get_title(): ax for ax in app.figure.axes if ax.get_title()}
    s = next(ax for t, ax in by_title.items() if t.startswith("scores S ="))
    p = next(ax for t, ax in by_title.items() if t.startswith("scores S′"))
    o = next(ax for t, ax in by_title.items() if t.startswith("outputs"))
    return s, p, o


def _row_labels(ax) -> list[str]:
    rows = [t for t in ax.texts if t.get_rotation() == 0]
    return [t.get_text() for t in sorted(rows, key=lambda t: t.get_position()[1])]


def _expected(order: str, seed: int, positions: bool):
    toks = tokens(APP_SENTENCE)
    x, head = token_vectors(toks, 8), SelfAttention(8, seed=0)
    perm = named_order(order, toks, seed=seed)
    pos = random_positions(6, 8) if positions else torch.zeros(6, 8)
    with torch.no_grad():
        xp = x[perm] + pos
        q, k, _ = head.project(xp)
        return perm, attention_scores(q, k), head(xp)[0], [toks[i] for i in perm]


def test_app_artists_hold_the_permuted_scores_and_outputs() -> None:
    app = permutation_app()
    try:
        ax_s, ax_p, ax_o = _panels(app)
        title = app.artists["title"]
        for positions in (False, True):
            app.controls["positions"].value = positions
            for order in ORDERS:
                for seed in ((0, 7, 20) if order == "random" else (0,)):
                    renders, image = app.renders, app.image.value
                    app.controls["order"].value = order
                    app.controls["seed"].value = seed
                    perm, s_perm, out_perm, toks = _expected(order, seed, positions)
                    np.testing.assert_allclose(app.artists["permuted_scores"].get_array(), s_perm.numpy(), atol=1e-5)
                    np.testing.assert_allclose(app.artists["outputs"].get_array(), out_perm.numpy(), atol=1e-5)
                    _, s_orig, _, _ = _expected("original", 0, positions)
                    np.testing.assert_allclose(app.artists["scores"].get_array(), s_orig.numpy(), atol=1e-5)
                    assert _row_labels(ax_p) == toks and _row_labels(ax_o) == toks
                    assert str(perm.tolist()) in title.get_text()
                    if not positions:  # equivariance: S' = P S Pᵀ
                        np.testing.assert_allclose(s_perm.numpy(), s_orig[perm][:, perm].numpy(), atol=1e-5)
                        assert "max|S′ − ΠSΠᵀ| = 0.0000" in title.get_text()  # Π: the permutation matrix
                    elif order != "original":
                        assert "max|S′ − ΠSΠᵀ| = 0.0000" not in title.get_text()
                    if app.renders > renders:
                        assert app.image.value != image
    finally:
        app.close()


def test_each_move_renders_once_and_changes_the_image() -> None:
    app = permutation_app(order="random")
    try:
        for name, value in (("order", "reverse"), ("positions", True), ("order", "random"), ("seed", 5)):
            renders, image = app.renders, app.image.value
            app.controls[name].value = value
            assert app.renders == renders + 1
            assert app.image.value != image
    finally:
        app.close()


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_in_place_updates_draw_what_a_fresh_build_draws() -> None:
    """The cached background plus redrawn artists gives the same pixels as a fresh app and as savefig."""
    app = permutation_app()
    try:
        app.controls["order"].value = "reverse"
        app.controls["positions"].value = True
        fresh = permutation_app(order="reverse", positions=True)
        np.testing.assert_array_equal(_pixels(app.image.value), _pixels(fresh.image.value))
        out = io.BytesIO()
        app.figure.savefig(out, format="png", dpi=app.figure.dpi)
        np.testing.assert_array_equal(_pixels(out.getvalue()), _pixels(app.image.value))
        fresh.close()
    finally:
        app.close()


def test_bad_start_values_are_named() -> None:
    with pytest.raises(ValueError, match="order must be one of"):
        permutation_app(order="sideways")
    with pytest.raises(ValueError, match="seed"):
        permutation_app(seed=-1)
    app = permutation_app(seed=50)
    assert app.controls["seed"].max == 50 and app.controls["seed"].value == 50
    app.close()


def test_cached_figure_repaints_dynamic_artists_over_a_kept_background() -> None:
    from pe_helpers.figures._base import new_figure, render_png

    fig = new_figure(2.0, 1.0, layout=None)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    (line,) = ax.plot([0, 1], [0, 1])
    fig.set_dynamic(line)
    first = render_png(fig)
    line.set_ydata([1, 0])
    moved = render_png(fig)
    assert moved != first  # the dynamic line is redrawn
    ax.set_facecolor("black")  # a static change is invisible until the background is invalidated
    assert render_png(fig) == moved
    fig.invalidate_background()
    assert render_png(fig) != moved


def test_a_render_never_changes_the_figure_and_a_resized_figure_paints_a_new_background() -> None:
    from pe_helpers.figures._base import RENDER_SCALE, new_figure, render_png

    def figure(y: list[float], width: float = 3.0):  # noqa: ANN202
        fig = new_figure(width, 1.5, layout=None)
        ax = fig.add_axes((0.15, 0.2, 0.8, 0.7))
        (line,) = ax.plot([0, 1], y)
        ax.set_title("a title")
        fig.set_dynamic(line)
        return fig, line

    fig, line = figure([0, 1])
    dpi, size = fig.dpi, fig.get_size_inches().copy()
    first = Image.open(io.BytesIO(render_png(fig)))
    assert first.size == (round(3.0 * dpi), round(1.5 * dpi)) and dpi == 100 * RENDER_SCALE
    assert round(first.info["dpi"][0]) == round(dpi), "pHYs says the figure's dpi"
    line.set_ydata([1, 0])
    render_png(fig)
    assert fig.dpi == dpi and (fig.get_size_inches() == size).all(), "a render leaves the figure as it was"
    fig.set_size_inches(4.0, 1.5)  # another pixel size: the kept background no longer fits, a new one is painted
    assert render_png(fig) == render_png(figure([1, 0], width=4.0)[0])
