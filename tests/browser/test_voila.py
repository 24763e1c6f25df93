"""Present mode: ``make present NB=03`` serves one notebook as live slides with Voilà, code hidden.

The server is started with the very command a teacher types (on a copy of notebooks/, a
free port and a random token). The test checks that it refuses a visitor without the token or
with a foreign ``Host`` header, that ``make present`` alone lists the decks, that the URL it
prints opens the deck with no code cells, and that on the first app's slide (reached with Space)
a slider moved with the keyboard redraws the figure and its caption (polling waits, no sleeps).
Every deck, every slide: test_slides.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import pe_browser as pb

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


def test_present_mode_shows_apps_without_code_and_a_slider_moves_the_figure(voila_server: pb.Server,
                                                                            page: object) -> None:
    notebook = voila_server.extra["notebook"]
    stem = notebook.stem
    t0 = time.monotonic()
    rendered = pb.open_deck(page, voila_server)  # the first slide, every widget loaded
    # No code: Voilà strips every input area (strip_sources), only outputs are shown.
    code_inputs = page.locator(".jp-CodeCell .jp-InputArea, .jp-InputArea-editor, .CodeMirror, .cm-editor, .highlight pre")
    assert page.locator(".reveal .slides section").count() > 1, "present mode shows no slides"
    assert code_inputs.count() == 0, f"{code_inputs.count()} code inputs visible in present mode"
    body = page.locator("body").text_content()
    assert "Traceback" not in body, body[:2000]
    first_code = next(c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code")
    first_line = "".join(first_code["source"]).strip().splitlines()[0]  # "%matplotlib inline" by convention
    assert first_line not in body, f"the first code cell's source ({first_line!r}) is visible in present mode"
    pb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(pb.SCREENSHOTS / f"voila-{stem}.png"))
    apps = list(pb.iter_apps(page))
    assert apps, "present mode shows no slider app (.pe-app)"
    pb.go_to_first_app(page)
    first = next(pb.iter_apps(page, ".reveal .slides section.present"))
    move = pb.move_app_control(page, first, 0, pb.SCREENSHOTS / f"voila-{stem}-app0.png")
    pb.TIMINGS.append((f"Voilà {notebook.name}: rendered in {rendered:.1f} s, {len(apps)} app(s); "
                       f"[{move.control} {move.old_value}->{move.new_value} in {move.seconds:.2f} s]",
                       time.monotonic() - t0))
