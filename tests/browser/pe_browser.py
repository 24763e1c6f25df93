"""Machinery for the browser tests: servers, Chromium, and what a student does in a page.

Everything here is plain functions so that both test files (JupyterLab, Voilà) and the
fixtures in ``conftest.py`` share one implementation:

* finding Chromium (skip outside CI with install advice, fail in CI);
* starting a server (``jupyter lab`` or Voilà) on 127.0.0.1, a free port and a random
  token, with its own config/settings/runtime folders, and stopping it whatever happens;
* preparing a throwaway copy of ``notebooks/`` (outputs cleared, so every number a test
  sees was produced in the browser, and the committed notebooks are never touched);
* the page actions: Run All in JupyterLab, waiting for the kernel, collecting error
  outputs, and moving one control of every slider app (``.pe-app``) like a person does:
  focus the slider handle, press ArrowRight, then wait (polling, never sleeping) until the
  app's image and its ``.pe-caption`` readout show the new value.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SCREENSHOTS = REPO / "build" / "screenshots"

#: Debian's Chromium (playwright's own browser download does not work offline).
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
INSTALL_HINT = "install it with `sudo apt-get install chromium` (Debian/Ubuntu), then re-run the tests"
#: Without the background-networking flags Chromium keeps dialling out, and the closed network refuses it.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
)
VIEWPORT = {"width": 1280, "height": 900}

#: Seconds; generous for a 2-core machine shared with other jobs.
SERVER_START_TIMEOUT = 90.0
NOTEBOOK_RUN_TIMEOUT = 150.0
APP_MOVE_TIMEOUT = 20.0

SETTINGS_MIME_WIDGET = "application/vnd.jupyter.widget-view+json"
STDERR_MIME = "application/vnd.jupyter.stderr"


# --------------------------------------------------------------------------- environment

def in_ci() -> bool:
    """True when the ``CI`` environment variable says so (``.ci/run`` sets ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def find_chromium() -> str | None:
    """Path of the system Chromium, or None. ``PE_CHROMIUM`` overrides the search."""
    override = os.environ.get("PE_CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    found = shutil.which("chromium")
    return found


def notebook_paths() -> list[Path]:
    """Every notebook in ``notebooks/``, in file-name order (collected when pytest starts)."""
    return sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("."))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def copy_notebooks(dest: Path, sources: Sequence[Path]) -> list[Path]:
    """Copy ``sources`` into ``dest`` with outputs, execution counts and widget state cleared.

    Clearing matters: the committed notebooks carry executed outputs, so without it a
    prompt ``[3]:`` or a figure in the page could be a stored one rather than one the
    browser just produced. The committed files are never opened for writing.
    """
    dest.mkdir(parents=True, exist_ok=True)
    copies = []
    for src in sources:
        nb = nbformat.read(src, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        nb.metadata.pop("widgets", None)
        target = dest / src.name
        nbformat.write(nb, target)
        copies.append(target)
    return copies


def raises_exception_cells(nb_path: Path) -> set[int]:
    """Indices (in ``nb.cells``) of cells tagged ``raises-exception``: their error is expected."""
    nb = nbformat.read(nb_path, as_version=4)
    return {i for i, c in enumerate(nb.cells) if "raises-exception" in c.get("metadata", {}).get("tags", [])}


# --------------------------------------------------------------------------- servers

@dataclass
class Server:
    """A running Jupyter/Voilà server: where it listens, its token, its process and log."""

    name: str
    port: int
    token: str
    process: subprocess.Popen
    log_path: Path
    root: Path
    started_in: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/", *, with_token: bool = True) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}" if with_token else f"{self.base}{path}"

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-n:])

    def api(self, method: str, path: str) -> object:
        """Call the REST API with the token in the Authorization header; JSON body or None."""
        req = urllib.request.Request(self.base + path, method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=15) as resp:  # noqa: S310 (127.0.0.1 only)
            body = resp.read()
        return json.loads(body) if body else None


def isolated_jupyter_env(home: Path) -> dict[str, str]:
    """Environment for a server whose config, settings, workspaces and runtime live under ``home``.

    The user's own ~/.jupyter, lab settings and IPython profile are never read or written.
    """
    env = dict(os.environ)
    for var in ("JUPYTER_TOKEN", "JUPYTER_CONFIG_PATH", "JUPYTER_PATH"):
        env.pop(var, None)
    dirs = {
        "JUPYTER_CONFIG_DIR": home / "config",
        "JUPYTER_DATA_DIR": home / "data",
        "JUPYTER_RUNTIME_DIR": home / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": home / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": home / "lab-workspaces",
        "IPYTHONDIR": home / "ipython",
    }
    for var, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env["PYTHONHASHSEED"] = "0"
    return env


