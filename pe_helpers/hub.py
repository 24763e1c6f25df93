"""The course on a JupyterHub: ``make hub``, a real hub on this machine for a class that installs nothing.

What ``make hub`` starts (``python -m pe_helpers.hub serve``; its configuration is ``deploy/hub/jupyterhub_config.py``,
which calls :func:`configure`):

* JupyterHub with its proxy, configurable-http-proxy, installed from npm by the same ``make`` (pinned in
  ``deploy/hub/package.json`` and its lock file); both run offline once installed;
* one single-user server per student, started from this repository's ``.venv`` (the course environment, so every
  notebook, app and checker works as in ``make lab``), with ``OMP_NUM_THREADS=1`` (a kernel takes one core);
* each student's own copy of the course, made at their first start (:func:`copy_course`): the student edition
  (``make student``: exercise stubs, no solutions) or the full notebooks, English or Chinese;
* authentication always on: a password file the lecturer controls (:class:`PasswordFileAuthenticator`; salted
  PBKDF2 hashes, never the passwords). The first ``make hub`` writes it with a ``teacher`` (admin) and
  ``HUB_STUDENTS`` students, and hands the lecturer their passwords once, in a CSV readable by its owner only;
* idle servers stopped by jupyterhub-idle-culler (a hub service) and idle kernels by each server;
* homework: nbgrader's exchange in ``<run dir>/exchange`` (``make assignments`` points the lecturer's course at the
  same folder), where each student fetches and submits under their hub name (:mod:`pe_helpers.grading`); the
  students' JupyterLab shows nbgrader's assignment list, not the lecturer's formgrader.

What this local hub does not give: isolation between students. Without root, every server runs as the user who
started the hub (JupyterHub's ``SimpleLocalProcessSpawner``): a student's code could read another's folder, and
memory or CPU limits are advertised (``MEM_LIMIT``) but not enforced. It is for trying the set-up, a workshop of
trusted people, and the tests. For a class, use The Littlest JupyterHub on one VM (real users, systemd limits) or
Zero to JupyterHub on Kubernetes beyond that: ``deploy/tljh/README.md`` and ``deploy/z2jh/config.yaml``, with the
sizes measured by ``benchmarks/hub_load.py`` (TEACHING.md, "A class on a hub").
"""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import hmac
import json
import os
import secrets
import shutil
import socket
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .i18n import _, set_language

__all__ = ["REPO", "RUN_DIR", "PROXY", "hash_password", "verify_password", "read_passwords", "add_users",
           "course_source", "copy_course", "configure", "check_ports", "main"]

REPO = Path(__file__).resolve().parents[1]
#: Where a running hub keeps its state: database, cookie secret, password file, the students' folders.
RUN_DIR = REPO / "build" / "hub"
#: configurable-http-proxy, installed by ``npm ci`` in deploy/hub (``make hub``).
PROXY = REPO / "deploy" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
_ITERATIONS = 200_000
#: Seconds without activity before a student's server is stopped (the culler) and an idle kernel shut down.
IDLE_SERVER_SECONDS = 3600
IDLE_KERNEL_SECONDS = 1200
#: What each server advertises (not enforced by a local spawner; TLJH and Kubernetes enforce theirs): one course
#: kernel peaks at about 460 MB (torch 223 MB of it), so 1 GB holds one kernel and the server with room.
MEM_LIMIT = "1G"


def hash_password(password: str, *, salt: str | None = None, iterations: int = _ITERATIONS) -> str:
    """``pbkdf2_sha256$iterations$salt$hash`` of ``password`` (a random salt unless one is given)."""
    if not isinstance(password, str) or not password:
        raise ValueError(_("password must be a non-empty string, got a {kind}.").format(kind=type(password).__name__))
    salt = salt or secrets.token_hex(8)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations).hex()
    return f"pbkdf2_sha256${iterations}${salt}${digest}"


def verify_password(password: str, stored: str) -> bool:
    """Does ``password`` match ``stored`` (a :func:`hash_password` string)? Compared in constant time."""
    try:
        kind, iterations, salt, digest = stored.split("$")
    except ValueError:
        return False
    if kind != "pbkdf2_sha256" or not isinstance(password, str):
        return False
    return hmac.compare_digest(hash_password(password, salt=salt, iterations=int(iterations)).split("$")[3], digest)


def read_passwords(path: Path) -> dict[str, str]:
    """``{user: stored hash}`` from a password file (``user:hash`` per line; ``#`` starts a comment)."""
    users = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, stored = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(_("{path}, line {number}: expected user:hash, got {line!r}.").format(
                path=path, number=number, line=line[:40]))
        users[name.strip()] = stored.strip()
    return users


def add_users(path: Path, names: Iterable[str]) -> dict[str, str]:
    """Give each of ``names`` a random password in the password file ``path`` (created, readable by its owner only);
    returns ``{user: password}``: the only place the passwords are ever seen. A name already there is refused."""
    path = Path(path)
    users = read_passwords(path) if path.exists() else {}
    names = list(names)
    for name in names:
        if not name or not all(ch.isalnum() or ch in "-_." for ch in name) or name in users:
            raise ValueError(_("user name {name!r} is taken or not allowed (letters, digits, - _ . only).").format(name=name))
    fresh = {name: secrets.token_urlsafe(9) for name in names}
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8") as f:
        for name, password in fresh.items():
            f.write(f"{name}:{hash_password(password)}\n")
    return fresh


