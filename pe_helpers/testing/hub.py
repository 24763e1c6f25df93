"""A student of ``make hub``, driven over HTTP and websockets (the hub smoke test and ``benchmarks/hub_load.py``).

:func:`start_hub` runs ``python -m pe_helpers.hub serve`` (the lecturer's command) in a folder of its own.
A :class:`Student` logs in through the hub's login form, asks the hub for an API token, has their server
spawned, opens a kernel through the server's REST API and talks to it over its websocket: runs code, and moves
an app's control with the same widget comm message a browser sends, receiving the new image the kernel draws.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path

__all__ = ["HubProcess", "start_hub", "Student", "LoginRefused", "free_ports"]

REPO = Path(__file__).resolve().parents[2]


class LoginRefused(Exception):
    """The hub did not let a user in (a wrong password)."""


def free_ports(count: int = 3) -> int:
    """A port ``p`` such that ``p .. p + count - 1`` are free on 127.0.0.1 (the hub, its API and the proxy's API)."""
    from pe_helpers.hub import check_ports

    for _ in range(200):
        import random

        port = random.randint(20000, 60000)
        try:
            check_ports(range(port, port + count))
            return port
        except OSError:
            continue
    raise RuntimeError("no free ports")


@dataclass
class HubProcess:
    """A running ``make hub`` (its process group), its URL, folder and log."""

    process: subprocess.Popen
    url: str
    run_dir: Path
    log_path: Path
    started_in: float = 0.0

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, grace: float = 10.0) -> None:
        """Ctrl+C to the hub (it stops every student's server and the proxy), then kill what is left."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        try:  # a student's server or the proxy outliving the hub would be a leak
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_hub(run_dir: Path, *, students: int = 3, edition: str = "student", lang: str = "en",
              timeout: float = 60.0, env: dict[str, str] | None = None) -> HubProcess:
    """``python -m pe_helpers.hub serve`` on free ports with its state in ``run_dir`` (``env``: more variables, e.g.
    ``PE_HUB_THREADS``); returns once it answers."""
    port = free_ports()
    run_dir.mkdir(parents=True, exist_ok=True)
    log_path = run_dir / "hub.log"
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "pe_helpers.hub", "serve", "--port", str(port), "--dir", str(run_dir),
             "--students", str(students), "--edition", edition, "--lang", lang],
            stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env, start_new_session=True)
    hub = HubProcess(process, f"http://127.0.0.1:{port}", run_dir, log_path)
    while time.monotonic() - t0 < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"the hub exited ({process.returncode}):\n{hub.log_tail()}")
        try:
            with urllib.request.urlopen(hub.url + "/hub/api/", timeout=2) as r:
                if r.status == 200:
                    hub.started_in = time.monotonic() - t0
                    return hub
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    hub.stop()
    raise TimeoutError(f"the hub did not answer within {timeout:.0f} s:\n{hub.log_tail()}")


def passwords(run_dir: Path) -> dict[str, str]:
    """The first start's ``{user: password}`` (the CSV the launcher hands the lecturer)."""
    import csv

    with open(run_dir / "passwords-for-the-lecturer.csv", newline="", encoding="utf-8") as f:
        return {row["user"]: row["password"] for row in csv.DictReader(f)}


@dataclass
class Student:
    """One user of the hub: log in, spawn, open kernels, run code, move apps."""

    hub_url: str
    name: str
    password: str
    token: str = ""
    cookies: CookieJar = field(default_factory=CookieJar)
    spawn_seconds: float = 0.0

    def _opener(self) -> urllib.request.OpenerDirector:
        return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def _xsrf(self) -> str:
        return next((c.value for c in self.cookies if c.name == "_xsrf"), "")

    def request(self, method: str, path: str, body: object = None, *, timeout: float = 60.0) -> tuple[int, object]:
        """An API request with the user's token (or session cookie before there is one); (status, JSON or text)."""
        headers = {"Authorization": f"token {self.token}"} if self.token else {"X-XSRFToken": self._xsrf()}
        data = json.dumps(body).encode() if body is not None else (b"" if method in ("POST", "PUT") else None)
        req = urllib.request.Request(self.hub_url + path, data=data, method=method,
                                     headers={**headers, "Content-Type": "application/json"})
        try:
            with self._opener().open(req, timeout=timeout) as r:
                text = r.read().decode()
                status = r.status
        except urllib.error.HTTPError as err:
            text, status = err.read().decode(errors="replace"), err.code
        try:
            return status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return status, text

    def login(self) -> None:
        """The login form, as a browser submits it; raises :class:`LoginRefused` unless the hub lets the user in."""
        opener = self._opener()
        opener.open(self.hub_url + "/hub/login", timeout=30).read()
        form = urllib.parse.urlencode({"username": self.name, "password": self.password, "_xsrf": self._xsrf()})
        try:
            with opener.open(urllib.request.Request(self.hub_url + "/hub/login?next=", data=form.encode()),
                             timeout=30) as r:
                r.read()
        except urllib.error.HTTPError as err:
            raise LoginRefused(f"{self.name}: HTTP {err.code}") from None
        if not any(c.name.startswith("jupyterhub-session") for c in self.cookies):
            raise LoginRefused(f"{self.name}: no session")
        status, reply = self.request("POST", f"/hub/api/users/{self.name}/tokens", {"note": "pe-notebooks test"})
        if status != 201:
            raise LoginRefused(f"{self.name}: no API token (HTTP {status}: {reply})")
        self.token = reply["token"]

    def spawn(self, timeout: float = 180.0) -> float:
        """Start the user's server and wait until it is ready; returns the seconds it took."""
        t0 = time.monotonic()
        status, reply = self.request("POST", f"/hub/api/users/{self.name}/server")
        if status not in (201, 202, 400):  # 400: already running
            raise RuntimeError(f"{self.name}: spawn refused (HTTP {status}: {reply})")
        while time.monotonic() - t0 < timeout:
            status, user = self.request("GET", f"/hub/api/users/{self.name}")
            server = (user or {}).get("servers", {}).get("", {}) if status == 200 else {}
            if server.get("ready"):
                self.spawn_seconds = time.monotonic() - t0
                return self.spawn_seconds
            time.sleep(0.25)
        raise TimeoutError(f"{self.name}: the server was not ready within {timeout:.0f} s")

    def stop(self) -> None:
        self.request("DELETE", f"/hub/api/users/{self.name}/server")

    def server_path(self, path: str) -> str:
        return f"/user/{self.name}{path}"

    def kernel(self, notebook: str = "") -> "Kernel":
        """A new kernel; for ``notebook`` (a path in the user's folder), a session of that notebook, as JupyterLab
        opens it (the kernel runs in the notebook's folder)."""
        if notebook:
            status, reply = self.request("POST", self.server_path("/api/sessions"),
                                         {"path": notebook, "type": "notebook", "kernel": {"name": "python3"}})
            kernel = reply.get("kernel", {}) if isinstance(reply, dict) else {}
        else:
            status, kernel = self.request("POST", self.server_path("/api/kernels"), {"name": "python3"})
        if status != 201 or not isinstance(kernel, dict) or "id" not in kernel:
            raise RuntimeError(f"{self.name}: no kernel (HTTP {status}: {kernel})")
        ws = self.hub_url.replace("http", "ws", 1) + self.server_path(f"/api/kernels/{kernel['id']}/channels")
        return Kernel(ws, self.token, kernel["id"], self)


