"""Notebook 03, "Sinusoidal frequencies", apps: the sinusoidal heatmap over seq_len, d and base."""

from __future__ import annotations

import ipywidgets as widgets

from ..figures.frequencies import build_frequency_heatmap, channel_label
from ..frequencies import CHANNELS
from ._base import App, base_slider
from ..i18n import _

__all__ = ["frequency_heatmap_app"]


def frequency_heatmap_app(*, seq_len: int = 64, d: int = 64, base: float = 10000.0, channel: str = "sin") -> App:
    r"""The seed's heatmap :math:`\sin(pos\,\omega_i)` (rows = positions, columns = pair ``i``) with the wavelengths.

    Controls: ``seq_len`` (rows), ``d`` (even; d/2 pairs), ``base`` (10 … 1e6, by slider or typed as
    ``10000``, ``1e4`` or ``10 000``) and ``channel`` (sin / cos / both). A move changes the image in place.
    """
    base_control, typed_base = base_slider(base)
    controls = {
        "seq_len": widgets.IntSlider(value=seq_len, min=8, max=512, step=8, description="seq_len",
                                     continuous_update=True),
        "d": widgets.IntSlider(value=d, min=4, max=256, step=2, description="d", continuous_update=True),
        "base": base_control,
        "channel": widgets.ToggleButtons(options=[(channel_label(c), c) for c in CHANNELS], value=channel, description=_("channel")),
    }
    handle = build_frequency_heatmap(seq_len=seq_len, d=d, base=base, channel=channel)
    return App(controls, handle, title=_("Sinusoidal table: rows = position, columns = pair i"),
               extras=[typed_base])
