r"""Toy data for notebooks 01 and 02: sentences as token vectors, named reorderings, a tiny order task.

Sentences (seed §1). 我喜欢你 / 你喜欢我 ("I like you" / "you like me") are the same four
characters in another order. At character level each character is one token; the code
names them by their pinyin (我 wo, 喜 xi, 欢 huan, 你 ni), so no figure needs a Chinese
font. "dog bites man" / "man bites dog" is the English companion. Each distinct token gets a
fixed random vector (:func:`token_vectors`), so the same token has the same embedding in
every sentence, as in a real embedding table.

Reorderings. A permutation ``perm`` reorders rows as in :mod:`pe_helpers.permutation`:
:math:`(PX)_i = X_{perm[i]}`. :func:`reordering` finds the ``perm`` that turns one sentence
into another; :func:`named_order` builds the app's named orders.

The order task (seed §2, notebook 02). *Running maximum* of digits:
:math:`y_i = \max(x_0, \dots, x_i)`. The answer at slot ``i`` depends on which digits come
*before* it, so a model without positions cannot solve it (self-attention only sees the
multiset). :func:`train_running_max` trains a one-head model with a
:class:`~pe_helpers.encodings.LearnedPositionalEmbedding` for a second or so on a CPU.
"""

from __future__ import annotations

import copy
import functools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ._validate import check_choice, check_int, check_real
from .attention import SelfAttention, attention_scores
from .encodings import LearnedPositionalEmbedding
from .permutation import as_permutation, permute_rows, random_permutation

__all__ = [
    "ZH_PAIR",
    "EN_PAIR",
    "PINYIN",
    "APP_SENTENCE",
    "ORDERS",
    "tokens",
    "token_vectors",
    "is_reordering",
    "reordering",
    "named_order",
    "PermutationView",
    "permutation_view",
    "row_cosine_similarity",
    "RunningMaxModel",
    "OrderTaskResult",
    "running_max_batch",
    "accuracy_by_position",
    "train_running_max",
]

#: 我喜欢你 / 你喜欢我 at character level, one pinyin syllable per character
#: (wo = 我, xi = 喜, huan = 欢, ni = 你).
ZH_PAIR = ("wo xi huan ni", "ni xi huan wo")
#: The English companion: the same three words in another order, with another meaning.
EN_PAIR = ("dog bites man", "man bites dog")
#: Pinyin of the characters used above (for Markdown tables; figures use the pinyin only).
PINYIN = {"wo": "我", "xi": "喜", "huan": "欢", "ni": "你"}
#: The sentence of the permutation app (six distinct tokens).
APP_SENTENCE = "dog bites man at the park"
#: Named orders of the permutation app; "random" uses a seed.
ORDERS = ("original", "swap 0 and 2", "reverse", "rotate by one", "sort alphabetically", "random")


def tokens(sentence: str | Sequence[str]) -> list[str]:
    """The tokens of ``sentence``: split on whitespace (a list of strings is returned as a list)."""
    if isinstance(sentence, str):
        out = sentence.split()
    elif isinstance(sentence, Sequence) and all(isinstance(t, str) for t in sentence):
        out = list(sentence)
    else:
        raise TypeError(f"sentence must be a string or a sequence of strings, got {sentence!r}.")
    if not out:
        raise ValueError(f"sentence must contain at least one token, got {sentence!r}.")
    return out


def _token_seed(token: str, seed: int) -> int:
    return (seed * 1_000_003 + zlib.crc32(token.encode("utf-8"))) % (2**63)


