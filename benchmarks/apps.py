"""Latency of every slider app: from setting a control's value to a rendered image, against a full rebuild.

Usage (from the repository root)::

    .venv/bin/python benchmarks/apps.py                    # every app in pe_helpers.apps.APPS
    .venv/bin/python benchmarks/apps.py permutation_app    # only the apps named
    .venv/bin/python benchmarks/apps.py --repeats 20 --baseline-repeats 8 --strict

For each app and each of its controls, the control is moved through its sweep values
(:func:`pe_helpers.apps._base.sweep_values`: slider min / middle / max, every option of a
Dropdown or ToggleButtons, both states of a Checkbox), cycling until ``--repeats`` moves
were timed. One move is timed from ``control.value = v`` until the App has re-rendered
(``app.image.value`` holds the new PNG; the App redraws synchronously, and the script
checks that ``app.renders`` went up and the bytes changed).

The naive baseline, in the same run and for the same values, rebuilds the whole app from
scratch: ``factory(**kwargs, **values)`` (figure, layout, widgets, first render), timed
until the new app's ``image.value`` is set. One build is done first and not timed, so
caches that every build shares (a trained toy model, fonts) are warm for both sides.

Goal: for every app and control, median <= baseline median / 3 and < 60 ms.
The table lists each control and one "(all)" row per app; the exit status is 0 (a report),
unless ``--strict`` is given and a goal is missed.

A second table breaks one move of each app into its parts at the classroom size (a PNG of
``RENDER_SCALE`` × the displayed width): ``update`` (the artists), ``draw`` (Agg), ``encode`` (PNG), the
image's pixels and bytes, and a *burst*: ten key presses as the kernel receives them. ipywidgets' front end sends
one update of a slider at a time and holds the rest until the kernel is idle, keeping the latest; the App draws
each update inside its handler (:meth:`pe_helpers.apps._base.App._on_change`), so the kernel sees the first value,
then the latest: timed until both are drawn at full resolution, with the number of renders (2).

Hook for app modules: a module in :mod:`pe_helpers.apps` may define ::

    BENCH_KWARGS = {"my_app": {"steps": 200}}

The dictionary maps a factory name to keyword arguments passed to it both here (for the
app under test and for every baseline rebuild) and by ``tests/test_apps_all.py``: use it
for a start value that makes every control matter (e.g. ``order="random"`` so the seed
slider acts), or for a cheaper model when the first build of an app takes seconds.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

GOAL_RATIO = 1 / 3
GOAL_MS = 60.0


@dataclass
class Row:
    app: str
    control: str
    moves: list[float]
    rebuilds: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.moves) * 1e3

    @property
    def baseline_ms(self) -> float:
        return statistics.median(self.rebuilds) * 1e3

    @property
    def ratio(self) -> float:
        return self.median_ms / self.baseline_ms

    @property
    def ok(self) -> bool:
        return self.ratio <= GOAL_RATIO and self.median_ms < GOAL_MS


def _values_cycle(control: object, values: list) -> list:
    """Sweep values in an order where every step changes the control's value."""
    return [v for v in values if v != control.value] + [v for v in values if v == control.value]


def time_move(app: object, name: str, value: object) -> float:
    """Seconds from ``control.value = value`` to the re-rendered image (checked)."""
    control = app.controls[name]
    renders, image = app.renders, app.image.value
    gc.collect()
    start = time.perf_counter()
    control.value = value
    _ = app.image.value
    elapsed = time.perf_counter() - start
    if app.renders <= renders:
        raise RuntimeError(f"setting {name}={value!r} did not render")
    if app.image.value == image:
        print(f"  note: setting {name}={value!r} left the image bytes unchanged", file=sys.stderr)
    return elapsed


def time_rebuild(factory: Callable[..., object], kwargs: dict, values: dict) -> float:
    """Seconds to build ``factory(**kwargs, **values)`` from scratch, up to its first image."""
    gc.collect()
    start = time.perf_counter()
    app = factory(**{**kwargs, **values})
    _ = app.image.value
    elapsed = time.perf_counter() - start
    app.close()
    return elapsed


def bench_app(name: str, factory: Callable[..., object], repeats: int, baseline_repeats: int) -> list[Row]:
    from pe_helpers.apps._testing import factory_kwargs, sweep_values

    kwargs = factory_kwargs(factory)
    factory(**kwargs).close()  # warm shared caches (not timed)
    app = factory(**kwargs)
    initial = {n: w.value for n, w in app.controls.items()}
    rows = []
    try:
        for control_name, control in app.controls.items():
            values = sweep_values(control)
            if len([v for v in values if v != values[0]]) == 0:
                continue
            order = _values_cycle(control, values)
            moves, states = [], []
            for value in itertools.islice(itertools.cycle(order), repeats):
                if value == control.value:
                    continue
                moves.append(time_move(app, control_name, value))
                states.append({n: w.value for n, w in app.controls.items()})
            rebuilds = [time_rebuild(factory, kwargs, state) for state in itertools.islice(itertools.cycle(states),
                                                                                            baseline_repeats)]
            rows.append(Row(name, control_name, moves, rebuilds))
            if control.value != initial[control_name]:
                control.value = initial[control_name]  # back to the start, so the next control sweeps from it
    finally:
        app.close()
    if rows:
        rows.append(Row(name, "(all)", [m for r in rows for m in r.moves], [b for r in rows for b in r.rebuilds]))
    return rows


