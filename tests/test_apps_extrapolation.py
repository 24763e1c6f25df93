"""The extrapolation app (notebook 05), headless: every control moves the right artists to the right data,
the partial redraw paints exactly what a full redraw paints, and a slider move never retrains."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from pe_helpers import extrapolation as lab
from pe_helpers.apps import APPS, extrapolation_app
from pe_helpers.apps import extrapolation as extrapolation_module
from pe_helpers.figures._base import render_rgba


@pytest.fixture(scope="module")
def results() -> lab.LabResults:
    return lab.run_lab(tasks=lab.TASKS, train_len=4, steps=40, warmup=5, d_model=16, n_heads=2, progress=False)


def _map(results, encoding, length, task="copy"):
    trained = results.model(encoding, task)
    return lab.attention_map(trained, length, lab.copy_head(trained)).numpy()


#: The values every test starts from (the app built by ``_built``).
START = {"task": "copy", "encoding": "sinusoidal", "length": 4}


@pytest.fixture(scope="module")
def _built(results):
    """One app for the module (building one took about 2 s of a loaded 2-core machine, 19 times): ``app`` gives it
    back to each test at :data:`START`."""
    app = extrapolation_app(results=results, encoding=START["encoding"], length=START["length"])
    yield app
    app.close()


@pytest.fixture()
def app(_built):
    """The module's app at the start values (set as a student would set them, so the figure follows)."""
    for name, value in START.items():
        _built.controls[name].value = value
    assert _built.caption.value and f"n = {START['length']}" in _built.caption.value
    return _built


def _artists(app):
    image = app.artists["map"]
    return image.axes, app.artists["cursor"].axes, image


def test_app_is_listed_and_has_two_controls(results) -> None:
    app = extrapolation_app(results=results, encoding=START["encoding"], length=START["length"])
    try:
        assert APPS["extrapolation_app"] is extrapolation_app
        assert set(app.controls) == {"task", "encoding", "length"}
        # the buttons carry (label in the current language, task) pairs: the values are the lab's tasks
        assert [value for _label, value in app.controls["task"].options] == list(lab.TASKS)
        assert app.controls["task"].value in lab.TASKS
        assert app.controls["length"].min == 1 and app.controls["length"].max == 16
        assert list(app.controls["encoding"].options) == list(lab.ENCODINGS)
        assert all(w.description for w in app.controls.values())
        assert app.renders == 1 and app.image.value, "built, drawn once"
    finally:
        app.close()


@pytest.mark.parametrize("length", [1, 3, 4, 5, 8, 16])
def test_length_slider_shows_that_lengths_map_and_marks(app, results, length: int) -> None:
    if app.controls["length"].value == length:  # the start value: move away first so the move is real
        app.controls["length"].value = length + 1
    renders, before = app.renders, app.image.value
    app.controls["length"].value = length
    assert app.renders == renders + 1 and app.image.value != before
    ax_map, ax_acc, image = _artists(app)
    np.testing.assert_allclose(image.get_array(), _map(results, "sinusoidal", length))
    assert image.get_extent() == [-0.5, 2 * length + 0.5, 2 * length + 0.5, -0.5]
    assert ax_map.get_xlim() == (-0.5, 2 * length + 0.5)
    assert list(app.artists["cursor"].get_xdata()) == [length, length], "the cursor marks the current length"
    dot = app.artists["dot"]
    assert list(dot.get_ydata()) == [pytest.approx(results.accuracy_at("sinusoidal", length))]
    beyond = length > results.train_len
    assert app.artists["edge_h"].get_visible() == beyond  # the 2L + 1 grid line only when the map goes past it
    assert app.artists["edge_v"].get_visible() == beyond
    source = app.artists["source"]  # the reference cells, at every size, n = L included
    queries, keys = lab.probe.source_positions("copy", length)
    assert source.get_visible() and list(source.get_xdata()) == keys.tolist()
    assert list(source.get_ydata()) == queries.tolist()
    assert source.get_markerfacecolor() == "none", "hollow: the cells under the reference stay visible"
    assert f"n = {length}" in app.caption.value
    assert f"{results.accuracy_at('sinusoidal', length):.2f}" in app.caption.value


