"""pe_helpers: the package behind the pe-notebooks on absolute positional encoding.

Compute (pure tensors): :mod:`.encodings`, :mod:`.attention`, :mod:`.permutation`,
:mod:`.toy` (example sentences, the toy order task), :mod:`.properties` (dot products, precision),
:mod:`.rope`, :mod:`.lab` (the extrapolation experiment).
Draw (matplotlib): :mod:`.figures`. Interact (ipywidgets): :mod:`.apps`.
Exercise checkers: :mod:`.checks`. Student edition: :mod:`.student`.
"""

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
from .permutation import check_equivariance, permutation_matrix, random_permutation

__version__ = "0.1.0"

__all__ = [
    "LearnedPositionalEmbedding",
    "PositionOutOfRangeError",
    "SelfAttention",
    "SinusoidalPositionalEncoding",
    "apply_rope",
    "attention_scores",
    "causal_mask",
    "check_equivariance",
    "inverse_frequencies",
    "layout_permutation",
    "permutation_matrix",
    "random_permutation",
    "scaled_dot_product_attention",
    "shift_matrix",
    "sinusoidal",
    "wavelengths",
]
