"""Key press → the sharp image of the new value, in Chromium, for every slider app: today's path beside this one.

Usage (from the repository root; one command, about 8–10 minutes)::

    .venv/bin/python benchmarks/browser_latency.py                       # both front ends, both paths
    .venv/bin/python benchmarks/browser_latency.py --front-ends voila    # Voilà only
    .venv/bin/python benchmarks/browser_latency.py --baseline-ref HEAD~3 --presses 20

Every app of :data:`pe_helpers.apps.APPS`, one per cell of one notebook, is shown in two front ends (**Voilà**, its
lab template, what a lecturer projects; **JupyterLab**, what a student runs, where the kernel handles widget
messages on a thread of its own) and with two versions of the package in the kernel: **this** checkout, and the
**baseline**, the package as it was at ``--baseline-ref`` (``git archive`` into a temporary folder, put first on
the kernel's ``PYTHONPATH``), in the same run. What a person does is measured in the page: focus an app's first
enabled slider and press an arrow key.

* **press → sharp**: one key press, then wait until the app's ``<img>`` shows a full-resolution image (a pixel for
  every device pixel it covers: its on-screen width × ``devicePixelRatio``, ``--device-ratio``) decoded after it; latency = decode time − the ``keydown`` event's timestamp, both on
  the page's clock. **first**: the same to the first new image of any size (the baseline drew a preview first).
  The presses step one way through the slider's values and turn back at the end of its range; the next press
  comes 100 ms after the sharp image. Median and p90 over ``--presses``.
* **the split** (this checkout): keydown → the new ``src`` set (kernel handling, update, draw, encode, transfer),
  ``src`` → decoded (decode); update, draw and encode of the same move headless in this process
  (:func:`benchmarks.apps.split_app`); handling + transfer = the first minus those three.
* **jump**: PageUp / PageDown (five steps), measured like a press. Median over ``--jumps``.
* **burst**: ten presses as fast as the keyboard sends them, one way (``--bursts`` times); **settled** = the last
  key press that changed the slider → the last image decoded (no new image for 1 s after it), which must be full
  resolution and show the slider's last value (else the row says "blurred" or "stale").

Goals: press → sharp median ≤ 100 ms; every burst settled and sharp ≤ 250 ms after the last key; a first visible
change ≤ 50 ms where a preview is kept (this checkout keeps none: its first image is the sharp one). The machine's
load is printed at the start and at the end: on a shared 2-core machine the numbers move with it. Exit status 0
(a report) unless ``--strict`` is given and a goal of this checkout is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

import apps as bench  # noqa: E402  (benchmarks/apps.py: the headless timings and the table)
from pe_helpers.testing import browser as pb  # noqa: E402  (servers, Chromium)

GOAL_MEDIAN_MS = 100.0
GOAL_BURST_MS = 250.0
GOAL_FIRST_MS = 50.0
#: The package as it was before the one render path (previews, prefetch, timers): the default baseline.
BASELINE_REF = "e69eb6d"
BURST = 10
QUIET_MS = 1000  # no new image for this long = settled

#: Installed once per page: records key presses, slider values and decoded images of every app.
RECORDER_JS = """() => {
    if (window.__peRec) return true;
    const rec = window.__peRec = {keys: [], apps: []};
    document.addEventListener('keydown', (e) => rec.keys.push(e.timeStamp), true);
    document.querySelectorAll('.pe-app').forEach((app, i) => {
        const img = app.querySelector('img');
        const a = {images: [], values: [], srcChanges: 0};
        rec.apps.push(a);
        new MutationObserver(() => {
            const t = performance.now();
            const src = img.src;
            a.srcChanges += 1;
            img.decode().then(() => a.images.push({t, decoded: performance.now(), src, width: img.naturalWidth}),
                              () => {});
        }).observe(img, {attributes: true, attributeFilter: ['src']});
        for (const h of app.querySelectorAll('.noUi-handle')) {
            new MutationObserver(() => a.values.push([performance.now(), h.getAttribute('aria-valuenow')]))
                .observe(h, {attributes: true, attributeFilter: ['aria-valuenow']});
        }
    });
    return true;
}"""


@dataclass
class Result:
    front_end: str
    path: str  #: "this" or "baseline"
    app: str
    control: str
    presses: list[float] = field(default_factory=list)  #: key press → the first full-resolution image decoded
    first: list[float] = field(default_factory=list)  #: key press → the first new image decoded (any size)
    to_src: list[float] = field(default_factory=list)  #: key press → the first new image's src set
    decode: list[float] = field(default_factory=list)  #: that image's src set → decoded
    jumps: list[float] = field(default_factory=list)  #: PageUp / PageDown → the first full-resolution image decoded
    bursts: list[float] = field(default_factory=list)  #: each burst: last key → the last image decoded
    burst_steps: int = 0
    burst_images: int = 0
    burst_note: str = ""
    parts: dict[str, float] = field(default_factory=dict)  #: headless update / draw / encode ms (this checkout)
    device_px: int = 0  #: the device pixels the app's image covers
    never_sharp: int = 0  #: presses and jumps after which no full-resolution image came within SHARP_TIMEOUT

    @staticmethod
    def _median(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    @property
    def median(self) -> float:
        return self._median(self.presses)

    @property
    def p90(self) -> float:
        if not self.presses:
            return float("nan")
        ordered = sorted(self.presses)
        return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]

    @property
    def worst_burst(self) -> float:
        return max(self.bursts) if self.bursts else float("nan")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def chromium_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return path


def voila_command(root: Path, port: int, token: str) -> list[str]:
    """Voilà serving the folder ``root`` (one notebook per ``/voila/render/NAME``), 127.0.0.1, token on."""
    return [sys.executable, "-m", "voila", str(root), "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}",
            "--Voila.port_retries=0", f"--token={token}", "--show_tracebacks=True"]


def baseline_tree(ref: str, dest: Path) -> Path:
    """The package ``pe_helpers`` as it was at ``ref``, unpacked under ``dest`` (for the kernel's PYTHONPATH)."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "pe_helpers"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


# --------------------------------------------------------------------------- in the page

def _first_slider(app):  # noqa: ANN001, ANN202
    sliders = app.locator(".widget-slider")
    for i in range(sliders.count()):
        s = sliders.nth(i)
        if not s.locator("[disabled], .mod-disabled").count() and s.locator(".noUi-handle").count():
            return s
    return None


def _enable_a_slider(page, app):  # noqa: ANN001, ANN202
    """The first enabled slider; if every slider is disabled (01's seed matters only for a random order), choose
    each dropdown option in turn until one is enabled."""
    slider = _first_slider(app)
    selects = app.locator("select")
    for i in range(selects.count()):
        for option in range(selects.nth(i).locator("option").count()):
            if slider is not None:
                return slider
            selects.nth(i).select_option(index=option)
            page.wait_for_timeout(1500)  # the kernel answers, then the slider's disabled state follows
            slider = _first_slider(app)
    return slider


def _quiet(page, index: int, *, timeout_ms: float = 60_000) -> None:  # noqa: ANN001
    """Wait until app ``index`` shows an image decoded after its slider's last change, and then no new image for
    QUIET_MS (every pending render arrived; on a loaded machine the first one may take longer than QUIET_MS)."""
    page.wait_for_function(
        """([i, quiet]) => { const a = window.__peRec.apps[i];
               const last = a.images.length ? a.images[a.images.length - 1].decoded : 0;
               const lastV = a.values.length ? a.values[a.values.length - 1][0] : 0;
               return last >= lastV && performance.now() - last > quiet; }""",
        arg=[index, QUIET_MS], timeout=timeout_ms, polling=50)


#: After a key press: ms from the keydown to the first new image decoded, to its src set, and its decode time.
FIRST_JS = """([i, seen]) => { const r = window.__peRec, a = r.apps[i];
    if (a.images.length <= seen) return false;
    const key = r.keys[r.keys.length - 1], m = a.images[seen];
    return [m.decoded - key, m.t - key, m.decoded - m.t]; }"""
#: ... and to the first full-size image decoded.
SHARP_JS = """([i, seen, full]) => { const r = window.__peRec, a = r.apps[i];
    const key = r.keys[r.keys.length - 1], sharp = a.images.slice(seen).find((m) => m.width >= full);
    return sharp ? sharp.decoded - key : false; }"""
#: Seconds a press waits for the full-resolution image before it counts as "never sharp" (an app stuck on a preview).
SHARP_TIMEOUT = 3.0


def _press(page, index: int, key: str, full: int, *, last: bool) -> list[float]:  # noqa: ANN001
    """Press ``key``; ms from the keydown to the first new image decoded, to the first full-size one (NaN when none
    came within :data:`SHARP_TIMEOUT`), to the first one's src set, and its decode time."""
    seen = page.evaluate("(i) => window.__peRec.apps[i].images.length", index)
    page.keyboard.press(key)
    first, to_src, decode = page.wait_for_function(FIRST_JS, arg=[index, seen], timeout=20_000, polling=10).json_value()
    try:
        sharp = page.wait_for_function(SHARP_JS, arg=[index, seen, full], timeout=SHARP_TIMEOUT * 1000,
                                       polling=10).json_value()
    except Exception:  # noqa: BLE001 (playwright TimeoutError): the app stayed on a smaller image
        sharp = float("nan")
    _quiet(page, index) if last else page.wait_for_timeout(100)  # a person's next press
    return [first, sharp, to_src, decode]


def measure_app(page, app, index: int, result: Result, presses: int, jumps: int, n_bursts: int) -> None:  # noqa: ANN001
    slider = _enable_a_slider(page, app)
    if slider is None:
        raise RuntimeError(f"app #{index} has no enabled slider")
    result.control = (slider.locator(".widget-label").first.text_content() or "?").strip()
    handle = slider.locator(".noUi-handle").first
    app.scroll_into_view_if_needed()
    handle.focus()
    _quiet(page, index)
    result.device_px = app.locator("img").first.evaluate(  # a full-resolution image: a pixel per device pixel
        "(img) => Math.ceil(img.getBoundingClientRect().width * devicePixelRatio)")
    full = result.device_px - 1

    def where() -> tuple[float, float, float]:
        return tuple(float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))

    key = "ArrowRight"
    for _ in range(presses):  # one way, turning back at the end of the range: never back to the last image
        now, low, high = where()
        key = "ArrowLeft" if now >= high else "ArrowRight" if now <= low else key
        first, sharp, to_src, decode = _press(page, index, key, full, last=False)
        result.first.append(first)
        if sharp == sharp:
            result.presses.append(sharp)
        else:
            result.never_sharp += 1
        result.to_src.append(to_src)
        result.decode.append(decode)
    for n in range(jumps):  # five steps at a time, there and back
        now, low, high = where()
        key = "PageDown" if now >= high else "PageUp" if now <= low or n % 2 == 0 else "PageDown"
        sharp = _press(page, index, key, full, last=n == jumps - 1)[1]
        if sharp == sharp:
            result.jumps.append(sharp)
        else:
            result.never_sharp += 1
    notes = set()
    for _ in range(max(1, n_bursts)):
        burst = _burst(page, app, index, slider, handle, full)
        result.bursts.append(burst["settled"] if burst["settled"] is not None else float("nan"))
        result.burst_steps, result.burst_images = burst["steps"], burst["images"]
        notes |= {note for ok, note in ((burst["fresh"], "stale"), (burst["sharp"], "blurred")) if not ok}
    result.burst_note = ", ".join(sorted(notes))