def write_lab_settings(env: dict[str, str]) -> None:
    """Quiet, predictable JupyterLab: no news/update pop-ups, no build nag, every cell in the DOM."""
    config = Path(env["JUPYTER_CONFIG_DIR"])
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    # Page config read by jupyterlab's get_static_page_config (it wins over the defaults).
    (config / "labconfig" / "page_config.json").write_text(json.dumps({"buildCheck": False, "buildAvailable": False}))
    settings = Path(env["JUPYTERLAB_SETTINGS_DIR"])
    user_settings = {
        # No "Would you like to receive official Jupyter news?" and no update check.
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
        # Windowing off: every cell is attached to the DOM, so prompts and outputs can be read.
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        # The test saves explicitly; no autosave racing with it.
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    }
    for rel, value in user_settings.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


def lab_command(port: int, token: str, root: Path) -> list[str]:
    """``jupyter lab`` on 127.0.0.1 only, token auth, no browser, no news, no update check."""
    return [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",  # no PyPI queries from the extension manager
        *root_flag(),
    ]


def root_flag() -> list[str]:
    """``--allow-root`` when running as root (CI containers); Jupyter refuses to start otherwise."""
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def start_server(name: str, cmd: list[str], *, port: int, token: str, env: dict[str, str], cwd: Path,
                 log_path: Path, ready_path: str, root: Path) -> Server:
    """Start ``cmd`` in its own process group and poll ``ready_path`` until it answers 200.

    On failure the process is stopped and the error message carries the server log's tail.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "wb")  # noqa: SIM115 (kept open for the server's life; closed in stop_server)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(name=name, port=port, token=token, process=proc, log_path=log_path, root=root)
    server.extra["log"] = log
    deadline = t0 + SERVER_START_TIMEOUT
    url = server.url(ready_path)
    last = "no answer yet"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stop_server(server)
            raise RuntimeError(f"{name} exited with code {proc.returncode} while starting:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310
                if resp.status == 200:
                    server.started_in = time.monotonic() - t0
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
            last = repr(exc)
        time.sleep(0.25)  # polling interval while the server boots (not a wait for a result)
    stop_server(server)
    raise RuntimeError(f"{name} did not answer {ready_path} within {SERVER_START_TIMEOUT:.0f} s ({last}):\n"
                       f"{server.log_tail()}")


def shutdown_kernels(server: Server) -> None:
    """Delete every session and kernel through the REST API (best effort)."""
    with contextlib.suppress(Exception):
        for session in server.api("GET", "/api/sessions") or []:
            with contextlib.suppress(Exception):
                server.api("DELETE", f"/api/sessions/{session['id']}")
    with contextlib.suppress(Exception):
        for kernel in server.api("GET", "/api/kernels") or []:
            with contextlib.suppress(Exception):
                server.api("DELETE", f"/api/kernels/{kernel['id']}")


def stop_server(server: Server, *, grace: float = 15.0) -> None:
    """Stop the server's whole process group: SIGTERM, then SIGKILL after ``grace`` seconds."""
    proc = server.process
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    log = server.extra.pop("log", None)
    if log is not None:
        log.close()


def status_without_token(url: str) -> tuple[int, str]:
    """HTTP status (and Location header) of a GET without any token or cookie; redirects not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=15) as resp:
            return resp.status, resp.headers.get("Location", "")
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Location", "") if err.headers else ""


# --------------------------------------------------------------------------- Chromium

def launch_browser(playwright: object, chromium: str, user_data_dir: Path):  # noqa: ANN201
    """A headless Chromium context with a fresh profile in ``user_data_dir``."""
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=chromium,
        headless=True,
        args=list(CHROMIUM_ARGS),
        viewport=VIEWPORT,
        accept_downloads=False,
    )


# --------------------------------------------------------------------------- JupyterLab page

def _click_menu(page, menu: str, command: str) -> None:  # noqa: ANN001
    """Open a main-menu entry (e.g. "Run") and click the item bound to ``command``."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(rf"^\s*{re.escape(menu)}\s*$")).click()
    item = page.locator(f'.lm-Menu-item[data-command="{command}"]').first
    item.wait_for(state="visible", timeout=10_000)
    item.click()


