"""Notebook 05, "Limits and extrapolation", app: slide the copy length from 1 to 4L and watch the copy head.

``extrapolation_app(results=lab_results)`` uses models that are already trained (a
:class:`~pe_helpers.extrapolation.LabResults` from :func:`~pe_helpers.extrapolation.run_lab`); moving the slider never
retrains. The attention map of each (encoding, length) is computed once, on first view, by one
forward pass of the example sequence (about a millisecond), then cached in ``results``.

With no ``results`` the factory uses, in this order: the latest :func:`~pe_helpers.extrapolation.run_lab`
of this Python process, else :func:`quick_results`, a small set of models (``train_len=8``,
:data:`QUICK_SETTINGS`) trained once per process in a few seconds and cached. That is what
``extrapolation_app()`` with no arguments (the app benchmark, the generic app tests) gets.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets

from ..figures.extrapolation import build_extrapolation
from ..extrapolation.results import LabResults, latest_results, run_lab
from ._base import App

__all__ = ["extrapolation_app"]

#: Settings of :func:`quick_results`: small enough to train all five encodings in a few seconds.
QUICK_SETTINGS = {"train_len": 8, "steps": 200, "warmup": 20, "d_model": 16, "seed": 0}


@functools.lru_cache(maxsize=1)
def quick_results() -> LabResults:
    """A quick lab run (:data:`QUICK_SETTINGS`, all encodings), trained once per process and cached."""
    return run_lab(progress="none", **QUICK_SETTINGS)


def _default_results() -> LabResults:
    latest = latest_results()
    return latest if latest is not None and latest.models else quick_results()


def extrapolation_app(*, results: LabResults | None = None, encoding: str = "sinusoidal",
                      length: int | None = None) -> App:
    """Slider over the copy length ``1 .. test_len`` and a choice of encoding.

    Left: the chosen model's copy head on the example sequence of that length (the orange diagonal is
    where a perfect copy looks; grey lines mark position ``2L``, never seen in training). Right:
    accuracy against length for every encoding, the chosen one thick, the current length marked.
    ``length`` defaults to the training length ``L``.
    """
    results = _default_results() if results is None else results
    if not isinstance(results, LabResults):
        raise TypeError(f"results must be a LabResults from pe_helpers.extrapolation.run_lab, got {type(results).__name__}.")
    if not results.models:
        raise ValueError("results carry no trained models (loaded from JSON?): pass the LabResults returned "
                         "by pe_helpers.extrapolation.run_lab(...).")
    if encoding not in results.encodings:
        raise ValueError(f"encoding must be one of {', '.join(results.encodings)}, got {encoding!r}.")
    length = results.train_len if length is None else length
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= results.test_len:
        raise ValueError(f"length must be an integer in 1..{results.test_len}, got {length!r}.")
    fig, update = build_extrapolation(results, encoding=encoding, length=length)
    controls = {
        "encoding": widgets.Dropdown(options=list(results.encodings), value=encoding, description="encoding"),
        "length": widgets.IntSlider(value=length, min=1, max=results.test_len, step=1, description="length n",
                                    continuous_update=True),
    }
    return App(controls, fig, update, title=f"Train short (n <= {results.train_len}), test long: the copy head")


# --- additive mixing: the four terms of the score (issue 14, section 1 of notebook 05) -------------
# Kept in one block at the end of the module; its own imports are here so the block moves as a whole.

import torch  # noqa: E402

from ..attention import SelfAttention  # noqa: E402
from ..encodings import sinusoidal  # noqa: E402
from ..extrapolation.mixing import mixing_terms, trained_mixing_inputs  # noqa: E402
from ..figures.extrapolation import build_mixing  # noqa: E402

__all__ += ["mixing_app"]

_MIXING_WEIGHTS = ("random", "trained")
_MIXING_STAGES = ("before W_Q W_Kᵀ", "after W_Q W_Kᵀ")


@functools.lru_cache(maxsize=1)
def _random_mixing_inputs(n: int = 16, d: int = 32) -> tuple[torch.Tensor, ...]:
    """Random token vectors with the RMS norm of the sinusoidal rows (content × 1 = as large as position)."""
    position = sinusoidal(n, d).double()
    content = torch.randn(n, d, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    content *= position.pow(2).sum(1).mean().sqrt() / content.pow(2).sum(1).mean().sqrt()
    head = SelfAttention(d, seed=0)
    return content, position, head.W_Q.detach().double(), head.W_K.detach().double()


def mixing_app(*, weights: str = "random", stage: str = "after W_Q W_Kᵀ", content_scale: float = 1.0) -> App:
    """The four terms of the score of ``x_i + p_i`` (16 positions, sinusoidal ``p``, ``d = 32``).

    ``weights``: ``"random"`` (a seeded :class:`~pe_helpers.attention.SelfAttention`, token vectors as
    large as the position rows) or ``"trained"`` (head 0, layer 0 of the small sinusoidal copy model of
    :func:`~pe_helpers.extrapolation.mixing.trained_mixing_model`, trained once per process in about
    2 s, and its own token vectors). ``stage``: the terms before the projections (``M = I``) or after
    (``M = W_Q W_Kᵀ``). ``content_scale`` multiplies every token vector. Before the projections the
    position·position panel is constant along every diagonal (it depends on ``j - i`` only); after, not.
    """
    if weights not in _MIXING_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(_MIXING_WEIGHTS)}, got {weights!r}.")
    if stage not in _MIXING_STAGES:
        raise ValueError(f"stage must be one of {', '.join(_MIXING_STAGES)}, got {stage!r}.")
    if isinstance(content_scale, bool) or not isinstance(content_scale, (int, float)) or not 0 <= content_scale <= 3:
        raise ValueError(f"content_scale must be a number in 0..3, got {content_scale!r}.")

    def terms(weights: str, stage: str, content_scale: float):
        content, position, w_q, w_k = _random_mixing_inputs() if weights == "random" else trained_mixing_inputs()
        projected = stage == _MIXING_STAGES[1]
        result = mixing_terms(content * content_scale, position, w_q if projected else None, w_k if projected else None)
        where = "after the projections, M = W_Q W_Kᵀ" if projected else "before the projections, M = I"
        who = "random weights" if weights == "random" else "trained copy model (layer 0, head 0)"
        return result, f"{who}, {where}, content × {content_scale:g}"

    first, note = terms(weights, stage, content_scale)
    fig, redraw = build_mixing(first, note=note)

    def update(weights: str, stage: str, content_scale: float) -> str:
        return redraw(*terms(weights, stage, content_scale))

    controls = {
        "weights": widgets.ToggleButtons(options=list(_MIXING_WEIGHTS), value=weights, description="weights"),
        "stage": widgets.ToggleButtons(options=list(_MIXING_STAGES), value=stage, description="terms"),
        "content_scale": widgets.FloatSlider(value=content_scale, min=0.0, max=3.0, step=0.1,
                                             description="content ×", continuous_update=True),
    }
    return App(controls, fig, update, title="Additive mixing: the four terms of the attention score")