def _burst(page, app, index: int, slider, handle, full: int) -> dict:  # noqa: ANN001
    """Ten presses one way (the way with more room), as fast as the keyboard sends them; what the page saw."""
    now = float(handle.get_attribute("aria-valuenow"))
    low, high = float(handle.get_attribute("aria-valuemin")), float(handle.get_attribute("aria-valuemax"))
    key = "ArrowRight" if high - now >= now - low else "ArrowLeft"
    start = page.evaluate("(i) => [window.__peRec.keys.length, window.__peRec.apps[i].images.length, "
                          "window.__peRec.apps[i].values.length]", index)
    for _ in range(BURST):
        page.keyboard.press(key)
    _quiet(page, index)
    burst = page.evaluate(
        """([i, k0, im0, v0, full]) => { const r = window.__peRec, a = r.apps[i];
               const keys = r.keys.slice(k0), values = a.values.slice(v0), images = a.images.slice(im0);
               const lastChange = values.length ? values[values.length - 1][0] : null;
               const lastKey = lastChange === null ? null : Math.max(...keys.filter((k) => k <= lastChange));
               const last = images[images.length - 1];
               return {steps: values.length, images: images.length, keys: keys.length,
                       settled: last && lastKey !== null ? last.decoded - lastKey : null,
                       sharp: !!last && last.width >= full}; }""",
        [index, *start, full])
    readout = (slider.locator(".widget-readout").first.inner_text() or "").strip()
    caption = (app.locator(".pe-caption").first.text_content() or "").strip()
    burst["fresh"] = pb.shows_value(caption, readout)
    return burst


