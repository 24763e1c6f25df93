"""Fixtures for the browser tests: Chromium, one JupyterLab server for all notebooks, Voilà.

* ``chromium``: the system Chromium's path. Missing -> skip with install advice, or fail
  when ``CI=true`` (CI must not silently skip the browser part).
* ``notebook_copies``: a temp copy of ``notebooks/`` with outputs cleared (the committed
  notebooks are never opened by a server).
* ``lab_server``: one ``jupyter lab`` for test_jupyterlab.py, on 127.0.0.1, a free port, a
  random token, config/settings/runtime folders of its own (no news pop-up, no build nag, no update check); stopped when the
  module is done, whatever happens, its kernels shut down first.
* ``voila_server``: ``make present`` as a teacher runs it, on a one-cell notebook (free port,
  random token), for test_voila.py.
* ``browser``: one headless Chromium (fresh profile) for the session; ``lab_page``: one
  JupyterLab tab for all notebooks; ``page``: a new tab per test, closed afterwards.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pe_helpers.testing import browser as pb


def pytest_configure(config: pytest.Config) -> None:
    # Every test module here sets `pytestmark = pytest.mark.browser`: `-m "not browser"` is a quick run.
    config.addinivalue_line("markers", "browser: runs JupyterLab/Voilà in headless Chromium (tests/browser/)")


_WALL: list[float] = []  # monotonic start of the first browser test, end of the latest one


@pytest.fixture(autouse=True)
def _browser_wall_time() -> Iterator[None]:
    """Measures the browser part's wall time (this conftest only applies to tests/browser/)."""
    if not _WALL:
        _WALL[:] = [time.monotonic(), time.monotonic()]
    yield
    _WALL[1] = time.monotonic()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The timings also go to a file beside the screenshots: under xdist the summary below is printed by the
    controller, which ran no browser test, so ``make test`` shows none."""
    if pb.TIMINGS or _WALL:
        lines = [f"{seconds:7.1f} s  {what}" for what, seconds in pb.TIMINGS]
        if _WALL:
            lines.append(f"{_WALL[1] - _WALL[0]:7.1f} s  browser part in all (wall time)")
        with contextlib.suppress(OSError):
            pb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            (pb.SCREENSHOTS / "browser-timings.txt").write_text("\n".join(lines) + "\n")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    if pb.TIMINGS or _WALL:
        terminalreporter.section("browser timings")
        for what, seconds in pb.TIMINGS:
            terminalreporter.write_line(f"{seconds:7.1f} s  {what}")
        if _WALL:
            terminalreporter.write_line(f"{_WALL[1] - _WALL[0]:7.1f} s  browser part in all (wall time)")


def _missing(what: str, hint: str = pb.INSTALL_HINT) -> None:
    message = f"{what}; {hint}"
    if pb.in_ci():
        pytest.fail(f"CI=true and {message}. The browser tests must run in CI.", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of Debian's Chromium (and playwright importable), else skip/fail as documented."""
    path = pb.find_chromium()
    if path is None:
        _missing("Chromium is not installed (looked for /usr/bin/chromium and `chromium` on PATH; PE_CHROMIUM overrides)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the Python package playwright is missing", "it is in requirements.lock: `make test` installs it")
    return path