def open_notebook(page, server: Server, name: str) -> None:  # noqa: ANN001
    """Open ``name`` in JupyterLab and wait until its kernel has started and is idle."""
    page.goto(server.url(f"/lab/tree/{name}"), wait_until="domcontentloaded")
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-Notebook .jp-Cell").first.wait_for(state="attached", timeout=60_000)
    wait_kernel_idle(page, timeout=60_000)


def wait_kernel_idle(page, *, timeout: float) -> None:  # noqa: ANN001
    """Wait for the notebook toolbar's execution indicator to report ``idle``."""
    page.wait_for_function(
        """() => {
            const el = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
            return el !== null && el.getAttribute('data-status') === 'idle';
        }""",
        timeout=timeout,
        polling=200,
    )


CELL_STATE_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    if (!panel) return null;
    const ind = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const cells = Array.from(panel.querySelectorAll('.jp-Notebook > .jp-Cell, .jp-WindowedPanel-viewport > .jp-Cell'));
    return {
        status: ind ? ind.getAttribute('data-status') : null,
        cells: cells.map((c) => {
            const isCode = c.classList.contains('jp-CodeCell');
            const prompt = isCode ? (c.querySelector('.jp-InputArea-prompt')?.innerText ?? '') : '';
            const outs = Array.from(c.querySelectorAll('.jp-OutputArea-output'));
            return {
                code: isCode,
                prompt: prompt.trim(),
                stderr: outs.filter((o) => o.getAttribute('data-mime-type') === '""" + STDERR_MIME + """')
                            .map((o) => o.innerText.slice(0, 2000)),
                widgets: outs.filter((o) => o.getAttribute('data-mime-type') === '""" + SETTINGS_MIME_WIDGET + """')
                             .map((o) => ({rendered: o.querySelector('.jupyter-widgets, .widget-box, .widget-inline-hbox') !== null,
                                           text: o.innerText.slice(0, 300)})),
            };
        }),
    };
}"""

EXECUTION_DONE_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const ind = panel?.querySelector('.jp-Notebook-ExecutionIndicator');
    if (!ind || ind.getAttribute('data-status') !== 'idle') return false;
    const prompts = Array.from(panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')).map((p) => p.innerText);
    return !prompts.some((p) => p.includes('*'));
}"""

RUN_STARTED_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const ind = panel?.querySelector('.jp-Notebook-ExecutionIndicator');
    const prompts = Array.from(panel?.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt') ?? []).map((p) => p.innerText);
    return (ind && ind.getAttribute('data-status') !== 'idle') || prompts.some((p) => /\\[(\\*|\\d+)\\]/.test(p));
}"""


def run_all(page) -> float:  # noqa: ANN001
    """Run → Run All Cells, as a person does; wait until the kernel is idle with nothing queued.

    JupyterLab marks every queued cell ``[*]`` when Run All is clicked, so "idle and no
    ``[*]`` left" means finished. If a cell raises (and is not tagged ``raises-exception``)
    the kernel aborts the rest and their prompts stay empty; the caller checks the prompts.
    Returns the seconds the run took.
    """
    t0 = time.monotonic()
    _click_menu(page, "Run", "runmenu:run-all")
    page.wait_for_function(RUN_STARTED_JS, timeout=30_000, polling=100)
    try:
        page.wait_for_function(EXECUTION_DONE_JS, timeout=NOTEBOOK_RUN_TIMEOUT * 1000, polling=250)
    except Exception as exc:  # noqa: BLE001 (playwright TimeoutError)
        raise TimeoutError(f"Run All did not finish within {NOTEBOOK_RUN_TIMEOUT:.0f} s; prompts: "
                           f"{[c['prompt'] for c in cell_states(page) if c['code']]}") from exc
    return time.monotonic() - t0


def cell_states(page) -> list[dict]:  # noqa: ANN001
    """Per DOM cell: is it code, its prompt text, its stderr outputs and widget outputs."""
    state = page.evaluate(CELL_STATE_JS)
    return state["cells"] if state else []


def save_notebook(page, path: Path, *, timeout: float = 30.0) -> dict:  # noqa: ANN001
    """File → Save Notebook, then poll the file on disk until the saved version is there."""
    before = path.stat().st_mtime_ns
    _click_menu(page, "File", "docmanager:save")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.stat().st_mtime_ns != before:
            with contextlib.suppress(json.JSONDecodeError, OSError):
                return json.loads(path.read_text())
        page.wait_for_timeout(200)  # polling the disk, the condition is checked each round
    raise TimeoutError(f"{path.name} was not saved within {timeout:.0f} s")


# --------------------------------------------------------------------------- slider apps

@dataclass
class AppMove:
    """What happened when one control of one app was moved."""

    index: int
    control: str
    old_value: str
    new_value: str
    old_caption: str
    new_caption: str
    seconds: float
    screenshot: Path | None = None


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (``3``, ``-0.25``, ``4.712e+04``)."""
    out = []
    for match in NUMBER.findall(text):
        with contextlib.suppress(ValueError):
            out.append(float(match))
    return out


