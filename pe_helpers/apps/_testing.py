"""Hooks for the tests and benchmarks that sweep every app (tests/test_apps_all.py, benchmarks/apps.py).

Not used by the notebooks: :func:`sweep_values` lists the values a generic sweep visits for one
control, :func:`factory_kwargs` the start arguments an app module asks for in ``BENCH_KWARGS``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import ipywidgets as widgets

__all__ = ["sweep_values", "factory_kwargs"]


def sweep_values(control: widgets.ValueWidget) -> list:
    """The values a generic sweep visits for one control (tests/test_apps_all.py, benchmarks/apps.py).

    IntSlider/FloatSlider (and range-like sliders): min, a middle value on the step grid, max;
    anything with ``options`` (Dropdown, ToggleButtons, SelectionSlider, ...): every option's value;
    Checkbox/ToggleButton: both values. Other widgets: just their current value.
    """
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        return [not control.value, control.value]
    options = getattr(control, "options", None)
    if options is not None:
        values = []
        for opt in options:
            value = opt[1] if isinstance(opt, tuple) and len(opt) == 2 else opt
            values.append(value)
        return values
    low, high = getattr(control, "min", None), getattr(control, "max", None)
    if low is not None and high is not None:
        step = getattr(control, "step", None) or 1
        middle = low + round((high - low) / 2 / step) * step
        if isinstance(control.value, int):
            middle = int(middle)
        return list(dict.fromkeys([low, middle, high]))
    return [control.value]


def factory_kwargs(factory: Callable[..., object]) -> dict:
    """Keyword arguments the generic sweeps pass to ``factory`` (usually none).

    An app module may define ``BENCH_KWARGS = {"factory_name": {...}}``: for example a start
    value that makes every control matter (a seed only used by one option), or a smaller
    model so that a build takes less time. The benchmark's baseline uses the same arguments.
    """
    module = sys.modules.get(getattr(factory, "__module__", ""), None)
    hooks = getattr(module, "BENCH_KWARGS", {}) or {}
    return dict(hooks.get(getattr(factory, "__name__", ""), {}))
