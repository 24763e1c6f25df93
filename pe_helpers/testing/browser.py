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

import base64
import contextlib
import html
import io
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
import weakref
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

#: The notebook on screen in JupyterLab (hidden panels are ignored).
ACTIVE_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
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
    return shutil.which("chromium")


def notebook_paths() -> list[Path]:
    """Every notebook in ``notebooks/``, in file-name order (collected when pytest starts)."""
    return sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("."))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def copy_notebooks(dest: Path, sources: Sequence[Path], *, keep_outputs: bool = False, prefix: str = "") -> list[Path]:
    """Copy ``sources`` into ``dest`` (as ``prefix + name``) with outputs, execution counts and widget state cleared.

    Clearing matters: the committed notebooks carry executed outputs, so without it a
    prompt ``[3]:`` or a figure in the page could be a stored one rather than one the
    browser just produced. The committed files are never opened for writing.
    ``keep_outputs=True`` keeps the outputs and widget state and clears only the execution counts.
    """
    dest.mkdir(parents=True, exist_ok=True)
    copies = []
    for src in sources:
        nb = nbformat.read(src, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.execution_count = None
                for out in cell.outputs if keep_outputs else ():
                    if "execution_count" in out:
                        out["execution_count"] = None
                if not keep_outputs:
                    cell.outputs = []
        if not keep_outputs:
            nb.metadata.pop("widgets", None)
        target = dest / f"{prefix}{src.name}"
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
        lines = [line for line in lines if "favicon.ico" not in line]  # the page asks for it on every slide
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
    # MPLBACKEND=Agg comes from `make test` (for nbval); a student's kernel has none (inline plots).
    for var in ("JUPYTER_TOKEN", "JUPYTER_CONFIG_PATH", "JUPYTER_PATH", "MPLBACKEND"):
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
        # Closing a notebook tab shuts its kernel down (the CPU goes to the next notebook).
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none", "kernelShutdown": True},
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
                 log_path: Path, ready_path: str, root: Path, ready_with_token: bool = True,
                 ready_status: tuple[int, ...] = (200,)) -> Server:
    """Start ``cmd`` in its own process group and poll ``ready_path`` until it answers ``ready_status``.

    (Voilà is probed *without* the token: its 302 to the login page proves it listens,
    while an authorised ``GET /`` would already execute the notebook.)
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
    url = server.url(ready_path, with_token=ready_with_token)
    last = "no answer yet"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stop_server(server)
            raise RuntimeError(f"{name} exited with code {proc.returncode} while starting:\n{server.log_tail()}")
        try:
            status, _ = http_status(url)
            if status in ready_status:
                server.started_in = time.monotonic() - t0
                return server
            last = f"HTTP {status}"
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


def http_status(url: str) -> tuple[int, str]:
    """HTTP status and Location header of a plain GET (no cookie, redirects not followed)."""

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


def open_lab(page, server: Server, *, timeout: float = 90.0) -> None:  # noqa: ANN001
    """Load JupyterLab in ``page`` with the default workspace (``?reset``) and wait for the file browser."""
    page.goto(server.url("/lab?reset"), wait_until="domcontentloaded")
    page.locator(".jp-DirListing-item").first.wait_for(state="visible", timeout=timeout * 1000)


def open_notebook(page, server: Server, name: str, *, timeout: float = 90.0) -> None:  # noqa: ANN001
    """Double-click ``name`` in JupyterLab's file browser; wait until its kernel is started, connected, idle.

    One JupyterLab page serves every notebook (no app reload per notebook); if the page is not
    a clean JupyterLab (first use, or a previous test left a dialog or a notebook open) it is
    reloaded with the default workspace first.
    The toolbar's indicator says ``idle`` for a moment *before* the kernel exists (then
    ``connecting``, then ``idle`` again), so it alone is not enough: the server must also
    report a session for this notebook whose kernel is idle with the page connected to it.
    """
    clean = page.url.startswith(server.base + "/lab") and page.evaluate(
        "() => !document.querySelector('.jp-Dialog') && !document.querySelector('.jp-NotebookPanel')"
        " && !!document.querySelector('.jp-DirListing-item')")
    if not clean:
        open_lab(page, server, timeout=timeout)
    item = page.locator(".jp-DirListing-item").filter(
        has=page.locator(".jp-DirListing-itemText", has_text=re.compile(rf"^{re.escape(name)}$")))
    item.dblclick()
    panel = page.locator(ACTIVE_NOTEBOOK)
    panel.locator(".jp-Notebook .jp-Cell").first.wait_for(state="attached", timeout=timeout * 1000)
    deadline = time.monotonic() + timeout
    seen = "no session yet"
    while time.monotonic() < deadline:
        kernel = _kernel_of(server, name)
        if kernel is not None:
            seen = f"kernel {kernel.get('execution_state')}, {kernel.get('connections')} connection(s)"
            if kernel.get("execution_state") == "idle" and kernel.get("connections", 0) >= 1 and page.evaluate(
                """() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator')
                              ?.getAttribute('data-status') === 'idle'"""
            ):
                return
        page.wait_for_timeout(200)  # polling interval; the condition above is what we wait for
    raise TimeoutError(f"the kernel of {name} was not ready within {timeout:.0f} s ({seen})")


def close_notebook(page, server: Server) -> None:  # noqa: ANN001
    """File → Close Tab (the kernel shuts down with it); reload JupyterLab if that does not work."""
    with contextlib.suppress(Exception):
        if page.locator(ACTIVE_NOTEBOOK).count() and not page.locator(".jp-Dialog").count():
            _click_menu(page, "File", "application:close")
            page.wait_for_function("() => !document.querySelector('.jp-NotebookPanel') || !!document.querySelector('.jp-Dialog')",
                                   timeout=10_000, polling=100)
    shutdown_kernels(server)
    if page.locator(".jp-Dialog").count() or page.locator(".jp-NotebookPanel").count():
        with contextlib.suppress(Exception):
            open_lab(page, server)


def _kernel_of(server: Server, name: str) -> dict | None:
    """The REST model of the kernel attached to notebook ``name`` (None if there is none yet)."""
    with contextlib.suppress(Exception):
        for session in server.api("GET", "/api/sessions") or []:
            if session.get("path", "").split("/")[-1] == name and session.get("kernel"):
                return session["kernel"]
    return None


CELL_STATE_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    if (!panel) return null;
    const ind = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const cells = Array.from(panel.querySelectorAll('.jp-Notebook .jp-Cell'));
    return {
        status: ind ? ind.getAttribute('data-status') : null,
        cells: cells.map((c) => {
            const isCode = c.classList.contains('jp-CodeCell');
            // textContent, not innerText: a collapsed input (solution cells) still has its prompt.
            const prompt = isCode ? (c.querySelector('.jp-InputArea-prompt')?.textContent ?? '') : '';
            const outs = Array.from(c.querySelectorAll('.jp-OutputArea-output'));
            return {
                code: isCode,
                prompt: prompt.trim(),
                stderr: outs.filter((o) => o.getAttribute('data-mime-type') === '""" + STDERR_MIME + """')
                            .map((o) => o.textContent.slice(0, 2000)),
                widgets: outs.filter((o) => o.querySelector('.jupyter-widgets') !== null).length,
                // Outputs with no MIME type and no widget: a widget that fell back to text, or was closed.
                bare: outs.filter((o) => !o.getAttribute('data-mime-type') && o.querySelector('.jupyter-widgets') === null)
                          .map((o) => o.textContent.trim().slice(0, 300)),
                widgetErrors: outs.map((o) => o.textContent)
                                  .filter((t) => /Error displaying widget|Error rendering output item/.test(t))
                                  .map((t) => t.slice(0, 300)),
                apps: c.querySelectorAll('.pe-app').length,
            };
        }),
    };
}"""