def shows_value(caption: str, value: str) -> bool:
    """Does ``caption`` show the control's new readout ``value`` (as text or as the same number)?"""
    if value and re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", caption):
        return True
    try:
        target = float(value)
    except ValueError:
        return False
    tol = max(abs(target) * 1e-6, 1e-9)
    return any(abs(n - target) <= tol for n in numbers_in(caption))


def app_locators(page):  # noqa: ANN001, ANN201
    """Every slider app in the page: the VBoxes with the ``pe-app`` class."""
    return page.locator(".pe-app")


def move_app_control(page, app, index: int, shot: Path | None = None) -> AppMove:  # noqa: ANN001
    """Move the app's first slider one step like a person, and wait until the app shows it.

    Focus the slider handle, press ArrowRight (ArrowLeft when it sits at its maximum), then
    wait (polling in the page) until the image's ``src`` changed AND the caption changed AND
    the caption shows the slider's new readout value. A kernel-side exception in the
    callback leaves the image and caption as they were, so the wait times out and fails.
    """
    slider = app.locator(".widget-slider").first
    if slider.count() == 0:
        raise AssertionError(f"app #{index} has no slider control (expected one IntSlider/FloatSlider/SelectionSlider)")
    label = (slider.locator(".widget-label").first.inner_text() or "").strip() if slider.locator(".widget-label").count() else "?"
    handle = slider.locator(".noUi-handle").first
    readout = slider.locator(".widget-readout").first
    image = app.locator("img").first
    caption = app.locator(".pe-caption").first
    image.wait_for(state="attached", timeout=10_000)
    handle.scroll_into_view_if_needed()
    # The kernel has drawn the first frame before we touch anything.
    page.wait_for_function("(img) => img.src && img.src.startsWith('blob:') && img.naturalWidth > 0",
                           arg=image.element_handle(), timeout=APP_MOVE_TIMEOUT * 1000, polling=100)
    old_src = image.get_attribute("src")
    old_caption = caption.inner_text().strip()
    old_value = readout.inner_text().strip()
    now = handle.get_attribute("aria-valuenow")
    high = handle.get_attribute("aria-valuemax")
    key = "ArrowLeft" if now is not None and high is not None and float(now) >= float(high) else "ArrowRight"
    t0 = time.monotonic()
    handle.focus()
    page.keyboard.press(key)
    try:
        page.wait_for_function(
            """([img, cap, out, oldSrc, oldCap, oldVal]) =>
                img.src !== oldSrc && img.naturalWidth > 0
                && out.innerText.trim() !== oldVal && cap.innerText.trim() !== oldCap""",
            arg=[image.element_handle(), caption.element_handle(), readout.element_handle(),
                 old_src, old_caption, old_value],
            timeout=APP_MOVE_TIMEOUT * 1000,
            polling=50,
        )
    except Exception as exc:  # noqa: BLE001 (playwright TimeoutError) -> fail with what the page shows
        raise AssertionError(
            f"app #{index}: after {key} on slider {label!r} the app did not update within {APP_MOVE_TIMEOUT:.0f} s: "
            f"readout {old_value!r} -> {readout.inner_text().strip()!r}, image changed="
            f"{image.get_attribute('src') != old_src}, caption {old_caption!r} -> {caption.inner_text().strip()!r}"
        ) from exc
    seconds = time.monotonic() - t0
    new_value = readout.inner_text().strip()
    new_caption = caption.inner_text().strip()
    if not shows_value(new_caption, new_value):
        raise AssertionError(f"app #{index}: slider {label!r} now reads {new_value!r} but the caption does not show it: "
                             f"{new_caption!r}")
    if shot is not None:
        shot.parent.mkdir(parents=True, exist_ok=True)
        app.screenshot(path=str(shot))
    return AppMove(index, label, old_value, new_value, old_caption, new_caption, seconds, shot)


def iter_apps(page) -> Iterator:  # noqa: ANN001
    """Locators of each ``.pe-app`` in the page, in document order."""
    apps = app_locators(page)
    for i in range(apps.count()):
        yield apps.nth(i)
