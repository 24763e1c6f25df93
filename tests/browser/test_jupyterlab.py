"""Every notebook and every slider app, used the way a class uses them: in JupyterLab, in Chromium.

Per notebook (one test each, one JupyterLab server for the session): open it, Run → Run All
Cells, wait until the kernel is idle and every code cell shows its number, save, then assert
that no cell shows an error (cells tagged ``raises-exception`` may show the error they teach)
and that every widget rendered. Then, for every slider app in the page (``.pe-app``), move its
first slider with the keyboard and wait until the image and the caption show the new value.
Screenshots go to build/screenshots/ (git-ignored; CI keeps the folder).
"""

from __future__ import annotations

import time
import urllib.request

import pytest

import pe_browser as pb

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


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
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
        pb.open_notebook(page, lab_server, name)
        opened = time.monotonic() - t0
        ran = pb.run_all(page)
        saved = pb.save_notebook(page, copy)
        problems += pb.notebook_problems(saved, pb.cell_states(page), allowed)
        page.screenshot(path=str(pb.SCREENSHOTS / f"lab-{stem}.png"))
        apps = list(pb.iter_apps(page, pb.ACTIVE_NOTEBOOK))
        if pb.imports_apps(saved) and not apps:
            problems.append("the notebook imports pe_helpers.apps but after Run All the page shows no slider app "
                            "(.pe-app): none rendered, or a later cell closed it (app.close() removes it from the page)")
        for i, app in enumerate(apps):
            try:
                moves.append(pb.move_app_control(page, app, i, pb.SCREENSHOTS / f"lab-{stem}-app{i}.png"))
            except AssertionError as err:
                problems.append(str(err))
    except Exception:
        page.screenshot(path=str(pb.SCREENSHOTS / f"lab-{stem}-FAILED.png"))
        raise
    finally:
        pb.close_notebook(page, lab_server)  # its kernel goes too: the CPU is free for the next notebook
        pb.TIMINGS.append((_timing_line(name, opened, ran, moves), time.monotonic() - t0))
    assert not problems, f"{name} in JupyterLab:\n  " + "\n  ".join(problems)
