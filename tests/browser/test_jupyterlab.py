"""Every notebook and every slider app, used the way a class uses them: in JupyterLab, in Chromium.

Per notebook (one test each, one JupyterLab server and one tab for the module, each notebook opened once),
at 1280×720 with the side panels closed (the notebook is the window's width), *before anything runs*:

* every stored figure is shown and decoded, and no widget shows its text stand-in (``App(children=...``);
* every figure, static or app, has text of at least 14 CSS px as displayed: from the PNG's dpi and
  smallest font (written by ``render_png``) and the image's displayed and natural widths.

Notebook 03 (the richest app: a slider, a dropdown and a typed base) is also run in JupyterLab: Run → Run
All Cells, wait until the kernel is idle and every code cell shows its number, save, then assert that no
cell shows an error and that every widget rendered; its apps' first sliders are moved with the keyboard
(the image and the caption show the new value), bases are typed as people type them (``1 000``, ``1e4``,
``10 000``; a refused one shows why), and screenshots of every app are saved at 1280×720 and 1920×1080.
Every other notebook runs live in a browser in tests/browser/test_slides.py (Voilà, every app moved with
the keyboard there) and in the kernel under nbval: running them all a third time here added two minutes
to ``make test`` and checked nothing those two do not.

Every app (one notebook that shows them all) is held and dragged until it must rest sharp on the render of
its controls' values. The Chinese notebook 03 and Notebook 7 (the same server's ``/notebooks/``) have a test each.
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


def _timing_line(name: str, opened: float, ran: float, moves: list[pb.AppMove]) -> str:
    line = f"JupyterLab {name}: open {opened:.1f} s, run all {ran:.1f} s, {len(moves)} app(s) moved"
    for m in moves:
        skipped = f", after {len(m.tried) - 1} control(s) without effect" if len(m.tried) > 1 else ""
        line += f" [{m.control} {m.old_value}->{m.new_value} in {m.seconds:.2f} s{skipped}]"
    return line


#: The notebooks Run All runs in JupyterLab (see the module docstring): notebook 03.
RUN_IN_LAB = [p.name for p in NOTEBOOKS if p.name.startswith("03_")]


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


@pytest.mark.parametrize("name", RUN_IN_LAB)
def test_notebook_runs_and_its_apps_respond_in_jupyterlab(name: str, lab_server: pb.Server, lab_page: object) -> None:
    page = lab_page
    stem = name.removesuffix(".ipynb")
    copy = lab_server.root / name
    allowed = pb.raises_exception_cells(copy)
    pb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    opened = ran = 0.0
    moves: list[pb.AppMove] = []
    problems: list[str] = []
    try:
        page.set_viewport_size(pb.CLASSROOM_VIEWPORT)
        pb.show_file_browser(page)
        pb.open_notebook(page, lab_server, name)
        opened = time.monotonic() - t0
        pb.collapse_lab_sidebars(page)
        ran = pb.run_all(page)
        saved = pb.save_notebook(page, copy)
        problems += pb.notebook_problems(saved, pb.cell_states(page), allowed)
        page.screenshot(path=str(pb.SCREENSHOTS / f"lab-{stem}.png"))
        apps = list(pb.iter_apps(page, pb.ACTIVE_NOTEBOOK))
        if pb.imports_apps(saved) and not apps:
            problems.append("the notebook imports pe_helpers.apps but after Run All the page shows no slider app "
                            "(.pe-app): none rendered, or a later cell closed it (app.close() removes it from the page)")
        problems += pb.illegible_figures(pb.figure_fonts(page, pb.ACTIVE_NOTEBOOK))
        for i, app in enumerate(apps):
            try:
                moves.append(pb.move_app_control(page, app, i, pb.SCREENSHOTS / f"lab-{stem}-app{i}.png"))
            except AssertionError as err:
                problems.append(str(err))
        problems += [f"app #{i}: after a keyboard move the image is not the full-resolution render"
                     for i, app in enumerate(apps) if not pb.wait_sharp(page, app.locator("img").first)]
        if name.startswith("03_") and apps:
            problems += _typed_bases(page, apps[0])
        pb.app_screenshots(page, apps, f"lab-{stem}", pb.SCREENSHOTS)
    except Exception:
        page.screenshot(path=str(pb.SCREENSHOTS / f"lab-{stem}-FAILED.png"))
        raise
    finally:
        pb.close_notebook(page, lab_server)  # its kernel goes too: the CPU is free for the next notebook
        pb.TIMINGS.append((_timing_line(name, opened, ran, moves), time.monotonic() - t0))
    assert not problems, f"{name} in JupyterLab:\n  " + "\n  ".join(problems)


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
    """Issue 17: the Chinese edition of notebook 03 as people open it: every stored figure (its app's included,
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
            old_src = image.get_attribute("src")
            app.scroll_into_view_if_needed()
            try:
                before, after = pb.press_on_slider(page, slider)
                page.wait_for_function("([img, old]) => img.src !== old && img.naturalWidth > 0",
                                       arg=[image.element_handle(), old_src], timeout=pb.APP_MOVE_TIMEOUT * 1000)
                caption = app.locator(".pe-caption").first.text_content() or ""
                assert pb.shows_value(caption, after), f"slider {before!r} -> {after!r}, caption {caption!r}"
            except AssertionError as err:
                keyboard.append(f"app #{i}: {err}")
            app.screenshot(path=str(pb.SCREENSHOTS / f"nb7-{name[:2]}-app{i}.png"))
            try:  # a held key and a drag: at rest, the sharp render of what the controls read
                rest = pb.stress_app(page, app, check=pb.at_rest_problems)
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
        pb.shutdown_kernels(lab_server)  # the tab leaves JupyterLab: the next test's open_notebook reloads it
        pb.TIMINGS.append((f"Notebook 7 {name}", time.monotonic() - t0))
    assert not keyboard, ("Notebook 7: arrow keys on a focused slider did not move it (is pe_helpers.jupyter_settings "
                          "installed in this environment?), or the app at rest was not the sharp render of its "
                          "controls:\n  " + "\n  ".join(keyboard))


def _apps_notebook(root) -> str:  # noqa: ANN001
    """A notebook in the server's folder that shows every app of :data:`pe_helpers.apps.APPS`, one per cell."""
    import nbformat

    from pe_helpers.apps import APPS

    cells = [nbformat.v4.new_code_cell("from pe_helpers.apps import APPS")]
    cells += [nbformat.v4.new_code_cell(f"APPS[{name!r}]()") for name in APPS]
    name = "every_app.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), root / name)
    return name


def test_every_app_at_rest_shows_the_sharp_render_of_its_controls_in_jupyterlab(lab_server: pb.Server,
                                                                                lab_page: object) -> None:
    """Every app in JupyterLab, used as a class uses it: an arrow key held for a second on the first slider, a handle
    dragged across its whole range with another option clicked half-way. Once the hands stop (0.5 s without a new
    image), the app shows the full-resolution render (at least 2 px per CSS px) of exactly the values its controls
    read, pixel for pixel what a fresh app of those values draws (JupyterLab handles widget messages on a thread of
    its own: a figure drawn by two threads showed a blurred, stale or doubled image)."""
    from pe_helpers.apps import APPS

    page = lab_page
    name = _apps_notebook(lab_server.root)
    t0 = time.monotonic()
    problems: list[str] = []
    rests: list[pb.AtRest] = []
    try:
        page.set_viewport_size(pb.CLASSROOM_VIEWPORT)
        pb.show_file_browser(page)
        pb.open_notebook(page, lab_server, name)
        pb.collapse_lab_sidebars(page)
        pb.run_all(page)
        apps = list(pb.iter_apps(page, pb.ACTIVE_NOTEBOOK))
        assert len(apps) == len(APPS), f"{len(apps)} apps on the page, {len(APPS)} made"
        for i, (app, factory) in enumerate(zip(apps, APPS)):
            try:
                rest = pb.stress_app(page, app, check=pb.at_rest_problems)
            except AssertionError as err:
                problems.append(f"{factory}: {err}")
                continue
            rests.append(rest)
            app.screenshot(path=str(pb.SCREENSHOTS / f"lab-at-rest-{i}-{factory}.png"))
            problems += rest.problems
    except Exception:
        page.screenshot(path=str(pb.SCREENSHOTS / "lab-every-app-FAILED.png"))
        raise
    finally:
        pb.close_notebook(page, lab_server)
        slowest = max((r.rest_seconds for r in rests), default=0.0)
        pb.TIMINGS.append((f"JupyterLab every app held and dragged: {len(rests)} at rest, the slowest "
                           f"{slowest:.2f} s after the last input", time.monotonic() - t0))
    assert not problems, "apps at rest in JupyterLab:\n  " + "\n  ".join(problems)


#: The index of the notebook's active cell (Notebook 7 and JupyterLab mark it ``jp-mod-active``).
ACTIVE_CELL_JS = "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')).findIndex((c) => c.classList.contains('jp-mod-active'))"
