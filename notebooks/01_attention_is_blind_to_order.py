# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 01 · Attention does not know order (置换等变)
#
# Self-attention compares every token with every other token, but nothing in it says *where*
# a token sits. This notebook shows it and checks it (seed §1):
#
# 1. self-attention from scratch, checked against PyTorch's own;
# 2. **permutation equivariance** (置换等变): reorder the input, and the scores and outputs move the same way;
# 3. the seed's example 我喜欢你 / 你喜欢我 beside "dog bites man" / "man bites dog";
# 4. a slider app to reorder a sentence and watch the matrices move;
# 5. adding a position vector $p_i$ breaks the symmetry, and so, quietly, does a causal mask (NoPE).

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# Notation: $n$ tokens, model dimension $d$, $X \in \mathbb{R}^{n\times d}$ one row per token,
# $p_i$ the position vector of slot $i$. A permutation `perm` reorders rows: $(\Pi X)_i = X_{\text{perm}[i]}$.

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
import math

import torch
import torch.nn.functional as F
from IPython import get_ipython

from pe_helpers import SelfAttention, attention_scores, causal_mask, equivariance_gap
from pe_helpers import permutation_matrix, random_permutation, say
from pe_helpers import order
from pe_helpers.apps import permutation_app
from pe_helpers.checks import check_attention, check_equivariance_error, check_permuted_scores
from pe_helpers.figures.order import plot_sentence_pairs

torch.manual_seed(0)
torch.set_num_threads(1)
get_ipython().InteractiveTB.set_mode(mode="Minimal")  # short tracebacks, set silently (%xmode prints a line)
_ = torch.set_grad_enabled(False)  # no training in this notebook

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1 · Self-attention from scratch (自注意力)
#
# **Claim.** Three linear maps turn the tokens into queries, keys and values, and each output
# is a weighted average of the values:
#
# $$Q = XW_Q,\quad K = XW_K,\quad V = XW_V,\qquad
# \text{Attention}(Q,K,V) = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V .$$
#
# Token $i$ meets token $j$ only through $q_i^\top k_j$: a comparison of *contents*.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Write $\text{softmax}(QK^\top/\sqrt{d_k})V$ on the board. Token $i$ meets token $j$ only
# through $q_i^\top k_j$: nothing in it says where either token is.

# %% slideshow={"slide_type": "fragment"}
n, d = 5, 8
X = torch.randn(n, d)                 # five tokens, content only
head = SelfAttention(d, seed=0)       # W_Q, W_K, W_V drawn from seed 0
Q, K, V = head.project(X)
out, A = head(X)                      # output softmax(QKᵀ/√d)V and weights A
say("weights A: {shape} | every row sums to 1: {sums}", shape=tuple(A.shape), sums=bool(torch.allclose(A.sum(-1), torch.ones(n))))
say("output: {shape}", shape=tuple(out.shape))

# %% [markdown] slideshow={"slide_type": "fragment"}
# **Check it** against PyTorch's fused kernel, `torch.nn.functional.scaled_dot_product_attention`:

# %% slideshow={"slide_type": "-"}
torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V))
torch.testing.assert_close(A, torch.softmax(Q @ K.T / math.sqrt(d), dim=-1))
say("pe_helpers attention == torch.nn.functional.scaled_dot_product_attention: the same outputs and weights")

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 1.1 · Attention in three lines (★☆☆ easy · ~5 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** turn the attention formula into code, and see where token $i$ meets token $j$: only in $q_i^\top k_j$.
#
# Write `my_attention(q, k, v)` that returns $\text{softmax}(QK^\top/\sqrt{d_k})\,V$ for `q`, `k`
# of shape `[n, d_k]` and `v` of shape `[n, d_v]`. Use only `@`, `.T`, `math.sqrt` and `torch.softmax`.
# The checker compares it with PyTorch's attention and names the usual slips:
#
# * no $\sqrt{d_k}$;
# * softmax over the wrong axis;
# * returning the weights instead of the output.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="1.1" tags=["solution"]
import math

import torch


def my_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Scaled dot-product attention of the queries q [n, d_k] over the keys k [n, d_k] and values v [n, d_v]; returns [n, d_v]."""
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_attention(my_attention)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2 · Permutation equivariance (置换等变)
#
# **Claim.** Reorder the tokens with a permutation matrix $\Pi$. Every projection is row-wise, so
# $Q' = \Pi XW_Q = \Pi Q$, $K' = \Pi K$, $V' = \Pi V$, and
#
# $$S' = Q'K'^\top/\sqrt{d_k} = \Pi\,S\,\Pi^\top,\qquad
# \text{Attention}(\Pi Q, \Pi K, \Pi V) = \Pi\,\text{Attention}(Q, K, V)$$
#
# Rows *and* columns of the score matrix move with the tokens; the outputs move with them.
# Nothing in the result tells the model which order the tokens came in.
#
# **Check it** for 20 random permutations:

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# The seed calls the permutation matrix $P$; here $P$ is kept for the stacked position vectors
# $p_0, \dots, p_{n-1}$, as in the seed's §1.3. Why the outputs move too: the softmax of $\Pi S\Pi^\top$ is
# $\Pi A\Pi^\top$, and $\Pi A\Pi^\top \Pi V = \Pi AV$ because $\Pi^\top \Pi = I$.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Ask: if I swap two tokens, what happens to the output? (The output rows swap the same
# way: equivariant, not invariant.)

# %% slideshow={"slide_type": "fragment"}
S = attention_scores(Q, K)
for seed in range(20):
    Pi = permutation_matrix(random_permutation(n, seed=seed))
    Q2, K2, _ = head.project(Pi @ X)
    out2, A2 = head(Pi @ X)
    torch.testing.assert_close(attention_scores(Q2, K2), Pi @ S @ Pi.T)   # S' = Π S Πᵀ
    torch.testing.assert_close(A2, Pi @ A @ Pi.T)                        # weights move the same way
    torch.testing.assert_close(out2, Pi @ out)                          # Attention(ΠX) = Π·Attention(X)
say("20 random permutations: S' = Π S Πᵀ and Attention(ΠX) = Π·Attention(X), up to float32 rounding")

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "equivariant" means "the output does not change". It does change: it is
# > *reordered*, exactly like the input. (*Invariant* would mean unchanged.) What attention cannot
# > see is the order itself.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# The attention weights still depend on content: dog attends to man differently from how it attends
# to park.

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 1.2 · Move the score matrix (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** predict how reordering the tokens moves the score matrix ($\Pi S\Pi^\top$, rows *and* columns) without recomputing it.
#
# Without running attention again, predict the score matrix of the reordered input: write
# `permuted_scores(scores, perm)` returning $S' = \Pi S\Pi^\top$, where new token $i$ is old token
# `perm[i]`.
#
# * Hint: which entry of `scores` holds $q'_i \cdot k'_j$?
# * A common slip is to move only the rows ($\Pi S$, as if only $Q$ were permuted): the checker names it.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="1.2" tags=["solution"]
import torch


def permuted_scores(scores: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """The score matrix after reordering the tokens (new token i is old token perm[i]), made from scores alone."""
    return scores[perm][:, perm]


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_permuted_scores(permuted_scores)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3 · 我喜欢你 and 你喜欢我: same characters, other order
#
# The seed's example. At character level the two sentences are the same four tokens,
# in another order, with another meaning ("I like you" / "you like me"):
#
# | character | 我 | 喜 | 欢 | 你 |
# |---|---|---|---|---|
# | token in the code (one per character) | "我" | "喜" | "欢" | "你" |
#
# Each token has one fixed vector (its embedding, content only).
#
# **Claim.** $X_b = \Pi X_a$, so $\text{Attention}(X_b) = \Pi\,\text{Attention}(X_a)$: every token's
# output is identical in both sentences, only moved. Without position, 我 "does not know" whether
# it is the one who likes or the one who is liked.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# In the code, 我喜欢你 is `"我 喜 欢 你"` (`order.ZH_PAIR`, one token per character, separated by spaces) and
# 你喜欢我 is `"你 喜 欢 我"`: swap the first and the last token. The English companion "dog bites man" /
# "man bites dog" (`order.EN_PAIR`) swaps the first and the third.

# %% slideshow={"slide_type": "fragment"}
for a, b in (order.ZH_PAIR, order.EN_PAIR):
    Xa, Xb = order.token_vectors(a), order.token_vectors(b)
    perm = order.reordering(a, b)                   # b[i] == a[perm[i]]
    out_a, out_b = head(Xa)[0], head(Xb)[0]
    torch.testing.assert_close(out_b, out_a[perm])
    say("{a!r} -> {b!r}: perm = {perm}", a=a, b=b, perm=perm.tolist())
    for tok in order.tokens(a):
        i, j = order.tokens(a).index(tok), order.tokens(b).index(tok)
        torch.testing.assert_close(out_a[i], out_b[j])
        say("    {tok:>5}: slot {i} -> slot {j}, output[:3] = {out} in both", tok=tok, i=i, j=j,
            out=[round(v, 3) for v in out_a[i, :3].tolist()])

# %% [markdown] slideshow={"slide_type": "subslide"}
# **See it**: each row's colours travel with its token label.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
plot_sentence_pairs(order.sentence_outputs([*order.ZH_PAIR, *order.EN_PAIR]))

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** "I love you" / "you love me" is the English version of this example. It is
# > not a reordering: "I" and "me" are different tokens, so the two sentences already differ in
# > content. 我喜欢你 / 你喜欢我 is a pure reordering at character level; "dog bites man" /
# > "man bites dog" is one at word level.

# %% slideshow={"slide_type": "-"}
import re

assert not order.is_reordering("I love you", "you love me")
assert order.is_reordering(*order.ZH_PAIR) and order.is_reordering(*order.EN_PAIR)
for first, second in (order.ZH_PAIR, order.EN_PAIR, ("I love you", "you love me")):
    say("is {second!r} a reordering of {first!r}? {answer}", second=second, first=first,
        answer=order.is_reordering(first, second))
try:
    order.reordering("I love you", "you love me")
except ValueError as err:
    assert "['me']" in str(err), err
    said, why = re.split(r"(?<=[:：]) ?", str(err), maxsplit=1)   # the message, on two lines
    print(f"ValueError: {said}\n    {why}")
else:
    raise AssertionError("'you love me' is no reordering of 'I love you': reordering() must refuse it")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4 · Reorder a sentence yourself
#
# **See it.** Pick an order (or "random" and a seed).
#
# * Left: the scores $S$ of "dog bites man at the park".
# * Middle: the scores $S'$ of the reordered sentence, with row and column labels.
# * Right: the outputs of the reordered sentence.
#
# Follow one cell, say (query dog, key man): it moves with its two tokens, and keeps its colour. The title prints
# $\max|S' - \Pi S\Pi^\top|$ and $\max|\text{Attn}(\Pi X) - \Pi\,\text{Attn}(X)|$: zero. Tick **add p_i**
# to give slot $i$ the vector $x + p_i$ and watch both numbers leave zero (section 5).

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
permutation_app()

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Pick `order` = reverse and follow one cell (query dog, key man); then tick **add p_i** and
# watch both error numbers leave zero.

# %% [markdown] slideshow={"slide_type": "fragment"}
# **Check it**: every named order, and 20 random ones, without positions:

# %% slideshow={"slide_type": "-"}
sentence = order.APP_SENTENCE
Xs, orders = order.token_vectors(sentence), [o for o in order.ORDERS if o != "random"]
perms = [order.named_order(o, sentence) for o in orders] + [order.named_order("random", sentence, seed=s) for s in range(20)]
for perm in perms:
    view = order.permutation_view(Xs, sentence, perm, head)
    assert view.score_error < 1e-5 and view.output_error < 1e-5, perm
say("{count} orders of {sentence!r}: S' = Π S Πᵀ and outputs move with their tokens", count=len(perms), sentence=sentence)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 5 · Adding position breaks the symmetry (绝对位置编码)
#
# **Claim.** Give each *slot* $i$ a vector $p_i$ and feed $\tilde{x}_i = x_i + p_i$. Two equal
# tokens in different slots now differ, $x + p_i \neq x + p_j$ for $i \neq j$, and reordering the
# tokens no longer just reorders the outputs: the token that moves from slot 0 to slot 2 now
# carries $p_2$ instead of $p_0$. Any table of distinct rows does this; notebook 02 learns one,
# notebook 03 computes one. Here it is an untrained random table.

# %% slideshow={"slide_type": "fragment"}
P_pos = order.random_positions(n, d)                           # p_0 .. p_4, distinct rows
with_positions = lambda x: head(x + P_pos)[0]            # slot i gets x_i + p_i
content_only = lambda x: head(x)[0]
perms = [p for p in (random_permutation(n, seed=s) for s in range(20)) if not torch.equal(p, torch.arange(n))]
without = max(equivariance_gap(content_only, X, p) for p in perms)
broken = min(equivariance_gap(with_positions, X, p) for p in perms)
assert without < 1e-5, without
assert broken > 0.05, broken
say("{count} non-identity permutations: max|f(ΠX) - Π f(X)| < 1e-5 without positions, >= {broken:.2f} with them",
    count=len(perms), broken=broken)

# %% [markdown] slideshow={"slide_type": "fragment"}
# The very check of section 2, `assert_close(f(ΠX), Π f(X))`, now fails:

# %% slideshow={"slide_type": "-"}
Pi = permutation_matrix(random_permutation(n, seed=0))
try:
    torch.testing.assert_close(with_positions(Pi @ X), Pi @ with_positions(X))
except AssertionError as err:
    say("with positions, Attention(ΠX) = Π·Attention(X) fails: assert_close raises {kind}", kind=type(err).__name__)
else:
    raise AssertionError("adding p_i should break equivariance")

# %% slideshow={"slide_type": "skip"}
x = order.token_vectors("dog")[0]
twice = torch.stack([x, x])                     # the same token in slots 0 and 1
assert torch.equal(twice[0], twice[1])
assert not torch.allclose(twice[0] + P_pos[0], twice[1] + P_pos[1]), "x + p_0 must differ from x + p_1"
a, b = order.EN_PAIR
pos3 = P_pos[:3]
out_a, out_b = head(order.token_vectors(a) + pos3)[0], head(order.token_vectors(b) + pos3)[0]
gap = float((out_b - out_a[order.reordering(a, b)]).abs().max())
assert gap > 0.05
say("with positions, {word!r} as subject and {word!r} as object now have different outputs (up to {gap:.2f} apart)",
    word="dog", gap=gap)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 1.3 · Write the permutation check (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** write a numerical test of equivariance, the tool every later claim about order is checked with.
#
# Write `equivariance_error(f, x, perm)` that returns one number, $\max|f(\Pi X) - \Pi f(X)|$, where
# $(\Pi X)_i = X_{\text{perm}[i]}$ and `f` maps a `[n, d]` tensor to a `[n, d]` tensor. It must give
#
# * 0 (up to rounding) for plain self-attention;
# * a clearly positive number once positions or a causal mask are added.
#
# (This is what `pe_helpers.equivariance_gap` does.)

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="1.3" tags=["solution"]
from collections.abc import Callable

import torch


def equivariance_error(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, perm: torch.Tensor) -> float:
    """How far f is from permutation-equivariant on x under perm ((ΠX)_i = x[perm[i]]), as one float; 0 if equivariant."""
    return float((f(x[perm]) - f(x)[perm]).abs().max())


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_equivariance_error(equivariance_error)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 6 · Beyond the seed: a causal mask already knows order (NoPE)
#
# **Claim.** Decoder models use a causal mask: query $i$ may attend only to keys $j \le i$. That
# mask is not symmetric under reordering, so even without any positional encoding the layer is
# no longer equivariant, and a token can *count* how many tokens precede it. With a start token
# `<s>` followed by $i$ copies of the same token, the weight on `<s>` is
# $e^{s_0}/(e^{s_0} + i\,e^{s_1})$ at slot $i$: it falls with $i$, a built-in position counter.
# This is why decoder-only language models with **no** positional encoding still learn order
# (Haviv et al. 2022: "NoPos"; Kazemnejad et al. 2023: "NoPE").

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Ask: can a decoder with no positional encoding know order? (Yes: the causal mask lets a
# token count its predecessors.) The paper: Haviv et al., 2022, *Transformer Language Models without
# Positional Encodings Still Learn Positional Information*.

# %% slideshow={"slide_type": "fragment"}
causal = lambda x: head(x, causal_mask(x.shape[-2]))[0]
masked = min(equivariance_gap(causal, X, p) for p in perms)
assert masked > 0.05, masked
say("causal mask, no positions: max|f(ΠX) - Π f(X)| >= {masked:.2f} for every non-identity permutation", masked=masked)

# %% slideshow={"slide_type": "skip"}
start, word = order.token_vectors("<s> la")
seq = torch.stack([start] + [word] * 5)                     # <s> la la la la la
plain, _ = head(seq)
masked_out, weights = head(seq, causal_mask(6))
torch.testing.assert_close(plain[1:], plain[1].expand(5, -1))  # no mask: the five 'la' are identical
on_start = weights[1:, 0]
assert torch.all(on_start[1:] < on_start[:-1]), "the weight on <s> must fall with the slot"
gaps = torch.cdist(masked_out[1:], masked_out[1:]) + torch.eye(5)
assert gaps.min() > 1e-3, "with the mask every 'la' has its own output"
say("no mask: the five {word!r} outputs are identical (no position)", word="la")
say("causal mask: weight on <s> at slots 1..5 = {weights}", weights=[round(w, 3) for w in on_start.tolist()])

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Exercise 1.4 · Reorder a masked sequence (★★★ hard · ~15 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** see *why* attention weights move with the tokens, $\text{softmax}(\Pi S\Pi^\top) =
# \Pi\,\text{softmax}(S)\,\Pi^\top$, and why that stops being true once a causal mask is added: the mask
# belongs to the positions, not to the tokens.
#
# You have the raw scores `scores` ($S$, $n \times n$) and a reordering `perm` (new token $i$ is old
# token `perm[i]`). Write `causal_weights_after_reorder(scores, perm)`: the **causal** attention weights
# of the *reordered* sequence, from `scores` and `perm` alone. The checker names the usual slips.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Why it matters:* it is the whole reason a decoder without positional encoding still knows order.
# Before writing it, decide: may you compute the masked weights of the old order and move them, as you
# moved $S$ in Exercise 1.2? Why does a row-wise softmax let you move *unmasked* weights?

# %% slideshow={"slide_type": "skip"}
from pe_helpers.checks import check_causal_reorder

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="1.4" tags=["solution"]
import torch

from pe_helpers import causal_mask


def causal_weights_after_reorder(scores: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Causal attention weights (n × n, rows sum to 1) of the sequence reordered by perm, from the old scores."""
    reordered = scores[perm][:, perm]            # the tokens move: rows and columns (Exercise 1.2)
    allowed = causal_mask(len(perm))             # the mask does not move: new slot i sees slots <= i
    return torch.softmax(reordered.masked_fill(~allowed, float("-inf")), dim=-1)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_causal_reorder(causal_weights_after_reorder)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Reveal.**
#
# * A softmax normalises each row on its own and its sum does not care about the order of the entries,
#   so permuting rows and columns before or after it gives the same matrix.
# * The mask is a fixed lower triangle: moving it with the tokens is the mistake, and that is where
#   order leaks in.

# %% slideshow={"slide_type": "-"}
S_demo, perm_demo = attention_scores(Q, K).double(), random_permutation(n, seed=3)
P_demo = permutation_matrix(perm_demo).double()
allowed = causal_mask(n)
torch.testing.assert_close(torch.softmax(P_demo @ S_demo @ P_demo.T, -1), P_demo @ torch.softmax(S_demo, -1) @ P_demo.T)
masked_new = torch.softmax((P_demo @ S_demo @ P_demo.T).masked_fill(~allowed, float("-inf")), -1)
masked_moved = P_demo @ torch.softmax(S_demo.masked_fill(~allowed, float("-inf")), -1) @ P_demo.T
gap = (masked_new - masked_moved).abs().max()
assert gap > 0.05, gap
say("no mask: softmax(ΠSΠᵀ) = Π softmax(S) Πᵀ; causal mask: they differ by up to {gap:.2f}", gap=gap)

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "without a positional encoding a Transformer cannot know order at all". True
# > for an encoder (bidirectional attention, sections 2–5). A decoder's causal mask leaks order:
# > a token can count its predecessors. NoPE models rely on this.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# Kazemnejad et al. (2023) found that NoPE models can even generalise to longer inputs better than
# absolute encodings on some tasks (notebook 05).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Summary
#
# * Self-attention is permutation-equivariant: $S' = \Pi S\Pi^\top$, $\text{Attention}(\Pi X) = \Pi\,\text{Attention}(X)$.
# * So 我喜欢你 and 你喜欢我 give each character the same output, only moved.
# * Adding $p_i$ to slot $i$ breaks the symmetry; a causal mask breaks it too.
#
# Next: **02**, where the $p_i$ are learned, and where they go: into $Q$, $K$ *and* $V$.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## References
#
# - [seed] 《绝对位置编码》 ("Absolute positional encoding", 2025-05-12). Used here: §1.1–1.2.
# - [1] Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762: §3.2.1, scaled dot-product attention $\text{softmax}(QK^\top/\sqrt{d_k})V$.
# - [4] Haviv et al. 2022, *Transformer Language Models without Positional Encodings Still Learn Positional Information*, arXiv:2203.16634 (section 6).
# - [5] Kazemnejad et al. 2023, *The Impact of Positional Encoding on Length Generalization in Transformers*, arXiv:2305.19466 (section 6).
# - No published number is quoted: every number above is computed in this notebook.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# The seed is the syllabus of the collection; section numbers §1–§5 refer to it. What the two papers
# show: [4] decoder language models without any positional encoding stay competitive;
# [5] NoPE generalised to longer inputs better than the explicit encodings they compared, on their tasks.