EXECUTION_DONE_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const ind = panel?.querySelector('.jp-Notebook-ExecutionIndicator');
    if (!ind || ind.getAttribute('data-status') !== 'idle') return false;
    const prompts = Array.from(panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')).map((p) => p.textContent);
    return !prompts.some((p) => p.includes('*'));
}"""

RUN_STARTED_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const prompts = Array.from(panel?.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt') ?? []).map((p) => p.textContent);
    return prompts.some((p) => /\\[(\\*|\\d+)\\]/.test(p));
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
    try:
        page.wait_for_function(RUN_STARTED_JS, timeout=30_000, polling=100)
    except Exception as exc:  # noqa: BLE001 (playwright TimeoutError)
        raise TimeoutError("Run All Cells was clicked but no cell was queued or run within 30 s") from exc
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
    tried: list[str] = field(default_factory=list)


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
    if value and re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", caption, re.I):
        return True
    try:
        target = float(value)
    except ValueError:
        return False
    tol = max(abs(target) * 1e-6, 1e-9)
    return any(abs(n - target) <= tol for n in numbers_in(caption))


def wait_caption_shows(app, value: str, *, timeout: float = APP_MOVE_TIMEOUT) -> str:  # noqa: ANN001
    """Wait (at most ``timeout``) until an app's caption shows the control readout ``value``; return the caption.
    The kernel writes the caption before the image, so an image that changed first was drawn for something else
    (a view reporting its width)."""
    caption = app.locator(".pe-caption").first
    deadline = time.monotonic() + timeout
    while True:
        text = caption.text_content() or ""
        if shows_value(text, value) or time.monotonic() > deadline:
            return text
        app.page.wait_for_timeout(50)


#: Watches the notebook's execution indicator: the kernel goes busy, then idle, for every
#: widget message it handles. "busy then idle, and 1.5 s later the image is unchanged" means
#: the kernel handled the move and the figure did not depend on that control.
WATCH_KERNEL_JS = """() => {
    const ind = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator')
             ?? document.querySelector('.jp-Notebook-ExecutionIndicator');
    const w = {busy: false, idleAt: 0};
    window.__peWatch = w;
    if (window.__peObserver) window.__peObserver.disconnect();
    if (!ind) return false;
    window.__peObserver = new MutationObserver(() => {
        const status = ind.getAttribute('data-status');
        if (status === 'busy') { w.busy = true; w.idleAt = 0; }
        else if (status === 'idle' && w.busy) { w.idleAt = performance.now(); }
    });
    window.__peObserver.observe(ind, {attributes: true, attributeFilter: ['data-status']});
    return true;
}"""

MOVE_OUTCOME_JS = """([img, cap, oldSrc, oldCap, settle]) => {
    const imageChanged = img.src !== oldSrc && img.naturalWidth > 0;
    const captionChanged = cap.textContent.trim() !== oldCap;
    if (imageChanged && captionChanged) return 'changed';
    const w = window.__peWatch;
    if (w && w.idleAt && performance.now() - w.idleAt > settle) return imageChanged ? 'image-only' : 'no-effect';
    return false;
}"""

#: Try the controls in this order: sliders (the keyboard on the handle), then the others.
CONTROL_KINDS = (
    ("slider", ".widget-slider"),
    ("dropdown", ".widget-dropdown"),
    ("toggle buttons", ".widget-toggle-buttons"),
    ("checkbox", ".widget-checkbox"),
)
NO_EFFECT_TIMEOUT = 8.0  # s without any sign of the kernel before trying the next control
SETTLE_MS = 1500  # ms after the kernel went idle for a late image to arrive


def _control_label(control) -> str:  # noqa: ANN001
    label = control.locator(".widget-label").first
    text = label.text_content() if label.count() else ""
    return (text or "?").strip()


def _act(page, kind: str, control) -> tuple[str, str, str]:  # noqa: ANN001
    """Do what a person does to ``control``; return (what was done, value before, value after)."""
    if kind == "slider":
        handle = control.locator(".noUi-handle").first
        now, high = handle.get_attribute("aria-valuenow"), handle.get_attribute("aria-valuemax")
        key = "ArrowLeft" if now is not None and high is not None and float(now) >= float(high) else "ArrowRight"
        before, after = press_on_slider(page, control, key)
        return f"{key} on the slider handle", before, after
    if kind == "dropdown":
        select = control.locator("select").first
        options = select.locator("option").all_inner_texts()
        before = select.evaluate("(s) => s.options[s.selectedIndex]?.text ?? ''")
        index = select.evaluate("(s) => s.selectedIndex")
        target = (index + 1) % max(len(options), 1)
        select.select_option(index=target)
        return "choose the next option", before.strip(), options[target].strip()
    if kind == "toggle buttons":
        buttons = control.locator("button")
        before = control.locator("button.mod-active").first.inner_text().strip() if control.locator("button.mod-active").count() else ""
        for i in range(buttons.count()):
            if "mod-active" not in (buttons.nth(i).get_attribute("class") or ""):
                text = buttons.nth(i).inner_text().strip()
                buttons.nth(i).click()
                return f"click {text!r}", before, text
        raise AssertionError("toggle buttons without an inactive button")
    box = control.locator("input[type=checkbox]").first
    before = "checked" if box.is_checked() else "unchecked"
    box.click()
    return "click the checkbox", before, "checked" if box.is_checked() else "unchecked"


def move_app_control(page, app, index: int, shot: Path | None = None) -> AppMove:  # noqa: ANN001
    """Move one control of the app like a person, and wait until the app shows the change.

    Sliders first: focus the handle, press ArrowRight (ArrowLeft at the maximum). Then wait,
    polling in the page, until the image's ``src`` AND the caption (``.pe-caption``) changed;
    for a slider the caption must also show the slider's new readout value. If the kernel
    handled the move (busy, then idle) and the figure stayed the same, that control does not
    matter in the app's current state (e.g. a seed used only by another option): try the next
    control (other sliders, then dropdowns, toggle buttons, checkboxes). Fails when no control
    changes the app, when the image changes without the caption, or when the kernel never
    answers (a callback exception leaves image and caption stale, so it fails too).
    """
    image = app.locator("img").first
    caption = app.locator(".pe-caption").first
    if caption.count() == 0:
        raise AssertionError(f"app #{index} has no .pe-caption readout")
    image.wait_for(state="attached", timeout=10_000)
    app.scroll_into_view_if_needed()
    # The first frame is drawn before anything is touched.
    page.wait_for_function("(img) => img.src && img.naturalWidth > 0", arg=image.element_handle(),
                           timeout=APP_MOVE_TIMEOUT * 1000, polling=100)
    candidates = [(kind, app.locator(sel).nth(i)) for kind, sel in CONTROL_KINDS for i in range(app.locator(sel).count())]
    # A disabled control (e.g. 01's seed while the order is not "random") is meant not to move: a person cannot use it.
    candidates = [(kind, c) for kind, c in candidates
                  if not c.locator("[disabled], .noUi-target[disabled], .mod-disabled").count()]
    if not candidates:
        raise AssertionError(f"app #{index} has no control the test knows how to move (slider/dropdown/toggle/checkbox)")
    tried: list[str] = []
    for n, (kind, control) in enumerate(candidates):
        last = n == len(candidates) - 1
        label = _control_label(control)
        wait_sharp(page, image)
        old_src = image.get_attribute("src")
        old_caption = caption.text_content().strip()
        page.evaluate(WATCH_KERNEL_JS)
        t0 = time.monotonic()
        action, old_value, new_value = _act(page, kind, control)
        limit = APP_MOVE_TIMEOUT if last else NO_EFFECT_TIMEOUT
        try:
            handle = page.wait_for_function(
                MOVE_OUTCOME_JS, arg=[image.element_handle(), caption.element_handle(), old_src, old_caption, SETTLE_MS],
                timeout=limit * 1000, polling=50)
            outcome = handle.json_value()
        except Exception:  # noqa: BLE001 (playwright TimeoutError): no answer in time
            outcome = "no answer"
        seconds = time.monotonic() - t0
        new_caption = caption.text_content().strip()
        tried.append(f"{kind} {label!r}: {action}, {old_value!r} -> {new_value!r}: {outcome} after {seconds:.1f} s")
        if outcome == "changed":
            if kind == "slider" and not shows_value(new_caption, new_value):
                raise AssertionError(f"app #{index}: slider {label!r} now reads {new_value!r} but the caption does "
                                     f"not show it: {new_caption!r}")
            if shot is not None:  # the figure as it rests: the full-resolution image
                wait_sharp(page, image)
                shot.parent.mkdir(parents=True, exist_ok=True)
                app.screenshot(path=str(shot))
            return AppMove(index, label, old_value, new_value, old_caption, new_caption, seconds, shot, tried)
        if outcome == "image-only":
            raise AssertionError(f"app #{index}: {kind} {label!r} ({old_value!r} -> {new_value!r}) changed the image "
                                 f"but the caption still reads {new_caption!r}")
        if outcome == "no answer" and last:
            break
    raise AssertionError(f"app #{index}: no control changed the app's image and caption (an exception in the app's "
                         "callback leaves the figure stale; JupyterLab shows it in the log console). Tried:\n    "
                         + "\n    ".join(tried) + f"\n  caption: {caption.text_content().strip()!r}")


def iter_apps(page, scope: str = "") -> Iterator:  # noqa: ANN001
    """Locators of each ``.pe-app`` in the page (inside the CSS ``scope`` if given), in document order."""
    apps = page.locator(f"{scope} .pe-app".strip())
    for i in range(apps.count()):
        yield apps.nth(i)



# --------------------------------------------------------------------------- verdicts

ERROR_TEXT = re.compile(r"Traceback \(most recent call last\)|^\s*[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b", re.M)


def _cell_label(index: int, cell: dict) -> str:
    first = "".join(cell.get("source", "")).strip().splitlines()
    return f"cell {index} ({first[0][:60]!r})" if first else f"cell {index}"


def notebook_problems(saved: dict, dom_cells: list[dict], allowed: set[int]) -> list[str]:
    """Everything wrong with a notebook run in the browser, as sentences (empty = all good).

    ``saved`` is the notebook as JupyterLab saved it after Run All, ``dom_cells`` what the
    page shows (:func:`cell_states`), ``allowed`` the ``raises-exception`` cells.
    Checked: every code cell ran (prompt ``[n]:``, counts 1..n in order); no error output
    outside ``allowed`` cells (in the saved file, and no traceback-looking stderr in the page);
    every widget output is rendered as a widget (not as text, not "Error displaying widget").
    """
    problems: list[str] = []
    cells = saved["cells"]
    if len(cells) != len(dom_cells):
        return [f"the page shows {len(dom_cells)} cells but the saved notebook has {len(cells)}"]
    counts = []
    for i, (cell, dom) in enumerate(zip(cells, dom_cells)):
        if cell["cell_type"] != "code":
            continue
        label = _cell_label(i, cell)
        hidden = cell.get("metadata", {}).get("jupyter", {}).get("source_hidden", False)
        if not re.fullmatch(r"\[\d+\]:?", dom["prompt"]) and not (hidden and dom["prompt"] == ""):
            problems.append(f"{label} did not run (prompt {dom['prompt']!r})")  # hidden inputs show no prompt
        counts.append(cell.get("execution_count"))
        if i in allowed:
            continue
        errors = [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]
        for out in errors:
            problems.append(f"{label} raised {out.get('ename')}: {out.get('evalue')}")
        for text in dom["stderr"] if not errors else []:  # an error the saved file does not have
            if ERROR_TEXT.search(text):
                problems.append(f"{label} shows an error in the page: {text.strip()[:300]!r}")
        for text in dom["widgetErrors"]:
            problems.append(f"{label} shows a broken widget: {text.strip()!r}")
        expected = sum(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))
        if dom["widgets"] < expected:
            shown = [t for t in dom["bare"] if t]
            if shown:
                problems.append(f"{label} shows {shown[0]!r} instead of its widget (the widget did not render)")
            else:
                problems.append(f"{label}: its widget is gone from the page after Run All (a later cell closed it, "
                                f"e.g. app.close()), so a student who runs all cells sees no app there")
    if counts != list(range(1, len(counts) + 1)):
        problems.append(f"execution counts are {counts}, not 1..{len(counts)} in order")
    return problems


def imports_apps(saved: dict) -> bool:
    """Does the notebook import a slider app (``from pe_helpers.apps import ...`` or ``pe_helpers.apps``)?"""
    pattern = re.compile(r"pe_helpers\.apps\b|from\s+pe_helpers\s+import\s+[^\n]*\bapps\b")
    return any(cell["cell_type"] == "code" and pattern.search("".join(cell.get("source", "")))
               for cell in saved["cells"])


#: (what, seconds) for the end-of-session timing summary printed by conftest.
TIMINGS: list[tuple[str, float]] = []


# --------------------------------------------------------------------------- Voilà (make present)

def present_command(notebook: Path, port: int, token: str) -> list[str]:
    """``make present NB=..`` exactly as a teacher types it, on a given port/token and notebook folder.

    ``-o .venv/.installed`` tells make not to re-run the bootstrap from inside a test run
    (``make test`` has just done it).
    """
    number = notebook.name.split("_", 1)[0]
    return ["make", "--no-print-directory", "-C", str(REPO), "-o", ".venv/.installed", "present",
            f"NB={number}", f"NB_DIR={notebook.parent}", f"PRESENT_PORT={port}", f"PRESENT_TOKEN={token}"]


def voila_wait_rendered(page, *, timeout: float = 120.0) -> None:  # noqa: ANN001
    """Wait until Voilà has executed the notebook and the widgets are on the page."""
    page.wait_for_function(
        """() => { const img = document.querySelector('.pe-app img'); return img !== null && img.naturalWidth > 0; }""",
        timeout=timeout * 1000,
        polling=250,
    )


# --------------------------------------------------------------------------- slides (make present)

#: Where the slide screenshots go (git-ignored; CI keeps build/).
SLIDE_SCREENSHOTS = SCREENSHOTS / "slides"
#: The viewports a deck must fit: a 1080p projector and a 720p one.
SLIDE_VIEWPORTS = ({"width": 1920, "height": 1080}, {"width": 1280, "height": 720})
#: The slide's logical size (pe-slides' conf.json) and the limits a deck must keep.
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720
MIN_TEXT_PX_AT_1080P = 24.0
MIN_APP_FIGURE_SHARE = 0.60
#: Seconds before a deck page that shows no slide is reloaded once (see open_deck).
FIRST_SLIDE_RETRY = 60.0
FIRST_SLIDE_TIMEOUT = 150.0  # s; the budget is 10 s, this only bounds a hang

#: The deck is ready: reveal.js initialised and Voilà showed the cells.
DECK_READY_JS = """() => {
    const reveal = document.querySelector('.reveal.ready');
    const cells = document.querySelector('#rendered_cells');
    return !!reveal && !!cells && getComputedStyle(cells).display !== 'none'
        && !!document.querySelector('.reveal .slides section.present');
}"""

#: Widgets still waiting for their model ("Loading widget..." placeholders), as text snippets.
WIDGETS_LOADING_JS = """() => Array.from(document.querySelectorAll('.reveal .jp-OutputArea-output'))
    .filter((o) => /Loading widget\\.\\.\\./.test(o.textContent)).length"""
WIDGET_LOAD_TIMEOUT = 30.0  # s after the first slide

#: Where we are: the URL hash (reveal.js' `history`: "#/h/v" plus "/f" for fragments) and the current slide.
DECK_STATE_JS = """() => {
    const current = Array.from(document.querySelectorAll('.reveal .slides section.present'))
        .filter((s) => !s.querySelector('section')).pop();
    const id = current ? (current.dataset.peIndex ?? '') : '';
    return {hash: location.hash, slide: id, index: id === '' ? -1 : Number(id),
        fragmentsLeft: current ? current.querySelectorAll('.fragment:not(.visible)').length : 0, h: current?.parentElement?.tagName === 'SECTION'
        ? Array.from(current.parentElement.parentElement.children).indexOf(current.parentElement)
        : Array.from(current?.parentElement?.children ?? []).indexOf(current),
        v: current?.parentElement?.tagName === 'SECTION' ? Array.from(current.parentElement.children).indexOf(current) : 0};
}"""

#: Number every leaf slide once (data-pe-index), so the walk can tell which ones it has seen.
NUMBER_SLIDES_JS = """() => {
    const leaves = Array.from(document.querySelectorAll('.reveal .slides section')).filter((s) => !s.querySelector('section'));
    leaves.forEach((s, i) => { s.dataset.peIndex = String(i); });
    return leaves.length;
}"""

#: Everything measured on the current slide: overflow, smallest text, app figures. Two animation frames first:
#: what changed just before (an app that appeared) is laid out, as a person would see it.
SLIDE_MEASURE_JS = r"""async ([slideW, slideH]) => {
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const current = Array.from(document.querySelectorAll('.reveal .slides section.present'))
        .filter((s) => !s.querySelector('section')).pop();
    const box = document.querySelector('.reveal .slides').getBoundingClientRect();
    const scale = box.width / slideW;
    const out = {overflow: [], scrolls: [], smallText: [], apps: [], scale, text: ''};
    if (!current) return out;
    const r = current.getBoundingClientRect();
    const tol = 1.5 * scale;
    if (r.top < box.top - tol || r.bottom > box.bottom + tol)
        out.overflow.push(`the slide is ${Math.round(r.height / scale)} px high, the frame ${slideH} px`);
    const visible = (el) => { const s = getComputedStyle(el); return s.display !== 'none' && s.visibility !== 'hidden'; };
    for (const el of current.querySelectorAll('*')) {
        // MathJax's assistive MathML is clipped to nothing on screen (it is for screen readers).
        if (el.closest('aside.notes, mjx-assistive-mml') || !visible(el)) continue;
        const e = el.getBoundingClientRect();
        if (e.width === 0 || e.height === 0) continue;
        if (e.right > box.right + tol || e.left < box.left - tol || e.bottom > box.bottom + tol || e.top < box.top - tol) {
            if (out.overflow.length < 4) out.overflow.push(`<${el.tagName.toLowerCase()} class="${el.className}"> `
                + `${(el.textContent || '').trim().slice(0, 60)!== '' ? JSON.stringify((el.textContent || '').trim().slice(0, 60)) : ''} `
                + `at x ${Math.round((e.left - box.left) / scale)}..${Math.round((e.right - box.left) / scale)}, `
                + `y ${Math.round((e.top - box.top) / scale)}..${Math.round((e.bottom - box.top) / scale)}`);
        }
        const s = getComputedStyle(el);
        if (/(auto|scroll)/.test(s.overflowY + s.overflowX) && (el.scrollHeight > el.clientHeight + 2 || el.scrollWidth > el.clientWidth + 2))
            out.scrolls.push(`<${el.tagName.toLowerCase()} class="${el.className}"> scrolls (${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight})`);
    }
    // Text: every text node outside formulas (MathJax sizes its sub/superscripts itself) and notes.
    const walker = document.createTreeWalker(current, NodeFilter.SHOW_TEXT);
    let node, smallest = Infinity;
    while ((node = walker.nextNode())) {
        const el = node.parentElement;
        if (!node.textContent.trim() || !el || el.closest('aside.notes, mjx-container, svg, .MathJax') || !visible(el)) continue;
        const rect = el.getBoundingClientRect();
        if (rect.width === 0 || rect.height === 0) continue;
        const px = parseFloat(getComputedStyle(el).fontSize) * scale;
        if (px < smallest) smallest = px;
        out.smallText.push([px, node.textContent.trim().slice(0, 40), el.tagName.toLowerCase() + '.' + el.className]);
    }
    out.smallText.sort((a, b) => a[0] - b[0]);
    out.smallText = out.smallText.slice(0, 3);
    out.smallest = smallest;
    for (const app of current.querySelectorAll('.pe-app')) {
        const img = app.querySelector('img');
        const w = img ? img.getBoundingClientRect().width : 0;
        out.apps.push({share: w / box.width});
    }
    out.text = current.innerText.trim().slice(0, 80);
    // Budgets. Prose: the characters of text a reader reads on the slide, outside formulas, notes, apps and printouts.
    const prose = document.createTreeWalker(current, NodeFilter.SHOW_TEXT);
    out.prose = 0;
    while ((node = prose.nextNode())) {
        const el = node.parentElement;
        if (!el || el.closest('aside.notes, mjx-container, svg, .MathJax, .pe-app, .jupyter-widgets, pre, .jp-OutputArea-output table') || !visible(el)) continue;
        out.prose += node.textContent.replace(/\s+/g, ' ').trim().length;
    }
    // A Markdown table that did not render: a paragraph of the rendered Markdown whose text is pipe-separated cells.
    out.rawTables = Array.from(current.querySelectorAll('.jp-RenderedMarkdown p, .jp-RenderedMarkdown li'))
        .filter((p) => visible(p) && /\|\s*:?-{3,}:?\s*\|/.test(p.textContent)).map((p) => p.textContent.trim().slice(0, 60));
    // Printed text wider than the slide: a printout whose lines wrap (more lines on screen than in the text).
    out.wrappedPrintouts = [];
    for (const pre of current.querySelectorAll('.jp-OutputArea-output pre')) {
        if (!visible(pre) || pre.closest('aside.notes')) continue;
        const lines = pre.textContent.replace(/\n+$/, '').split('\n').filter((l) => l.trim()).length;
        const range = document.createRange();
        range.selectNodeContents(pre);
        const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 1).map((r) => Math.round(r.top / 2)));
        const shown = tops.size;
        if (shown > lines) out.wrappedPrintouts.push(`${lines} line(s) shown as ${shown}: ${JSON.stringify(pre.textContent.trim().slice(0, 50))}`);
    }
    // How much of the frame's height the slide's content spans (top of its first block to bottom of its last).
    let top = Infinity, bottom = -Infinity;
    for (const el of current.querySelectorAll('.jp-Cell')) {
        if (!visible(el) || el.closest('aside.notes')) continue;
        const e = el.getBoundingClientRect();
        if (e.height === 0) continue;
        top = Math.min(top, e.top); bottom = Math.max(bottom, e.bottom);
    }
    out.filled = bottom > top ? (bottom - top) / (slideH * scale) : 0;
    out.headingOnly = !!current.querySelector('h1, h2') && current.innerText.trim().split('\n').filter((l) => l.trim()).length <= 3;
    return out;
}"""


@dataclass
class SlideReport:
    """What the walk found on one slide."""

    number: int  # 1-based, in the order Space visits them
    hash: str
    text: str
    problems: list[str] = field(default_factory=list)
    smallest_text_px: float = 0.0
    app_shares: list[float] = field(default_factory=list)
    #: Every figure on the slide (:data:`FIGURE_FONTS_JS`): its smallest text on the screen, in px.
    figures: list[dict] = field(default_factory=list)
    #: Characters of prose on screen (outside formulas, notes, apps and printouts).
    prose: int = 0
    #: Markdown tables shown as raw pipes, and printouts whose lines wrap (wider than the slide).
    raw_tables: list[str] = field(default_factory=list)
    wrapped_printouts: list[str] = field(default_factory=list)
    #: The share of the frame's height its content spans; whether it holds only a heading (a section's title slide).
    filled: float = 0.0
    heading_only: bool = False


def deck_url(server: Server) -> str:
    return server.url("/")


def open_deck(page, server: Server, *, timeout: float = FIRST_SLIDE_TIMEOUT) -> float:  # noqa: ANN001
    """Load the deck; return the seconds until the first slide is on screen (reveal.js ready).

    A page that shows no slide after :data:`FIRST_SLIDE_RETRY` s (a preheated deck shows in about two) is
    reloaded once, as a lecturer would, with a warning that says what the page showed; a second miss fails.
    Seen once in CI under load (deck 00, the page never became ready); the warning keeps it visible.
    """
    t0 = time.monotonic()
    for attempt in (1, 2):
        page.goto(deck_url(server), wait_until="commit", timeout=timeout * 1000)
        wait = FIRST_SLIDE_RETRY if attempt == 1 else timeout
        try:
            page.wait_for_function(DECK_READY_JS, timeout=wait * 1000, polling=100)
            break
        except Exception as exc:  # noqa: BLE001 (playwright TimeoutError): say what the page shows instead
            what = (f"{server.name}: no first slide {wait:.0f} s after the request; the page: {deck_page_state(page)}; "
                    f"console errors: {getattr(page, 'console_errors', [])[-8:]}; server log:\n{server.log_tail()}")
            if attempt == 2:
                raise AssertionError(what) from exc
            warnings.warn(f"reloading the deck once: {what}", stacklevel=2)
            TIMINGS.append((f"{server.name}: reloaded after {wait:.0f} s without a first slide", wait))
    first = time.monotonic() - t0
    try:
        page.wait_for_function(f"() => ({WIDGETS_LOADING_JS})() === 0", timeout=WIDGET_LOAD_TIMEOUT * 1000, polling=200)
    except Exception as exc:  # noqa: BLE001 (playwright TimeoutError)
        raise AssertionError(f"{page.evaluate(WIDGETS_LOADING_JS)} widget(s) still show 'Loading widget...' "
                             f"{WIDGET_LOAD_TIMEOUT:.0f} s after the first slide (their model never reached the page)") from exc
    return first


#: What a deck page shows while it is not ready: for a failure message.
DECK_PAGE_STATE_JS = """() => ({readyState: document.readyState, url: location.href,
    reveal: document.querySelector('.reveal')?.className ?? null,
    renderedCells: (() => { const c = document.querySelector('#rendered_cells');
        return c ? getComputedStyle(c).display : null; })(),
    cells: document.querySelectorAll('[cell-index]').length,
    loadingWidgets: Array.from(document.querySelectorAll('.jp-OutputArea-output'))
        .filter((o) => /Loading widget/.test(o.textContent)).length,
    spinner: document.querySelector('#loading')?.textContent?.trim().slice(0, 200) ?? null,
    bodyStart: (document.body?.innerText ?? '').trim().slice(0, 300)})"""


def deck_page_state(page) -> dict | str:  # noqa: ANN001
    try:
        return page.evaluate(DECK_PAGE_STATE_JS)
    except Exception as exc:  # noqa: BLE001 (a page that does not answer: say so)
        return f"(the page did not answer: {exc})"


#: The cells of the current slide, among the given ``cell-index`` values (Voilà numbers cells from 1), that show no
#: slider app (``.pe-app``) yet: their text, for a message.
SLIDE_APPS_PENDING_JS = """([scope, indices]) => {
    const slide = document.querySelector(scope);
    if (!slide) { return []; }
    return Array.from(slide.querySelectorAll('[cell-index]'))
        .filter((cell) => indices.includes(Number(cell.getAttribute('cell-index'))) && !cell.querySelector('.pe-app'))
        .map((cell) => `cell ${cell.getAttribute('cell-index')}: ${cell.textContent.trim().slice(0, 120)}`);
}"""
SLIDE_APP_TIMEOUT = 30.0  # s


#: A code cell that calls an app factory (``frequency_heatmap_app(``, ``extrapolation_app(``).
APP_CALL = re.compile(r"\b\w+_app\(")


def calls_app(cell: dict) -> bool:
    return cell["cell_type"] == "code" and bool(APP_CALL.search("".join(cell["source"])))


def app_cell_indices(cells: Sequence[dict]) -> list[int]:
    """Voilà's ``cell-index`` (1-based) of every code cell that calls an app factory (:data:`APP_CALL`)."""
    return [i + 1 for i, cell in enumerate(cells) if calls_app(cell)]


