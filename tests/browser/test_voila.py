"""Present mode's launcher: ``make present NB=NN`` serves one notebook as live slides with Voilà.

The server is started with the very command a teacher types (a free port and a random token), on a
one-cell notebook: the test checks that it refuses a visitor without the token or with a foreign
``Host`` header, that it prints its URL with the token, that ``make present`` alone lists the decks
and that an unknown number names the decks there are. Every deck, every slide, no code shown, every
app moved with the keyboard: test_slides.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pe_helpers.testing import browser as pb

pytestmark = pytest.mark.browser


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_present_mode_names_the_notebooks_when_the_number_matches_none(tmp_path: Path) -> None:
    (tmp_path / "03_something.ipynb").write_text("{}")
    cmd = pb.present_command(tmp_path / "99_missing.ipynb", port=pb.free_port(), token="unused")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0
    assert "NB='99' matches no" in result.stderr and "03_something.ipynb" in result.stderr, result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_present_mode_without_a_number_lists_the_decks(tmp_path: Path) -> None:
    (tmp_path / "03_something.ipynb").write_text("{}")
    cmd = [c for c in pb.present_command(tmp_path / "03_something.ipynb", port=pb.free_port(), token="unused")
           if not c.startswith("NB=")]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "usage: make present NB=" in result.stdout and "03_something.ipynb" in result.stdout, result.stdout


def test_present_mode_refuses_a_foreign_host_header(voila_server: pb.Server) -> None:
    static = voila_server.url("/voila/templates/pe-slides/static/reveal/dist/theme/pe.css")
    for host in ("evil.example", f"evil.example:{voila_server.port}", "127.0.0.2", f"localhost.evil.example:{voila_server.port}"):
        assert pb.http_status_with_host(static, host) == 403, host
    for host in (f"127.0.0.1:{voila_server.port}", f"localhost:{voila_server.port}"):
        assert pb.http_status_with_host(static, host) == 200, host


def test_present_mode_refuses_visitors_without_the_token(voila_server: pb.Server) -> None:
    status, location = pb.http_status(voila_server.url("/", with_token=False))
    assert status == 403 or (status == 302 and "/login" in location), (status, location)
    status, location = pb.http_status(voila_server.base + "/?token=not-the-token")
    assert status == 403 or (status == 302 and "/login" in location), (status, location)


def test_present_mode_prints_its_url_with_the_token(voila_server: pb.Server) -> None:
    log = voila_server.log_path.read_text(errors="replace")
    assert f"http://127.0.0.1:{voila_server.port}/?token={voila_server.token}" in log, log[-2000:]
    assert re.search(r"Presenting \S+/\d\d_\S+\.ipynb", log), log[-2000:]
