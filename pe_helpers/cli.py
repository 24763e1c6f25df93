"""Command line of the extrapolation lab (notebook 05): ``python -m pe_helpers.cli`` (or ``pe-lab``).

It sits above every layer (compute, figures) and imports both; the compute package
:mod:`pe_helpers.extrapolation` never imports it.

Trains the requested schemes on the requested tasks and seeds (sizes ``1 .. --train-len``), prints
a table of accuracy by size, then saves the numbers (``--save-json``) and the figure (``--out``).
Both output paths are checked *before* training (writable, a figure format matplotlib knows); the
JSON is written before the figure, each atomically (temporary file, then rename), and the paths
really written are printed. ``--out DIR`` (an existing directory, or a path without a suffix)
writes ``DIR/extrapolation.png``. Ctrl-C stops every training within a second and writes nothing.
Examples::

    python -m pe_helpers.cli                                   # the default set: one seed, both tasks (< 60 s)
    python -m pe_helpers.cli --encodings none,rope --tasks lookback --seeds 0,1,2 --out build/lab/
    python -m pe_helpers.cli --reference                        # regenerate pe_helpers/data/lab_reference.json (+ seed 0 weights)
"""

from __future__ import annotations

from . import _interrupt  # first: Ctrl-C while torch loads is held until the imports are done, then one line

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ._validate import unwritable_reason as _unwritable_reason
from .extrapolation.model import ENCODINGS, TRAINED_ENCODINGS
from .extrapolation.results import parse_encodings, parse_tasks, reference_config, run_lab, save_reference_models
from .extrapolation.task import TASKS
from .extrapolation.training import MAX_SEED, TrainConfig, TrainingCancelled
from .i18n import _

__all__ = ["main", "build_parser", "DEFAULT_ENCODINGS", "REFERENCE_JSON"]

DEFAULT_OUT = Path("build") / "lab" / "extrapolation.png"
#: The default set: one seed, both tasks, the schemes notebook 05 discusses most (five trainings per task; the
#: RoPE variants reuse the trained RoPE model). ``--encodings`` adds ``randomized``, ``randomized-sampled`` and
#: ``learned-extended``.
DEFAULT_ENCODINGS = ("none", "learned", "sinusoidal", "rope", "rope-pi", "rope-ntk", "rope-yarn", "alibi")
#: Where ``--reference`` writes the reference (the package data file).
REFERENCE_JSON = Path(__file__).parent / "data" / "lab_reference.json"
#: Where ``--reference`` writes the first seed's trained weights (loaded by notebook 05 and present mode).
REFERENCE_MODELS = Path(__file__).parent / "data" / "lab_reference_seed0.pt"
FIGURE_NAME = "extrapolation.png"
#: ``--progress`` choices and what :func:`~pe_helpers.extrapolation.run_lab` gets for each.
PROGRESS = {"auto": None, "bar": True, "none": False}


def _number(kind: type, *, positive: bool) -> Callable[[str], float]:
    """An argparse type: ``kind`` (int or float) that is finite and > 0 (``positive``) or >= 0."""
    noun = "integer" if kind is int else "number"
    what = f"a positive {noun}" if positive else f"{'an' if kind is int else 'a'} {noun} >= 0"

    def convert(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (value > 0 if positive else value >= 0) or value == float("inf"):
            finite = "" if kind is int else ("a positive finite number" if positive else "a finite number >= 0")
            raise argparse.ArgumentTypeError(f"expected {finite or what}, got {text}")
        return value

    return convert


_positive = _number(int, positive=True)
_non_negative = _number(int, positive=False)
_positive_float = _number(float, positive=True)
_non_negative_float = _number(float, positive=False)


def _seeds(text: str) -> tuple[int, ...]:
    values = tuple(_non_negative(v.strip()) for v in text.split(","))
    too_big = [v for v in values if v > MAX_SEED]
    if too_big:
        raise argparse.ArgumentTypeError(_("seeds must be integers in 0..{0}, got {1}").format(MAX_SEED, too_big[0]))
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"seeds must be distinct, got {text!r}")
    return values


def _names(parse, allowed: tuple[str, ...]):
    def convert(text: str) -> tuple[str, ...]:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{exc} Allowed: {','.join(allowed)}.") from None
    return convert


