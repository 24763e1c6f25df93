"""Every notebook and every slider app, used the way a class uses them: in JupyterLab, in Chromium.

Per notebook (one test each, one JupyterLab server and one tab for the module, each notebook opened once),
at 1280×720 with the side panels closed (the notebook is the window's width), *before anything runs*:

* every stored figure is shown and decoded, and no widget shows its text stand-in (``App(children=...``);
* every figure, static or app, has text of at least 14 CSS px as displayed: from the PNG's dpi and
  smallest font (written by ``render_png``) and the image's displayed and natural widths.

Every app, in one notebook that shows them all, is then run in JupyterLab: Run → Run All Cells, wait until the
kernel is idle and every code cell shows its number, save, then assert that no cell shows an error and that every
widget rendered. On each app an arrow key is held for a second and a handle dragged across its range, another option clicked half-way,
and at rest the app must show the full-resolution render of exactly what its controls read, pixel for pixel a fresh
render of those values. The heatmap's bases are typed as people type them (``1 000``, ``1e4``, ``10 000``; a refused
one shows why), and a screenshot of every app at rest is saved. The notebooks themselves run live
in a browser in tests/browser/test_slides.py (Voilà, every app moved, held and dragged there) and in the kernel under
nbval. The Chinese notebook 03 and Notebook 7 (the same server's ``/notebooks/``) have a test each.
Screenshots go to build/screenshots/ (git-ignored; CI keeps the folder).
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from pe_helpers.testing import browser as pb

pytestmark = pytest.mark.browser

NOTEBOOKS = pb.notebook_paths()


def test_server_refuses_requests_without_the_token(lab_server: pb.Server) -> None:
    status, location = pb.http_status(lab_server.url("/api/contents", with_token=False))
    assert status == 403 or (status == 302 and "/login" in location), (status, location)
    status, location = pb.http_status(lab_server.base + "/api/contents?token=not-the-token")
    assert status == 403 or (status == 302 and "/login" in location), (status, location)
    status, location = pb.http_status(lab_server.url("/lab", with_token=False))
    assert status == 302 and "/login" in location, (status, location)
    # ...while the same request with the token is answered.
    with urllib.request.urlopen(lab_server.url("/api/contents"), timeout=15) as resp:  # noqa: S310
        assert resp.status == 200


def test_there_are_notebooks_to_check() -> None:
    assert NOTEBOOKS, f"no notebooks found in {pb.NOTEBOOKS}"


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_notebook_opens_with_its_figures_shown_and_legible_in_jupyterlab(name: str, lab_server: pb.Server,
                                                                         lab_page: object) -> None:
    page = lab_page
    stem = name.removesuffix(".ipynb")
    copy = lab_server.root / name
    pb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    problems: list[str] = []
    try:
        page.set_viewport_size(pb.CLASSROOM_VIEWPORT)
        pb.show_file_browser(page)
        pb.open_notebook(page, lab_server, name)
        problems += pb.stored_view_problems(page, json.loads(copy.read_text()))
        pb.collapse_lab_sidebars(page)
        fonts = pb.figure_fonts(page, pb.ACTIVE_NOTEBOOK)
        assert fonts, f"{name} shows no stored figure in JupyterLab"
        problems += pb.illegible_figures(fonts)
        page.screenshot(path=str(pb.SCREENSHOTS / f"lab-{stem}-opened.png"))
    except Exception:
        page.screenshot(path=str(pb.SCREENSHOTS / f"lab-{stem}-FAILED.png"))
        raise
    finally:
        pb.close_notebook(page, lab_server)
        pb.TIMINGS.append((f"JupyterLab {name}: opened, {len(problems)} problem(s)", time.monotonic() - t0))
    assert not problems, f"{name} in JupyterLab, before running:\n  " + "\n  ".join(problems)


def test_every_app_responds_and_rests_sharp_on_its_controls_in_jupyterlab(lab_server: pb.Server,
                                                                          lab_page: object) -> None:
    """Every app in JupyterLab (one notebook that shows them all, Run All), used as a class uses it.

    After Run All on a 1× screen every app is rendered for it (a pixel per device pixel, fewer than the stored 2×
    render); the screen then becomes a 2× one (a HiDPI laptop, or a zoom) and every app follows. Per app: an arrow
    key held for a second on the first slider and a handle dragged across its whole range, another option clicked
    half-way. Once the hands stop (0.5 s without a new image) the app must show the full-resolution render (a pixel
    per device pixel: at least 2 px per CSS px) of exactly the values its controls read, pixel for pixel what a
    fresh app of those values draws at that size: JupyterLab
    handles widget messages on a thread of its own, and a figure drawn from two threads showed a blurred, stale or
    doubled image. The heatmap's typed bases are tried as people type them, and every app is saved as a screenshot
    at rest (1280×720).
    """
    from pe_helpers.apps import APPS

    page = lab_page
    name = pb.apps_notebook(lab_server.root)
    t0 = time.monotonic()
    problems: list[str] = []
    rests: list[pb.AtRest] = []
    ran = 0.0
    try:
        page.set_viewport_size(pb.CLASSROOM_VIEWPORT)
        if not page.url.startswith(lab_server.base + "/lab"):
            pb.open_lab(page, lab_server)
        pb.show_file_browser(page)
        pb.open_notebook(page, lab_server, name)
        pb.collapse_lab_sidebars(page)
        ran = pb.run_all(page)
        saved = pb.save_notebook(page, lab_server.root / name)
        problems += pb.notebook_problems(saved, pb.cell_states(page), set())
        apps = list(pb.iter_apps(page, pb.ACTIVE_NOTEBOOK))
        assert len(apps) == len(APPS), f"{len(apps)} apps on the page after Run All, {len(APPS)} made"
        problems += pb.illegible_figures(pb.figure_fonts(page, pb.ACTIVE_NOTEBOOK))
        problems += [f"at devicePixelRatio 1: {p}" for p in pb.wait_apps_fit_device(page, pb.ACTIVE_NOTEBOOK)]
        pb.emulate_device_ratio(page, 2)
        problems += [f"at devicePixelRatio 2: {p}" for p in pb.wait_apps_fit_device(page, pb.ACTIVE_NOTEBOOK)]
        for app, factory in zip(apps, APPS):
            try:
                rest = pb.stress_app(page, app, check=pb.at_rest_problems)
                assert rest.device_ratio == 2 and rest.natural_width >= 2 * rest.css_width - 1, (
                    f"{rest.natural_width} px for {rest.css_width} CSS px at devicePixelRatio {rest.device_ratio}")
            except AssertionError as err:
                problems.append(f"{factory}: {err}")
                continue
            rests.append(rest)
            problems += rest.problems
            if factory == "frequency_heatmap_app":
                problems += _typed_bases(page, app)
        for app, factory in zip(apps, APPS):
            app.scroll_into_view_if_needed()
            app.screenshot(path=str(pb.SCREENSHOTS / f"lab-{factory}-at-rest.png"))
    except Exception:
        page.screenshot(path=str(pb.SCREENSHOTS / "lab-every-app-FAILED.png"))
        raise
    finally:
        pb.emulate_device_ratio(page, 1)
        pb.close_notebook(page, lab_server)
        slowest = max(rests, key=lambda r: r.rest_seconds, default=None)
        pb.TIMINGS.append((f"JupyterLab every app: run all {ran:.1f} s, {len(rests)} held and dragged to rest, the "
                           f"slowest {slowest.rest_seconds if slowest else 0:.2f} s after the last input",
                           time.monotonic() - t0))
    assert not problems, "every app in JupyterLab:\n  " + "\n  ".join(problems)


#: (typed, the readout it must lead to) in that order: each changes the base; then one that is refused.
TYPED_BASES = (("1 000", "1 000"), ("1e4", "10 000"), ("100000", "100 000"), ("10 000", "10 000"))


def _typed_bases(page, app) -> list[str]:  # noqa: ANN001
    """Notebook 03's heatmap: bases typed as people type them move the slider and redraw; a wrong one says why."""
    problems = []
    for text, readout in TYPED_BASES:
        got = pb.type_base(page, app, text)
        if got["readout"] != readout or not got["changed"] or got["message"]:
            problems.append(f"typing {text!r} into the base box: slider reads {got['readout']!r} (expected "
                            f"{readout!r}), image changed: {got['changed']}, message {got['message']!r}")
    got = pb.type_base(page, app, "ten thousand")
    if not got["message"] or got["changed"] or got["readout"] != "10 000":
        problems.append(f"typing 'ten thousand': expected a message in the app and no change, got {got}")
    return problems