def wait_slide_apps(page, indices: Sequence[int], *, timeout: float = SLIDE_APP_TIMEOUT) -> list[str]:  # noqa: ANN001
    """Wait until every app cell (``indices``, from :func:`app_cell_indices`) on the current slide shows its app;
    return what the others show (empty: all there).

    Under load a deck can be "ready" (no "Loading widget..." left) before an app's view is attached: measuring
    the slide then would miss its app.
    """
    args = [CURRENT_SLIDE, list(indices)]
    try:
        page.wait_for_function(f"(args) => ({SLIDE_APPS_PENDING_JS})(args).length === 0", arg=args,
                               timeout=timeout * 1000, polling=100)
        return []
    except Exception:  # noqa: BLE001 (playwright TimeoutError): say what they show
        return page.evaluate(SLIDE_APPS_PENDING_JS, args)


def deck_state(page) -> dict:  # noqa: ANN001
    return page.evaluate(DECK_STATE_JS)


def measure_slide(page) -> dict:  # noqa: ANN001
    return page.evaluate(SLIDE_MEASURE_JS, [SLIDE_WIDTH, SLIDE_HEIGHT])


#: Content that arrives after its slide was shown (an app whose widget renders late), made deterministic: hide the
#: current slide's children and let reveal.js lay the slide out while it is (almost) empty, as it does when a
#: lecturer arrives before the output; then put a block as tall as the frame less 8 px on it. Returns the
#: slide's height before and after the block.
GROW_SLIDE_JS = """async ([slideH]) => {
    const frames = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const current = Array.from(document.querySelectorAll('.reveal .slides section.present'))
        .filter((s) => !s.querySelector('section')).pop();
    for (const el of current.children) { el.dataset.peDisplay = el.style.display; el.style.display = 'none'; }
    window.dispatchEvent(new Event('resize'));
    await frames();
    const before = current.scrollHeight;
    const block = document.createElement('div');
    block.id = 'pe-test-late-block';
    block.style.height = (slideH - 8) + 'px';
    current.prepend(block);
    return {before, after: current.scrollHeight};
}"""