@pytest.mark.parametrize("encoding", [e for e in lab.ENCODINGS if e != "sinusoidal"])
def test_encoding_dropdown_switches_model_and_highlight(app, results, encoding: str) -> None:
    renders, before = app.renders, app.image.value
    app.controls["encoding"].value = encoding
    assert app.renders == renders + 1 and app.image.value != before
    ax_map, ax_acc, image = _artists(app)
    np.testing.assert_allclose(image.get_array(), _map(results, encoding, 4))
    widths = {e: app.artists[e].get_linewidth() for e in lab.ENCODINGS}
    assert widths[encoding] == max(widths.values()) and sorted(widths.values()).count(widths[encoding]) == 1
    assert encoding in app.caption.value


def test_learned_past_L_shows_the_error_instead_of_a_map(app, results) -> None:
    app.controls["encoding"].value = "learned"
    app.controls["length"].value = 9
    ax_map, ax_acc, image = _artists(app)
    assert np.isnan(np.asarray(image.get_array(), dtype=float)).all()
    assert any("PositionOutOfRangeError" in t.get_text() for t in ax_map.texts)
    assert np.isnan(app.artists["dot"].get_ydata()[0])
    assert not app.artists["source"].get_visible()
    crosses = app.artists["cannot_run:learned"]  # where the learned table cannot run is marked
    assert list(crosses.get_xdata()) == list(range(results.train_len + 1, results.test_len + 1))
    assert "no row for position 9" in app.caption.value
    app.controls["length"].value = 3  # back inside: the map and the accuracy return
    np.testing.assert_allclose(image.get_array(), _map(results, "learned", 3))
    assert not any("PositionOutOfRangeError" in t.get_text() for t in ax_map.texts)


@pytest.mark.parametrize("encoding, length", [("sinusoidal", 2), ("rope", 16), ("learned", 12), ("none", 7)])
def test_partial_redraw_paints_what_a_full_redraw_paints(app, encoding: str, length: int) -> None:
    fig = app.figure
    assert fig.dynamic and app.artists["map"] in fig.dynamic, "the toolkit's partial redraw (set_dynamic)"
    app.controls["encoding"].value = encoding
    app.controls["length"].value = length
    assert fig.background is not None, "the slider move restored the kept background"
    partial = render_rgba(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="rgba", dpi=fig.dpi)  # saving draws every artist, from scratch, in z-order
    full = np.frombuffer(buffer.getvalue(), dtype=np.uint8).reshape(partial.shape)
    assert (partial != full).any(-1).sum() == 0


def test_moving_the_slider_never_retrains(app, results, monkeypatch) -> None:
    def forbidden(*args, **kwargs):
        raise AssertionError("a slider move must not train")

    monkeypatch.setattr(lab.training, "fit", forbidden)
    monkeypatch.setattr(lab.results, "fit", forbidden)
    params = {k: [p.clone() for p in m.model.parameters()] for k, m in results.models.items()}
    for task in lab.TASKS:
        app.controls["task"].value = task
        for encoding in ("rope", "none", "rope-ntk"):
            app.controls["encoding"].value = encoding
            for n in (1, 9, 16):
                app.controls["length"].value = n
    for k, m in results.models.items():
        for a, b in zip(params[k], m.model.parameters()):
            assert torch.equal(a, b)


def test_task_toggle_shows_that_tasks_curves_and_map(app, results) -> None:
    app.controls["encoding"].value = "rope"
    app.controls["task"].value = "lookback"
    ax_map, ax_acc, image = _artists(app)
    np.testing.assert_allclose(image.get_array(), _map(results, "rope", 4, "lookback"))
    line = app.artists["rope"]
    want = [results.accuracy_at("rope", n, "lookback") for n in results.lengths]
    np.testing.assert_allclose(line.get_ydata(), want)
    assert ax_acc.get_title().startswith("look-back") and "lookback" in app.caption.value
    stripe = app.artists["source"]  # the source cells: query t looks at key t - 3 (BOS before the start)
    assert list(stripe.get_xdata())[-1] == 8 - lab.LOOKBACK and list(stripe.get_ydata())[-1] == 8