def _output_path(text: str) -> Path:
    """An argparse type for an output path: any non-empty path (``''`` would mean the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(_("expected a file or directory path, got an empty string"))
    return Path(text)


def _figure_path(out: Path) -> Path:
    """``--out`` -> the figure file: ``DIR/extrapolation.png`` for a directory (existing, or no suffix), else ``out``."""
    if out.is_dir() or not out.suffix:
        return out / FIGURE_NAME
    return out


def figure_formats() -> dict[str, str]:
    """The file formats matplotlib can save, ``{extension: description}``."""
    from matplotlib.backend_bases import FigureCanvasBase

    return FigureCanvasBase.get_supported_filetypes()


def build_parser() -> argparse.ArgumentParser:
    d = TrainConfig()
    p = argparse.ArgumentParser(
        prog="python -m pe_helpers.cli",
        description="Extrapolation lab: train tiny causal Transformers on sizes 1..L of the copy task "
                    "(BOS x1..xn SEP x1..xn) and the look-back task (output the token 3 places back), "
                    "then test them at sizes up to 4L.",
    )
    p.add_argument("--encodings", type=_names(parse_encodings, ENCODINGS), default=DEFAULT_ENCODINGS,
                   help=f"comma-separated schemes from {','.join(ENCODINGS)} (default: {','.join(DEFAULT_ENCODINGS)})")
    p.add_argument("--tasks", type=_names(parse_tasks, TASKS), default=TASKS,
                   help=f"comma-separated tasks from {','.join(TASKS)} (default: all)")
    p.add_argument("--seeds", type=_seeds, default=(d.seed,), help="comma-separated seeds (default %(default)s)")
    p.add_argument("--reference", action="store_true",
                   help=f"regenerate the shipped reference: every scheme and task over 5 seeds, saved to "
                        f"{REFERENCE_JSON.relative_to(REFERENCE_JSON.parents[2])}, and seed 0's trained weights to "
                        f"{REFERENCE_MODELS.relative_to(REFERENCE_MODELS.parents[2])} (5-10 minutes)")
    p.add_argument("--train-len", type=_positive, default=d.train_len, help="L: train on sizes 1..L (default %(default)s)")
    p.add_argument("--test-len", type=_positive, default=None, help="test sizes 1..this (default 4L)")
    p.add_argument("--steps", type=_positive, default=d.steps, help="training steps per model (default %(default)s)")
    p.add_argument("--batch-size", type=_positive, default=d.batch_size, help="sequences per step (default %(default)s)")
    p.add_argument("--d-model", type=_positive, default=d.d_model, help="model width (default %(default)s)")
    p.add_argument("--layers", type=_positive, default=d.n_layers, help="decoder blocks (default %(default)s)")
    p.add_argument("--heads", type=_positive, default=d.n_heads, help="attention heads (default %(default)s)")
    p.add_argument("--mlp-ratio", type=_positive, default=d.mlp_ratio, help="MLP width / d_model (default %(default)s)")
    p.add_argument("--vocab", type=_positive, default=d.vocab_size, help="data tokens (default %(default)s)")
    p.add_argument("--lr", type=_positive_float, default=d.lr, help="peak learning rate (default %(default)s)")
    p.add_argument("--warmup", type=_non_negative, default=d.warmup, help="warm-up steps (default %(default)s)")
    p.add_argument("--init-std", type=_positive_float, default=d.init_std,
                   help="initial std of a learned table (default %(default)s)")
    p.add_argument("--length-weight", type=_non_negative_float, default=d.length_weight,
                   help="sample training size n with P(n) ~ n**w (default %(default)s; 0 = uniform)")
    p.add_argument("--threads", type=_positive, default=d.threads, help="torch threads per model (default %(default)s)")
    p.add_argument("--workers", type=_positive, default=None, help="trainings at once (default: the cores)")
    p.add_argument("--serial", action="store_true", help="train one model after another")
    p.add_argument("--progress", choices=PROGRESS, default="auto",
                   help="progress bar: auto (on a terminal), bar, none (default %(default)s)")
    p.add_argument("--out", type=_output_path, default=DEFAULT_OUT,
                   help=f"figure file, or a directory to hold {FIGURE_NAME} (default %(default)s)")
    p.add_argument("--save-json", type=_output_path, default=None, metavar="PATH", help="also save the numbers as JSON")
    p.add_argument("--all-lengths", action="store_true", help="print every size in the table, not a selection")
    return p


#: The command line's flag for each setting of :class:`~pe_helpers.extrapolation.TrainConfig` and :func:`run_lab`.
_FLAGS = {"train_len": "--train-len", "test_len": "--test-len", "steps": "--steps", "batch_size": "--batch-size",
         "d_model": "--d-model", "n_layers": "--layers", "n_heads": "--heads", "mlp_ratio": "--mlp-ratio",
         "vocab_size": "--vocab", "lr": "--lr", "warmup": "--warmup", "init_std": "--init-std",
         "length_weight": "--length-weight", "threads": "--threads", "workers": "--workers", "seeds": "--seeds",
         "seed": "--seeds"}


def _with_flags(message: str) -> str:
    """``message`` with each setting's name (``vocab_size=10**9``, ``d_model``) written as its flag (``--vocab``)."""
    import re

    for name, flag in sorted(_FLAGS.items(), key=lambda item: -len(item[0])):
        message = re.sub(rf"(?<![\w.-]){name}=", f"{flag} ", message)
        message = re.sub(rf"(?<![\w.-]){name}(?!\w)", flag, message)
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Run the lab from the command line; return the exit status (0 on success, 130 on Ctrl-C)."""
    _interrupt.imports_done()
    written: list[Path] = []
    try:
        return _main(argv, written)
    except (KeyboardInterrupt, TrainingCancelled):
        if _interrupt._is_command_line():
            _interrupt.disarm()
            # Objects the interrupt left half-built (an older tqdm's bar) are finalised as the process ends; their
            # "Exception ignored" reports would follow the one line below.
            sys.unraisablehook = lambda unraisable: None
        if written:
            print(_("interrupted: every training stopped; already written: {0}").format(", ".join(map(str, written))),
                  file=sys.stderr)
        else:
            print(_("interrupted: every training stopped, nothing written"), file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None, written: list[Path]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.vocab < 2:
        parser.error(f"argument --vocab: expected at least 2 data tokens, got {args.vocab}")
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        parser.error(f"--d-model {args.d_model} must split into --heads {args.heads} heads of even size "
                     "(RoPE rotates pairs), e.g. --d-model 32 --heads 4")
    if args.reference:
        ref = reference_config()
        if args.save_json is None:
            args.save_json = REFERENCE_JSON
        encodings, tasks, seeds, test_len = ref["encodings"], ref["tasks"], ref["seeds"], ref["test_len"]
        settings = {k: v for k, v in ref["config"].as_dict().items() if k not in ("seed", "train_len")}
        train_len = ref["config"].train_len
    else:
        encodings, tasks, seeds, test_len, train_len = args.encodings, args.tasks, args.seeds, args.test_len, args.train_len
        settings = dict(steps=args.steps, batch_size=args.batch_size, d_model=args.d_model, n_layers=args.layers,
                        n_heads=args.heads, mlp_ratio=args.mlp_ratio, vocab_size=args.vocab, lr=args.lr,
                        warmup=args.warmup, init_std=args.init_std, length_weight=args.length_weight,
                        threads=args.threads)
    # the settings (and the memory budget they imply) are checked before any training
    try:
        TrainConfig(train_len=train_len, seed=seeds[0], **settings)
    except (TypeError, ValueError) as exc:
        parser.error(_with_flags(str(exc)))
    # every output path is checked before any training, each alone and against the others
    out = _figure_path(args.out)
    weights = REFERENCE_MODELS if args.reference else None
    outputs = [(path, what) for path, what in ((out, "--out"), (args.save_json, "--save-json"), (weights, "--reference"))
               if path is not None]
    for i, (path, what) in enumerate(outputs):
        for other, other_what in outputs[i + 1:]:
            a, b = path.resolve(), other.resolve()
            if a == b:
                parser.error(_("{0} and {1} name the same file {2}: the second would overwrite the first; give two paths.").format(
                    what, other_what, path))
            if a in b.parents or b in a.parents:
                parser.error(_("{0} {1} and {2} {3}: one would be written inside the other; give two separate paths.").format(
                    what, path, other_what, other))
    for path, what in outputs:
        problem = _unwritable_reason(path, what)
        if problem:
            parser.error(problem)
    formats = figure_formats()
    if out.suffix.lstrip(".").lower() not in formats:
        parser.error(f"--out {args.out}: matplotlib cannot save {out.suffix!r} files; use one of "
                     f"{', '.join('.' + k for k in sorted(formats))}, or a directory")
    try:
        results = run_lab(encodings, tasks=tasks, seeds=seeds, train_len=train_len, test_len=test_len,
                          progress=PROGRESS[args.progress], parallel=not args.serial, workers=args.workers,
                          **settings)
    except (TypeError, ValueError) as exc:
        parser.error(_with_flags(str(exc)))
    for task in results.tasks:
        print(results.table(task, list(results.lengths) if args.all_lengths else None))
        print()
    print(f"trained and tested in {results.total_seconds:.1f} s")
    if args.save_json is not None:
        written.append(results.save_json(args.save_json))
        print(f"numbers saved to {written[-1]}")
    if weights is not None:
        written.append(save_reference_models(results, weights))
        print(f"seed {results.seeds[0]}'s trained weights saved to {written[-1]}")
    from .figures.extrapolation import save_figure_atomic, accuracy_figure  # matplotlib only when needed

    written.append(save_figure_atomic(accuracy_figure(results), out))
    print(f"figure saved to {written[-1]}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
