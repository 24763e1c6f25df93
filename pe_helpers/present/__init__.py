"""Present mode: every notebook as live Reveal.js slides, served by Voilà (``make present NB=05``).

``python -m pe_helpers.present 05`` runs Voilà on ``notebooks/05_*.ipynb`` with the ``pe-slides``
template shipped in this package (``voila/templates/pe-slides/``: Voilà's ``reveal`` template made
to work offline and sized for a projector, see its ``index.html.j2`` and ``static/reveal/dist/theme/pe.css``).
Cells become slides from their ``slideshow`` metadata (``slide``, ``subslide``, ``fragment``,
``skip``, ``notes``); code is hidden, widgets are live (the notebook's kernel runs behind the
page), and ``S`` opens reveal.js's speaker view with the ``notes`` cells.

Why Voilà and not jupyterlab-rise: Voilà is already pinned (0.5.13, nothing new to install), its
page shows outputs only (no code, no editor, no toolbar, so a student on the projector sees no
solution), and this launcher can guard it. RISE 0.5 shows the whole JupyterLab with its
notebook, including the collapsed solution cells a click away, and would be a new pin.

Time to the first slide: Voilà shows a deck only once its whole notebook has run. The launcher
therefore starts Voilà with a *preheated* kernel (``preheat_kernel``, a pool of one per deck): the
notebook runs as soon as the server starts, and prints "Deck ready" when it is done; a browser that
opens the URL after that line gets the rendered deck at once (``benchmarks/present.py`` measures
it). As soon as someone takes the kernel, Voilà prepares the next one in the background
(:data:`REFILL_DELAY`), so a reload, or the same link opened on a second machine (the lecturer's laptop, then the
room's PC), is quick too: it waits at most for the rest of that run, never for a run of its own.
(Voilà's ``progressive_rendering`` cannot be combined with it and is not supported by the reveal
template: the slides are laid out only after the last cell.)

Editions: ``--lang zh`` (``make present NB=03 LANG=zh``) presents the Chinese edition, ``notebooks/zh/``.

Safety, as ``make lab``: 127.0.0.1 only, token authentication on (a random token unless one is
given), and a request whose ``Host`` header is neither ``127.0.0.1`` nor ``localhost`` (with an
optional port) is refused with 403 before any handler runs. Standalone Voilà sets
``allow_remote_access=True`` and so answers a forged Host; this is what a DNS-rebinding page
would send. Why a small subclass rather than ``--Voila.tornado_settings``: jupyter_server's own
check would let through any loopback address and does not cover Voilà's static-file handlers;
the rule here sits in front of every route, websockets included.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..i18n import _, get_language, set_language

__all__ = ["EDITIONS", "TEMPLATE", "DeckError", "allowed_host", "decks", "find_deck", "main", "slide_numbers",
           "voila_arguments"]

#: The Voilà template of the slides, found through ``JUPYTER_PATH`` (this folder holds ``voila/templates/``).
TEMPLATE = "pe-slides"
DATA_DIR = Path(__file__).resolve().parent
ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost"})
DEFAULT_PORT = 8866
#: Each edition's notebook folder, relative to the repository root (``make present LANG=zh``).
EDITIONS = {"en": Path("notebooks"), "zh": Path("notebooks") / "zh"}
#: Seconds after a visitor took the preheated kernel before Voilà prepares the next one (see voila_arguments): none,
#: so that the next load finds a kernel that has run, or is running, the deck. The environment variable
#: ``PE_PRESENT_REFILL_DELAY`` overrides it (:func:`refill_delay`).
REFILL_DELAY = 0.0
REFILL_DELAY_VARIABLE = "PE_PRESENT_REFILL_DELAY"

#: What the launcher prints, by edition, when the preheated kernel has run the whole deck (tests and benchmarks wait
#: for it).
READY_LINES = {"en": "Deck ready:", "zh": "幻灯片已就绪："}


class DeckError(ValueError):
    """``NB`` names no deck, or several (the message says which exist), or a setting is not one allowed."""


def refill_delay() -> float:
    """:data:`REFILL_DELAY`, or the seconds in ``PE_PRESENT_REFILL_DELAY`` when it is set. The browser tests set an
    hour: they open each deck once, and preparing a second kernel would run the whole notebook again beside the walk."""
    text = os.environ.get(REFILL_DELAY_VARIABLE, "").strip()
    if not text:
        return REFILL_DELAY
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds < float("inf"):
        raise DeckError(_("{name} must be a number of seconds, 0 or more, got {value!r}.").format(
            name=REFILL_DELAY_VARIABLE, value=text))
    return seconds


def decks(nb_dir: Path) -> list[Path]:
    """The notebooks that are decks: ``nb_dir/NN_*.ipynb`` (two digits), in order."""
    return sorted(p for p in Path(nb_dir).glob("[0-9][0-9]_*.ipynb") if p.is_file())


def find_deck(nb: str, nb_dir: Path) -> Path:
    """The one notebook ``nb_dir/NN_*.ipynb`` for ``nb`` (``"05"`` or ``"5"``), else :class:`DeckError`."""
    number = str(nb).strip()
    if re.fullmatch(r"\d", number):
        number = "0" + number
    listing = "\n".join(f"    {p.name}" for p in decks(nb_dir)) or "    (none)"
    if not re.fullmatch(r"\d\d", number):
        raise DeckError(_("NB={nb!r} is not a notebook number; give two digits, e.g. make present NB=03. "
                          "Decks in {folder}:\n{listing}").format(nb=nb, folder=nb_dir, listing=listing))
    found = sorted(Path(nb_dir).glob(f"{number}_*.ipynb"))
    if not found:
        raise DeckError(_("NB='{nb}' matches no {folder}/{number}_*.ipynb; give a notebook number, "
                          "e.g. make present NB=03. Decks in {folder}:\n{listing}").format(
            nb=nb, folder=nb_dir, number=number, listing=listing))
    if len(found) > 1:
        raise DeckError(_("NB='{nb}' matches several notebooks: {names}").format(
            nb=nb, names=", ".join(p.name for p in found)))
    return found[0]


def slide_numbers(cells: Sequence[Mapping]) -> list[int | None]:
    """The slide each cell is shown on (1-based, as in the deck's corner), ``None`` for skipped cells and notes.

    The rules of nbconvert's reveal.js exporter, which Voilà's template uses: the first cell that is
    neither ``skip`` nor ``notes`` opens slide 1 whatever its type; after it, ``slide`` and ``subslide``
    open the next slide (reveal.js numbers vertical slides in the same sequence); ``fragment`` and ``-``
    stay on the current one. TEACHING.md's slide table is checked against this (tests/test_present.py).
    """
    numbers: list[int | None] = []
    current = 0
    for cell in cells:
        kind = (cell.get("metadata", {}).get("slideshow") or {}).get("slide_type", "-")
        if kind in ("skip", "notes"):
            numbers.append(None)
            continue
        if current == 0 or kind in ("slide", "subslide"):
            current += 1
        numbers.append(current)
    return numbers


def allowed_host(host: str) -> bool:
    """Is ``host`` (a ``Host`` header, maybe with ``:port``) ``127.0.0.1`` or ``localhost``?"""
    name = re.sub(r":\d+$", "", host.strip()).lower()
    return name in ALLOWED_HOSTS


def voila_arguments(notebook: Path, port: int, token: str) -> list[str]:
    """Voilà's command line for one deck: 127.0.0.1 only, token on, no code, the pe-slides template."""
    return [
        str(notebook),
        "--no-browser",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
        "--Voila.port_retries=0",
        f"--token={token}",
        f"--template={TEMPLATE}",
        "--strip_sources=True",
        "--show_tracebacks=False",
        # Run the notebook when the server starts, in a kernel kept for the first visitor (see the docstring).
        "--VoilaConfiguration.preheat_kernel=True",
        "--VoilaConfiguration.default_pool_size=1",
        # Whoever takes the kernel, the next one (for a reload or a second browser) is prepared at once. Its run
        # shares the CPU with the first seconds of the lecture; a minute's delay instead left a reload waiting
        # up to a minute (57 s measured) in front of the class.
        f"--VoilaKernelManager.fill_delay={refill_delay()}",
    ]


def _voila_app():  # noqa: ANN202 (Voilà is imported only when a deck is served)
    import tornado.web
    from tornado.ioloop import IOLoop
    from tornado.routing import Matcher, Rule
    from voila.app import Voila

    class ForeignHost(Matcher):
        """Matches every request whose Host header is not an allowed one."""

        def match(self, request):  # noqa: ANN001, ANN201
            return None if allowed_host(request.host or "") else {}

    class RefuseHost(tornado.web.RequestHandler):
        def prepare(self) -> None:
            raise tornado.web.HTTPError(403, "Host %s is not allowed", self.request.host)

    class PresentVoila(Voila):
        """Voilà with a Host check in front of every route (see the module docstring)."""

        def listen(self) -> None:
            self.app.settings["allow_remote_access"] = False  # jupyter_server's own check too
            self.app.default_router.rules.insert(0, Rule(ForeignHost(), RefuseHost))
            IOLoop.current().add_callback(self.announce_ready)
            super().listen()

        async def announce_ready(self) -> None:
            """Print the edition's :data:`READY_LINES` once the preheated kernel has run the whole notebook.

            Voilà keeps, per notebook, a pool of tasks that each start a kernel and return its
            rendering task (``_pools``: Voilà 0.5's preheat, the version pinned; a test starts the
            launcher and waits for this line, so a change there does not go unnoticed).
            """
            for name, pool in list(getattr(self.kernel_manager, "_pools", {}).items()):
                if not pool:
                    continue
                try:
                    content = await pool[0]
                    await content["task"]
                except Exception as err:  # noqa: BLE001 (a failing notebook: Voilà shows the error in the page)
                    print(_("The deck {name} could not be prepared ({err!r}); it runs when the page is opened.").format(
                        name=name, err=err), flush=True)
                    continue
                if not content["renderer"].stop_generator:  # nobody took it half-way
                    print(READY_LINES[get_language()] + " " + _(
                        "{name} has run; the first slide shows as soon as the page is opened.").format(name=name), flush=True)

    return PresentVoila


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pe_helpers.present",
        description=_("Serve one notebook as live Reveal.js slides (Voilà), on 127.0.0.1 with a token."),
        epilog=_("Keys in the deck: → (or Space, PageDown, a clicker) next slide, ← (or Shift+Space, PageUp) back, "
                 "S speaker notes, F full screen, Esc overview."),
    )
    parser.add_argument("nb", nargs="?", help="the deck's notebook number, e.g. 05 (none: list the decks)")
    parser.add_argument("--lang", choices=sorted(EDITIONS), default="en",
                        help="the edition: en (notebooks/) or zh (notebooks/zh/, the Chinese edition)")
    parser.add_argument("--nb-dir", type=Path, default=None,
                        help="folder of the notebooks (default: the edition's, notebooks/ or notebooks/zh/)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--token", default="", help="the access token (default: a random one)")
    return parser