#: Undo :data:`GROW_SLIDE_JS`.
UNGROW_SLIDE_JS = """() => {
    document.getElementById('pe-test-late-block')?.remove();
    for (const el of document.querySelectorAll('.reveal .slides section [data-pe-display]')) {
        el.style.display = el.dataset.peDisplay; delete el.dataset.peDisplay;
    }
    window.dispatchEvent(new Event('resize'));
}"""


def grow_current_slide(page) -> dict:  # noqa: ANN001
    """Late content on the current slide (:data:`GROW_SLIDE_JS`), measured as :func:`measure_slide` does, with
    the ``before``/``after`` heights; the slide is put back as it was."""
    heights = page.evaluate(GROW_SLIDE_JS, [SLIDE_HEIGHT])
    try:
        return {**measure_slide(page), **heights}
    finally:
        page.evaluate(UNGROW_SLIDE_JS)


def go_to_first_slide(page) -> None:  # noqa: ANN001
    """Home key: reveal.js goes to the first slide."""
    page.evaluate("() => document.activeElement && document.activeElement.blur && document.activeElement.blur()")
    page.keyboard.press("Home")
    page.wait_for_function("() => location.hash === '' || /^#\\/?(0)?$/.test(location.hash) || location.hash === '#/'",
                           timeout=5_000, polling=50)