def course_source(edition: str = "student", lang: str = "en", repo: Path = REPO) -> Path:
    """The folder a student's copy is made from: ``student/`` (``make student``) or ``notebooks/``, in ``lang``."""
    if edition not in ("student", "full") or lang not in ("en", "zh"):
        raise ValueError(_("edition must be student or full and lang en or zh, got {edition!r}, {lang!r}.").format(
            edition=edition, lang=lang))
    base = repo / ("student" if edition == "student" else "notebooks")
    return base / "zh" if lang == "zh" else base


def copy_course(source: Path, home: Path) -> Path:
    """``home/pe-notebooks``: a copy of the course's notebooks from ``source``, made once (a student's work is never
    overwritten by a later start)."""
    target = Path(home) / "pe-notebooks"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("zh", "locale", "*.py", "__pycache__",
                                                                       ".ipynb_checkpoints"))
    return target


def check_ports(ports: Sequence[int], host: str = "127.0.0.1") -> None:
    """Raise ``OSError`` naming the first of ``ports`` another program holds (the hub needs all three)."""
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError:
                raise OSError(_("port {port} on {host} is already in use: stop what holds it, or choose another "
                                "port (make hub HUB_PORT=8100).").format(port=port, host=host)) from None


def configure(c, env: Mapping[str, str] = os.environ) -> None:  # noqa: ANN001 - traitlets' config object
    """Fill JupyterHub's config ``c`` from the ``PE_HUB_*`` variables :func:`main` sets (see the module docstring)."""
    from jupyterhub.spawner import SimpleLocalProcessSpawner

    run = Path(env.get("PE_HUB_DIR", RUN_DIR))
    port = int(env.get("PE_HUB_PORT", "8000"))
    ip = env.get("PE_HUB_IP", "127.0.0.1")
    source = Path(env.get("PE_HUB_COURSE", course_source()))
    venv_bin = Path(sys.executable).parent

    c.JupyterHub.bind_url = f"http://{ip}:{port}"
    c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{port + 1}"
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 2}"
    c.ConfigurableHTTPProxy.command = [str(Path(env.get("PE_HUB_PROXY", PROXY)))]
    c.JupyterHub.db_url = f"sqlite:///{run / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(run / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(run / "jupyterhub.pid")

    c.JupyterHub.authenticator_class = _authenticator_class()
    c.PasswordFileAuthenticator.password_file = str(run / "passwords.txt")
    c.Authenticator.admin_users = {"teacher"}
    c.Authenticator.allow_all = True  # the password file is the list of who may log in

    c.JupyterHub.spawner_class = SimpleLocalProcessSpawner
    c.SimpleLocalProcessSpawner.home_dir_template = str(run / "users" / "{username}")
    c.Spawner.cmd = [str(venv_bin / "jupyterhub-singleuser")]
    c.Spawner.default_url = "/lab/tree/pe-notebooks"
    c.Spawner.notebook_dir = str(run / "users" / "{username}")
    c.Spawner.pre_spawn_hook = lambda spawner: copy_course(source, Path(spawner.home_dir))
    threads = env.get("PE_HUB_THREADS", "1")  # per kernel; benchmarks/hub_load.py --threads compares
    c.Spawner.environment = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
                             "PATH": f"{venv_bin}:/usr/bin:/bin", "JUPYTER_CONFIG_PATH": str(_nbgrader_exchange(run, env))}
    c.Spawner.mem_limit = MEM_LIMIT
    c.Spawner.args = [f"--MappingKernelManager.cull_idle_timeout={IDLE_KERNEL_SECONDS}",
                      "--MappingKernelManager.cull_interval=300",
                      "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                      "--LabApp.extension_manager=readonly",  # offline: nothing asks the package index
                      *(["--allow-root"] if os.geteuid() == 0 else [])]  # containers and CI run as root
    c.Spawner.start_timeout = 120  # a 2-core machine starting many servers at once
    c.Spawner.http_timeout = 90
    c.JupyterHub.concurrent_spawn_limit = int(env.get("PE_HUB_CONCURRENT_SPAWNS", "20"))

    c.JupyterHub.load_roles = [{"name": "idle-culler", "services": ["idle-culler"],
                                "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
    c.JupyterHub.services = [{"name": "idle-culler", "command": [
        sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={IDLE_SERVER_SECONDS}"]}]


def _nbgrader_exchange(run: Path, env: Mapping[str, str]) -> Path:
    """The folder of the students' Jupyter configuration for nbgrader: fetch from and submit to the course's exchange
    (``PE_HUB_EXCHANGE``, default ``<run>/exchange``, where ``make assignments`` points the lecturer's side) under
    the hub's user name. Every server of this hub runs as one system user, so nbgrader cannot tell students
    apart by the owner of their files; the name comes from ``JUPYTERHUB_USER``."""
    from .grading import student_config

    exchange = Path(env.get("PE_HUB_EXCHANGE", run / "exchange"))
    exchange.mkdir(parents=True, exist_ok=True)
    folder = run / "nbgrader"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(student_config(exchange), encoding="utf-8")
    # the lecturer's parts of nbgrader stay out of the students' JupyterLab (nbgrader's advice for students): its
    # formgrader, course list and assignment editor; the students keep the assignment list and the validate button
    lecturer = ("formgrader", "course_list")
    (folder / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"jpserver_extensions": {
        f"nbgrader.server_extensions.{name}": False for name in lecturer}}}, indent=1), encoding="utf-8")
    (folder / "labconfig").mkdir(exist_ok=True)
    (folder / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": {
        f"@jupyter/nbgrader:{name}": True for name in ("formgrader", "course-list", "create-assignment")}}, indent=1),
        encoding="utf-8")
    return folder


