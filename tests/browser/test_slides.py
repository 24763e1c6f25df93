"""Every notebook as a slide deck: ``make present NB=NN``, walked with the keyboard in Chromium.

Per deck, one Voilà server (started with the very command a lecturer types, on a copy of
notebooks/; the next deck's server starts while this one is walked, so its notebook runs meanwhile)
and ONE page load: wait for the launcher's "Deck ready" line, open the deck at 1920 x 1080 and time
the first slide; press Space through the whole deck (every fragment and every slide, vertical ones
included: the decks navigate linearly) and, on each slide once its last fragment is shown, assert that nothing sticks out of the
1280 x 720 frame or scrolls, that no text outside a formula is under 24 px, nor any figure's text (its PNG's
smallest font and dpi at the image's on-screen width; the deck's kernels draw with ``PE_PRESENT=1``), and that an app's figure
takes at least 60 % of the slide's width; on a slide with apps hold an arrow key on each for a second and drag a
handle across its range, clicking another option half-way (``stress_app``): at rest the app must show the
full-resolution render of exactly what its controls read, pixel for pixel a fresh render of those values, with a
fresh app's caption (deck 03 first moves one control with a key press, ``move_app_control``, for the Chinese deck's
comparison). Then resize the same page to 1280 x 720 (reveal.js
lays the deck out again), go back to the first slide with Home, walk again with → alone (what a presenter's clicker
sends; it must visit every slide, vertical ones included) and check the fit, saving
a screenshot of every slide under build/screenshots/slides/NN/ (JPEG: a fifth of a PNG's time); then make the last
slide almost empty, let reveal.js lay it out, put a block nearly as tall as the frame on it (an output that arrives
after its slide is shown) and check that the deck centres it again. Every app is
also saved on its own there at both sizes (``NN-appI-at-rest-1920x1080.png`` after its move, the held key and the drag,
``NN-appI-1280x720.jpg``). Throughout: no request leaves
127.0.0.1, no code and no checker verdict is shown, every slide was visited.

One Chinese deck (``make present NB=03 LANG=zh``) is opened too: its app moves, its screenshot is
saved, and its figure is not the English one for the same controls (its labels are Chinese).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from pe_helpers.figures._base import MIN_SLIDE_TEXT_PX
from pe_helpers.present.budgets import FILL_EXCEPTIONS, MIN_FILLED

from pe_helpers.testing import browser as pb

pytestmark = pytest.mark.browser

DECKS = [p.name for p in pb.notebook_paths() if p.name[:2].isdigit()]
ZH_DECK = "03"
ZH_KEY = next(f"zh/{p.name}" for p in pb.notebook_paths() if p.name.startswith(ZH_DECK + "_"))
#: The order the servers start in: every English deck, then the Chinese one.
ORDER = [*DECKS, ZH_KEY]
#: How many decks' servers start (and run their notebooks) ahead of the deck being walked.
LOOKAHEAD = 1
#: Seconds Voilà gets to shut its kernels down before its process group is killed (the copies are throwaway).
STOP_GRACE = 3.0
#: The one key each walk presses, by viewport: Space, and → as a clicker sends it.
WALK_KEYS = {"1920x1080": "Space", "1280x720": "ArrowRight"}
#: Deck ZH_DECK's first app after its move in English: (control, new value, figure), for the Chinese deck to differ from.
_ENGLISH_MOVE: dict[str, tuple[str, str, str]] = {}


class DeckServers:
    """``make present NB=NN`` per deck, in the order of ``ORDER``; the next ones start while one is walked.

    A deck is named by its path under ``root``: ``03_x.ipynb``, or ``zh/03_x.ipynb`` for the Chinese edition.
    """

    def __init__(self, root: Path, home: Path, lookahead: int = LOOKAHEAD) -> None:
        self.root, self.home, self.lookahead = root, home, lookahead
        self.pool = ThreadPoolExecutor(max_workers=lookahead + 1, thread_name_prefix="deck-server")
        # Voilà takes a while to shut its kernels down: stopping happens beside the next deck.
        self.stopper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deck-stop")
        self.started: dict[str, Future] = {}

    def _start(self, key: str) -> pb.Server:
        notebook = self.root / key
        lang = "zh" if key.startswith("zh/") else "en"
        env = pb.isolated_jupyter_env(self.home / "slides-home")
        env["PE_PRESENT_REFILL_DELAY"] = "3600"  # each deck is opened once: no second run of it beside the walk
        port, token = pb.free_port(), secrets.token_hex(24)
        server = pb.start_server(
            f"make present NB={notebook.name[:2]}" + (" LANG=zh" if lang == "zh" else ""),
            pb.present_command(notebook, port, token), port=port, token=token, env=env, cwd=pb.REPO,
            log_path=self.home / f"slides-{lang}-{notebook.stem}.log", ready_path="/", root=notebook.parent,
            ready_with_token=False, ready_status=(302, 403),
        )
        server.extra["notebook"] = notebook
        return server

    def submit(self, key: str) -> Future:
        if key not in self.started:
            self.started[key] = self.pool.submit(self._start, key)
        return self.started[key]

    def take(self, key: str) -> pb.Server:
        """The server of deck ``key`` (started now if it is not yet); the next decks' servers start too."""
        future = self.submit(key)
        if key in ORDER:
            for nxt in ORDER[ORDER.index(key) + 1:ORDER.index(key) + 1 + self.lookahead]:
                self.submit(nxt)
        return future.result()

    def stop(self, key: str) -> None:
        """Stop deck ``key``'s server in the background."""
        future = self.started.get(key)
        if future is not None and future.done() and future.exception() is None:
            self.stopper.submit(pb.stop_server, future.result(), grace=STOP_GRACE)

    def close(self) -> None:
        for key in list(self.started):
            with contextlib.suppress(Exception):  # a server that failed to start: its test has said why
                self.started[key].result(timeout=pb.SERVER_START_TIMEOUT)
            self.stop(key)
        self.pool.shutdown(wait=True)
        self.stopper.shutdown(wait=True)