def test_chinese_notebook_03_opens_with_legible_figures_in_jupyterlab(lab_server: pb.Server, lab_page: object) -> None:
    """The Chinese edition of notebook 03 as people open it: every stored figure (its app's included,
    stored as a picture) shown and legible. Its live app is moved, and its Chinese labels checked, in the
    Chinese deck (tests/browser/test_slides.py); its cells run under nbval."""
    page = lab_page
    name = next(p.name for p in sorted(lab_server.root.glob("zh-03_*.ipynb")))
    t0 = time.monotonic()
    try:
        page.set_viewport_size(pb.CLASSROOM_VIEWPORT)
        pb.show_file_browser(page)
        pb.open_notebook(page, lab_server, name)
        problems = pb.stored_view_problems(page, json.loads((lab_server.root / name).read_text()))
        pb.collapse_lab_sidebars(page)
        problems += pb.illegible_figures(pb.figure_fonts(page, pb.ACTIVE_NOTEBOOK))
        page.screenshot(path=str(pb.SCREENSHOTS / "lab-zh-03-opened.png"))
        assert not problems, f"{name} in JupyterLab, before running:\n  " + "\n  ".join(problems)
    finally:
        pb.close_notebook(page, lab_server)
        pb.TIMINGS.append((f"JupyterLab {name}: opened", time.monotonic() - t0))