@functools.cache
def _authenticator_class():  # noqa: ANN202 - JupyterHub is imported only by a running hub
    from jupyterhub.auth import Authenticator
    from traitlets import Unicode

    class PasswordFileAuthenticator(Authenticator):
        """Log in with a name and password from the lecturer's password file (:func:`add_users`); read at every
        login, so users added while the hub runs can log in at once."""

        password_file = Unicode(config=True, help="user:hash lines (pe_helpers.hub.add_users)")

        async def authenticate(self, handler, data):  # noqa: ANN001, ANN201 - JupyterHub's signature
            name = self.normalize_username(data.get("username", ""))
            stored = read_passwords(Path(self.password_file)).get(name) if self.password_file else None
            if stored and verify_password(data.get("password", ""), stored):
                return {"name": name, "admin": name in self.admin_users}
            return None

    return PasswordFileAuthenticator


def __getattr__(name: str):  # noqa: ANN202 - PEP 562: the authenticator class needs JupyterHub, made on first use
    if name == "PasswordFileAuthenticator":
        value = globals()[name] = _authenticator_class()
        return value
    raise AttributeError(name)


def _first_run(run: Path, students: int) -> Path | None:
    """The password file with a teacher and ``students`` students, unless one exists; the CSV of their passwords."""
    passwords = run / "passwords.txt"
    if passwords.exists():
        return None
    names = ["teacher", *(f"student{i:02d}" for i in range(1, students + 1))]
    fresh = add_users(passwords, names)
    sheet = run / "passwords-for-the-lecturer.csv"
    with os.fdopen(os.open(sheet, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("user", "password"), *fresh.items()])
    return sheet


def main(argv: Sequence[str] | None = None) -> int:
    """``serve`` (the hub) or ``add-users NAME...``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m pe_helpers.hub", description=_("The course on a JupyterHub."))
    parser.add_argument("command", choices=("serve", "add-users"))
    parser.add_argument("names", nargs="*", help=_("add-users: the new users' names"))
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--ip", default="127.0.0.1", help=_("the address students connect to (default: this machine only)"))
    parser.add_argument("--dir", type=Path, default=RUN_DIR)
    parser.add_argument("--edition", choices=("student", "full"), default="student")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--students", type=int, default=30)
    args = parser.parse_args(argv)
    set_language(args.lang)
    run = args.dir.resolve()
    if args.command == "add-users":
        for name, password in add_users(run / "passwords.txt", args.names).items():
            print(f"{name},{password}")
        return 0
    if not PROXY.exists():
        print(_("make hub: configurable-http-proxy is missing ({path}); `make hub` installs it with npm "
                "(deploy/hub/package.json).").format(path=PROXY), file=sys.stderr)
        return 2
    source = course_source(args.edition, args.lang)
    if not source.is_dir():
        print(_("make hub: the course folder {path} is missing; `make hub` builds it (make student).").format(
            path=source), file=sys.stderr)
        return 2
    try:
        check_ports([args.port, args.port + 1, args.port + 2])
    except OSError as err:
        print(f"make hub: {err}", file=sys.stderr)
        return 2
    run.mkdir(parents=True, exist_ok=True)
    sheet = _first_run(run, args.students)
    if sheet:
        print(_("First start: a teacher (admin) and {count} students, their passwords in {sheet} (readable by you "
                "only; hand them out, then delete it). More: make hub-users NAMES='ann bob'.").format(
            count=args.students, sheet=sheet))
    print(_("The hub: http://{ip}:{port}/ (Ctrl+C stops it and every student's server).").format(ip=args.ip, port=args.port),
          flush=True)
    env = {**os.environ, "PE_HUB_DIR": str(run), "PE_HUB_PORT": str(args.port), "PE_HUB_IP": args.ip,
           "PE_HUB_COURSE": str(source), "PE_HUB_PROXY": str(PROXY),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    config = REPO / "deploy" / "hub" / "jupyterhub_config.py"
    os.chdir(run)
    os.execve(sys.executable, [sys.executable, "-m", "jupyterhub", "-f", str(config)], env)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
