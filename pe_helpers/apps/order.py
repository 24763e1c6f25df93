"""Notebook 01, "Attention is blind to order", apps: reorder a sentence and watch the score matrix and the outputs move with it."""

from __future__ import annotations

import ipywidgets as widgets

from .._validate import require_choice, require_int
from ..figures.order import build_permutation_figure, order_label
from ..order import APP_SENTENCE, ORDERS
from ._base import App
from ..i18n import _

__all__ = ["permutation_app"]

#: Factory keyword arguments for the generic sweeps (tests/test_apps_all.py, benchmarks/apps.py):
#: start from order="random", so that moving the seed slider changes the permutation.
BENCH_KWARGS = {"permutation_app": {"order": "random"}}

def _seed_matters(values: dict) -> bool:
    """The seed slider matters only for the "random" order (it is disabled otherwise, with a tooltip)."""
    return values["order"] == "random"


def permutation_app(
    *,
    order: str = "swap 0 and 2",
    seed: int = 0,
    positions: bool = False,
    sentence: str = APP_SENTENCE,
    dim: int = 8,
) -> App:
    r"""Pick a reordering :math:`\Pi` of a sentence and see :math:`S' = \Pi S\Pi^\top`, :math:`\text{Attn}(\Pi X) = \Pi\,\text{Attn}(X)`.

    Controls: ``order`` (named orders, or "random"), ``seed`` (used by "random"; disabled otherwise) and
    ``positions`` (add :math:`p_i` to slot ``i``: the equalities break, the title shows by how much).
    """
    order = require_choice("order", order, ORDERS)
    seed = require_int("seed", seed, minimum=0)
    controls = {
        "order": widgets.Dropdown(options=[(order_label(o), o) for o in ORDERS], value=order, description=_("order")),
        "seed": widgets.IntSlider(value=seed, min=0, max=max(20, seed), description=_("seed"), continuous_update=True),
        "positions": widgets.Checkbox(value=positions, description=_("add p_i"), indent=False),
    }
    handle = build_permutation_figure(
        sentence=sentence, dim=dim, order=order, seed=seed, positions=bool(positions),
        seeds=range(controls["seed"].max + 1),
    )
    return App(controls, handle, title=_("Reorder the tokens: rows and columns of S move together"),
               enabled={"seed": (_seed_matters, _('seed: used only when order is "random"'))})