def test_notebook7_runs_a_notebook_and_the_keyboard_moves_its_apps(lab_server: pb.Server, lab_page: object) -> None:
    """Notebook 7 (the same server's ``/notebooks/``): notebook 00 (one app: the quickest to run) runs with no error, its figures are
    legible at 1280×720, arrow keys on a focused slider move its app, whose image and caption follow, and arrow keys
    on a selected cell still move between cells.

    Notebook 7 sees key presses before the page does (capture phase) and its command-mode arrow shortcuts matched a
    focused slider handle; the environment's settings (pe_helpers/jupyter_settings.py, installed by ``make``) keep
    those shortcuts out of widgets. Without them this test fails naming what took the focus.
    """
    page = lab_page
    name = next(p.name for p in sorted(lab_server.root.glob("00_*.ipynb")))
    t0 = time.monotonic()
    problems: list[str] = []
    keyboard: list[str] = []
    try:
        page.set_viewport_size(pb.CLASSROOM_VIEWPORT)
        pb.open_notebook7(page, lab_server, name)
        pb.run_all_notebook7(page)
        saved_errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        problems += [t[:300] for t in saved_errors.all_text_contents() if pb.ERROR_TEXT.search(t)]
        apps = list(pb.iter_apps(page))
        assert apps, f"Notebook 7 shows no app (.pe-app) in {name} after Run All"
        problems += pb.illegible_figures(pb.figure_fonts(page))
        assert not problems, f"{name} in Notebook 7:\n  " + "\n  ".join(problems)
        for i, app in enumerate(apps):
            slider = app.locator(".widget-slider").first
            image = app.locator("img").first
            app.scroll_into_view_if_needed()
            pb.wait_sharp(page, image)  # a render for the view's width is not taken for the key's
            old_src = image.get_attribute("src")
            try:
                before, after = pb.press_on_slider(page, slider)
                caption = pb.wait_caption_shows(app, after)
                page.wait_for_function("([img, old]) => img.src !== old && img.naturalWidth > 0",
                                       arg=[image.element_handle(), old_src], timeout=pb.APP_MOVE_TIMEOUT * 1000)
                assert pb.shows_value(caption, after), f"slider {before!r} -> {after!r}, caption {caption!r}"
            except AssertionError as err:
                keyboard.append(f"app #{i}: {err}")
            app.screenshot(path=str(pb.SCREENSHOTS / f"nb7-{name[:2]}-app{i}.png"))
            try:  # on a 2× screen, a held key and a drag: at rest, the sharp render of what the controls read
                pb.emulate_device_ratio(page, 2)
                rest = pb.stress_app(page, app, check=pb.at_rest_problems)
                if rest.natural_width < 2 * rest.css_width - 1:
                    keyboard.append(f"app #{i}: {rest.natural_width} px for {rest.css_width} CSS px at 2×")
                keyboard += [f"app #{i}: {p}" for p in rest.problems]
                app.screenshot(path=str(pb.SCREENSHOTS / f"nb7-{name[:2]}-app{i}-at-rest.png"))
            except AssertionError as err:
                keyboard.append(f"app #{i}: {err}")
        # Outside a widget the arrow keys still move between cells (command mode on the first cell).
        page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt, .jp-InputArea-prompt").first.click()
        page.keyboard.press("Escape")
        before = page.evaluate(ACTIVE_CELL_JS)
        page.keyboard.press("ArrowDown")
        page.wait_for_function(f"(old) => ({ACTIVE_CELL_JS})() !== old", arg=before, timeout=5000, polling=50)
    finally:
        pb.emulate_device_ratio(page, 1)
        pb.shutdown_kernels(lab_server)  # the tab leaves JupyterLab: the next test's open_notebook reloads it
        pb.TIMINGS.append((f"Notebook 7 {name}", time.monotonic() - t0))
    assert not keyboard, ("Notebook 7: arrow keys on a focused slider did not move it (is pe_helpers.jupyter_settings "
                          "installed in this environment?), or the app at rest was not the sharp render of its "
                          "controls:\n  " + "\n  ".join(keyboard))


#: The index of the notebook's active cell (Notebook 7 and JupyterLab mark it ``jp-mod-active``).
ACTIVE_CELL_JS = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')).findIndex((c) => c.classList.contains('jp-mod-active'))"
