"""Every slider app in ``pe_helpers.apps.APPS``, driven headless through every control.

Generic: a new app listed in a module's ``__all__`` is picked up automatically. For each
control, every value of :func:`pe_helpers.apps._base.sweep_values` (slider min / middle / max,
every option of a Dropdown or ToggleButtons, both states of a Checkbox) is set in turn and
must (1) raise nothing (callbacks are not wrapped: an exception fails the test), (2) render
exactly once more, and (3) change the PNG bytes. An app module can pass start arguments
through ``BENCH_KWARGS`` (see :func:`pe_helpers.apps._base.factory_kwargs`).
"""

from __future__ import annotations

import inspect
import re

import ipywidgets as widgets
import pytest

from pe_helpers.apps import APPS, App
from pe_helpers.apps._testing import factory_kwargs, sweep_values

NAMES = sorted(APPS)


@pytest.mark.parametrize("name", NAMES)
def test_factory_takes_keyword_only_arguments_with_defaults(name: str) -> None:
    params = inspect.signature(APPS[name]).parameters.values()
    bad = [p.name for p in params
           if p.kind is not inspect.Parameter.KEYWORD_ONLY or p.default is inspect.Parameter.empty]
    assert not bad, f"{name}: parameters {bad} must be keyword-only with a default, so {name}() works"


@pytest.mark.parametrize("name", NAMES)
def test_every_control_across_its_range_redraws(name: str) -> None:
    factory = APPS[name]
    app = factory(**factory_kwargs(factory))
    try:
        assert isinstance(app, App) and isinstance(app, widgets.VBox)
        assert app.controls, f"{name} has no controls"
        assert app.renders == 1 and app.image.value, f"{name} must render once when built"
        accepted = set(inspect.signature(factory).parameters)
        missing = set(app.controls) - accepted
        assert not missing, f"{name} must accept its controls' values as keyword arguments; missing {missing}"
        initial = {n: w.value for n, w in app.controls.items()}
        for control_name, control in app.controls.items():
            assert control.description, f"{name}.{control_name} needs a description"
            values = sweep_values(control)
            changed = 0
            for value in values:
                if value == control.value:
                    continue
                renders, image = app.renders, app.image.value
                control.value = value
                assert control.value == value
                assert app.renders == renders + 1, f"{name}: setting {control_name}={value!r} did not render once"
                assert app.image.value != image, f"{name}: setting {control_name}={value!r} left the image unchanged"
                assert not re.search(r"\de[+-]?\d", app.caption.value), \
                    f"{name}: its readout prints a number in scientific form: {app.caption.value!r}"
                changed += 1
            assert changed >= 1, f"{name}: the sweep of {control_name} ({values}) never changed its value"
            start = initial[control_name]
            if control.value != start:
                control.value = start  # sweep the next control from the app's start state
    finally:
        app.close()


def test_sweep_values_cover_each_kind_of_control() -> None:
    assert sweep_values(widgets.IntSlider(value=3, min=0, max=10)) == [0, 5, 10]
    assert sweep_values(widgets.IntSlider(value=2, min=2, max=18, step=4)) == [2, 10, 18]  # middle on the step grid
    floats = sweep_values(widgets.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.1))
    assert floats[0] == 0.0 and floats[-1] == 1.0 and len(floats) == 3
    assert sweep_values(widgets.Dropdown(options=["a", "b", "c"], value="b")) == ["a", "b", "c"]
    assert sweep_values(widgets.ToggleButtons(options=[("one", 1), ("two", 2)], value=1)) == [1, 2]
    assert sweep_values(widgets.Checkbox(value=False)) == [True, False]