class Kernel:
    """One kernel's websocket: execute code, open widgets, move a control (asyncio; tornado's websocket client)."""

    def __init__(self, url: str, token: str, kernel_id: str, student: Student) -> None:
        self.url, self.token, self.id, self.student = url, token, kernel_id, student
        self.session = uuid.uuid4().hex
        self.ws = None
        self.comms: dict[str, dict] = {}  # comm id -> widget state, from comm_open

    async def connect(self) -> None:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        self.ws = await websocket_connect(HTTPRequest(self.url, headers={"Authorization": f"token {self.token}"}),
                                          max_message_size=64 * 1024 * 1024)

    def _message(self, msg_type: str, content: dict, channel: str = "shell") -> dict:
        return {"header": {"msg_id": uuid.uuid4().hex, "username": self.student.name, "session": self.session,
                           "msg_type": msg_type, "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "content": content, "channel": channel, "buffers": []}

    async def _receive(self) -> dict:
        from jupyter_server.services.kernels.connection.base import deserialize_binary_message

        frame = await self.ws.read_message()
        if frame is None:
            raise ConnectionError("the kernel's websocket closed")
        msg = deserialize_binary_message(frame) if isinstance(frame, bytes) else json.loads(frame)
        if msg.get("msg_type") == "comm_open" or msg.get("header", {}).get("msg_type") == "comm_open":
            data = msg["content"].get("data", {})
            self.comms[msg["content"]["comm_id"]] = data.get("state", {})
        return msg

    async def execute(self, code: str, timeout: float = 300.0) -> list[dict]:
        """Run ``code``; its iopub messages until the kernel is idle. Raises ``RuntimeError`` on an error reply."""
        msg = self._message("execute_request", {"code": code, "silent": False, "store_history": False,
                                                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        await self.ws.write_message(json.dumps(msg))
        got, idle, reply = [], False, None
        async with asyncio.timeout(timeout):
            while not (idle and reply):
                m = await self._receive()
                if m.get("parent_header", {}).get("msg_id") != msg["header"]["msg_id"]:
                    continue
                kind = m["header"]["msg_type"]
                if kind == "status" and m["content"]["execution_state"] == "idle":
                    idle = True
                elif kind == "execute_reply":
                    reply = m
                else:
                    got.append(m)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"{self.student.name}: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
        return got

    def find_comm(self, model: str, **state: object) -> str:
        """The comm id of the newest widget whose model is ``model`` (e.g. ``"IntSliderModel"``) and state matches
        (the app displayed last, when a notebook shows several)."""
        for comm, s in reversed(self.comms.items()):
            if s.get("_model_name") == model and all(s.get(k) == v for k, v in state.items()):
                return comm
        raise KeyError(f"no {model} with {state} among {len(self.comms)} widgets")

    async def move(self, control: str, value: object, image: str, timeout: float = 60.0) -> bytes:
        """Set widget ``control``'s value as a browser does (a comm ``update``); the PNG the kernel then sends for
        the ``image`` widget."""
        msg = self._message("comm_msg", {"comm_id": control, "data": {"method": "update", "state": {"value": value},
                                                                       "buffer_paths": []}})
        await self.ws.write_message(json.dumps(msg))
        async with asyncio.timeout(timeout):
            while True:
                m = await self._receive()
                c = m.get("content", {})
                if m["header"]["msg_type"] == "comm_msg" and c.get("comm_id") == image and m.get("buffers"):
                    return bytes(m["buffers"][0])

    async def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        self.student.request("DELETE", self.student.server_path(f"/api/kernels/{self.id}"))


def notebook_code(path: Path) -> list[str]:
    """The code cells of a notebook, in order (what "Run All" runs)."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
