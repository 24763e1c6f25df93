"""Notebook 02's compute (the running-maximum order task) and its learned-position app, headless."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pe_helpers import LearnedPositionalEmbedding
from pe_helpers.apps import learned_position_app
from pe_helpers.learned import TABLES, app_tables
from pe_helpers.learned import accuracy_by_position, row_cosine_similarity, running_max_batch, train_running_max

# --- compute ------------------------------------------------------------------------------------


def test_running_max_targets() -> None:
    x, y = running_max_batch(4, 7, generator=torch.Generator().manual_seed(0))
    for xs, ys in zip(x.tolist(), y.tolist()):
        assert ys == [max(xs[: i + 1]) for i in range(len(xs))]


def test_training_is_deterministic_and_learns_order() -> None:
    trained = train_running_max()
    assert trained is train_running_max(), "the result is cached per argument set"
    assert trained.accuracy > 0.95, trained.accuracy
    assert trained.losses[-1] < 0.2 < trained.losses[0]
    blind = train_running_max(use_positions=False)
    first = accuracy_by_position(blind.model, 16)[0]
    assert blind.accuracy < 0.8 and first < 0.3, "without positions slot 0 cannot know it is first"
    # training changed the table; the initial copy did not move
    torch.testing.assert_close(trained.initial_table, LearnedPositionalEmbedding(16, 32, seed=0).table.detach())
    assert not torch.allclose(trained.trained_table, trained.initial_table)


def test_trained_rows_have_structure_and_extended_rows_do_not() -> None:
    trained = train_running_max()
    c = row_cosine_similarity(trained.trained_table)
    c0 = row_cosine_similarity(trained.initial_table)
    assert torch.diagonal(c, 1).mean() > 0.6 > torch.diagonal(c0, 1).abs().mean()
    big = row_cosine_similarity(trained.positions.extended(24, seed=1).table)
    torch.testing.assert_close(big[:16, :16], c)
    assert big[16:, :16].abs().mean() < 0.25, "never-trained rows are unrelated to the trained ones"


def test_row_cosine_similarity() -> None:
    t = torch.tensor([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])
    torch.testing.assert_close(row_cosine_similarity(t), torch.tensor([[1.0, 0, -1], [0, 1, 0], [-1, 0, 1]],
                                                                      dtype=torch.float64))
    with pytest.raises(TypeError, match="table"):
        row_cosine_similarity(torch.ones(3))


@pytest.mark.parametrize("kwargs, match", [({"max_len": 1}, "max_len"), ({"steps": 0}, "steps"),
                                           ({"lr": "fast"}, "lr")])
def test_training_arguments_are_checked(kwargs: dict, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        train_running_max(**kwargs)


# --- the app ------------------------------------------------------------------------------------


def _panels(app):
    by_title = {ax.get_title(): ax for ax in app.figure.axes if ax.get_title()}
    row = next(ax for t, ax in by_title.items() if t.startswith("row p_i"))
    heat = next(ax for t, ax in by_title.items() if t.startswith("cos(p_i, p_j), all"))
    curve = next(ax for t, ax in by_title.items() if t.startswith("cos(p_i, p_j) along"))
    return row, heat, curve


def test_app_artists_follow_position_and_table() -> None:
    app = learned_position_app()
    try:
        tables = app_tables(train_running_max(), 8)
        ax_row, ax_heat, ax_curve = _panels(app)
        slider = app.controls["position"]
        assert (slider.min, slider.max) == (0, 23)
        for table in TABLES[::-1] + TABLES:
            app.controls["table"].value = table
            sim = row_cosine_similarity(tables[table])
            np.testing.assert_allclose(app.artists["heatmap"].get_array(), sim.numpy())
            assert app.artists["heatmap"].axes is ax_heat
            for i in (0, 1, 8, 15, 16, 23):
                renders, image = app.renders, app.image.value
                slider.value = i
                if renders != app.renders:
                    assert app.image.value != image
                row = tables[table][i] / tables[table].abs().max()
                np.testing.assert_allclose(app.artists["row"].get_ydata(), row.numpy(), rtol=1e-6)
                np.testing.assert_allclose(app.artists["cosines"].get_ydata(), sim[i].numpy())
                assert list(app.artists["marker"].get_xdata()) == [i, i]
                assert app.artists["outline"].get_y() == i - 0.5
                kind = "trained row" if i < 16 and table == "after training" else "never-trained row"
                assert f"i = {i} ({kind})" in app.artists["title"].get_text()
                assert f"i = {i}" in app.caption.value
    finally:
        app.close()


def test_bad_start_values_are_named() -> None:
    with pytest.raises(ValueError, match="position must be in 0..23"):
        learned_position_app(position=24)
    with pytest.raises(ValueError, match="table must be one of"):
        learned_position_app(table="trained")


def test_in_place_updates_draw_what_a_fresh_build_draws() -> None:
    import io

    from PIL import Image

    def pixels(png: bytes) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    app = learned_position_app()
    fresh = learned_position_app(position=20, table="before training")
    try:
        app.controls["table"].value = "before training"
        app.controls["position"].value = 20
        np.testing.assert_array_equal(pixels(app.image.value), pixels(fresh.image.value))
    finally:
        app.close()
        fresh.close()


def test_training_builds_no_torch_optim_optimizer(monkeypatch) -> None:
    """notebook 02 trains with the package's flat-buffer Adam (pe_helpers._optim, checked against torch.optim.Adam in
    tests/test_lab.py): building any torch.optim optimizer would import torch._dynamo in every kernel that trains."""
    def forbidden(self, *args, **kwargs):
        raise AssertionError("train_running_max built a torch.optim optimizer")

    monkeypatch.setattr(torch.optim.Optimizer, "__init__", forbidden)
    result = train_running_max(max_len=4, dim=8, steps=3, seed=11)
    assert len(result.losses) == 3 and not torch.equal(result.trained_table, result.initial_table)