def http_status_with_host(url: str, host: str) -> int:
    """HTTP status of a GET to ``url`` sent with the given ``Host`` header (a DNS-rebinding page's request)."""
    req = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:  # noqa: S310 (127.0.0.1 only)
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


# --------------------------------------------------------------------------- figures as the page shows them

#: The notebook viewport checked: a 720p projector (legibility, screenshots); decks use SLIDE_VIEWPORTS.
CLASSROOM_VIEWPORT = {"width": 1280, "height": 720}
#: The smallest text a figure may show, in CSS px, at CLASSROOM_VIEWPORT.
MIN_FIGURE_TEXT_CSS_PX = 14.0

#: Every figure image in ``scope`` (a stored or live output, or an app's image): its pixel size, displayed
#: width, and from the PNG itself its dpi (``pHYs``) and smallest text in points (the ``pe:min-font-pt`` text
#: chunk written by pe_helpers.figures._base.render_png). Text in CSS px = pt × dpi / 72 × clientWidth / naturalWidth;
#: on the screen (``screen``; a deck's slide is scaled by reveal.js) the same with the image's on-screen width.
FIGURE_FONTS_JS = """async (scope) => {
    const root = document.querySelector(scope) ?? document;
    const imgs = Array.from(root.querySelectorAll('.jp-OutputArea-output img, .pe-app img'))
        .filter((img, i, all) => all.indexOf(img) === i);
    const out = [];
    for (const img of imgs) {
        const row = {app: !!img.closest('.pe-app'), natural: img.naturalWidth, client: img.clientWidth, screen: null,
                     cell: Array.from(document.querySelectorAll('.jp-Cell')).indexOf(img.closest('.jp-Cell')),
                     dpi: null, pt: null, css: null, complete: img.complete};
        try {
            const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
            const view = new DataView(bytes.buffer);
            for (let p = 8; p + 8 <= bytes.length;) {
                const len = view.getUint32(p), type = String.fromCharCode(...bytes.slice(p + 4, p + 8));
                if (type === 'pHYs' && bytes[p + 16] === 1) row.dpi = view.getUint32(p + 8) * 0.0254;
                if (type === 'tEXt') {
                    const text = new TextDecoder('latin1').decode(bytes.slice(p + 8, p + 8 + len));
                    const [key, value] = text.split('\\0');
                    if (key === 'pe:min-font-pt') row.pt = parseFloat(value);
                }
                if (type === 'IDAT' || type === 'IEND') break;
                p += 12 + len;
            }
        } catch (err) { row.error = String(err); }
        if (row.dpi && row.pt && row.natural) row.css = row.pt * row.dpi / 72 * row.client / row.natural;
        // On the screen (a deck's slide is scaled by reveal.js: its CSS px are not screen px).
        row.shown = img.getBoundingClientRect().width;
        if (row.dpi && row.pt && row.natural) row.screen = row.pt * row.dpi / 72 * row.shown / row.natural;
        out.push(row);
    }
    return out;
}"""


def figure_fonts(page, scope: str = "", *, settle: float = 5.0) -> list[dict]:  # noqa: ANN001
    """:data:`FIGURE_FONTS_JS` for every figure image in ``scope`` (default: the whole page).

    An app's image may be in the middle of being replaced (a view that just reported its width gets a new render;
    the widget revokes the old image's URL): an app image that cannot be measured is measured again, for at most
    ``settle`` seconds. A stored figure is measured once; one that still cannot be measured is reported as such."""
    deadline = time.monotonic() + settle
    while True:
        rows = page.evaluate(FIGURE_FONTS_JS, scope or "body")
        if not any(r["app"] and (r["css"] is None or r["screen"] is None) for r in rows) or time.monotonic() > deadline:
            return rows
        page.wait_for_timeout(100)


def illegible_figures(rows: list[dict], minimum: float = MIN_FIGURE_TEXT_CSS_PX) -> list[str]:
    """Sentences for every figure whose smallest text is under ``minimum`` CSS px, or that cannot be measured."""
    problems = []
    for r in rows:
        what = f"{'app' if r['app'] else 'figure'} in cell {r['cell']} ({r['natural']} px shown {r['client']} px wide)"
        if not r["natural"]:
            problems.append(f"{what}: the image is not decoded")
        elif r["css"] is None:
            problems.append(f"{what}: no dpi/pe:min-font-pt in its PNG (not drawn by pe_helpers.figures' render_png)"
                            f"{': ' + r['error'] if r.get('error') else ''}")
        elif r["css"] < minimum:
            problems.append(f"{what}: smallest text {r['pt']:.1f} pt at {r['dpi']:.0f} dpi = {r['css']:.1f} CSS px "
                            f"< {minimum:.0f}")
    return problems


def collapse_lab_sidebars(page) -> None:  # noqa: ANN001
    """Close JupyterLab's left side panel (View → Appearance → Show Left Sidebar off): the notebook gets the
    window's width, as when a lecturer projects it."""
    if not page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").count():
        return
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^\s*View\s*$")).click()
    page.locator(".lm-Menu-item", has_text="Appearance").first.hover()
    item = page.locator('.lm-Menu-item[data-command="application:toggle-left-area"]').first
    item.wait_for(state="visible", timeout=10_000)
    item.click()
    page.wait_for_function("() => !document.querySelector('.jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current')",
                           timeout=5_000, polling=50)


#: What a notebook opened without running shows in place of its figures: every stored figure
#: decoded, and none of the widget's plain-text stand-ins such as ``App(children=(...``.
STORED_VIEW_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)') ?? document;
    const outs = Array.from(panel.querySelectorAll('.jp-OutputArea-output'));
    return {
        images: outs.flatMap((o) => Array.from(o.querySelectorAll('img'))).map((i) => [i.complete, i.naturalWidth]),
        reprs: outs.map((o) => o.textContent).filter((t) => /\\b(App|VBox|HBox)\\(children=/.test(t))
                   .map((t) => t.slice(0, 120)),
        broken: outs.map((o) => o.textContent).filter((t) => /Error displaying widget|Error rendering output item/.test(t))
                    .map((t) => t.slice(0, 120)),
    };
}"""


def stored_figure_count(nb: dict) -> int:
    """How many outputs of a saved notebook carry a PNG (static figures and the apps' stand-ins)."""
    return sum("image/png" in out.get("data", {}) for cell in nb["cells"] if cell["cell_type"] == "code"
               for out in cell.get("outputs", []))


def stored_view_problems(page, nb: dict, *, timeout: float = 20.0) -> list[str]:  # noqa: ANN001
    """Before anything runs: are the notebook's stored figures shown and decoded, with no widget text stand-in?"""
    expected = stored_figure_count(nb)
    try:
        page.wait_for_function(
            """(n) => { const imgs = Array.from(document.querySelectorAll(
                    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img'));
                return imgs.length >= n && imgs.every((i) => i.complete && i.naturalWidth > 0); }""",
            arg=expected, timeout=timeout * 1000, polling=100)
    except Exception:  # noqa: BLE001 (playwright TimeoutError): reported below
        pass
    view = page.evaluate(STORED_VIEW_JS)
    problems = []
    shown = sum(1 for complete, width in view["images"] if complete and width > 0)
    if shown < expected:
        problems.append(f"opened without running, {shown} of the {expected} stored figures are shown decoded")
    problems += [f"opened without running, an output shows {t!r} instead of a figure" for t in view["reprs"]]
    problems += [f"opened without running, an output shows {t!r}" for t in view["broken"]]
    return problems


def copy_notebooks_with_outputs(dest: Path, sources: Sequence[Path], *, prefix: str = "") -> list[Path]:
    """Copy ``sources`` into ``dest`` as people open them (stored outputs and widget state kept), with the
    execution counts cleared: after Run All every ``[n]:`` prompt was produced in the browser, and a cell that
    did not run shows ``[ ]:`` (its stale stored output cannot pass for a fresh one)."""
    return copy_notebooks(dest, sources, keep_outputs=True, prefix=prefix)


def show_file_browser(page) -> None:  # noqa: ANN001
    """Open JupyterLab's file browser panel again if :func:`collapse_lab_sidebars` closed it."""
    if page.locator(".jp-DirListing-item").first.is_visible():
        return
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="filebrowser"]').first.click()
    page.locator(".jp-DirListing-item").first.wait_for(state="visible", timeout=10_000)


def press_on_slider(page, control, key: str = "ArrowRight", *, timeout: float = 5.0) -> tuple[str, str]:  # noqa: ANN001
    """Focus a slider's handle, press ``key``; return its readout (before, after). Raises AssertionError
    naming what has focus when the value did not change (a front end that takes the key for itself)."""
    handle = control.locator(".noUi-handle").first
    readout = control.locator(".widget-readout").first
    before = readout.inner_text().strip()
    handle.focus()
    page.keyboard.press(key)
    try:
        page.wait_for_function("([out, old]) => out.innerText.trim() !== old", arg=[readout.element_handle(), before],
                               timeout=timeout * 1000, polling=50)
    except Exception as exc:  # noqa: BLE001 (playwright TimeoutError)
        focused = page.evaluate("() => document.activeElement?.className ?? ''")
        raise AssertionError(f"{key} on the focused slider handle left it at {before!r}; the focus went to "
                             f"{focused!r}") from exc
    return before, readout.inner_text().strip()


