r"""Notebook 05, "Limits and extrapolation" (seed §4.3): the extrapolation lab, train short, test long, on a CPU.

Seed section 4.3: *being able to compute an encoding for a longer position is not the same as
a model that has learned to use it.* This package runs that experiment for real.

* :mod:`.task`: the copy task ``x_1..x_n SEP x_1..x_n`` (why copying: see its docstring), its
  batches and its loss mask :math:`n \le t \le 2n-1`;
* :mod:`.model`: :class:`CopyTransformer`, a small causal decoder whose position scheme is one of
  :data:`ENCODINGS` = ``none``, ``learned``, ``learned-extended``, ``sinusoidal``, ``rope``, built
  from :mod:`pe_helpers.encodings`;
* :mod:`.training`: :func:`train`, :func:`accuracy`, :func:`accuracy_by_length`, the progress bar;
* :mod:`.results`: :func:`run_lab` -> :class:`LabResults` (all encodings at once), the committed
  :func:`reference_results`;
The command line is :mod:`pe_helpers.cli` (``python -m pe_helpers.cli`` / ``pe-lab``), outside this compute package.

Quick use::

    from pe_helpers import extrapolation as lab
    results = lab.run_lab()                  # ~15-30 s on two cores
    print(results.table())
    results.accuracy_at("sinusoidal", 32)    # accuracy at copy length 2L
"""

from ..encodings import PositionOutOfRangeError
from .model import ENCODINGS, TRAINED_ENCODINGS, CopyTransformer, check_encoding
from .results import (
    DEFAULT_ENCODINGS,
    REFERENCE_FILE,
    LabResults,
    latest_results,
    parse_encodings,
    reference_results,
    run_lab,
)
from .task import CopyBatch, copy_batch, copy_loss_mask, copy_sequences, pad_id, separator_id
from .training import (
    EVAL_SAMPLES,
    PROGRESS_MODES,
    Progress,
    TrainConfig,
    TrainedModel,
    accuracy,
    accuracy_by_length,
    eval_batch,
    eval_samples,
    extend_learned,
    fit,
    fixed_threads,
    init_model,
    train,
)

__all__ = [
    "ENCODINGS",
    "TRAINED_ENCODINGS",
    "DEFAULT_ENCODINGS",
    "EVAL_SAMPLES",
    "PROGRESS_MODES",
    "REFERENCE_FILE",
    "CopyBatch",
    "CopyTransformer",
    "LabResults",
    "PositionOutOfRangeError",
    "Progress",
    "TrainConfig",
    "TrainedModel",
    "accuracy",
    "accuracy_by_length",
    "check_encoding",
    "copy_batch",
    "copy_loss_mask",
    "copy_sequences",
    "eval_batch",
    "eval_samples",
    "extend_learned",
    "fit",
    "fixed_threads",
    "init_model",
    "latest_results",
    "pad_id",
    "parse_encodings",
    "reference_results",
    "run_lab",
    "separator_id",
    "train",
]
