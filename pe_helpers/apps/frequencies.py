"""Notebook 03, "Sinusoidal frequencies", apps: the sinusoidal heatmap over seq_len, d and base."""

from __future__ import annotations

import ipywidgets as widgets

from ..figures.frequencies import build_frequency_heatmap
from ..frequencies import CHANNELS
from ._base import App

__all__ = ["frequency_heatmap_app"]

#: Bases offered by the base slider (label, value); the paper's 10000 is the default.
BASES = (("10", 10.0), ("100", 100.0), ("1 000", 1000.0), ("10 000", 10000.0), ("100 000", 100000.0),
         ("1 000 000", 1000000.0))


def base_slider(value: float = 10000.0) -> widgets.SelectionSlider:
    """A slider over the bases in :data:`BASES` (a wavelength base is best moved by factors of 10)."""
    options = dict((v, k) for k, v in BASES)
    if value not in options:
        allowed = ", ".join(f"{v:g}" for _, v in BASES)
        raise ValueError(f"base must be one of {allowed} for this app, got {value!r}.")
    return widgets.SelectionSlider(options=BASES, value=float(value), description="base", continuous_update=True)


def frequency_heatmap_app(*, seq_len: int = 64, d: int = 64, base: float = 10000.0, channel: str = "sin") -> App:
    r"""The seed's heatmap :math:`\sin(pos\,\omega_i)` (rows = positions, columns = pair ``i``) with the wavelengths.

    Controls: ``seq_len`` (rows), ``d`` (even; d/2 pairs), ``base`` (10 … 1e6) and ``channel``
    (sin / cos / both). Moving a control changes the image's data and extent in place.
    """
    controls = {
        "seq_len": widgets.IntSlider(value=seq_len, min=8, max=512, step=8, description="seq_len",
                                     continuous_update=True),
        "d": widgets.IntSlider(value=d, min=4, max=256, step=2, description="d", continuous_update=True),
        "base": base_slider(base),
        "channel": widgets.ToggleButtons(options=list(CHANNELS), value=channel, description="channel"),
    }
    fig, update = build_frequency_heatmap(seq_len=seq_len, d=d, base=base, channel=channel)
    return App(controls, fig, update, title="Sinusoidal table: rows = position, columns = pair i")