#: The app's image is its full-resolution render: a pixel for every device pixel it covers (its on-screen width ×
#: ``devicePixelRatio``; pe_helpers.apps._pixels reports that number to the kernel), never fewer.
SHARP_JS = ("(img) => img.naturalWidth > 0 && "
            "img.naturalWidth >= Math.ceil(img.getBoundingClientRect().width * devicePixelRatio) - 1")

#: The CDP session that holds each page's emulated devicePixelRatio (the override ends with its session).
_RATIO_SESSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def emulate_device_ratio(page, ratio: float) -> None:  # noqa: ANN001
    """Show ``page`` as a screen with ``devicePixelRatio`` = ``ratio`` shows it (a HiDPI laptop, a browser zoom), at
    the same viewport, and send the ``resize`` event a zoom sends. ``page.set_viewport_size`` sets the ratio back
    to 1."""
    session = _RATIO_SESSIONS.get(page)
    if session is None:
        session = _RATIO_SESSIONS[page] = page.context.new_cdp_session(page)
    size = page.viewport_size
    session.send("Emulation.setDeviceMetricsOverride", {"width": size["width"], "height": size["height"],
                                                        "deviceScaleFactor": ratio, "mobile": False})
    page.wait_for_function("(r) => window.devicePixelRatio === r", arg=ratio, timeout=5000, polling=50)
    page.evaluate("() => window.dispatchEvent(new Event('resize'))")


def wait_apps_fit_device(page, scope: str = "", *, timeout: float = 20.0) -> list[str]:  # noqa: ANN001
    """Wait until every app image in ``scope`` is the render its view asked for: its size-reporting widget has reported
    the device pixels the image covers, and the image has exactly the pixels the kernel renders for them
    (``dpi_for_width``: the figure's inches, read from the PNG's width and ``pHYs`` dpi). Return the apps that never
    were, as sentences."""
    from pe_helpers.figures._base import _dpi_for

    js = """async (scope) => { const out = [];
        for (const app of (document.querySelector(scope) ?? document).querySelectorAll('.pe-app')) {
            const img = app.querySelector('img'), probe = app.querySelector('.pe-device-pixels');
            const row = {natural: img.naturalWidth, need: Math.ceil(img.getBoundingClientRect().width * devicePixelRatio),
                         reported: probe ? Number(probe.dataset.devicePx) : null, dpi: null};
            try {
                const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer()), view = new DataView(bytes.buffer);
                for (let p = 8; p + 8 <= bytes.length;) {
                    const len = view.getUint32(p), type = String.fromCharCode(...bytes.slice(p + 4, p + 8));
                    if (type === 'pHYs') { row.dpi = view.getUint32(p + 8) * 0.0254; break; }
                    if (type === 'IDAT') break;
                    p += 12 + len;
                }
            } catch (err) { row.error = String(err); }
            out.push(row);
        }
        return out; }"""

    def unfitted(rows: list[dict]) -> list[str]:
        found = []
        for i, r in enumerate(rows):
            want = round(r["natural"] / r["dpi"] * _dpi_for(r["natural"] / r["dpi"], r["need"])) if r["dpi"] else None
            if r["reported"] != r["need"] or want is None or abs(r["natural"] - want) > 1:
                found.append(f"app #{i}: {r['natural']} px for {r['need']} device px (its view reported "
                             f"{r['reported']}; the render for them has {want} px)")
        return found

    deadline = time.monotonic() + timeout
    while True:
        left = unfitted(page.evaluate(js, scope or "body"))
        if not left or time.monotonic() > deadline:
            return left
        page.wait_for_timeout(100)


def wait_sharp(page, image, *, timeout: float = 10.0) -> bool:  # noqa: ANN001
    """Wait (at most ``timeout``) until an app's image is its full-resolution render, so that the next change
    seen is caused by what comes next. False if it never came."""
    try:
        page.wait_for_function(SHARP_JS, arg=image.element_handle(), timeout=timeout * 1000, polling=50)
    except Exception:  # noqa: BLE001 (playwright TimeoutError): the caller says what that means
        return False
    return True


def type_base(page, app, text: str, *, timeout: float = 10.0) -> dict:  # noqa: ANN001
    """Type ``text`` into an app's "type base" box and press Enter; wait until the image changes or a message
    shows. Returns the slider readout, the message, and whether the image changed."""
    box = app.locator(".widget-text input").first
    image = app.locator("img").first
    wait_sharp(page, image)
    old_src = image.get_attribute("src")
    box.fill(text)
    box.press("Enter")
    try:
        page.wait_for_function(
            """([app, img, old]) => (img.src !== old && img.naturalWidth > 0)
                   || !!app.querySelector('.widget-html span[style*="D55E00"]')""",
            arg=[app.element_handle(), image.element_handle(), old_src], timeout=timeout * 1000, polling=50)
    except Exception:  # noqa: BLE001 (playwright TimeoutError): reported by the caller from the state below
        pass
    message = app.locator('.widget-html span[style*="D55E00"]')
    base = app.locator(".widget-slider").filter(has=page.locator(".widget-label", has_text=re.compile(r"^\s*base\s*$")))
    return {"readout": base.locator(".widget-readout").first.inner_text().strip(),
            "message": message.first.inner_text().strip() if message.count() else "",
            "changed": image.get_attribute("src") != old_src}


#: Notebook 7: every code cell ran (no ``[*]``, at least one ``[n]``) and the kernel is idle.
NB7_DONE_JS = """() => {
    const prompts = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')).map((p) => p.textContent);
    return prompts.length > 0 && !prompts.some((p) => p.includes('*')) && prompts.every((p) => /\\[\\d+\\]/.test(p));
}"""


def open_notebook7(page, server: Server, name: str, *, timeout: float = 90.0) -> None:  # noqa: ANN001
    """Open ``name`` in Notebook 7 (``/notebooks/NAME`` on the same server); wait until its kernel is idle."""
    page.goto(server.url(f"/notebooks/{name}"), wait_until="domcontentloaded")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="attached", timeout=timeout * 1000)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kernel = _kernel_of(server, name)
        if kernel and kernel.get("execution_state") == "idle" and kernel.get("connections", 0) >= 1:
            return
        page.wait_for_timeout(200)  # polling interval
    raise TimeoutError(f"the kernel of {name} was not ready in Notebook 7 within {timeout:.0f} s")


def run_all_notebook7(page) -> float:  # noqa: ANN001
    """Run → Run All Cells in Notebook 7; wait until every code cell shows ``[n]``. Returns the seconds."""
    t0 = time.monotonic()
    _click_menu(page, "Run", "runmenu:run-all")
    page.wait_for_function(NB7_DONE_JS, timeout=NOTEBOOK_RUN_TIMEOUT * 1000, polling=250)
    return time.monotonic() - t0


def run_through_cell(page, last_line: str) -> float:  # noqa: ANN001
    """Run the cells of the notebook on screen up to and including the first code cell whose last line is
    ``last_line`` (Run → Run All Above Selected Cell, then Run Selected Cell). Returns the seconds."""
    t0 = time.monotonic()
    index = page.evaluate(
        """([scope, last]) => Array.from(document.querySelectorAll(scope + ' .jp-CodeCell')).findIndex((c) => {
               const lines = Array.from(c.querySelectorAll('.cm-line')).map((l) => l.textContent.trim()).filter(Boolean);
               return lines.length && lines[lines.length - 1] === last; })""", [ACTIVE_NOTEBOOK, last_line])
    if index < 0:
        raise AssertionError(f"no code cell ends with {last_line!r}")
    page.locator(f"{ACTIVE_NOTEBOOK} .jp-CodeCell").nth(index).locator(".jp-InputPrompt").click()
    for command in ("notebook:run-all-above", "notebook:run-cell"):
        _click_menu(page, "Run", command)
        page.wait_for_function(RUN_STARTED_JS, timeout=30_000, polling=100)
        page.wait_for_function(EXECUTION_DONE_JS, timeout=NOTEBOOK_RUN_TIMEOUT * 1000, polling=250)
    return time.monotonic() - t0

def wait_deck_prepared(server: Server, *, timeout: float = FIRST_SLIDE_TIMEOUT) -> float:
    """Wait until ``make present`` says the deck's notebook has run (its preheated kernel); return the seconds.

    The launcher prints "Deck ready: ..." in its edition's language (or "could not be prepared", then the page
    runs it).
    """
    from pe_helpers.present import READY_LINES

    failed = ("could not be prepared", "没能预先准备好")  # the launcher's line when the preheated run failed

    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        log = server.log_path.read_text(errors="replace")
        if any(line in log for line in READY_LINES.values()) or any(f in log for f in failed):
            return time.monotonic() - t0
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited while its deck was prepared:\n{server.log_tail()}")
        time.sleep(0.2)  # polling the server's log
    raise TimeoutError(f"{server.name}: the deck was not ready within {timeout:.0f} s:\n{server.log_tail()}")


#: After a key press: the deck's new state (DECK_STATE_JS) once the URL hash moved, else false.
STATE_AFTER_JS = "(old) => location.hash !== old && (" + DECK_STATE_JS + ")()"


