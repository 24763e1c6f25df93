"""pe_helpers: the package behind the pe-notebooks on absolute positional encoding.

One concept name per notebook, the same word in every layer (CONTRIBUTING.md has the grid):

=====  ===============  ==========================  ======================  ====================
 nb     compute          draw                        interact                exercises
=====  ===============  ==========================  ======================  ====================
 01     :mod:`.order`     :mod:`.figures.order`        :mod:`.apps.order`        :mod:`.checks.order`
 02     :mod:`.learned`   :mod:`.figures.learned`      :mod:`.apps.learned`      :mod:`.checks.learned`
 03     :mod:`.frequencies`  :mod:`.figures.frequencies`  :mod:`.apps.frequencies`  :mod:`.checks.frequencies`
 04     :mod:`.rotation`  :mod:`.figures.rotation`     :mod:`.apps.rotation`     :mod:`.checks.rotation`
 05 §1  :mod:`.mixing`    :mod:`.figures.mixing`       :mod:`.apps.mixing`       :mod:`.checks.mixing`
 05     :mod:`.extrapolation`  :mod:`.figures.extrapolation`  :mod:`.apps.extrapolation`  :mod:`.checks.extrapolation`
 06     :mod:`.rope`, :mod:`.comparison`  :mod:`.figures.rope`  :mod:`.apps.rope`  :mod:`.checks.rope`
=====  ===============  ==========================  ======================  ====================

The core below them all: :mod:`.encodings`, :mod:`.attention`, :mod:`.permutation`.
The command line of the lab: :mod:`.cli`. Student edition: :mod:`.student`.
"""

from __future__ import annotations

import importlib
import sys

#: Where each name of the package's top level lives. They are imported when first used (PEP 562's module
#: ``__getattr__``): ``from pe_helpers import sinusoidal`` works as before, while a command that needs none of them
#: (``make present``'s launcher, ``make student``, ``make notebooks``) no longer imports torch, 2.5-3.4 s of CPU
#: at each start on a 2-core machine. Why not the ``lazy_loader`` package (scientific-python): it would be a new
#: pin for these few lines, and its stub-file mode needs a ``.pyi`` beside this file.
_LAZY = {
    "MEMORY_BUDGET_BYTES": "_validate", "MemoryBudgetError": "_validate",
    "SelfAttention": "attention", "attention_scores": "attention", "causal_mask": "attention",
    "scaled_dot_product_attention": "attention",
    "LearnedPositionalEmbedding": "encodings", "PositionOutOfRangeError": "encodings",
    "SinusoidalPositionalEncoding": "encodings", "apply_rope": "encodings", "inverse_frequencies": "encodings",
    "layout_permutation": "encodings", "shift_matrix": "encodings", "sinusoidal": "encodings",
    "wavelengths": "encodings",
    "get_language": "i18n", "set_language": "i18n", "say": "i18n",
    "equivariance_gap": "permutation", "permutation_matrix": "permutation", "random_permutation": "permutation",
}


def __getattr__(name: str) -> object:
    """``pe_helpers.<name>`` for the names of :data:`_LAZY`, imported from their module on first use."""
    module = _LAZY.get(name)
    if module is None:  # name and obj: Python's traceback then suggests a close name ("Did you mean: 'sinusoidal'?")
        from .i18n import _

        raise AttributeError(_("module {module!r} has no attribute {name!r}").format(module=__name__, name=name),
                             name=name, obj=sys.modules[__name__])
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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
    "equivariance_gap",
    "inverse_frequencies",
    "layout_permutation",
    "permutation_matrix",
    "random_permutation",
    "say",
    "scaled_dot_product_attention",
    "set_language",
    "shift_matrix",
    "sinusoidal",
    "wavelengths",
]