@pytest.fixture(scope="module")
def deck_servers(chromium: str, browser_home: Path, notebook_copies: Path) -> Iterator[DeckServers]:
    if shutil.which("make") is None:
        pytest.skip("`make` is not installed (present mode is `make present NB=05`)")
    pb.copy_notebooks(notebook_copies / "zh", [pb.NOTEBOOKS / ZH_KEY])
    servers = DeckServers(notebook_copies, browser_home)
    servers.submit(ORDER[0])  # its notebook runs while Chromium starts
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture()
def deck_server(request: pytest.FixtureRequest, deck_servers: DeckServers, browser: object) -> Iterator[pb.Server]:
    """``make present NB=NN`` for the deck named by the test's parameter; stopped at the end.

    (``browser`` first: Chromium starts while the first server does.)
    """
    server = deck_servers.take(request.param)
    try:
        yield server
    finally:
        deck_servers.stop(request.param)


def _made_with(deck: str) -> dict:
    """What a deck's apps are made with besides their controls' values (``at_rest_problems``'s ``made_with``): notebook
    05's extrapolation app shows the shipped seed-0 models of its lab panel, three schemes on the look-back task
    (its cell ``TrainNow(reference, encodings=("none", "learned", "rope"), tasks=("lookback",), seed=0)``)."""
    if deck != "05":
        return {}
    from pe_helpers.extrapolation import reference_models

    return {"extrapolation_app": {"results": reference_models(("none", "learned", "rope"), tasks=("lookback",))}}


