"""Every notebook as a slide deck: ``make present NB=NN``, walked with the keyboard in Chromium.

Per deck (one Voilà server each, started with the very command a lecturer types, on a copy of
notebooks/): open it at 1920 x 1080 and time the first slide; press Space until the deck ends
(every fragment and every slide, vertical ones included) and on every slide assert that nothing
sticks out of the 1280 x 720 frame or scrolls, that no text outside a formula is under 24 px, and
that an app's figure takes at least 60 % of the slide's width; on a slide with apps move one control
of each and wait for the new figure (``move_app_control``). Save a screenshot of every slide under
build/screenshots/slides/NN/. Then walk the deck again at 1280 x 720 for overflow. Throughout: no
request leaves 127.0.0.1, no code and no checker verdict is shown, every slide was visited.
"""

from __future__ import annotations

import json
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import pe_browser as pb

pytestmark = pytest.mark.browser

DECKS = [p.name for p in pb.notebook_paths() if p.name[:2].isdigit()]


@pytest.fixture()
def deck_server(request: pytest.FixtureRequest, chromium: str, browser_home: Path,
                notebook_copies: Path) -> Iterator[pb.Server]:
    """``make present NB=NN`` for the deck named by the test's parameter; stopped at the end."""
    if shutil.which("make") is None:
        pytest.skip("`make` is not installed (present mode is `make present NB=05`)")
    notebook = notebook_copies / request.param
    env = pb.isolated_jupyter_env(browser_home / "slides-home")
    port, token = pb.free_port(), secrets.token_hex(24)
    server = pb.start_server(
        f"make present NB={notebook.name[:2]}", pb.present_command(notebook, port, token), port=port, token=token,
        env=env, cwd=pb.REPO, log_path=browser_home / f"slides-{notebook.stem}.log", ready_path="/",
        root=notebook_copies, ready_with_token=False, ready_status=(302, 403),
    )
    server.extra["notebook"] = notebook
    try:
        yield server
    finally:
        pb.stop_server(server)


def _walk(page, deck: str, *, shots: Path | None, move_apps: bool) -> tuple[dict[str, pb.SlideReport], list]:  # noqa: ANN001
    """Space through the whole deck from the first slide; measure every slide (the last fragment wins)."""
    reports: dict[str, pb.SlideReport] = {}
    moves: list = []
    moved: set[str] = set()
    order = 0
    while True:
        state = pb.deck_state(page)
        key = state["slide"]
        if key not in reports:
            order += 1
            reports[key] = pb.SlideReport(order, state["hash"], "")
        report = reports[key]
        m = pb.measure_slide(page)
        report.text = m["text"]
        report.problems = [*m["overflow"], *m["scrolls"]]
        report.smallest_text_px = m.get("smallest") or 0.0
        report.app_shares = [a["share"] for a in m["apps"]]
        if move_apps and m["apps"] and key not in moved:
            moved.add(key)
            for i, app in enumerate(pb.iter_apps(page, ".reveal .slides section.present")):
                if not app.is_visible():
                    continue
                shot = shots / f"{report.number:02d}-app{i}.png" if shots else None
                moves.append(pb.move_app_control(page, app, i, shot))
            page.evaluate("() => document.activeElement && document.activeElement.blur && document.activeElement.blur()")
        if shots is not None:
            page.screenshot(path=str(shots / f"{report.number:02d}.png"))
        if not pb.next_slide(page):
            return reports, moves


@pytest.mark.parametrize("deck_server", DECKS, indirect=True, ids=lambda n: n[:2])
def test_deck_fits_every_slide_and_its_apps_respond(deck_server: pb.Server, page: object) -> None:
    notebook = deck_server.extra["notebook"]
    deck = notebook.name[:2]
    offsite: list[str] = []
    page.on("request", lambda r: offsite.append(r.url) if not r.url.startswith(("http://127.0.0.1:", "data:", "blob:",
                                                                                  "about:")) else None)
    shots = pb.SLIDE_SCREENSHOTS / deck
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(pb.SLIDE_VIEWPORTS[0])
    t0 = time.monotonic()
    first = pb.open_deck(page, deck_server)
    total = page.evaluate(pb.NUMBER_SLIDES_JS)
    body = page.locator(".reveal .slides").text_content()  # hidden slides too (inner_text skips them)
    code = page.locator(".reveal .jp-CodeCell .jp-InputArea, .reveal .jp-InputArea-editor, .reveal .cm-editor, .reveal .highlight pre").count()
    notes = page.locator(".reveal aside.notes").count()
    try:
        big, moves = _walk(page, deck, shots=shots, move_apps=True)
        page.set_viewport_size(pb.SLIDE_VIEWPORTS[1])
        pb.go_to_first_slide(page)
        small, _ = _walk(page, deck, shots=None, move_apps=False)
    except Exception:
        page.screenshot(path=str(shots / "FAILED.png"))
        raise
    finally:
        pb.TIMINGS.append((f"slides {deck}: first slide after {first:.1f} s, {total} slides", time.monotonic() - t0))
    problems = []
    if len(big) != total or len(small) != total:
        problems.append(f"Space visited {len(big)} slides at 1920x1080 and {len(small)} at 1280x720 of {total}")
    for size, reports in (("1920x1080", big), ("1280x720", small)):
        for r in reports.values():
            problems += [f"slide {r.number} at {size} ({r.text[:50]!r}): {p}" for p in r.problems]
    for r in big.values():
        if r.smallest_text_px and r.smallest_text_px < pb.MIN_TEXT_PX_AT_1080P:
            problems.append(f"slide {r.number} ({r.text[:50]!r}): text of {r.smallest_text_px:.1f} px at 1080p "
                            f"(at least {pb.MIN_TEXT_PX_AT_1080P:.0f})")
        problems += [f"slide {r.number} ({r.text[:50]!r}): an app's figure takes {s:.0%} of the slide's width "
                     f"(at least {pb.MIN_APP_FIGURE_SHARE:.0%})" for s in r.app_shares if s < pb.MIN_APP_FIGURE_SHARE]
    apps = sum(len(r.app_shares) for r in big.values())
    if pb.imports_apps(json.loads(notebook.read_text())) and not apps:
        problems.append("the notebook shows slider apps but no slide holds one (.pe-app)")
    if len(moves) != apps:
        problems.append(f"{apps} app(s) on the slides, {len(moves)} moved")
    if offsite:
        problems.append(f"requests left the machine: {sorted(set(offsite))[:5]}")
    if code:
        problems.append(f"{code} code input(s) in the deck")
    for verdict in ("[PASS]", "[NOT YET]", "Traceback"):
        if verdict in body:
            problems.append(f"the deck shows {verdict!r} (checks and solutions must be skipped in the deck)")
    if not notes:
        problems.append("the deck has no speaker notes (cells with slide_type 'notes')")
    pb.TIMINGS[-1] = (pb.TIMINGS[-1][0] + f", {apps} app(s) moved, {notes} note(s)", pb.TIMINGS[-1][1])
    assert not problems, f"deck {deck} ({notebook.name}):\n  " + "\n  ".join(problems)
