r"""Notebook 01, "Attention is blind to order" (seed §1.1–1.2): sentences as token vectors and their reorderings.

Sentences (seed §1). 我喜欢你 / 你喜欢我 ("I like you" / "you like me") are the same four
characters in another order. At character level each character is one token, written
with spaces between them ("我 喜 欢 你"); figures draw the characters with the package's
bundled CJK font. "dog bites man" / "man bites dog" is the English companion. Each distinct token gets a
fixed random vector (:func:`token_vectors`), so the same token has the same embedding in
every sentence, as in a real embedding table.

Reorderings. A permutation ``perm`` reorders rows as in :mod:`pe_helpers.permutation`:
:math:`(PX)_i = X_{perm[i]}`. :func:`reordering` finds the ``perm`` that turns one sentence
into another; :func:`named_order` builds the app's named orders.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import (
    _short,
    require_budget,
    require_choice,
    require_fits,
    require_float_tensor,
    require_int,
    require_real,
    require_seed,
)
from .attention import SelfAttention, attention_scores
from .encodings import LearnedPositionalEmbedding
from .permutation import as_permutation, permute_rows, random_permutation
from .i18n import _

__all__ = [
    "ZH_PAIR",
    "EN_PAIR",
    "APP_SENTENCE",
    "ORDERS",
    "tokens",
    "token_vectors",
    "is_reordering",
    "reordering",
    "named_order",
    "PermutationView",
    "permutation_view",
    "random_positions",
]

#: 我喜欢你 / 你喜欢我 at character level: one token per character, separated by spaces.
ZH_PAIR = ("我 喜 欢 你", "你 喜 欢 我")
#: The English companion: the same three words in another order, with another meaning.
EN_PAIR = ("dog bites man", "man bites dog")
#: The sentence of the permutation app (six distinct tokens).
APP_SENTENCE = "dog bites man at the park"
#: Named orders of the permutation app; "random" uses a seed.
ORDERS = ("original", "swap 0 and 2", "reverse", "rotate by one", "sort alphabetically", "random")


def tokens(sentence: str | Sequence[str], *, name: str = "sentence") -> list[str]:
    """The tokens of ``sentence``: split on whitespace (a list of strings is returned as a list).

    ``name`` is the argument's name in error messages (``reordering`` passes ``"a"`` and ``"b"``).
    """
    if isinstance(sentence, str):
        out = sentence.split()
    elif isinstance(sentence, Sequence) and all(isinstance(t, str) for t in sentence):
        out = list(sentence)
    else:
        raise TypeError(_("{0} must be a string or a sequence of strings, got {1}.").format(name, _short(sentence)))
    if not out:
        raise ValueError(_("{0} must contain at least one token, got {1}.").format(name, _short(sentence)))
    return out


def _token_seed(token: str, seed: int) -> int:
    return (seed * 1_000_003 + zlib.crc32(token.encode("utf-8"))) % (2**63)


def token_vectors(sentence: str | Sequence[str], dim: int = 8, *, seed: int = 0) -> Tensor:
    r"""The embedding matrix :math:`X \in \mathbb{R}^{n \times d}` of a sentence, one row per token.

    Row ``i`` is a standard-normal vector that depends only on the token's text and ``seed``,
    so "dog" has the same vector wherever it appears: content only, no position.
    """
    toks = tokens(sentence)
    dim = require_int("dim", dim, minimum=1)
    seed = require_int("seed", seed, minimum=0, maximum=2**63 - 1)
    require_budget(f"token_vectors({len(toks)} tokens, dim={dim})", (len(toks), dim), torch.float32, copies=2)
    rows = [torch.randn(dim, generator=torch.Generator().manual_seed(_token_seed(t, seed))) for t in toks]
    return torch.stack(rows)


def is_reordering(a: str | Sequence[str], b: str | Sequence[str]) -> bool:
    """True when ``b`` has exactly the tokens of ``a`` (with multiplicity), in any order."""
    return sorted(tokens(a, name="a")) == sorted(tokens(b, name="b"))


def reordering(a: str | Sequence[str], b: str | Sequence[str]) -> Tensor:
    r"""The permutation ``perm`` with ``b[i] == a[perm[i]]``, i.e. :math:`X_b = P X_a`.

    Repeated tokens are matched in order. If ``b`` is not a reordering of ``a`` (for example
    "you love me" vs "I love you": "me" is a different token from "I"), a ValueError says which
    tokens differ.
    """
    ta, tb = tokens(a, name="a"), tokens(b, name="b")
    if sorted(ta) != sorted(tb):
        only_a = sorted(set(ta) - set(tb)) or sorted(ta)
        only_b = sorted(set(tb) - set(ta)) or sorted(tb)
        raise ValueError(
            _("{0!r} is not a reordering of {1!r}: tokens {2} vs {3} differ, so no permutation turns one into the other.").format(' '.join(tb), ' '.join(ta), only_a, only_b)
        )
    used = [False] * len(ta)
    perm = []
    for tok in tb:
        j = next(j for j, t in enumerate(ta) if t == tok and not used[j])
        used[j] = True
        perm.append(j)
    return torch.tensor(perm)


def named_order(name: str, sentence: str | Sequence[str], *, seed: int = 0) -> Tensor:
    """The permutation called ``name`` (one of :data:`ORDERS`) for ``sentence``; ``seed`` is used by "random".

    "swap 0 and 2" exchanges tokens 0 and 2 ("dog bites man" -> "man bites dog"); "rotate by
    one" moves the last token to the front; "sort alphabetically" sorts the tokens' text.
    """
    name = require_choice("order", name, ORDERS)
    toks = tokens(sentence)
    seed = require_seed("seed", seed)
    n = len(toks)
    if name == "original":
        return torch.arange(n)
    if name == "swap 0 and 2":
        if n < 3:
            raise ValueError(_("order 'swap 0 and 2' needs at least 3 tokens, got {0}.").format(n))
        perm = torch.arange(n)
        perm[0], perm[2] = 2, 0
        return perm
    if name == "reverse":
        return torch.arange(n - 1, -1, -1)
    if name == "rotate by one":
        return torch.roll(torch.arange(n), 1)
    if name == "sort alphabetically":
        return torch.tensor(sorted(range(n), key=lambda i: (toks[i], i)))
    return random_permutation(n, seed=seed)


@dataclass(frozen=True)
class PermutationView:
    r"""Everything the permutation app shows for one order.

    ``f(X) = Attention(XW_Q, XW_K, XW_V)``, optionally with positions added *after* reordering
    (slot ``i`` always gets ``p_i``): ``f(X) = Attention((X + P_{pos}) W_Q, ...)``.
    """

    perm: Tensor  #: the permutation, (PX)_i = X[perm[i]]
    tokens: tuple[str, ...]  #: the reordered tokens
    scores: Tensor  #: S of the original order
    permuted_scores: Tensor  #: S' of the reordered input (with positions if added)
    outputs: Tensor  #: f(X)
    permuted_outputs: Tensor  #: f(PX)
    output_error: float  #: max |f(PX) - P f(X)|
    score_error: float  #: max |S' - P S Pᵀ|


def permutation_view(
    x: Tensor,
    sentence: str | Sequence[str],
    perm: Tensor | Sequence[int],
    head: SelfAttention,
    positions: Tensor | None = None,
) -> PermutationView:
    r"""Run one head on ``x`` and on :math:`PX` and compare them.

    Equivariance means :math:`f(PX) = P f(X)` and :math:`S' = PSP^\top`.

    ``x`` is a real floating ``[n, d]`` tensor with one row per token of
    ``sentence``; ``head`` a :class:`SelfAttention` of dimension ``d``; ``positions`` (``[n, d]``
    or None) is added to the input of both runs after reordering.
    """
    toks = tokens(sentence)
    x = require_float_tensor("x", x, ndim=2)
    if not isinstance(head, SelfAttention):
        raise TypeError(_("head must be a SelfAttention, got {0}.").format(type(head).__name__))
    if head.dim != x.shape[-1]:
        raise ValueError(_("head must have dim = x.shape[-1] = {0}, got a head of dim {1}.").format(x.shape[-1], head.dim))
    if len(toks) != x.shape[-2]:
        raise ValueError(_("sentence must have one token per row of x ({0} rows of x), got {1} tokens: {2}.").format(x.shape[-2], len(toks), _short(toks)))
    if positions is not None:
        positions = require_float_tensor("positions", positions, min_ndim=1)
        require_fits("positions", positions.shape, x.shape, f" (x has shape {tuple(x.shape)})")
        if positions.device != x.device:
            raise TypeError(_("positions must be on x's device ({0}), got {1}.").format(x.device, positions.device))
    p = as_permutation(perm, x.shape[-2])

    def run(inp: Tensor) -> tuple[Tensor, Tensor]:
        if positions is not None:
            inp = inp + positions
        q, k, _v = head.project(inp)
        return head(inp)[0], attention_scores(q, k)

    with torch.no_grad():
        out, s = run(x)
        out_p, s_p = run(permute_rows(x, p))
    expected_s = s[p][:, p]
    return PermutationView(
        perm=p,
        tokens=tuple(toks[i] for i in p.tolist()),
        scores=s,
        permuted_scores=s_p,
        outputs=out,
        permuted_outputs=out_p,
        output_error=float((out_p - out[p]).abs().max()),
        score_error=float((s_p - expected_s).abs().max()),
    )


def random_positions(n: int, dim: int, *, seed: int = 1, std: float = 0.5) -> torch.Tensor:
    r"""A table of ``n`` distinct position vectors :math:`p_0..p_{n-1}` (untrained, normal with std ``std``).

    Any table whose rows differ breaks the symmetry; notebook 02 learns one, notebook 03 computes one.
    """
    n = require_int("n", n, minimum=1)
    dim = require_int("dim", dim, minimum=1)
    seed = require_seed("seed", seed)
    std = require_real("std", std, minimum=0.0)
    require_budget(f"random_positions(n={n}, dim={dim})", (n, dim), torch.float32, copies=2)
    return LearnedPositionalEmbedding(n, dim, init_std=std, seed=seed).table.detach().clone()


def sentence_outputs(sentences: Sequence[str], *, dim: int = 8, head_seed: int = 0) -> list[tuple[str, Tensor]]:
    r"""``(sentence, Attention(X))`` for each sentence, one output row per token, without positions.

    One attention head (``SelfAttention(dim, seed=head_seed)``) for all, so reorderings of the same
    tokens give the same rows, moved (notebook 01's side-by-side figure).
    """
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence):
        raise TypeError(_("sentences must be a list of sentences (strings), got {0}.").format(_short(sentences)))
    dim = require_int("dim", dim, minimum=1)
    head_seed = require_seed("head_seed", head_seed)
    for i, s in enumerate(sentences):
        tokens(s, name=f"sentences[{i}]")
    head = SelfAttention(dim, seed=head_seed)
    with torch.no_grad():
        return [(s, head(token_vectors(s, dim))[0]) for s in sentences]


__all__ += ["sentence_outputs"]