@pytest.fixture(scope="session")
def browser_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session folder for server homes, logs, the notebook copy and the browser profile."""
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="session")
def notebook_copies(browser_home: Path) -> Path:
    """A copy of notebooks/ (outputs cleared) that the servers use as their root."""
    root = browser_home / "notebooks"
    pb.copy_notebooks(root, pb.notebook_paths())
    return root


#: The Chinese notebook JupyterLab also opens, copied beside the English ones under this prefix.
ZH_PREFIX = "zh-"


@pytest.fixture(scope="session")
def lab_notebooks(browser_home: Path) -> Path:
    """The notebooks as people open them (stored figures and widget state kept, execution counts cleared),
    plus ``zh-03_*.ipynb``, the Chinese edition of notebook 03: the root of the JupyterLab server."""
    root = browser_home / "lab-notebooks"
    pb.copy_notebooks_with_outputs(root, pb.notebook_paths())
    pb.copy_notebooks_with_outputs(root, sorted((pb.NOTEBOOKS / "zh").glob("03_*.ipynb")), prefix=ZH_PREFIX)
    return root


@pytest.fixture(scope="module")
def lab_server(chromium: str, browser_home: Path, lab_notebooks: Path) -> Iterator[pb.Server]:
    """One JupyterLab for all the notebooks (module scope: stopped, whatever happens, as soon as
    test_jupyterlab.py is done, so it does not idle through the nbval run that follows). The same server
    serves Notebook 7 (``/notebooks/NAME``): the ``notebook`` package is a server extension of it."""
    env = pb.isolated_jupyter_env(browser_home / "lab-home")
    pb.write_lab_settings(env)
    port, token = pb.free_port(), secrets.token_hex(24)
    server = pb.start_server(
        "jupyter lab", pb.lab_command(port, token, lab_notebooks), port=port, token=token, env=env,
        cwd=lab_notebooks, log_path=browser_home / "jupyter-lab.log", ready_path="/api/status",
        root=lab_notebooks,
    )
    pb.TIMINGS.append(("JupyterLab server start", server.started_in))
    try:
        yield server
    finally:
        pb.shutdown_kernels(server)
        pb.stop_server(server)


@pytest.fixture(scope="session")
def browser(chromium: str, browser_home: Path) -> Iterator[object]:
    """One headless Chromium context (fresh profile) for the session."""
    from playwright.sync_api import sync_playwright

    t0 = time.monotonic()
    manager = sync_playwright().start()
    try:
        context = pb.launch_browser(manager, chromium, browser_home / "chromium-profile")
        context.set_default_timeout(30_000)
        pb.TIMINGS.append(("Chromium start", time.monotonic() - t0))
        try:
            yield context
        finally:
            context.close()
    finally:
        manager.stop()


@pytest.fixture(scope="module")
def lab_page(browser: object, lab_server: pb.Server) -> Iterator[object]:
    """One JupyterLab tab for every notebook of test_jupyterlab.py (no app reload per notebook)."""
    tab = browser.new_page()
    try:
        pb.open_lab(tab, lab_server)
        yield tab
    finally:
        tab.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    """A fresh tab; closed after the test. Console errors are kept on ``page.console_errors``."""
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
    tab.console_errors = errors
    try:
        yield tab
    finally:
        tab.close()


#: The one-cell notebook test_voila.py presents: the launcher's own checks (token, Host, printed URL) do not depend
#: on the deck, and a real one would run its whole notebook a fifth time (every deck runs in test_slides.py).
SERVER_CHECK_NOTEBOOK = "01_server_check.ipynb"


@pytest.fixture(scope="module")
def voila_server(chromium: str, browser_home: Path) -> Iterator[pb.Server]:
    """``make present NB=01 NB_DIR=...`` on a one-cell notebook (a free port, a random token); stopped at the end."""
    import nbformat

    if shutil.which("make") is None:
        _missing_make()
    folder = browser_home / "voila-notebooks"
    folder.mkdir(exist_ok=True)
    notebook = folder / SERVER_CHECK_NOTEBOOK
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# The launcher's own checks")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, notebook)
    env = pb.isolated_jupyter_env(browser_home / "voila-home")
    port, token = pb.free_port(), secrets.token_hex(24)
    server = pb.start_server(
        f"make present NB={notebook.name[:2]}", pb.present_command(notebook, port, token), port=port, token=token,
        env=env, cwd=pb.REPO, log_path=browser_home / "voila.log", ready_path="/", root=folder,
        ready_with_token=False, ready_status=(302, 403),
    )
    server.extra["notebook"] = notebook
    pb.TIMINGS.append((f"Voilà server start ({notebook.name})", server.started_in))
    try:
        yield server
    finally:
        pb.stop_server(server)


def _missing_make() -> None:
    _missing("`make` is not installed (the present mode is `make present NB=03`)", "install it with `sudo apt-get install make`")