def _language(argv: Sequence[str] | None) -> str:
    """The edition asked for by ``--lang`` (before the parser runs, so that its help speaks that language too)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--lang=") else argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None
        if value in EDITIONS:
            return value
    return "en"


def main(argv: Sequence[str] | None = None) -> int:
    """List the decks (no ``nb``), or serve one; returns the exit status. Everything it prints speaks the edition's
    language (``--lang``)."""
    before = get_language()
    set_language(_language(argv))
    try:
        return _serve(_parser().parse_args(argv))
    finally:
        set_language(before)


def _serve(args: argparse.Namespace) -> int:
    """What :func:`main` does once its arguments are parsed, in the edition's language."""
    if args.nb_dir is None:
        args.nb_dir = EDITIONS[args.lang]
    if not args.nb:
        print(_("usage: make present NB=05   (serves notebooks/05_*.ipynb as slides; LANG=zh the Chinese edition; "
                "PRESENT_PORT=, PRESENT_TOKEN=)"))
        print(_("Decks in {folder}:").format(folder=args.nb_dir))
        for path in decks(args.nb_dir):
            print(f"    {path.name[:2]}  {path.name}")
        return 0
    try:
        notebook = find_deck(args.nb, args.nb_dir)
        refill_delay()
    except DeckError as err:
        print(f"make present: {err}", file=sys.stderr)
        return 2
    token = args.token or secrets.token_hex(16)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(DATA_DIR), os.environ.get("JUPYTER_PATH", "")]))
    os.environ["PE_PRESENT"] = "1"  # the deck's kernels draw slide-sized text (pe_helpers.figures._base.MIN_FONT_PT)
    print(_("Presenting {notebook} as slides (code hidden; → or Space = next slide, S = speaker notes). "
            "Open in a browser:").format(notebook=notebook))
    print(f"    http://127.0.0.1:{args.port}/?token={token}")
    print(_("Its notebook runs now: once a line says the deck is ready, the first slide shows at once. "
            "Stop with Ctrl+C."), flush=True)
    _voila_app().launch_instance(argv=voila_arguments(notebook, args.port, token))
    return 0
