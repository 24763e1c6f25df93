"""pe_helpers: the package behind the pe-notebooks on absolute positional encoding.

One concept name per notebook, the same word in every layer (CONTRIBUTING.md has the grid):

=====  ===============  ==========================  ======================  ====================
 nb     compute          draw                        interact                exercises
=====  ===============  ==========================  ======================  ====================
 01     :mod:`.order`     :mod:`.figures.order`        :mod:`.apps.order`        :mod:`.checks.order`
 02     :mod:`.learned`   :mod:`.figures.learned`      :mod:`.apps.learned`      :mod:`.checks.learned`
 03     :mod:`.frequencies`  :mod:`.figures.frequencies`  :mod:`.apps.frequencies`  :mod:`.checks.frequencies`
 04     :mod:`.rotation`  :mod:`.figures.rotation`     :mod:`.apps.rotation`     :mod:`.checks.rotation`
 05     :mod:`.extrapolation`  :mod:`.figures.extrapolation`  :mod:`.apps.extrapolation`  :mod:`.checks.extrapolation`
 06     :mod:`.rope`, :mod:`.comparison`  :mod:`.figures.rope`  :mod:`.apps.rope`  :mod:`.checks.rope`
=====  ===============  ==========================  ======================  ====================

The core below them all: :mod:`.encodings`, :mod:`.attention`, :mod:`.permutation`.
The command line of the lab: :mod:`.cli`. Student edition: :mod:`.student`.
"""

from ._validate import MEMORY_BUDGET_BYTES, MemoryBudgetError
from .attention import SelfAttention, attention_scores, causal_mask, scaled_dot_product_attention
from .encodings import (
    LearnedPositionalEmbedding,
    PositionOutOfRangeError,
    SinusoidalPositionalEncoding,
    apply_rope,
    inverse_frequencies,
    layout_permutation,
    shift_matrix,
    sinusoidal,
    wavelengths,
)
from .i18n import get_language, set_language
from .permutation import check_equivariance, permutation_matrix, random_permutation

__version__ = "0.1.0"

__all__ = [
    "MEMORY_BUDGET_BYTES",
    "MemoryBudgetError",
    "LearnedPositionalEmbedding",
    "PositionOutOfRangeError",
    "SelfAttention",
    "SinusoidalPositionalEncoding",
    "apply_rope",
    "attention_scores",
    "causal_mask",
    "get_language",
    "check_equivariance",
    "inverse_frequencies",
    "layout_permutation",
    "permutation_matrix",
    "random_permutation",
    "scaled_dot_product_attention",
    "set_language",
    "shift_matrix",
    "sinusoidal",
    "wavelengths",
]
