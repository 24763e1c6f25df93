"""Notebook 05, "Limits and extrapolation", app: slide the size from 1 to 4L and watch the copy head.

``extrapolation_app(results=live)`` uses models that are already trained (a
:class:`~pe_helpers.extrapolation.LabResults` from :func:`~pe_helpers.extrapolation.run_lab`, passed in
explicitly); moving a control never retrains. On each move the app computes the head's attention map
(:func:`pe_helpers.extrapolation.attention_map`, one forward pass of the example sequence, about a
millisecond) and hands it to the figure, which only draws. With no ``results`` the factory uses
:func:`default_results`: the reference's seed 0 loaded from its shipped weights (what notebook 05 shows),
loaded once per process and never trained, for the generic app tests and the app benchmark.

:class:`TrainNow` is the live-seed panel: the reference's seed 0 loaded from its shipped weights (no
training), drawn over the reference band, and a "train now" button with a progress bar that trains that
seed again on this CPU. Nothing is trained until the button is pressed.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence

import ipywidgets as widgets

from .._validate import require_int
from ..extrapolation import ENCODINGS, TASKS, attention_map, copy_head, reference_models, run_lab
from ..extrapolation.probe import source_positions
from ..extrapolation.results import LabResults, parse_encodings, parse_tasks
from ..figures.extrapolation import build_extrapolation
from ..figures._base import FigureHandle
from ..i18n import _
from ._base import App

__all__ = ["extrapolation_app"]

@functools.lru_cache(maxsize=1)
def default_results() -> LabResults:
    """The models the app shows when given none: the reference's seed 0, every scheme and task.

    They are loaded from the weights shipped with the package (:func:`~pe_helpers.extrapolation.reference_models`,
    about 2 s on one core), the same models notebook 05 shows, once per process; nothing is trained here.
    """
    return reference_models(ENCODINGS, tasks=TASKS)


def extrapolation_app(*, results: LabResults | None = None, task: str = "copy", encoding: str | None = None,
                      length: int | None = None) -> App:
    """Slider over the size ``1 .. test_len``, a choice of task and of scheme.

    Left: the chosen model's copy head on the example sequence of that size (hollow orange squares are where
    a perfect copy looks; grey lines mark position ``2L + 1``, never seen in training). Right: accuracy
    against size for every scheme on that task, the chosen one thick, the current size marked.
    ``encoding`` defaults to ``"sinusoidal"`` if it was run, else the first; ``length`` to ``L``.
    """
    results = default_results() if results is None else results
    if not isinstance(results, LabResults):
        raise TypeError(_("results must be a LabResults from pe_helpers.extrapolation.run_lab, got {type_name}.").format(type_name=type(results).__name__))
    if not results.models:
        raise ValueError(_("results carry no trained models (loaded from JSON?): pass the LabResults returned by pe_helpers.extrapolation.run_lab(...)."))
    if task not in results.tasks:
        raise ValueError(_("task must be one of {0}, got {task!r}.").format(', '.join(results.tasks), task=task))
    if encoding is None:
        encoding = "sinusoidal" if "sinusoidal" in results.encodings else results.encodings[0]
    if encoding not in results.encodings:
        raise ValueError(_("encoding must be one of {0}, got {encoding!r}.").format(', '.join(results.encodings), encoding=encoding))
    length = results.train_len if length is None else length
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= results.test_len:
        raise ValueError(_("length must be an integer in 1..{test_len}, got {length!r}.").format(test_len=results.test_len, length=length))
    handle = build_extrapolation(results, task=task)
    draw = handle.update
    heads: dict[tuple[str, str], tuple[int, int]] = {}

    def update(task: str, encoding: str, length: int) -> str:
        trained = results.model(encoding, task)
        weights = head = None
        if results.can_run(encoding, length, task):
            head = heads.setdefault((task, encoding), copy_head(trained))
            weights = attention_map(trained, length, head).numpy()
        return draw(task=task, encoding=encoding, length=length, weights=weights,
                    source_cells=source_positions(task, length), head=head)

    controls = {
        "task": widgets.ToggleButtons(options=[(_task_label(t), t) for t in results.tasks], value=task,
                                      description=_("task")),
        "encoding": widgets.Dropdown(options=list(results.encodings), value=encoding, description=_("scheme")),
        "length": widgets.IntSlider(value=length, min=1, max=results.test_len, step=1, description=_("size n"),
                                    continuous_update=True),
    }
    return App(controls, FigureHandle(handle.figure, handle.artists, update),
               title=_("Train short (n <= {train_len}), test long: the copy head").format(train_len=results.train_len))


def _task_label(task: str) -> str:
    """A task's name on its button, in the current language (the value stays the task's id)."""
    return {"copy": _("copy"), "lookback": _("look-back")}.get(task, task)


class TrainNow(widgets.VBox):
    """The live seed: the reference's seed-0 models at once, and a "train now" button that trains them again.

    ``TrainNow(reference, encodings=..., tasks=...)`` trains nothing when built. :meth:`load_reference`
    loads the seed's trained weights shipped with the package
    (:func:`~pe_helpers.extrapolation.reference_models`, about a second, so notebook 05 and its slides
    open at once) and shows the accuracy figure: that seed as markers over the reference band.
    :meth:`train` (what the button calls) trains the same seed again on this CPU with
    :func:`~pe_helpers.extrapolation.run_lab` and the reference's settings (a tqdm bar in the panel),
    then redraws the figure and, with ``show_app``, shows :func:`extrapolation_app` on the new models.
    ``panel.results`` is the :class:`LabResults` shown last; ``panel.trained_live`` says which.
    """

    def __init__(self, reference: LabResults, *, encodings: Sequence[str], tasks: Sequence[str] = ("copy",),
                 seed: int = 0, show_app: bool = True) -> None:
        if not isinstance(reference, LabResults):
            raise TypeError(_("reference must be the LabResults of pe_helpers.extrapolation.reference_results(), "
                              "got {kind}.").format(kind=type(reference).__name__))
        self.reference, self.show_app = reference, show_app
        self.encodings, self.tasks = parse_encodings(encodings), parse_tasks(tasks)
        self.seed = require_int("seed", seed, minimum=0)
        self.results: LabResults | None = None
        self.trained_live = False
        self.button = widgets.Button(description=_("train now"), icon="play", button_style="primary")
        # The figure is a PNG in an Image widget and the app a child widget, as in App (apps/_base.py): not an
        # Output widget, whose captured display made nbclient (the build, nbval) wait for the cell until its
        # timeout. The Output widget holds only the progress bar while training.
        self.output = widgets.Output()
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="1000px", max_width="100%"))
        self.app_box = widgets.VBox([])
        self.button.on_click(lambda _button: self.train())
        super().__init__([self.button, self.output, self.image, self.app_box])

    def load_reference(self) -> LabResults:
        """Show the shipped weights of the reference's first seed (no training); return their results."""
        if self.seed != self.reference.seeds[0]:
            raise ValueError(_("only seed {first} of the reference is shipped as weights; got seed={seed}. "
                               "Press train now (or call train()) to train seed {seed}.").format(
                                   first=self.reference.seeds[0], seed=self.seed))
        self.results = reference_models(self.encodings, tasks=self.tasks)
        self._show(app=False)
        return self.results

    def _repr_mimebundle_(self, **kwargs: object) -> tuple[dict, dict]:
        """The widget view, plus the figure shown last as a PNG and a line of text, for front ends that cannot show
        the widget (a notebook opened without running, GitHub, nbviewer): never the widgets' repr."""
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        metadata = {}
        if self.image.value:
            bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
            width = str(self.image.layout.width or "1000px").removesuffix("px")
            metadata["image/png"] = {"width": int(width) if width.isdigit() else 1000}
        bundle["text/plain"] = _("The live seed: the button {button!r} trains it again (run the notebook to use it)").format(
            button=self.button.description)
        return bundle, metadata

    def train(self, *, progress: bool = True) -> LabResults:
        """Train the seed again on this CPU (once), show it over the reference; return the live results."""
        if not self.trained_live:
            self.button.disabled = True
            self.button.description = _("training…")
            cfg = self.reference.config.as_dict()
            cfg.pop("seed")
            with self.output:
                results = run_lab(self.encodings, tasks=self.tasks, seeds=(self.seed,),
                                  test_len=self.reference.test_len, progress=progress, **cfg)
            self.results, self.trained_live = results, True
            self.button.description = _("trained in {seconds:.0f} s").format(seconds=results.total_seconds)
            self._show(app=self.show_app)
        return self.results

    def _show(self, *, app: bool) -> None:
        import matplotlib.pyplot as plt

        from ..figures._base import render_png
        from ..figures.extrapolation import accuracy_figure

        handle = accuracy_figure(self.reference, live=self.results, tasks=self.tasks, encodings=self.encodings)
        width = getattr(handle.figure, "display_width", None)
        if width:
            self.image.layout.width = f"{width}px"
        self.image.value = render_png(handle.figure, texts=True)
        plt.close(handle.figure)
        self.app_box.children = (extrapolation_app(results=self.results, task=self.tasks[0]),) if app else ()