def open_in_voila(page, server: pb.Server, name: str) -> None:  # noqa: ANN001
    """Render ``name`` in Voilà (the page finishes loading once every cell has run)."""
    page.goto(server.url(f"/voila/render/{name}"), wait_until="load", timeout=600_000)


def open_in_lab(page, server: pb.Server, name: str) -> None:  # noqa: ANN001
    """Open ``name`` in JupyterLab and Run All, as a student does."""
    page.set_viewport_size(pb.VIEWPORT)
    pb.open_notebook(page, server, name)
    pb.collapse_lab_sidebars(page)
    pb.run_all(page)


def wait_all_drawn(page, count: int) -> None:  # noqa: ANN001
    page.wait_for_function("(n) => document.querySelectorAll('.pe-app').length >= n && Array.from("
                           "document.querySelectorAll('.pe-app img')).every((i) => i.naturalWidth > 0)",
                           arg=count, timeout=180_000, polling=100)


# --------------------------------------------------------------------------- report

def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "–"


def print_table(results: list[Result]) -> None:
    by = {(r.front_end, r.path, r.app): r for r in results}
    header = ("front end", "app", "slider", "this: press→sharp median ms", "p90", "first", "jump", "bursts settled ms",
              "baseline: press→sharp", "first (preview)", "jump", "bursts settled", "split: →src / decode",
              "update/draw/encode (headless)", "handling+transfer")
    lines = []
    for r in (r for r in results if r.path == "this"):
        b = by.get((r.front_end, "baseline", r.app))
        parts = [r.parts.get(k, float("nan")) for k in ("update", "draw", "encode")]
        rest = statistics.median(r.to_src) - sum(parts) if r.to_src and parts else float("nan")
        bursts = "/".join(f"{x:.0f}" for x in r.bursts) + (f" ({r.burst_note})" if r.burst_note else "")
        b_bursts = ("/".join(f"{x:.0f}" for x in b.bursts) + (f" ({b.burst_note})" if b.burst_note else "")) if b else "–"
        b_press = (f"{b.median:.0f}" + (f" ({b.never_sharp} never sharp)" if b.never_sharp else "")) if b else "–"
        lines.append((r.front_end, r.app, r.control, f"{r.median:.0f}" + (f" ({r.never_sharp} never sharp)" if
                      r.never_sharp else ""), f"{r.p90:.0f}", _ms(r.first), _ms(r.jumps),
                      bursts, b_press, _ms(b.first) if b else "–", _ms(b.jumps) if b else "–",
                      b_bursts, f"{_ms(r.to_src)} / {_ms(r.decode)}", "/".join(f"{x:.0f}" for x in parts),
                      f"{rest:.0f}"))
    bench.print_rows(header, lines, left=3)
    mine = [r for r in results if r.path == "this"]
    if not mine:
        return
    worst = max(mine, key=lambda r: r.median)
    slowest = max(mine, key=lambda r: r.worst_burst)
    print(f"\nthis checkout: worst press → sharp median {worst.median:.0f} ms ({worst.app}, {worst.front_end}); goal ≤ "
          f"{GOAL_MEDIAN_MS:.0f} ms: {'met' if worst.median <= GOAL_MEDIAN_MS else 'NOT met'}")
    print(f"this checkout: slowest burst settled and sharp {slowest.worst_burst:.0f} ms after the last key "
          f"({slowest.app}, {slowest.front_end}); goal ≤ {GOAL_BURST_MS:.0f} ms: "
          f"{'met' if all(r.worst_burst <= GOAL_BURST_MS and not r.burst_note for r in mine) else 'NOT met'}")
    base = [r for r in results if r.path == "baseline"]
    if base:
        print(f"baseline: worst press → sharp median {max(r.median for r in base):.0f} ms, worst first-image median "
              f"{max(statistics.median(r.first) for r in base):.0f} ms, slowest burst {max(r.worst_burst for r in base):.0f} ms"
              f"{'; bursts left ' + ', '.join(sorted({r.burst_note for r in base if r.burst_note})) if any(r.burst_note for r in base) else ''}")