@dataclass
class Split:
    app: str
    pixels: str
    kilobytes: float
    update: float
    draw: float
    encode: float
    burst: float
    burst_renders: int


def split_app(name: str, factory: Callable[..., object], repeats: int, device_px: int | None = None) -> Split:
    """Median update / draw / encode of one app's first slider, and a burst of ten browser values (the first, the latest).
    ``device_px``: render as for a view that covers that many device pixels (default: the first render's 2×)."""
    import numpy as np

    from pe_helpers.apps._testing import factory_kwargs, sweep_values
    from pe_helpers.figures._base import encode_png, render_rgba

    app = factory(**factory_kwargs(factory))
    if device_px:
        app.fit_device_width(device_px)
    control_name, control = next((n, c) for n, c in app.controls.items() if hasattr(c, "min"))
    values = _values_cycle(control, sweep_values(control))
    parts: dict[str, list[float]] = {"update": [], "draw": [], "encode": []}
    png = b""
    for value in itertools.islice(itertools.cycle(values), repeats):
        gc.collect()
        t0 = time.perf_counter()
        app._update(**{**app._values(), control_name: value})
        t1 = time.perf_counter()
        rgba = render_rgba(app.figure)  # what render_png draws (plus a copy of the pixels)
        t2 = time.perf_counter()
        png = encode_png(rgba, dpi=app.figure.dpi)
        t3 = time.perf_counter()
        for key, dt in (("update", t1 - t0), ("draw", t2 - t1), ("encode", t3 - t2)):
            parts[key].append(dt * 1e3)
    try:
        renders = app.renders
        others = [v for v in values if v != control.value]  # each a real change of the control
        burst = [others[k % len(others)] for k in range(10)]
        if len(others) > 1 and burst[-1] == burst[0]:
            burst[-1] = others[1]
        start = time.perf_counter()
        for value in (burst[0], burst[-1]):  # ten key presses as the kernel gets them: the first, then the latest
            control.set_state({"value": value})
        burst_ms = (time.perf_counter() - start) * 1e3
        burst_renders = app.renders - renders
    finally:
        app.close()
    w, h = _png_pixels(png)
    return Split(name, f"{w}×{h}", len(png) / 1024, *(statistics.median(parts[k]) for k in ("update", "draw", "encode")),
                 burst_ms, burst_renders)


def _png_pixels(png: bytes) -> tuple[int, int]:
    import io

    from PIL import Image

    return Image.open(io.BytesIO(png)).size


def print_splits(splits: list[Split]) -> None:
    header = ("app", "PNG pixels", "PNG kB", "update ms", "draw ms", "encode ms", "burst of 10 ms", "renders")
    print_rows(header, [(s.app, s.pixels, f"{s.kilobytes:.0f}", f"{s.update:.1f}", f"{s.draw:.1f}", f"{s.encode:.1f}",
                         f"{s.burst:.1f}", str(s.burst_renders)) for s in splits])


def print_rows(header: tuple[str, ...], lines: list[tuple[str, ...]], left: int = 2) -> None:
    """A plain-text table: the first ``left`` columns aligned left, the numbers right."""
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(header)]
    fmt = " | ".join(f"{{:{'<' if i < left else '>'}{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*header))
    print("-+-".join("-" * w for w in widths))
    for line in lines:
        print(fmt.format(*line))


def print_table(rows: list[Row]) -> None:
    header = ("app", "control", "median ms", "baseline median ms", "ratio", "goal met?")
    print_rows(header, [(r.app, r.control, f"{r.median_ms:.1f}", f"{r.baseline_ms:.1f}", f"{r.ratio:.3f}",
                         "yes" if r.ok else "NO") for r in rows])
    print(f"goal: median <= baseline/3 and < {GOAL_MS:.0f} ms, per app and control "
          f"(ratio = median / baseline median)")
    if hasattr(os, "getloadavg"):
        load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
        print(f"machine: {os.cpu_count()} cores, load average {load} (1, 5, 15 min) at the end of the run")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("apps", nargs="*", help="app names (default: every app in pe_helpers.apps.APPS)")
    parser.add_argument("--repeats", type=int, default=12, help="timed moves per control (default 12)")
    parser.add_argument("--baseline-repeats", type=int, default=4, help="timed rebuilds per control (default 4)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any goal is missed")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    from pe_helpers.apps import APPS

    unknown = [a for a in args.apps if a not in APPS]
    if unknown:
        parser.error(f"unknown app(s) {unknown}; known: {', '.join(APPS)}")
    names = args.apps or list(APPS)
    rows: list[Row] = []
    splits: list[Split] = []
    for name in names:
        print(f"benchmarking {name} ...", file=sys.stderr, flush=True)
        rows += bench_app(name, APPS[name], args.repeats, args.baseline_repeats)
        splits.append(split_app(name, APPS[name], args.repeats))
    print_table(rows)
    print()
    print_splits(splits)
    missed = [r for r in rows if not r.ok]
    return 1 if (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