def test_bad_arguments_are_rejected(results) -> None:
    with pytest.raises(ValueError, match="encoding must be one of"):
        extrapolation_app(results=lab.run_lab(["rope"], train_len=2, steps=2, d_model=8, n_heads=2, progress=False),
                          encoding="alibi")
    with pytest.raises(ValueError, match="task must be one of"):
        extrapolation_app(results=results, task="reverse")
    with pytest.raises(ValueError, match="length must be an integer in 1..16"):
        extrapolation_app(results=results, length=17)
    with pytest.raises(TypeError, match="LabResults"):
        extrapolation_app(results={"rope": [1.0]})
    with pytest.raises(ValueError, match="no trained models"):
        extrapolation_app(results=lab.reference_results())


def test_no_argument_factory_shows_the_shipped_models_without_training(monkeypatch) -> None:
    """With no results: the reference's seed 0 from its shipped weights (what notebook 05 shows), never a training run."""
    def no_training(*args, **kwargs):
        pytest.fail("extrapolation_app() with no results must not train")

    monkeypatch.setattr(lab.results, "run_lab", no_training)
    monkeypatch.setattr(extrapolation_module, "run_lab", no_training)
    app = extrapolation_app()
    try:
        reference, shown = lab.reference_results(), extrapolation_module.default_results()
        assert app.controls["length"].max == reference.test_len
        assert app.controls["length"].value == reference.train_len
        assert shown.encodings == lab.ENCODINGS and shown.tasks == lab.TASKS
        assert shown.seeds == reference.seeds[:1]
        seed = reference.seeds[0]
        for encoding in ("sinusoidal", "rope"):
            got = [shown.accuracy_at(encoding, n) for n in shown.lengths]
            want = [reference.accuracy_at(encoding, n, seed=seed) for n in shown.lengths]
            # the reference JSON keeps 4 decimals; the loaded models are evaluated again
            np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), atol=5e-5)
        curve = np.asarray(app.artists["sinusoidal"].get_ydata(), dtype=float)
        want = np.array([shown.accuracy_at("sinusoidal", n) for n in shown.lengths], dtype=float)
        np.testing.assert_allclose(curve, want, equal_nan=True)
    finally:
        app.close()


def test_default_results_are_loaded_once_and_cached() -> None:
    shown = extrapolation_module.default_results()
    assert shown is extrapolation_module.default_results()
    assert shown.models and set(lab.TRAINED_ENCODINGS) <= set(shown.encodings)


def test_train_now_panel_trains_only_when_pressed(monkeypatch) -> None:
    reference = lab.run_lab(["none", "rope"], train_len=2, steps=3, d_model=8, n_heads=2, progress=False)
    calls = []
    real = extrapolation_module.run_lab

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(extrapolation_module, "run_lab", counting)
    panel = extrapolation_module.TrainNow(reference, encodings=("rope",), seed=1)
    assert not calls and panel.results is None and not panel.trained_live, "building the panel trains nothing"
    panel.button.click()
    assert len(calls) == 1 and calls[0]["seeds"] == (1,) and calls[0]["steps"] == 3
    assert panel.results is not None and panel.results.encodings == ("rope",) and panel.trained_live
    assert panel.button.disabled and panel.button.description.startswith("trained in")
    panel.train()
    assert len(calls) == 1, "a second press does not retrain"


def test_train_now_panel_shows_the_shipped_seed_before_any_training(monkeypatch) -> None:
    import pe_helpers.figures.extrapolation as figures

    monkeypatch.setattr(extrapolation_module, "run_lab", lambda *a, **k: pytest.fail("loading must not train"))
    drawn = []
    real_figure = figures.accuracy_figure
    monkeypatch.setattr(figures, "accuracy_figure", lambda *a, **k: drawn.append(k) or real_figure(*a, **k))
    reference = lab.reference_results()
    panel = extrapolation_module.TrainNow(reference, encodings=("rope",), tasks=("lookback",))
    live = panel.load_reference()
    assert live is panel.results and not panel.trained_live and not panel.button.disabled
    assert live.model("rope", "lookback").model.encoding == "rope" and live.seeds == (reference.seeds[0],)
    assert len(drawn) == 1 and drawn[0]["live"] is live, "the accuracy figure of the loaded seed is shown at once"
    with pytest.raises(ValueError, match="seed=3"):
        extrapolation_module.TrainNow(reference, encodings=("rope",), seed=3).load_reference()
    with pytest.raises(TypeError, match="reference"):
        extrapolation_module.TrainNow("reference.json", encodings=("rope",))
    with pytest.raises(ValueError, match="t5"):
        extrapolation_module.TrainNow(reference, encodings=("t5",))
