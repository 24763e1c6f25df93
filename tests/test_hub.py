"""``make hub``, for real: JupyterHub with its proxy (configurable-http-proxy from npm), started by the lecturer's
command (``python -m pe_helpers.hub serve``) on free ports in a folder of its own. Two students log in through the
login form, have their servers spawned, each runs notebook 00 from their own copy of the course and moves its app
with the widget message a browser sends (receiving the new image); a third user with a wrong password, and a name
the password file does not know, are refused; Ctrl+C stops the hub, the proxy and every server. The load test is a
benchmark (benchmarks/hub_load.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pe_helpers import hub
from pe_helpers.testing import hub as th

pytestmark = pytest.mark.skipif(not hub.PROXY.exists(), reason="configurable-http-proxy is not installed: make test "
                                "installs it (deploy/hub/package.json); test-ranges reuses that install")


def _run_notebook_and_move_its_app(student: th.Student) -> tuple[float, bytes]:
    async def go() -> bytes:
        kernel = student.kernel("pe-notebooks/00_start_here.ipynb")
        await kernel.connect()
        try:
            for code in th.notebook_code(Path(hub.REPO) / "notebooks" / "00_start_here.ipynb"):
                await kernel.execute(code)
            slider = kernel.find_comm("IntSliderModel", description="pos")
            image = kernel.find_comm("ImageModel")
            return await kernel.move(slider, 20, image)
        finally:
            await kernel.close()

    spawn = student.spawn()
    return spawn, asyncio.run(go())


def test_two_students_work_on_their_own_copies_and_a_wrong_password_is_refused(tmp_path: Path) -> None:
    running = th.start_hub(tmp_path / "hub", students=3, edition="full")
    try:
        passwords = th.passwords(running.run_dir)
        assert set(passwords) == {"teacher", "student01", "student02", "student03"}
        assert (running.run_dir / "passwords-for-the-lecturer.csv").stat().st_mode & 0o077 == 0  # the lecturer's only
        assert passwords["student01"] not in (running.run_dir / "passwords.txt").read_text()  # hashes, not passwords

        for name, password in (("student03", "not-the-password"), ("mallory", passwords["student01"])):
            with pytest.raises(th.LoginRefused):
                th.Student(running.url, name, password).login()

        students = [th.Student(running.url, name, passwords[name]) for name in ("student01", "student02")]
        for s in students:
            s.login()
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(_run_notebook_and_move_its_app, students))
        for (spawn, png), s in zip(results, students):
            assert png.startswith(b"\x89PNG") and len(png) > 10_000, f"{s.name}: no new image after the move"
            assert spawn < 120
        homes = [running.run_dir / "users" / s.name / "pe-notebooks" for s in students]
        assert all((h / "00_start_here.ipynb").is_file() for h in homes), "each student has a copy of the course"
        (homes[0] / "mine.txt").write_text("student01's work")
        assert not (homes[1] / "mine.txt").exists()  # copies, not one shared folder
        status, _ = students[1].request("GET", students[0].server_path("/api/contents"))
        assert status in (403, 404), "a student's token opens another student's server"
    finally:
        running.stop()
    assert running.process.returncode is not None
    with pytest.raises(ProcessLookupError):  # nothing of the hub's process group is left: proxy, servers, kernels
        os.killpg(running.process.pid, signal.SIGCONT)
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # connections may linger in TIME_WAIT
        s.bind(("127.0.0.1", int(running.url.rsplit(":", 1)[1])))  # nobody listens on the hub's port any more


def test_the_hub_says_what_is_wrong_before_starting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        assert hub.main(["serve", "--port", str(port), "--dir", str(tmp_path), "--edition", "full"]) == 2
    assert f"port {port}" in capsys.readouterr().err
    assert not (tmp_path / "passwords.txt").exists()  # nothing written before the checks pass


def test_the_hub_names_a_missing_proxy(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub, "PROXY", tmp_path / "configurable-http-proxy")
    assert hub.main(["serve", "--dir", str(tmp_path), "--edition", "full"]) == 2
    err = capsys.readouterr().err
    assert "configurable-http-proxy is missing" in err and "npm" in err
    assert not (tmp_path / "passwords.txt").exists()


def test_passwords_are_salted_hashes_checked_in_constant_time(tmp_path: Path) -> None:
    stored = hub.hash_password("correct horse")
    assert stored != hub.hash_password("correct horse")  # a salt of its own
    assert hub.verify_password("correct horse", stored) and not hub.verify_password("correct horsf", stored)
    assert not hub.verify_password("x", "garbage")
    fresh = hub.add_users(tmp_path / "p.txt", ["ann", "bob"])
    assert set(hub.read_passwords(tmp_path / "p.txt")) == {"ann", "bob"} and all(len(p) >= 12 for p in fresh.values())
    with pytest.raises(ValueError, match="ann"):
        hub.add_users(tmp_path / "p.txt", ["ann"])
    with pytest.raises(ValueError, match="a b"):
        hub.add_users(tmp_path / "p.txt", ["a b"])


def test_the_zero_to_jupyterhub_config_validates_against_the_charts_schema() -> None:
    """deploy/z2jh/config.yaml over the chart's defaults, as helm merges them, against the chart's values schema."""
    import json

    import jsonschema
    import yaml

    z2jh = Path(hub.REPO) / "deploy" / "z2jh"

    def merged(base: dict, over: dict) -> dict:
        out = dict(base)
        for key, value in over.items():
            out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
        return out

    config = yaml.safe_load((z2jh / "config.yaml").read_text())
    values = merged(yaml.safe_load((z2jh / "chart-values.yaml").read_text()), config)
    schema = json.loads((z2jh / "values.schema.json").read_text())
    jsonschema.Draft7Validator(schema).validate(values)
    with pytest.raises(jsonschema.ValidationError):  # the schema does catch a mistake
        jsonschema.Draft7Validator(schema).validate(merged(values, {"singleuser": {"memory": {"limt": "1G"}}}))
    assert config["cull"]["enabled"] and config["singleuser"]["extraEnv"]["OMP_NUM_THREADS"] == "1"
    assert config["hub"]["config"]["JupyterHub"]["authenticator_class"] != "dummy"
