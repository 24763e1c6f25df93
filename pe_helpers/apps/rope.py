"""Notebook 06, "Toward RoPE", apps: RoPE rotates q and k, and their dot product keeps only the offset n - m."""

from __future__ import annotations

import ipywidgets as widgets

from .._validate import require_dim, require_int
from ..figures.rope import build_rope_pair
from ._base import App
from ..i18n import _

__all__ = ["rope_shift_app"]

#: Positions and shifts the sliders reach (the figure's axis limits are fixed for these ranges).
MAX_POS = 64
T_MAX = 64


def rope_shift_app(*, m: int = 5, n: int = 2, t: int = 0, pair: int = 0, d: int = 16, base: float = 10000.0,
                   seed: int = 0) -> App:
    r"""Query at position ``m + t``, key at ``n + t``: pair ``i`` of both rotated vectors, and the score against ``t``.

    Controls: ``m`` and ``n`` (0 … 64), the common shift ``t`` (0 … 64) and ``pair`` (0 … d/2 - 1). Moving
    ``t`` turns both vectors by the same angle :math:`t\,\omega_i`, so the angle between them, and the score
    :math:`(\mathcal{R}_{m+t}q)^\top(\mathcal{R}_{n+t}k) = q^\top\mathcal{R}_{n-m}k`, stay fixed; the additive
    score :math:`(q+PE(m+t))^\top(k+PE(n+t))` drawn beside it moves. ``d``, ``base`` and ``seed`` (the content
    vectors q, k) are fixed when the app is made.
    """
    d = require_dim("d", d)
    for name, value, top in (("m", m, MAX_POS), ("n", n, MAX_POS), ("t", t, T_MAX)):
        if require_int(name, value, minimum=0) > top:
            raise ValueError(_("{name} must be in 0..{top} for this app, got {value}.").format(name=name, top=top, value=value))
    if require_int("pair", pair, minimum=0) >= d // 2:
        raise ValueError(_("pair must be in 0..{top} for d = {d}, got {value}.").format(top=d // 2 - 1, d=d, value=pair))
    controls = {
        "m": widgets.IntSlider(value=m, min=0, max=MAX_POS, description=_("query m"), continuous_update=True),
        "n": widgets.IntSlider(value=n, min=0, max=MAX_POS, description=_("key n"), continuous_update=True),
        "t": widgets.IntSlider(value=t, min=0, max=T_MAX, description=_("shift t"), continuous_update=True),
        "pair": widgets.IntSlider(value=pair, min=0, max=d // 2 - 1, description=_("pair i"), continuous_update=True),
    }
    handle = build_rope_pair(m=m, n=n, t=t, pair=pair, d=d, base=base, seed=seed, max_pos=MAX_POS, t_max=T_MAX)
    return App(controls, handle, title=_("RoPE: shift both positions by t, the score stays (d = {d})").format(d=d))
