"""Command line of the extrapolation lab (notebook 05): ``python -m pe_helpers.cli`` (or ``pe-lab``).

It sits above every layer (compute, figures) and imports both; the compute package
:mod:`pe_helpers.extrapolation` never imports it.

Trains the requested encodings on copy lengths ``1 .. --train-len``, prints a table of
accuracy by length, saves the accuracy figure (path printed) and, with ``--save-json``, the
numbers. Example::

    python -m pe_helpers.cli --encodings none,learned,sinusoidal,rope --train-len 16 --test-len 64
    python -m pe_helpers.cli --steps 6000 --d-model 64 --layers 3 --seed 1 --out build/lab/long.png
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .extrapolation.model import ENCODINGS
from .extrapolation.results import DEFAULT_ENCODINGS, parse_encodings, run_lab
from .extrapolation.training import PROGRESS_MODES, TrainConfig

__all__ = ["main", "build_parser"]

DEFAULT_OUT = Path("build") / "lab" / "extrapolation.png"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text}")
    return value


def _encodings(text: str) -> tuple[str, ...]:
    try:
        return parse_encodings(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} Allowed: {','.join(ENCODINGS)}.") from None


def build_parser() -> argparse.ArgumentParser:
    d = TrainConfig()
    p = argparse.ArgumentParser(
        prog="python -m pe_helpers.cli",
        description="Extrapolation lab: train tiny causal Transformers on the copy task x1..xn SEP x1..xn "
                    "with lengths 1..L, then test them at lengths up to 4L.",
    )
    p.add_argument("--encodings", type=_encodings, default=DEFAULT_ENCODINGS,
                   help=f"comma-separated position schemes from {','.join(ENCODINGS)} (default: all)")
    p.add_argument("--train-len", type=_positive, default=d.train_len, help="L: train on copy lengths 1..L (default %(default)s)")
    p.add_argument("--test-len", type=_positive, default=None, help="test copy lengths 1..this (default 4L)")
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
                   help="sample training length n with P(n) ~ n**w (default %(default)s; 0 = uniform)")
    p.add_argument("--seed", type=_non_negative, default=d.seed, help="seed for weights and data (default %(default)s)")
    p.add_argument("--threads", type=_positive, default=d.threads, help="torch threads per model (default %(default)s)")
    p.add_argument("--serial", action="store_true", help="train one model after another instead of in parallel threads")
    p.add_argument("--progress", choices=PROGRESS_MODES, default="auto", help="progress display (default %(default)s)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to save the figure (default %(default)s)")
    p.add_argument("--save-json", type=Path, default=None, metavar="PATH", help="also save the numbers as JSON")
    p.add_argument("--all-lengths", action="store_true", help="print every length in the table, not a selection")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the lab from the command line; return the exit status (0 on success)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.vocab < 2:
        parser.error(f"argument --vocab: expected at least 2 data tokens, got {args.vocab}")
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        parser.error(f"--d-model {args.d_model} must split into --heads {args.heads} heads of even size "
                     "(RoPE rotates pairs), e.g. --d-model 32 --heads 2")
    settings = dict(steps=args.steps, batch_size=args.batch_size, d_model=args.d_model, n_layers=args.layers,
                    n_heads=args.heads, mlp_ratio=args.mlp_ratio, vocab_size=args.vocab, lr=args.lr,
                    warmup=args.warmup, init_std=args.init_std, length_weight=args.length_weight,
                    seed=args.seed, threads=args.threads)
    try:
        results = run_lab(args.encodings, train_len=args.train_len, test_len=args.test_len,
                          progress=args.progress, parallel=not args.serial, **settings)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    print(results.table(list(results.lengths) if args.all_lengths else None))
    print()
    for e in results.encodings:
        note = "  (the trained learned model, table grown with untrained rows)" if e == "learned-extended" else ""
        print(f"{e:>17}: in-distribution accuracy {results.in_distribution(e):.3f}{note}")
    how = "one after the other" if args.serial else "side by side in threads"
    print(f"trained and tested in {results.total_seconds:.1f} s ({how})")
    from .figures.extrapolation import accuracy_figure  # matplotlib only when needed

    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    accuracy_figure(results).savefig(out)
    print(f"figure saved to {out}")
    if args.save_json is not None:
        print(f"numbers saved to {results.save_json(args.save_json)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