def _walk(page, *, total: int, shots: Path | None, move_apps: bool, next_key: str = "Space",  # noqa: ANN001
          figures: list[str] | None = None, app_cells: list[int] | None = None,
          size: str = "", rests: list | None = None, made_with: dict | None = None) -> tuple[dict[str, pb.SlideReport], list]:
    """Step through the whole deck from the first slide with ``next_key`` alone (Space, or → as a clicker sends it); measure
    each slide once its fragments are all shown
    (and once the apps of its ``app_cells``, Voilà's cell numbers, are there).

    With ``move_apps``, one control of every app is moved; ``figures`` collects each app's figure after it; with
    ``rests``, every app is then held and dragged (:func:`pe_helpers.testing.browser.stress_app`) and what it shows
    at rest is collected (``(slide, app, AtRest or the error)``).
    With ``shots``, every app is also saved on its own as ``NN-appI-{size}`` (PNG after a move, else JPEG),
    and, unless ``move_apps``, every slide as ``NN.jpg``.
    """
    reports: dict[str, pb.SlideReport] = {}
    moves: list = []
    state = pb.deck_state(page)
    while True:
        if not state["fragmentsLeft"]:
            key = state["slide"]
            if key not in reports:
                reports[key] = pb.SlideReport(len(reports) + 1, state["hash"], "")
            report = reports[key]
            pending = pb.wait_slide_apps(page, app_cells) if app_cells else []
            m = pb.measure_slide(page)
            report.text = m["text"]
            report.problems = [*m["overflow"], *m["scrolls"]]
            report.problems += [f"an app's cell shows no app {pb.SLIDE_APP_TIMEOUT:.0f} s after the slide opened: "
                                f"{t!r}" for t in pending]
            report.smallest_text_px = m.get("smallest") or 0.0
            report.app_shares = [a["share"] for a in m["apps"]]
            report.figures = pb.figure_fonts(page, pb.CURRENT_SLIDE) if move_apps else []  # read at 1080p only
            report.prose, report.raw_tables = m["prose"], m["rawTables"]
            report.wrapped_printouts, report.filled, report.heading_only = m["wrappedPrintouts"], m["filled"], m["headingOnly"]
            if move_apps and m["apps"]:
                for i, app in enumerate(pb.iter_apps(page, pb.CURRENT_SLIDE)):
                    if rests is None or figures is not None:  # one key press; the held key and drag check more
                        shot = shots / f"{report.number:02d}-app{i}-{size}.png" if shots and rests is None else None
                        moves.append(pb.move_app_control(page, app, i, shot))
                        if figures is not None:
                            figures.append(pb.app_figure_src(app))
                    if rests is not None:  # on a 2× screen (a HiDPI laptop driving the projector)
                        try:
                            pb.emulate_device_ratio(page, 2)
                            rest = pb.stress_app(page, app, check=lambda r: pb.at_rest_problems(
                                r, present=True, made_with=made_with))
                            if rest.natural_width < 2 * rest.css_width - 1:
                                rest.problems.append(f"{rest.natural_width} px for {rest.css_width} CSS px at 2×")
                            if shots:
                                app.screenshot(path=str(shots / f"{report.number:02d}-app{i}-at-rest-{size}.png"))
                        except AssertionError as err:
                            rest = str(err)
                        finally:
                            pb.emulate_device_ratio(page, 1)
                        rests.append((report.number, i, rest))
                pb.blur_focus(page)
            if shots is not None and not move_apps:
                for i, app in enumerate(pb.iter_apps(page, pb.CURRENT_SLIDE) if m["apps"] else ()):
                    app.screenshot(path=str(shots / f"{report.number:02d}-app{i}-{size}.jpg"), type="jpeg", quality=80)
                pb.save_slide_screenshot(page, shots / f"{report.number:02d}.jpg")
            if state["index"] == total - 1:
                return reports, moves
        state = pb.press_next(page, state["hash"], key=next_key)
        if state is None:
            return reports, moves


