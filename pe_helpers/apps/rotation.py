"""Notebook 04, "The rotation identity", apps: the phasor of one pair, and the dot product PE(p)·PE(p+k) against k."""

from __future__ import annotations

import ipywidgets as widgets

from .._validate import require_dim
from ..figures.rotation import build_dot_product, build_phasor
from ._base import App, base_slider
from ..i18n import _

__all__ = ["phasor_app", "dot_product_app"]


def phasor_app(*, pos: int = 3, k: int = 5, pair: int = 1, d: int = 16, base: float = 10000.0) -> App:
    r"""Pair ``i`` of :math:`PE(pos)` and :math:`PE(pos+k)` on the unit circle, with the 2×2 block of :math:`R(k)`.

    Controls: ``pos`` (0 … 200), ``k`` (-50 … 50) and ``pair`` (0 … d/2 - 1). ``d`` and ``base``
    are fixed when the app is made (keyword arguments). The default (pair 1, k = 5) turns by 1.58 rad, about a
    quarter turn, so the angle reads the way it is computed (on pair 0, k = 5 turns by 286°, which looks like -74°).
    """
    d = require_dim("d", d)
    controls = {
        "pos": widgets.IntSlider(value=pos, min=0, max=200, description="pos", continuous_update=True),
        "k": widgets.IntSlider(value=k, min=-50, max=50, description="k", continuous_update=True),
        "pair": widgets.IntSlider(value=pair, min=0, max=d // 2 - 1, description=_("pair i"), continuous_update=True),
    }
    return App(controls, build_phasor(pos=pos, k=k, pair=pair, d=d, base=base),
               title=_("One (sin, cos) pair as a point on the unit circle (d = {d})").format(d=d))


def dot_product_app(*, d: int = 64, base: float = 10000.0, p: int = 0, k_max: int = 128) -> App:
    r""":math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` against ``k``, for the chosen ``d``, ``base`` and ``p``.

    Controls: ``d`` (4 … 256), ``base`` (10 … 1e6), ``p`` (0 … 1000, the dots move with it, the line
    does not) and ``k_max`` (the half-width of the k axis, 16 … 1024).
    """
    base_control, typed_base = base_slider(base)
    controls = {
        "d": widgets.IntSlider(value=d, min=4, max=256, step=2, description="d", continuous_update=True),
        "base": base_control,
        "p": widgets.IntSlider(value=p, min=0, max=1000, description="p", continuous_update=True),
        "k_max": widgets.IntSlider(value=k_max, min=16, max=1024, step=16, description="k_max",
                                   continuous_update=True),
    }
    return App(controls, build_dot_product(d=d, base=base, p=p, k_max=k_max),
               title=_("PE(p)·PE(p+k) depends on the offset k only"), extras=[typed_base])