def press_next(page, old_hash: str, *, key: str = "Space", timeout: float = 5.0) -> dict | None:  # noqa: ANN001
    """Press ``key`` (Space, ArrowRight, PageDown: what a keyboard or a clicker sends for "next") and return the deck's
    new state (:func:`deck_state`), or None if nothing moved (the end).

    One wait for the hash to move and the new state (polled every animation frame).
    """
    page.keyboard.press(key)
    try:
        return page.wait_for_function(STATE_AFTER_JS, arg=old_hash, timeout=timeout * 1000, polling="raf").json_value()
    except Exception:  # noqa: BLE001 (playwright TimeoutError): nothing moved
        return None


def blur_focus(page) -> None:  # noqa: ANN001
    """Give the keyboard back to the deck (a focused slider keeps the arrow keys and Space)."""
    page.evaluate("() => document.activeElement && document.activeElement.blur && document.activeElement.blur()")


def save_slide_screenshot(page, path: Path) -> None:  # noqa: ANN001
    """The viewport as it is (the slide on screen), PNG or JPEG after ``path``'s suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), **({"type": "jpeg", "quality": 80} if path.suffix == ".jpg" else {}))


def app_figure_src(app) -> str:  # noqa: ANN001
    """The ``src`` of an app's figure (a data: URL of the PNG the kernel drew)."""
    return app.locator("img").first.get_attribute("src") or ""


CJK = re.compile(r"[\u4e00-\u9fff]")


def has_cjk(text: str) -> bool:
    """Does ``text`` contain a CJK ideograph (the Chinese edition's text)?"""
    return bool(CJK.search(text))


#: The slide on screen: the present leaf section (a horizontal section holding vertical ones is also
#: ``.present``, with class ``stack``; its other vertical slides are not on screen).
CURRENT_SLIDE = ".reveal .slides section.present:not(.stack)"


def go_to_app_slide(page, *, max_steps: int = 200) -> None:  # noqa: ANN001
    """Press Space until the slide on screen (:data:`CURRENT_SLIDE`) holds a slider app (``.pe-app``)."""
    state = deck_state(page)
    for _ in range(max_steps):
        if page.locator(f"{CURRENT_SLIDE} .pe-app").count():
            return
        state = press_next(page, state["hash"])
        if state is None:
            break
    raise AssertionError("Space reached the end of the deck without a slide that shows an app")


# --------------------------------------------------------------------------- an app under a held key and a drag
# What a class does to an app in the first minute: hold an arrow key, drag a handle across the track, click a toggle
# while dragging. Whatever the rhythm, once the hands stop the page must show the full-resolution render of the
# values its controls read, pixel for pixel what a fresh app of those values draws.

#: Seconds an arrow key is held; key repeats come every 1 / :data:`KEY_REPEAT_HZ` s, as a keyboard's auto-repeat.
HOLD_SECONDS = 1.0
KEY_REPEAT_HZ = 30
#: Milliseconds without a new image after which an app counts as at rest (the guide's "input stops for 0.5 s").
REST_MS = 500
#: Seconds an app may take to come to rest after the last input.
REST_TIMEOUT = 20.0

WATCH_IMAGE_JS = """(img) => {
    if (img.__peObserver) img.__peObserver.disconnect();
    const w = {changes: 0, at: performance.now()};
    img.__peWatch = w;
    img.__peObserver = new MutationObserver(() => { w.changes++; w.at = performance.now(); });
    img.__peObserver.observe(img, {attributes: true, attributeFilter: ['src']});
    return true;
}"""
#: At rest: no new ``src`` for ``ms`` and the current one decoded.
RESTED_JS = """([img, ms]) => !!img.__peWatch && img.complete && img.naturalWidth > 0
    && performance.now() - img.__peWatch.at > ms"""
#: The bytes of the image the page shows (a blob: or data: URL), base64, and its sizes.
SHOWN_IMAGE_JS = """async (img) => {
    const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    const box = img.getBoundingClientRect();
    return {png: btoa(s), natural: img.naturalWidth, css: img.clientWidth, screen: box.width,
            ratio: window.devicePixelRatio, changes: img.__peWatch ? img.__peWatch.changes : 0};
}"""
#: What each control of an app reads, in the order of the controls box: a slider's readout, the pressed toggle's
#: label, the chosen option, a checkbox's state (the typed-value box is not a control and is left out).
READOUTS_JS = """(app) => Array.from(app.querySelectorAll(
        '.widget-slider, .widget-toggle-buttons, .widget-dropdown, .widget-checkbox')).map((c) => {
    if (c.classList.contains('widget-slider')) return (c.querySelector('.widget-readout')?.innerText ?? '').trim();
    if (c.classList.contains('widget-toggle-buttons')) return (c.querySelector('button.mod-active')?.innerText ?? '').trim();
    if (c.classList.contains('widget-dropdown')) { const s = c.querySelector('select'); return s ? s.options[s.selectedIndex]?.text.trim() ?? '' : ''; }
    const box = c.querySelector('input[type=checkbox]');
    return box && box.checked ? 'true' : 'false';
})"""


@dataclass
class AtRest:
    """What an app shows once the hands have left it."""

    values: dict  #: the control values the shown PNG was drawn with (its pe:values chunk)
    png: bytes  #: the PNG the page shows
    natural_width: int  #: its pixels across
    css_width: float  #: the CSS px it is laid out at (the image element's clientWidth)
    screen_width: float  #: the px it covers on the screen (a deck scales the slide)
    readouts: list[str]  #: what each control reads, in order
    actions: list[str]  #: what was done, in order
    images: int  #: images the page showed during the moves
    rest_seconds: float  #: from the last input until the app was at rest
    problems: list[str] = field(default_factory=list)  #: what ``stress_app``'s ``check`` found at the last rest
    caption: str | None = None  #: the app's caption (``.pe-caption``) as the page shows it
    device_ratio: float = 1.0  #: the page's ``devicePixelRatio``

    @property
    def device_px(self) -> int:
        """The device pixels the image covers across: what its view reports to the kernel."""
        return math.ceil(self.screen_width * self.device_ratio)


def _enabled(locator) -> bool:  # noqa: ANN001
    return not locator.locator("[disabled], .noUi-target[disabled], .mod-disabled").count()


def hold_key(page, handle, key: str, seconds: float = HOLD_SECONDS) -> int:  # noqa: ANN001
    """Hold ``key`` on a focused slider handle for ``seconds``: a first keydown, then auto-repeats
    (keydown with ``repeat``), then the keyup. Returns the number of keydowns."""
    handle.focus()
    presses, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        page.keyboard.down(key)  # a second down of a held key is a repeat, as a held keyboard key sends
        presses += 1
        time.sleep(1 / KEY_REPEAT_HZ)
    page.keyboard.up(key)
    return presses


def drag_across(page, slider, *, midway=None, steps: int = 10) -> None:  # noqa: ANN001
    """Press the mouse on a slider's handle, drag it to one end of the track, then across to the other in ``steps``
    moves, and let go; ``midway()`` is called half-way, with the button still down (a click elsewhere while dragging).
    Each move waits for the page to take it (playwright's round trip, 20-40 ms here: a quick hand)."""
    handle = slider.locator(".noUi-handle").first
    track = slider.locator(".noUi-base, .noUi-target").first
    handle.scroll_into_view_if_needed()
    h, t = handle.bounding_box(), track.bounding_box()
    x0, y = h["x"] + h["width"] / 2, h["y"] + h["height"] / 2
    page.mouse.move(x0, y)
    page.mouse.down()
    left, right = t["x"] - 10, t["x"] + t["width"] + 10
    path = [x0 + (left - x0) * i / 3 for i in range(1, 4)] + [left + (right - left) * i / steps for i in range(1, steps + 1)]
    for i, x in enumerate(path):
        page.mouse.move(x, y)
        if midway is not None and i == len(path) // 2:
            midway()
    page.mouse.up()


def _click_other_option(control) -> str:  # noqa: ANN001
    """Choose another option of a toggle, dropdown or checkbox without moving the mouse (it is dragging)."""
    classes = control.get_attribute("class") or ""
    if "widget-toggle-buttons" in classes:
        button = control.locator("button:not(.mod-active)").first
        label = button.inner_text().strip()
        button.dispatch_event("click")
        return f"click toggle {label!r}"
    if "widget-dropdown" in classes:
        select = control.locator("select").first
        index = select.evaluate("(s) => (s.selectedIndex + 1) % s.options.length")
        select.select_option(index=index)
        return f"choose option {index}"
    box = control.locator("input[type=checkbox]").first
    box.dispatch_event("click")
    return "click the checkbox"


def _sliders_and_others(app) -> tuple[list, list]:  # noqa: ANN001
    """The app's enabled sliders, and its other enabled controls that offer another option (toggles with a button not
    pressed, dropdowns of two options or more, checkboxes)."""
    found = []
    for selector in (".widget-slider", ".widget-toggle-buttons, .widget-dropdown, .widget-checkbox"):
        controls = app.locator(selector)
        found.append([c for c in (controls.nth(i) for i in range(controls.count())) if _enabled(c)])
    choice = [c for c in found[1] if c.locator("button:not(.mod-active), select option:nth-child(2), "
                                                "input[type=checkbox]").count()]
    return found[0], choice


def _enable_a_slider(page, app) -> tuple[list, list, list[str]]:  # noqa: ANN001
    """Enabled sliders and other controls; when no slider is enabled (01's seed matters only for a random order),
    the other controls' options are tried in turn until one is."""
    sliders, others = _sliders_and_others(app)
    done = []
    image = app.locator("img").first
    for control in others:
        for _ in range(4):
            if sliders:
                return sliders, others, done
            old = image.get_attribute("src")
            done.append(_click_other_option(control))
            with contextlib.suppress(Exception):  # the kernel answers with a new image, the disabled states with it
                page.wait_for_function("([img, old]) => img.src !== old", arg=[image.element_handle(), old],
                                       timeout=5000, polling=50)
            page.wait_for_timeout(100)
            sliders, _others = _sliders_and_others(app)
    return sliders, others, done