def token_vectors(sentence: str | Sequence[str], dim: int = 8, *, seed: int = 0) -> Tensor:
    r"""The embedding matrix :math:`X \in \mathbb{R}^{n \times d}` of a sentence, one row per token.

    Row ``i`` is a standard-normal vector that depends only on the token's text and ``seed``,
    so "dog" has the same vector wherever it appears: content only, no position.
    """
    toks = tokens(sentence)
    dim = check_int("dim", dim, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    rows = [torch.randn(dim, generator=torch.Generator().manual_seed(_token_seed(t, seed))) for t in toks]
    return torch.stack(rows)


def is_reordering(a: str | Sequence[str], b: str | Sequence[str]) -> bool:
    """True when ``b`` has exactly the tokens of ``a`` (with multiplicity), in any order."""
    return sorted(tokens(a)) == sorted(tokens(b))


def reordering(a: str | Sequence[str], b: str | Sequence[str]) -> Tensor:
    r"""The permutation ``perm`` with ``b[i] == a[perm[i]]``, i.e. :math:`X_b = P X_a`.

    Repeated tokens are matched in order. If ``b`` is not a reordering of ``a`` (for example
    "you love me" vs "I love you": "me" is a different token from "I"), a ValueError says which
    tokens differ.
    """
    ta, tb = tokens(a), tokens(b)
    if sorted(ta) != sorted(tb):
        only_a = sorted(set(ta) - set(tb)) or sorted(ta)
        only_b = sorted(set(tb) - set(ta)) or sorted(tb)
        raise ValueError(
            f"{' '.join(tb)!r} is not a reordering of {' '.join(ta)!r}: tokens {only_a} vs {only_b} differ, "
            "so no permutation turns one into the other."
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
    name = check_choice("order", name, ORDERS)
    toks = tokens(sentence)
    n = len(toks)
    if name == "original":
        return torch.arange(n)
    if name == "swap 0 and 2":
        if n < 3:
            raise ValueError(f"order 'swap 0 and 2' needs at least 3 tokens, got {n}.")
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

    ``positions`` (``[n, d]`` or None) is added to the input of both runs after reordering.
    """
    toks = tokens(sentence)
    p = as_permutation(perm, x.shape[-2])

    def run(inp: Tensor) -> tuple[Tensor, Tensor]:
        if positions is not None:
            inp = inp + positions
        q, k, _ = head.project(inp)
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


def row_cosine_similarity(table: Tensor) -> Tensor:
    r"""The ``L × L`` cosine similarity of a table's rows.

    .. math:: C_{ij} = \dfrac{p_i \cdot p_j}{\lVert p_i\rVert\,\lVert p_j\rVert}
    """
    if not isinstance(table, Tensor) or table.ndim != 2:
        raise TypeError(f"table must be a 2-D tensor [L, d], got {type(table).__name__} "
                        f"{tuple(table.shape) if isinstance(table, Tensor) else ''}.")
    t = table.detach().to(torch.float64)
    unit = t / t.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


# --- the order task: running maximum -----------------------------------------------------------

def running_max_batch(batch: int, length: int, vocab: int = 10, *, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    r"""Random digit sequences ``x`` (``[batch, length]``, values ``0..vocab-1``) and targets.

    .. math:: y_i = \max_{j \le i} x_j
    """
    x = torch.randint(vocab, (batch, length), generator=generator)
    return x, torch.cummax(x, dim=1).values


class RunningMaxModel(nn.Module):
    r"""Embedding, optional learned positions, one self-attention head with a residual, a linear read-out.

    :math:`H = E[x] + P[:n]` (or :math:`E[x]` without positions), logits :math:`= (\text{Attention}(H) + H)\,W_{out}`.
    """

    def __init__(self, *, vocab: int, dim: int, max_len: int, use_positions: bool = True, seed: int = 0) -> None:
        super().__init__()
        self.use_positions = use_positions
        with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's RNG
            torch.manual_seed(seed)
            self.embed = nn.Embedding(vocab, dim)
            self.readout = nn.Linear(dim, vocab)
        self.positions = LearnedPositionalEmbedding(max_len, dim, seed=seed)
        self.attention = SelfAttention(dim, seed=seed)
        if not use_positions:
            self.positions.table.requires_grad_(False)

    def forward(self, x: Tensor) -> Tensor:
        h = self.embed(x)
        if self.use_positions:
            h = self.positions(h)
        out, _ = self.attention(h)
        return self.readout(out + h)

    def with_positions(self, positions: LearnedPositionalEmbedding) -> "RunningMaxModel":
        """A copy of this model that uses ``positions`` (for example an enlarged table)."""
        other = copy.deepcopy(self)
        other.positions = positions
        return other


@dataclass(frozen=True)
class OrderTaskResult:
    """A trained :class:`RunningMaxModel` with its position table before and after training (treat as read-only)."""

    model: RunningMaxModel
    initial_table: Tensor  #: P before training, [max_len, dim]
    losses: tuple[float, ...]  #: training loss per step
    accuracy: float  #: accuracy on fresh sequences of length max_len

    @property
    def positions(self) -> LearnedPositionalEmbedding:
        """The trained table (``.extended(...)`` makes an enlarged copy)."""
        return self.model.positions

    @property
    def trained_table(self) -> Tensor:
        return self.model.positions.table.detach().clone()


def accuracy_by_position(model: nn.Module, length: int, *, vocab: int = 10, n: int = 2000, seed: int = 1) -> Tensor:
    """Fraction of correct running-maximum answers at each slot ``0..length-1`` on ``n`` fresh sequences."""
    length = check_int("length", length, minimum=1)
    x, y = running_max_batch(n, length, vocab, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        return (model(x).argmax(-1) == y).double().mean(0)


@functools.lru_cache(maxsize=8)
def _train(
    max_len: int, dim: int, vocab: int, steps: int, lr: float, seed: int, use_positions: bool
) -> OrderTaskResult:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = RunningMaxModel(vocab=vocab, dim=dim, max_len=max_len, use_positions=use_positions, seed=seed)
        initial = model.positions.table.detach().clone()
        gen = torch.Generator().manual_seed(seed)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=lr)
        losses = []
        for _ in range(steps):
            x, y = running_max_batch(64, max_len, vocab, generator=gen)
            loss = nn.functional.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach().item())
        model.eval()
        acc = float(accuracy_by_position(model, max_len, vocab=vocab).mean())
    finally:
        torch.set_num_threads(threads)
    return OrderTaskResult(model, initial, tuple(losses), acc)


def train_running_max(
    *,
    max_len: int = 16,
    dim: int = 32,
    vocab: int = 10,
    steps: int = 500,
    lr: float = 3e-2,
    seed: int = 0,
    use_positions: bool = True,
) -> OrderTaskResult:
    r"""Train a :class:`RunningMaxModel` on :math:`y_i = \max_{j\le i} x_j` (Adam, batches of 64, one thread).

    Deterministic for a given seed; about a second on one CPU core for the defaults. The
    result is cached per argument set, so the notebook and its app share one training run.
    """
    return _train(
        check_int("max_len", max_len, minimum=2),
        check_int("dim", dim, minimum=2),
        check_int("vocab", vocab, minimum=2),
        check_int("steps", steps, minimum=1),
        check_real("lr", lr),
        check_int("seed", seed, minimum=0),
        bool(use_positions),
    )
