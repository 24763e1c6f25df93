"""Notebook 05, "Limits and extrapolation", section 1, "Additive mixing", app: the four terms of the score, live."""

from __future__ import annotations

import functools

import ipywidgets as widgets
import torch

from ..attention import SelfAttention
from ..encodings import sinusoidal
from ..figures._base import FigureHandle, freeze_layout
from ..figures.mixing import build_mixing
from ..i18n import _
from ..mixing import mixing_terms, trained_mixing_inputs
from ._base import App

__all__ = ["mixing_app"]

_MIXING_WEIGHTS = ("random", "trained")
_MIXING_STAGES = ("before W_Q W_Kᵀ", "after W_Q W_Kᵀ")


def _mixing_label(option: str) -> str:
    """An option of the mixing app on its button, in the current language (the value stays English)."""
    return {"random": _("random"), "trained": _("trained"), _MIXING_STAGES[0]: _("before W_Q W_Kᵀ"),
            _MIXING_STAGES[1]: _("after W_Q W_Kᵀ")}[option]


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
    :func:`~pe_helpers.mixing.trained_mixing_model`, trained once per process in about
    2 s, and its own token vectors). ``stage``: the terms before the projections (``M = I``) or after
    (``M = W_Q W_Kᵀ``). ``content_scale`` multiplies every token vector. Before the projections the
    position·position panel is constant along every diagonal (it depends on ``j - i`` only); after, not.
    """
    if weights not in _MIXING_WEIGHTS:
        raise ValueError(_("weights must be one of {0}, got {weights!r}.").format(', '.join(_MIXING_WEIGHTS), weights=weights))
    if stage not in _MIXING_STAGES:
        raise ValueError(_("stage must be one of {0}, got {stage!r}.").format(', '.join(_MIXING_STAGES), stage=stage))
    if isinstance(content_scale, bool) or not isinstance(content_scale, (int, float)) or not 0 <= content_scale <= 3:
        raise ValueError(_("content_scale must be a number in 0..3, got {content_scale!r}.").format(content_scale=content_scale))

    def terms(weights: str, stage: str, content_scale: float):
        content, position, w_q, w_k = _random_mixing_inputs() if weights == "random" else trained_mixing_inputs()
        projected = stage == _MIXING_STAGES[1]
        result = mixing_terms(content * content_scale, position, w_q if projected else None, w_k if projected else None)
        where = _("after the projections, M = W_Q W_Kᵀ") if projected else _("before the projections, M = I")
        who = _("random weights") if weights == "random" else _("trained copy model (layer 0, head 0)")
        return result, _("{who}, {where}, content × {scale:g}").format(who=who, where=where, scale=content_scale)

    # Laid out once for the default settings, whatever the start values: the same values then always look the same
    # (the start values are applied by the App, over that layout). The heading is the equation alone.
    handle = build_mixing(terms(_MIXING_WEIGHTS[0], _MIXING_STAGES[1], 1.0)[0])
    freeze_layout(handle.figure)

    def update(weights: str, stage: str, content_scale: float) -> str:
        result, note = terms(weights, stage, content_scale)
        handle.update(result)
        return note  # the settings; the shares are in the panels' titles

    controls = {
        "weights": widgets.ToggleButtons(options=[(_mixing_label(w), w) for w in _MIXING_WEIGHTS], value=weights,
                                         description=_("weights")),
        "stage": widgets.ToggleButtons(options=[(_mixing_label(s), s) for s in _MIXING_STAGES], value=stage,
                                       description=_("terms")),
        "content_scale": widgets.FloatSlider(value=content_scale, min=0.0, max=3.0, step=0.1,
                                             description=_("content ×"), continuous_update=True),
    }
    return App(controls, FigureHandle(handle.figure, handle.artists, update),
               title=_("Additive mixing: the four terms of the attention score"))