def _shown(page, app, image, actions: list[str], last_input: float) -> AtRest:  # noqa: ANN001
    shown = page.evaluate(SHOWN_IMAGE_JS, image.element_handle())
    png = base64.b64decode(shown["png"])
    return AtRest(png_values(png), png, shown["natural"], shown["css"], shown["screen"],
                  page.evaluate(READOUTS_JS, app.element_handle()), list(actions), shown["changes"],
                  time.monotonic() - last_input,
                  caption=(app.locator(".pe-caption").first.text_content() or "").strip(), device_ratio=shown["ratio"])


def stress_app(page, app, *, hold_seconds: float = HOLD_SECONDS, check=None) -> AtRest:  # noqa: ANN001
    """Hold an arrow key on the first slider, drag the handle across its whole range (choosing another option of a
    toggle, dropdown or checkbox half-way, if the app has one), then wait until the app is at rest: :data:`REST_MS`
    without a new image. Return what it shows then.

    ``check(at_rest) -> problems``: while it finds problems, wait for the next image and look again, until
    :data:`REST_TIMEOUT` after the last input (a move that trains a model keeps the kernel busy for seconds, with no
    new image meanwhile); ``at_rest.rest_seconds`` is when the app last came to rest. Without ``check``, the first
    rest is returned.
    """
    image = app.locator("img").first
    app.scroll_into_view_if_needed()
    page.wait_for_function("(img) => img.src && img.naturalWidth > 0", arg=image.element_handle(),
                           timeout=APP_MOVE_TIMEOUT * 1000, polling=100)
    sliders, others, actions = _enable_a_slider(page, app)
    if not sliders:
        raise AssertionError("the app has no enabled slider to hold a key on and drag, even after trying "
                             f"{actions or 'no other control'}")
    page.evaluate(WATCH_IMAGE_JS, image.element_handle())
    handle = sliders[0].locator(".noUi-handle").first
    now, high = handle.get_attribute("aria-valuenow"), handle.get_attribute("aria-valuemax")
    key = "ArrowLeft" if now is not None and high is not None and float(now) >= float(high) else "ArrowRight"
    presses = hold_key(page, handle, key, hold_seconds)
    actions.append(f"held {key} for {hold_seconds:g} s ({presses} keydowns) on {_control_label(sliders[0])!r}")
    actions.append(f"dragged {_control_label(sliders[-1])!r} across its range")
    # the last other control: a choice that redraws (the first may start something slow, such as training a model)
    midway = (lambda: actions.append(f"{_click_other_option(others[-1])} in the middle of the drag")) if others else None
    drag_across(page, sliders[-1], midway=midway)
    last_input = time.monotonic()
    deadline = last_input + REST_TIMEOUT
    while True:
        try:
            page.wait_for_function(RESTED_JS, arg=[image.element_handle(), REST_MS],
                                   timeout=max(deadline - time.monotonic(), 0.1) * 1000, polling=50)
        except Exception as exc:  # noqa: BLE001 (playwright TimeoutError)
            raise AssertionError(f"the app never came to rest ({REST_MS} ms without a new image) within "
                                 f"{REST_TIMEOUT:.0f} s after: {'; '.join(actions)}") from exc
        rest = _shown(page, app, image, actions, last_input)
        rest.rest_seconds = max(rest.rest_seconds - REST_MS / 1000, 0.0)
        rest.problems = check(rest) if check is not None else []
        if not rest.problems or time.monotonic() > deadline:
            return rest
        changes = rest.images
        try:  # not right yet: wait for the next image
            page.wait_for_function("([img, n]) => img.__peWatch.changes > n", arg=[image.element_handle(), changes],
                                   timeout=max(deadline - time.monotonic(), 0.1) * 1000, polling=50)
        except Exception:  # noqa: BLE001 (playwright TimeoutError): no new image came; report this rest
            return rest


def png_values(png: bytes) -> dict:
    """The control values an app's PNG records (:data:`pe_helpers.figures._base.PNG_VALUES_KEY`), or ``{}``."""
    from PIL import Image

    from pe_helpers.figures._base import PNG_VALUES_KEY

    text = Image.open(io.BytesIO(png)).text
    return json.loads(text[PNG_VALUES_KEY]) if PNG_VALUES_KEY in text else {}


_FACTORIES: dict[frozenset, str] = {}


def factory_for(names: Sequence[str]) -> str:
    """The name of the app factory (:data:`pe_helpers.apps.APPS`) whose controls are exactly ``names``."""
    import inspect

    from pe_helpers.apps import APPS

    key = frozenset(names)
    candidates = [name for name, factory in APPS.items() if key <= set(inspect.signature(factory).parameters)]
    if len(candidates) == 1:
        return candidates[0]
    if key not in _FACTORIES:
        for name in candidates:
            app = APPS[name]()
            try:
                if set(app.controls) == key:
                    _FACTORIES[key] = name
                    break
            finally:
                app.close()
        else:
            raise AssertionError(f"no app factory has exactly the controls {sorted(key)}")
    return _FACTORIES[key]


def _readout_of(control) -> str:  # noqa: ANN001
    """What ipywidgets shows for a control's value: an option's label, else the value."""
    label = getattr(control, "label", None)
    if isinstance(label, str):
        return label
    if isinstance(control.value, bool):
        return "true" if control.value else "false"
    return str(control.value)


def at_rest_problems(rest: AtRest, *, present: bool = False, lang: str = "en", made_with: dict | None = None) -> list[str]:
    """Everything wrong with an app at rest, as sentences: not its full-resolution render, or not pixel for pixel
    what a fresh app of the values its controls read draws here (in the same language and text size).
    ``made_with``: ``{factory name: keyword arguments}`` the page's app was made with besides its controls' values
    (notebook 05's extrapolation app shows the models of its own lab panel)."""
    import numpy as np
    from PIL import Image

    from pe_helpers import i18n
    from pe_helpers.apps import APPS
    from pe_helpers.figures import _base

    done = "; ".join(rest.actions)
    problems = []
    if rest.natural_width < rest.device_px - 1:
        problems.append(f"after {done}: the image has {rest.natural_width} px for {rest.device_px} device px "
                        f"({rest.screen_width:.0f} CSS px × devicePixelRatio {rest.device_ratio:g}): not the "
                        "full-resolution render")
    if not rest.values:
        return problems + [f"after {done}: the shown PNG records no control values (not drawn by an App)"]
    name = factory_for(list(rest.values))
    was = i18n.get_language(), _base.MIN_FONT_PT, _base.PRESENT
    i18n.set_language(lang)  # as the page's kernel: its language, and a deck's text size and resolution
    _base.MIN_FONT_PT, _base.PRESENT = (_base.SLIDE_FONT_PT if present else _base.NOTEBOOK_FONT_PT), present
    try:
        fresh = APPS[name](**{**(made_with or {}).get(name, {}), **rest.values})
    finally:
        i18n.set_language(was[0])
        _base.MIN_FONT_PT, _base.PRESENT = was[1:]
    try:
        fresh.fit_device_width(rest.device_px)  # as the page's view asked the app to
        expected = [_readout_of(c) for c in fresh.controls.values()]
        for shown, want, control in zip(rest.readouts, expected, fresh.controls.values()):
            same = shown == want or (numbers_in(shown) and numbers_in(want)
                                     and abs(numbers_in(shown)[0] - numbers_in(want)[0]) <= 1e-6 * max(1.0, abs(numbers_in(want)[0])))
            if not same:
                problems.append(f"{name}, after {done}: a control reads {shown!r} but the image shows "
                                f"{control.description or 'its value'} = {want!r} (values {rest.values})")
        if len(rest.readouts) != len(expected):
            problems.append(f"{name}: the page shows {len(rest.readouts)} controls, the app has {len(expected)}")
        caption = html.unescape(re.sub(r"<[^>]+>", "", fresh.caption.value)).strip()
        if rest.caption is not None and " ".join(rest.caption.split()) != " ".join(caption.split()):
            problems.append(f"{name}, after {done}: the caption reads {rest.caption!r}, a fresh app of {rest.values} "
                            f"says {caption!r}")
        got = np.asarray(Image.open(io.BytesIO(rest.png)).convert("RGBA"))
        want = np.asarray(Image.open(io.BytesIO(fresh.image.value)).convert("RGBA"))
        if got.shape != want.shape:
            problems.append(f"{name}, after {done}: the image is {got.shape[1]}×{got.shape[0]} px, a fresh render of "
                            f"{rest.values} {want.shape[1]}×{want.shape[0]}")
        elif (differ := int((got != want).any(-1).sum())):
            problems.append(f"{name}, after {done}: {differ} px differ from a fresh render of {rest.values}")
    finally:
        fresh.close()
    return problems


def apps_notebook(root: Path) -> str:
    """Write a notebook into ``root`` that shows every app of :data:`pe_helpers.apps.APPS`, one per cell, in that
    order (the JupyterLab test and the latency benchmark run it); return its file name."""
    from pe_helpers.apps import APPS

    cells = [nbformat.v4.new_code_cell("from pe_helpers.apps import APPS")]
    cells += [nbformat.v4.new_code_cell(f"APPS[{name!r}]()") for name in APPS]
    name = "every_app.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), root / name)
    return name