def measure(front_end: str, path: str, kernel_path: Path, chromium: str, presses: int, jumps: int,
            n_bursts: int, device_ratio: float = 1.0) -> list[Result]:
    """Every app, in ``front_end`` ("voila" or "lab"), with the package at ``kernel_path`` in the kernel."""
    from playwright.sync_api import sync_playwright

    from pe_helpers.apps import APPS

    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="pe-latency-") as tmp:
        home = Path(tmp)
        root = home / "notebooks"
        root.mkdir()
        name = pb.apps_notebook(root)
        env = pb.isolated_jupyter_env(home / "jupyter-home")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(kernel_path), env.get("PYTHONPATH", "")]))
        port, token = pb.free_port(), secrets.token_hex(16)
        if front_end == "voila":
            server = pb.start_server("voila", voila_command(root, port, token), port=port, token=token, env=env,
                                     cwd=root, log_path=home / "server.log", ready_path="/", root=root,
                                     ready_with_token=False, ready_status=(200, 302, 403))
        else:
            pb.write_lab_settings(env)
            server = pb.start_server("jupyter lab", pb.lab_command(port, token, root), port=port, token=token, env=env,
                                     cwd=root, log_path=home / "server.log", ready_path="/api/status", root=root)
        try:
            with sync_playwright() as manager:
                context = pb.launch_browser(manager, chromium, home / "profile")
                page = context.new_page()
                page.set_viewport_size(pb.VIEWPORT)
                try:
                    print(f"{front_end}, {path}: running every app ...", file=sys.stderr, flush=True)
                    (open_in_voila if front_end == "voila" else open_in_lab)(page, server, name)
                    wait_all_drawn(page, len(APPS))
                    if device_ratio != 1:
                        pb.emulate_device_ratio(page, device_ratio)
                    page.wait_for_timeout(1000)  # each view has reported its pixels, and the apps have answered
                    page.evaluate(RECORDER_JS)
                    for i, (app, factory) in enumerate(zip(pb.iter_apps(page), APPS)):
                        r = Result(front_end, path, factory, "?")
                        measure_app(page, app, i, r, presses, jumps, n_bursts)
                        results.append(r)
                        print(f"  {factory}: press → sharp median {r.median:.0f} ms (first {_ms(r.first)}), jump "
                              f"{_ms(r.jumps)}, bursts {'/'.join(f'{b:.0f}' for b in r.bursts)} ms {r.burst_note}"
                              f"{f', {r.never_sharp} presses never sharp' if r.never_sharp else ''}",
                              file=sys.stderr, flush=True)
                finally:
                    context.close()
        finally:
            if front_end == "lab":
                pb.shutdown_kernels(server)
            pb.stop_server(server)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--front-ends", nargs="*", default=["voila", "lab"], choices=["voila", "lab"])
    parser.add_argument("--baseline-ref", default=BASELINE_REF,
                        help=f"the git revision whose pe_helpers is the baseline (default {BASELINE_REF}); '' for none")
    parser.add_argument("--presses", type=int, default=12, help="single presses per app (default 12)")
    parser.add_argument("--jumps", type=int, default=6, help="PageUp/PageDown presses per app (default 6)")
    parser.add_argument("--bursts", type=int, default=3, help="bursts of ten presses per app (default 3)")
    parser.add_argument("--device-ratio", type=float, default=1.0,
                        help="the page's devicePixelRatio (default 1: a projector, most classroom screens; 2: a HiDPI laptop)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a goal of this checkout is missed")
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    chromium = pb.find_chromium()
    if chromium is None:
        parser.error(f"Chromium not found; {pb.INSTALL_HINT}")
    print("benchmarks/browser_latency.py: key press → the sharp image of the new value, every app, in Chromium")
    print(f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; {platform.node()}; {load()} at the start")
    print(f"front ends: {', '.join(args.front_ends)}; {chromium_version(chromium)}; viewport {pb.VIEWPORT['width']}×"
          f"{pb.VIEWPORT['height']}; devicePixelRatio {args.device_ratio:g}; {args.presses} presses, {args.jumps} jumps, {args.bursts} bursts of {BURST} per app; "
          f"baseline: pe_helpers at {args.baseline_ref or '(none)'}\n", flush=True)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="pe-baseline-") as tmp:
        paths = [("this", REPO)]
        if args.baseline_ref:
            paths.insert(0, ("baseline", baseline_tree(args.baseline_ref, Path(tmp))))
        for front_end in args.front_ends:
            for path, where in paths:
                results += measure(front_end, path, where, chromium, args.presses, args.jumps, args.bursts,
                                   args.device_ratio)
    print("headless parts (this checkout) ...", file=sys.stderr, flush=True)
    from pe_helpers.apps import APPS

    for r in results:
        if r.path == "this":
            split = bench.split_app(r.app, APPS[r.app], max(args.presses, 6), r.device_px)
            r.parts = {"update": split.update, "draw": split.draw, "encode": split.encode}
    print_table(results)
    print(f"\nmachine: {load()} at the end.")
    mine = [r for r in results if r.path == "this"]
    missed = any(r.median > GOAL_MEDIAN_MS or not r.worst_burst <= GOAL_BURST_MS or r.burst_note for r in mine)
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