def _problems(deck: str, notebook: Path, total: int, walks: dict[str, dict[str, pb.SlideReport]], moves: list,
              body: str, code: int, notes: int, offsite: list[str]) -> list[str]:
    problems = []
    for size, reports in walks.items():
        if len(reports) != total:
            problems.append(f"{WALK_KEYS[size]} alone visited {len(reports)} slides of {total} at {size}")
        for r in reports.values():
            problems += [f"slide {r.number} at {size} ({r.text[:50]!r}): {p}" for p in r.problems]
    big = walks["1920x1080"]
    for r in big.values():
        if r.smallest_text_px and r.smallest_text_px < pb.MIN_TEXT_PX_AT_1080P:
            problems.append(f"slide {r.number} ({r.text[:50]!r}): text of {r.smallest_text_px:.1f} px at 1080p "
                            f"(at least {pb.MIN_TEXT_PX_AT_1080P:.0f})")
        for f in r.figures:
            what = f"slide {r.number} ({r.text[:50]!r}): {'an app' if f['app'] else 'a'} figure"
            if f["screen"] is None:
                problems.append(f"{what} cannot be measured (not decoded, or no dpi/pe:min-font-pt in its PNG)")
            elif f["screen"] < MIN_SLIDE_TEXT_PX:
                problems.append(f"{what} shows {f['pt']:.1f} pt text at {f['screen']:.1f} px at 1080p (at least "
                                f"{MIN_SLIDE_TEXT_PX:.0f}; the deck's kernels draw with PE_PRESENT=1)")
        problems += [f"slide {r.number} ({r.text[:50]!r}): an app's figure takes {s:.0%} of the slide's width "
                     f"(at least {pb.MIN_APP_FIGURE_SHARE:.0%})" for s in r.app_shares if s < pb.MIN_APP_FIGURE_SHARE]
    problems += _over_budget(deck, walks["1280x720"])
    apps = sum(len(r.app_shares) for r in big.values())
    if pb.imports_apps(json.loads(notebook.read_text())) and not apps:
        problems.append("the notebook shows slider apps but no slide holds one (.pe-app)")
    expected = _apps_on_slides(json.loads(notebook.read_text())["cells"])
    if apps != expected:
        problems.append(f"{expected} cell(s) on the slides show an app, but the walk met {apps} (.pe-app)")
    if len(moves) != apps:
        problems.append(f"{apps} app(s) on the slides, {len(moves)} moved, held and dragged")
    if offsite:
        problems.append(f"requests left the machine: {sorted(set(offsite))[:5]}")
    if code:
        problems.append(f"{code} code input(s) in the deck")
    for verdict in ("[PASS]", "[NOT YET]", "Traceback"):
        if verdict in body:
            problems.append(f"the deck shows {verdict!r} (checks and solutions must be skipped in the deck)")
    if not notes:
        problems.append("the deck has no speaker notes (cells with slide_type 'notes')")
    return problems


def _over_budget(deck: str, reports: dict[str, pb.SlideReport]) -> list[str]:
    """The rendered slides over a budget: nearly empty, a raw Markdown table, a printout wider than the slide.
    (Prose and printed widths are checked from the notebooks of both editions: tests/test_slide_budgets.py.)"""
    problems = []
    for r in reports.values():
        what = f"slide {r.number} ({r.text[:50]!r})"
        excused = any(deck == d and r.text.startswith(start) for d, start in FILL_EXCEPTIONS)
        if r.filled < MIN_FILLED and not r.heading_only and not excused:
            problems.append(f"{what}: its content spans {r.filled:.0%} of the frame's height (at least {MIN_FILLED:.0%})")
        problems += [f"{what}: a Markdown table shown as raw text: {t!r}" for t in r.raw_tables]
        problems += [f"{what}: a printout wider than the slide: {w}" for w in r.wrapped_printouts]
    return problems


def _apps_on_slides(cells: list[dict]) -> int:
    """How many code cells on the deck's slides (not skipped) call an app factory (``..._app(``)."""
    from pe_helpers.present import slide_numbers

    return sum(1 for cell, number in zip(cells, slide_numbers(cells)) if number is not None and pb.calls_app(cell))


def _watch_offsite(page) -> list[str]:  # noqa: ANN001
    offsite: list[str] = []
    page.on("request", lambda r: offsite.append(r.url) if not r.url.startswith(("http://127.0.0.1:", "data:", "blob:",
                                                                                  "about:")) else None)
    return offsite


