r"""Notebook 05, "Limits and extrapolation" (seed §4.3): the extrapolation lab, train short, test long, on a CPU.

Seed section 4.3: *being able to compute an encoding for a longer position is not the same as
a model that has learned to use it.* This package runs that experiment for real.

* :mod:`.task`: the two tasks behind a ``BOS`` token, ``copy`` (the offset grows with the length) and
  ``lookback`` (a fixed offset of :data:`LOOKBACK`), their batches and loss masks;
* :mod:`.model`: :class:`CopyTransformer`, a small causal decoder whose position scheme is one of
  :data:`ENCODINGS` (none, learned, sinusoidal, RoPE with PI / NTK / YaRN scaling, ALiBi, randomized);
* :mod:`.training`: :func:`train`, :func:`fit` (cancellable), :func:`accuracy_by_length`;
* :mod:`.results`: :func:`run_lab` -> :class:`LabResults` (schemes × tasks × seeds), the shipped
  :func:`reference_results` (5 seeds), :func:`reference_models` (seed 0 as trained weights, no training)
  and :func:`run_reference` that regenerates both;
* :mod:`.probe`: the copy head's attention maps and a linear probe of absolute position.

The command line is :mod:`pe_helpers.cli` (``python -m pe_helpers.cli``), outside this compute package.

Quick use::

    from pe_helpers import extrapolation as lab
    results = lab.run_lab(["learned", "rope"], tasks=["copy", "lookback"])   # a few seconds
    print(results.table("lookback"))
    reference = lab.reference_results()          # 5 seeds, every scheme and task, no training
    reference.accuracy_at("rope", 16, "lookback"), reference.spread_at("rope", 16, "lookback")
"""

from ..encodings import PositionOutOfRangeError
from .model import (
    DERIVED_ENCODINGS,
    ENCODINGS,
    ROPE_BASE,
    TEST_DRAWS,
    TRAINED_ENCODINGS,
    YARN_ALPHA,
    YARN_BETA,
    CopyTransformer,
    alibi_bias,
    alibi_slopes,
    require_encoding,
    interpolated_positions,
    ntk_base,
    random_positions,
    yarn_attention_factor,
    yarn_frequencies,
    yarn_ramp,
)
from .probe import attention_map, copy_head, position_probe_r2
from .results import (
    DEFAULT_ENCODINGS,
    REFERENCE_FILE,
    REFERENCE_MODELS_FILE,
    REFERENCE_SEEDS,
    LabResults,
    parse_encodings,
    parse_tasks,
    reference_config,
    reference_models,
    reference_results,
    save_reference_models,
    run_lab,
    run_reference,
)
from .task import (
    LOOKBACK,
    TASKS,
    TaskBatch,
    bos_id,
    require_task,
    copy_batch,
    copy_loss_mask,
    copy_sequences,
    lookback_batch,
    pad_id,
    separator_id,
    task_batch,
    task_positions,
)
from .training import (
    EVAL_SAMPLES,
    MAX_SEED,
    TrainConfig,
    TrainedModel,
    TrainingCancelled,
    accuracy,
    accuracy_by_length,
    derive,
    eval_batch,
    fit,
    init_model,
    train,
)

__all__ = [
    "ENCODINGS", "TRAINED_ENCODINGS", "DERIVED_ENCODINGS", "DEFAULT_ENCODINGS", "TASKS", "LOOKBACK", "EVAL_SAMPLES", "MAX_SEED",
    "REFERENCE_FILE", "REFERENCE_MODELS_FILE", "REFERENCE_SEEDS", "ROPE_BASE", "TEST_DRAWS", "YARN_ALPHA", "YARN_BETA",
    "TaskBatch", "CopyTransformer", "LabResults", "PositionOutOfRangeError", "TrainConfig",
    "TrainedModel", "TrainingCancelled",
    "accuracy", "accuracy_by_length", "alibi_bias", "alibi_slopes", "attention_map", "bos_id", "require_encoding",
    "require_task", "copy_batch", "copy_head", "copy_loss_mask", "copy_sequences", "derive",
    "eval_batch", "fit", "init_model", "interpolated_positions",
    "lookback_batch", "ntk_base", "pad_id", "parse_encodings", "parse_tasks",
    "position_probe_r2", "random_positions", "reference_config", "reference_models", "reference_results",
    "save_reference_models", "run_lab", "run_reference",
    "separator_id", "task_batch", "task_positions", "train", "yarn_attention_factor", "yarn_frequencies", "yarn_ramp",
]
