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