@pytest.mark.parametrize("deck_server", DECKS, indirect=True, ids=lambda n: n[:2])
def test_deck_fits_every_slide_and_its_apps_respond(deck_server: pb.Server, page: object) -> None:
    notebook = deck_server.extra["notebook"]
    deck = notebook.name[:2]
    offsite = _watch_offsite(page)
    shots = pb.SLIDE_SCREENSHOTS / deck
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    prepared = pb.wait_deck_prepared(deck_server)
    page.set_viewport_size(pb.SLIDE_VIEWPORTS[0])
    first = pb.open_deck(page, deck_server)
    total = page.evaluate(pb.NUMBER_SLIDES_JS)
    body = page.locator(".reveal .slides").text_content()  # hidden slides too (inner_text skips them)
    code = page.locator(".reveal .jp-CodeCell .jp-InputArea, .reveal .jp-InputArea-editor, .reveal .cm-editor, .reveal .highlight pre").count()
    notes = page.locator(".reveal aside.notes").count()
    walks: dict[str, dict[str, pb.SlideReport]] = {}
    try:
        figures: list[str] = []
        app_cells = pb.app_cell_indices(json.loads(notebook.read_text())["cells"])
        rests: list = []
        walks["1920x1080"], moves = _walk(page, total=total, shots=shots, move_apps=True,
                                          next_key=WALK_KEYS["1920x1080"], figures=figures if deck == ZH_DECK else None,
                                          app_cells=app_cells, size="1920x1080", rests=rests,
                                          made_with=_made_with(deck))
        if deck == ZH_DECK and moves:
            _ENGLISH_MOVE[deck] = (moves[0].control, moves[0].new_value, figures[0])
        page.set_viewport_size(pb.SLIDE_VIEWPORTS[1])  # the same page: reveal.js lays the deck out again
        pb.go_to_first_slide(page)
        walks["1280x720"], _ = _walk(page, total=total, shots=shots, move_apps=False, size="1280x720",
                                     next_key=WALK_KEYS["1280x720"])
        late = pb.grow_current_slide(page)  # the last slide, as if an output arrived after it was shown
    except Exception:
        page.screenshot(path=str(shots / "FAILED.png"))
        raise
    finally:
        pb.TIMINGS.append((f"slides {deck}: ready {prepared:.1f} s after the test began waiting, first slide "
                           f"{first:.1f} s after the request, {total} slides", time.monotonic() - t0))
    problems = _problems(deck, notebook, total, walks, rests, body, code, notes, offsite)
    (shots / "budgets.json").write_text(json.dumps(  # what each slide holds, beside its screenshot
        [{k: getattr(r, k) for k in ("number", "hash", "text", "prose", "filled", "heading_only", "raw_tables",
                                     "wrapped_printouts")} for r in walks["1280x720"].values()], indent=1))
    for number, i, rest in rests:  # held and dragged: at rest, the sharp render of what the controls read
        found = [rest] if isinstance(rest, str) else rest.problems
        problems += [f"slide {number}, app {i}: {p}" for p in found]
    if late["after"] - late["before"] < pb.SLIDE_HEIGHT / 2:
        problems.append(f"the late-content check grew the last slide from {late['before']} to {late['after']} px only")
    problems += [f"the last slide, grown from {late['before']} to {late['after']} px after it was shown, is not "
                 f"centred again: {p}" for p in late["overflow"]]
    pb.TIMINGS[-1] = (pb.TIMINGS[-1][0] + f", {len(rests)} app(s) held and dragged, {notes} note(s)", pb.TIMINGS[-1][1])
    assert not problems, f"deck {deck} ({notebook.name}):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("deck_server", [ZH_KEY], indirect=True, ids=["zh-03"])
def test_chinese_deck_moves_its_app_and_its_figure_speaks_chinese(deck_server: pb.Server, page: object) -> None:
    offsite = _watch_offsite(page)
    shots = pb.SLIDE_SCREENSHOTS / f"zh-{ZH_DECK}"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True, exist_ok=True)
    pb.wait_deck_prepared(deck_server)
    page.set_viewport_size(pb.SLIDE_VIEWPORTS[0])
    pb.open_deck(page, deck_server)
    pb.go_to_app_slide(page)
    app = next(pb.iter_apps(page, pb.CURRENT_SLIDE))
    move = pb.move_app_control(page, app, 0, shots / "app0.png")
    pb.save_slide_screenshot(page, shots / "slide.jpg")
    texts = app.inner_text()
    assert pb.has_cjk(texts), f"the Chinese deck's app shows no Chinese text: {texts[:300]!r}"
    assert pb.has_cjk(page.locator(pb.CURRENT_SLIDE).inner_text()), "the slide shows no Chinese text"
    english = _ENGLISH_MOVE.get(ZH_DECK)  # the English deck's walk moved the same app (when it ran first)
    if english is not None and english[:2] == (move.control, move.new_value):
        assert pb.app_figure_src(app) != english[2], (
            "the Chinese deck's figure is the English one for the same controls: its labels are not localized")
    assert not offsite, f"requests left the machine: {sorted(set(offsite))[:5]}"
