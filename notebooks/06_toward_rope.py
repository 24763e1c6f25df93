# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 06 · Toward RoPE: rotate q and k instead of adding p (旋转位置编码)
#
# RoPE keeps notebook 04's rotation $R(k)$, but it *rotates* $q$ and $k$ instead of *adding* a vector to $x$:
# the rotation acts inside the dot product (点积).
#
# **You will be able to**
# - rotate $q$ and $k$ so that $q^\top k$ depends only on the offset (相对位置) $n - m$, with no explicit position
#   in V (exercises 6.1, 6.2);
# - relate `apply_rope` to notebook 04's `shift_matrix`, signs included;
# - convert interleaved RoPE into half-split RoPE with one permutation (exercise 6.3);
# - explain why RoPE angles need float32 or float64, never bf16 (精度);
# - compare five schemes in notebook 05's lab.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Where the seed ends: with absolute encodings relative distance is only implicit, and content and
# position share one vector. The seed points to relative encodings and RoPE (rotary position embedding, 旋转位置编码)
# as the next step. This notebook is that bridge, and it closes the collection. The two layouts of exercise 6.3 are
# the interleaved one (GPT-J, RoFormer) and the half-split one (GPT-NeoX, the Llama family's `rotate_half`); the
# five schemes compared at the end are learned, sinusoidal, RoPE, ALiBi and no encoding (a causal mask only).

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
import math

import torch
from IPython.display import Markdown, display

from pe_helpers import SelfAttention, apply_rope, say, shift_matrix, sinusoidal
from pe_helpers.apps import rope_shift_app
from pe_helpers.checks import check_relative_score, check_rope_attention, check_rope_pair, example_rope_mistakes
from pe_helpers.figures import draw_angle_error, draw_score_matrices, static_figure
from pe_helpers.comparison import comparison_table, format_comparison_accuracies, format_comparison_matrix, format_comparison_table
from pe_helpers.extrapolation import reference_results
from pe_helpers.rope import (angles_in_dtype, demo_query_key, interleaved_to_half_permutation, pair_swap_permutation,
                             rope_matrix, shifted_scores)

torch.manual_seed(0)
torch.set_num_threads(1)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1 · Rotate q and k, do not add to x
#
# **Claim.** An absolute encoding adds $p_m$ to $x_m$ before the projections, so $q_m = W_Q^\top(x_m + p_m)$,
# $k_n = W_K^\top(x_n + p_n)$ and also $v_n = W_V^\top(x_n + p_n)$. RoPE adds nothing. It rotates the query (查询)
# and the key (键) of every attention layer by the angle of their own position, and leaves the value (值) alone:
#
# $$\tilde q_m = \mathcal{R}_m\, q_m,\qquad \tilde k_n = \mathcal{R}_n\, k_n,\qquad v_n = W_V^\top x_n,\qquad
# \tilde q_m^\top \tilde k_n = q_m^\top \mathcal{R}_m^\top \mathcal{R}_n\, k_n = q_m^\top\, \mathcal{R}_{n-m}\, k_n .$$
#
# $\mathcal{R}_m$ is block-diagonal, one 2×2 rotation by $m\,\omega_i$ per pair $i$, with notebook 03's frequencies
# $\omega_i = 10000^{-2i/d}$. Only the offset $n - m$ survives in the score: move the whole sentence by $t$ positions
# and no score changes.
#
# **Check it.** Six tokens through one attention head: the scores at positions $t \dots t+5$ for 101 shifts $t$ up
# to 5000; then single pairs $(m, n)$ against $(m+t, n+t)$.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Why only the offset survives: rotations compose ($\mathcal{R}_a\mathcal{R}_b = \mathcal{R}_{a+b}$)
# and undo by transposing ($\mathcal{R}_m^\top = \mathcal{R}_{-m}$), so $\mathcal{R}_m^\top\mathcal{R}_n = \mathcal{R}_{n-m}$.
# The head is `SelfAttention` in float64, so the scores agree to $10^{-9}$.

# %% slideshow={"slide_type": "fragment"}
d, n = 16, 6
head = SelfAttention(d, seed=0).double()
x = torch.randn(n, d, dtype=torch.float64)  # six tokens' content; no position is added to x
with torch.no_grad():
    q, k, v = head.project(x)
pos = torch.arange(n)


def rope_scores_at(start: int) -> torch.Tensor:
    # scores (R_m q_m)·(R_n k_n) with the sentence at positions start .. start + n - 1
    return apply_rope(q, pos + start) @ apply_rope(k, pos + start).T


shifts = range(0, 5001, 50)
for t in shifts:
    torch.testing.assert_close(rope_scores_at(t), rope_scores_at(0), atol=1e-9, rtol=0)
say("all {n}×{n} scores identical for {count} shifts t = 0, 50, ..., 5000", n=n, count=len(shifts))

q0, k0 = q[0], k[1]
for m, n_ in [(5, 2), (2, 5), (40, 3), (0, 63)]:
    s = shifted_scores(q0, k0, m, n_, torch.arange(0, 2001))  # (R_{m+t} q)·(R_{n+t} k) for t = 0..2000
    torch.testing.assert_close(s, s[:1].expand_as(s), atol=1e-9, rtol=0)
    say("(m, n) = ({m:2d}, {n:2d}), offset n - m = {k:+3d}: score {score:+.4f} for all 2001 shifts", m=m, n=n_, k=n_ - m,
        score=float(s[0]))
assert not math.isclose(float(shifted_scores(q0, k0, 5, 2, [0])[0]), float(shifted_scores(q0, k0, 2, 5, [0])[0])), \
    "offsets +3 and -3 give different scores: RoPE sees direction, not only distance"


# %% [markdown] slideshow={"slide_type": "subslide"}
# The last assert is a difference from notebook 04: there $PE(p)\cdot PE(p+k)$ was the same for $+k$ and $-k$.
# Here, because $q$ and $k$ are different vectors,
#
# $$q^\top\mathcal{R}_{3}\,k \ne q^\top\mathcal{R}_{-3}\,k :$$
#
# the score knows which token comes first.
#
# **Claim.** V is untouched: the values are $W_V^\top x_n$ whatever the positions, while an added encoding puts
# position into every value. That is the explicit signal, within one layer. In a model of several causal layers, later
# values can still carry position that earlier layers inferred from the mask: notebook 05 §5's probe reads it off the
# hidden states of a model with no encoding at all.

# %% slideshow={"slide_type": "-"}
def layer(start: int, scheme: str) -> tuple[torch.Tensor, torch.Tensor]:
    # (output, values) of the head with the sentence at positions start .. start + n - 1
    if scheme == "rope":
        qq, kk, vv = apply_rope(q, pos + start), apply_rope(k, pos + start), v
    else:  # "sinusoidal": PE added to x before the projections
        pe = sinusoidal(start + n, d, dtype=torch.float64)[start:]
        with torch.no_grad():
            qq, kk, vv = head.project(x + pe)
    weights = torch.softmax(qq @ kk.T / math.sqrt(d), dim=-1)
    return weights @ vv, vv


out0, v_rope = layer(0, "rope")
with torch.no_grad():
    assert torch.equal(v_rope, x @ head.W_V), "RoPE's values are W_V x: no position in V"
for t in (1, 37, 1000):
    out_t, v_t = layer(t, "rope")
    assert torch.equal(v_t, v_rope)
    torch.testing.assert_close(out_t, out0, atol=1e-9, rtol=0)  # whole output unchanged by the shift
_, v_add0 = layer(0, "sinusoidal")
_, v_add37 = layer(37, "sinusoidal")
change = float((v_add37 - v_add0).norm() / v_add0.norm())
assert change > 0.1
say("RoPE: V identical at every start, output identical")
say("added PE: V changes by {change:.0%} when the sentence starts at 37 instead of 0", change=change)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **See it.** For one query content $q$ and one key content $k$ placed at every pair of positions $(m, n)$: the additive
# score $(q + PE(m))^\top(k + PE(n))$ on the left, the rotary score $(\mathcal{R}_m q)^\top(\mathcal{R}_n k)$ on the
# right. The right matrix is constant along every diagonal $n - m = \text{const}$ (a Toeplitz matrix); the left one is not.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
qc, kc = demo_query_key(d)
fig, (ax_add, ax_rope) = static_figure(1, 2, height=3.9)
draw_score_matrices(ax_add, ax_rope, qc, kc, n=48)
fig

# %% [markdown] slideshow={"slide_type": "subslide"}
# **See it, move it.** The app puts the query at $m + t$ and the key at $n + t$. Left: pair $i$ of both rotated vectors
# (dashed: before rotation). Right: the whole score against the shift $t$, and the additive score beside it.
#
# **Try it.**
# - Move `shift t`: both arrows turn by the same angle $t\,\omega_i$, the angle between them stays, and the blue
#   score does not move while the orange one wanders.
# - Move `query m` or `key n`: now the angle changes, and the blue line jumps to a new level.
# - Raise `pair i`: slower pairs turn less per step.

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
rope_shift_app()


# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Move `shift t`: both arrows turn by $t\,\omega_i$; the blue (RoPE) score stays flat while
# the orange (additive) one wanders. Then move `query m` or `key n`: the blue line jumps.

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** "RoPE is one more vector added to the token embedding". Nothing is added, and nothing happens at the
# > input: RoPE acts inside every attention layer, after $W_Q$ and $W_K$, on $q$ and $k$ only. A related slip is to rotate
# > V as well. The RoFormer paper rotates only the query and the key; Hugging Face's `RoFormerConfig` has an opt-in
# > `rotary_value` flag (default `False`) for a variant that also rotates the values. With V rotated, a token's value
# > depends on its absolute position again,
# >
# > $$o_m = \sum_n a_{mn}\,\mathcal{R}_n\, v_n ,$$
# >
# > and the output of the shifted sentence changes (the checker of exercise 6.3 calls this mistake `rotated-v`):

# %% slideshow={"slide_type": "-"}
def output_with_v_rotated(start: int) -> torch.Tensor:
    p = pos + start
    weights = torch.softmax(apply_rope(q, p) @ apply_rope(k, p).T / math.sqrt(d), dim=-1)
    return weights @ apply_rope(v, p)  # the slip: V rotated too


moved = float((output_with_v_rotated(37) - output_with_v_rotated(0)).abs().max())
assert moved > 0.1
say("V rotated too: the output changes by up to {moved:.2f} when the sentence starts at 37 instead of 0", moved=moved)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2 · The same rotation as notebook 04, now inside the dot product (旋转矩阵)
#
# **Claim.** $\mathcal{R}_m$ is notebook 04's $R(m)$, read with each pair the other way round. `shift_matrix(k)`
# moves $(\sin, \cos)$ pairs, i.e. points stored as $(y, x)$; `apply_rope` turns pairs $(a, b)$ stored as $(x, y)$,
# counter-clockwise:
#
# $$\mathcal{R}_m = \operatorname{diag}_i\begin{bmatrix}\cos m\omega_i & -\sin m\omega_i\\ \sin m\omega_i & \cos m\omega_i\end{bmatrix}
# = R(m)^\top = R(-m) = S\,R(m)\,S,$$
#
# with $S$ the permutation that swaps the two entries of every pair. In notebook 04's notation the score is
# $(\mathcal{R}_m q)^\top(\mathcal{R}_n k) = q^\top R(m)\,R(-n)\,k = q^\top R(m - n)\,k$: the same $R(k)$, with
# $k = m - n$, now between $q$ and $k$. And RoPE applied to the constant vector $(1, 0, 1, 0, \dots)$ at position $m$
# gives $(\cos m\omega_i, \sin m\omega_i)$: notebook 03's table with each pair swapped.

# %% slideshow={"slide_type": "fragment"}
S = pair_swap_permutation(d)
for m in (0, 1, 5, 37, -8, 1000):
    R_m = rope_matrix(m, d)
    torch.testing.assert_close(apply_rope(x, [m] * n), x @ R_m.T)  # apply_rope = multiply by R_m
    torch.testing.assert_close(R_m, shift_matrix(m, d).T)  # notebook 04's R(m), transposed
    torch.testing.assert_close(R_m, shift_matrix(m, d)[S][:, S])  # = S R(m) S: the pairs read (x, y)
assert not torch.allclose(rope_matrix(5, d), shift_matrix(5, d)), "same rotation, opposite sign convention"
for a, b in [(3, 4), (10, -25), (-7, 1000)]:
    torch.testing.assert_close(rope_matrix(a, d) @ rope_matrix(b, d), rope_matrix(a + b, d))  # R_a R_b = R_(a+b)
    torch.testing.assert_close(rope_matrix(a, d).T, rope_matrix(-a, d))  # R_aᵀ = R_(-a)
for m, n_ in [(5, 2), (2, 5), (40, 3), (1000, 999)]:
    score = float(apply_rope(q0[None], [m])[0] @ apply_rope(k0[None], [n_])[0])
    assert math.isclose(score, float(q0 @ shift_matrix(m - n_, d) @ k0), abs_tol=1e-9)
ones = torch.tensor([1.0, 0.0] * (d // 2), dtype=torch.float64)
torch.testing.assert_close(apply_rope(ones.expand(50, d), torch.arange(50)), sinusoidal(50, d, dtype=torch.float64)[:, S])
say("apply_rope(x, m) = R_m x with R_m = R(m)ᵀ = S R(m) S")
say("(R_m q)·(R_n k) = q·R(m - n)k")
say("RoPE of (1, 0, 1, 0, ...) = the sinusoidal table, pairs swapped")

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 6.1 · RoPE for one pair (★☆☆ easy · ~5 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** rotate one (x, y) pair by $m\,\omega$: the single operation RoPE is built from.
#
# Write `rotate_pair(pair, position, omega)`: `pair` is a tensor `(a, b)`; return the tensor `(a', b')` turned
# counter-clockwise by $\theta = position\cdot\omega$:
#
# $$a' = a\cos\theta - b\sin\theta,\qquad b' = a\sin\theta + b\cos\theta .$$
#
# This is all of RoPE: `apply_rope` does it for every pair $i$ (with $\omega_i$) of every row (with its position).

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="6.1" tags=["solution"]
import math

import torch


def rotate_pair(pair: torch.Tensor, position: float, omega: float) -> torch.Tensor:
    """The pair (a, b) turned counter-clockwise by the angle θ = position·ω, as a tensor of 2 numbers."""
    a, b = float(pair[0]), float(pair[1])
    theta = position * omega
    return torch.tensor([a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)])


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_rope_pair(rotate_pair)

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** "`shift_matrix` and `apply_rope` disagree by a sign, so one of them is wrong". Both are right;
# > they store the pair in opposite orders. Notebook 04's block is the transpose of RoPE's,
# >
# > $$\begin{bmatrix}\cos & \sin\\ -\sin & \cos\end{bmatrix} = \begin{bmatrix}\cos & -\sin\\ \sin & \cos\end{bmatrix}^{\top},$$
# >
# > so using it on $(a, b) = (x, y)$ turns the pair backwards. Backwards for both $q$ and $k$ still gives a score that
# > depends only on $m - n$, but with the direction flipped, $q^\top\mathcal{R}_{m-n}k$ instead of $q^\top\mathcal{R}_{n-m}k$; such a model
# > does not match weights trained with the usual sign. The checker calls this mistake `wrong-sign`.

# %% slideshow={"slide_type": "skip"}
wrong = example_rope_mistakes("6.1")["wrong-sign"]  # (a, b) turned by -θ
result = check_rope_pair(wrong, quiet=True)
assert not result and result.mistake == "wrong-sign"
print(result)
for m, n_ in [(5, 2), (40, 3)]:
    backwards = lambda a, b: float(apply_rope(q0[None], [-a])[0] @ apply_rope(k0[None], [-b])[0])  # noqa: E731
    assert math.isclose(backwards(m, n_), backwards(m + 100, n_ + 100), abs_tol=1e-9)  # still only the offset
    assert math.isclose(backwards(m, n_), float(shifted_scores(q0, k0, n_, m, [0])[0]), abs_tol=1e-9)  # q·R(m-n)k

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 6.2 · The score from the offset alone (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** show that the rotated score needs only the offset $n - m$: RoPE's relative property, in code.
#
# Show that the score depends only on $m - n$ by computing it *without* the two positions. Write
# `relative_score(q, k, offset)` returning the number $q^\top\mathcal{R}_{\text{offset}}\,k$, using **one** rotation
# (`apply_rope` is allowed). The checker compares `relative_score(q, k, n - m)` with the two-rotation score
# $(\mathcal{R}_m q)^\top(\mathcal{R}_n k)$ for several $(m, n)$, shifted copies of one offset included.
# Hint: which of the two vectors should turn, and by $n - m$ or by $m - n$?

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="6.2" tags=["solution"]
import torch

from pe_helpers import apply_rope


def relative_score(q: torch.Tensor, k: torch.Tensor, offset: int) -> float:
    """The RoPE score (R_m q)·(R_n k), computed from the offset n - m alone (m and n are not given)."""
    return float(q @ apply_rope(k[None], [offset])[0])


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_relative_score(relative_score)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3 · Two layouts in public code: interleaved and half-split (置换)
#
# **Claim.** Public RoPE code pairs the dimensions in one of two ways:
#
# | layout | pairs | public code |
# |---|---|---|
# | interleaved (相邻配对) | $(2i,\ 2i+1)$ | RoFormer, GPT-J, Meta's reference LLaMA code |
# | half-split (前后两半配对) | $(i,\ i + d/2)$ | GPT-NeoX; Hugging Face Llama and the many models derived from it (`rotate_half`) |
#
# They are the same encoding up to one fixed permutation $\sigma$ of the dimensions: the even ones first, then the odd
# ones, as in notebook 03's two layouts.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Where each layout lives (file, function):
#
# - interleaved: RoFormer (`huggingface/transformers`, `modeling_roformer.py`, `apply_rotary_position_embeddings`;
#   its `RoFormerConfig.rotary_value` is the flag of section 1's box); GPT-J (`huggingface/transformers`,
#   `modeling_gptj.py`, `rotate_every_two`); Meta's reference LLaMA code (`meta-llama/llama`, `llama/model.py`,
#   `apply_rotary_emb`, adjacent pairs as complex numbers via `torch.view_as_complex`);
# - half-split: GPT-NeoX (`EleutherAI/gpt-neox`, `megatron/model/positional_embeddings.py`, `rotate_half`); Hugging
#   Face Llama and the many models derived from it (`huggingface/transformers`, `modeling_llama.py`, `rotate_half`).

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Same encoding, permuted.** With $x_\sigma$ the entries of $x$ in the order $\sigma$:
#
# $$\text{rope}_{\text{half}}(x_\sigma) = \text{rope}_{\text{interleaved}}(x)_\sigma .$$
#
# Since $q_\sigma^\top k_\sigma = q^\top k$, permuting the output dimensions of $W_Q$ and $W_K$ (not $W_V$) turns a model
# of one kind into the other with identical scores.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Hugging Face's Llama code says so in a comment ("Different from paper, but it uses a different
# permutation in order to obtain the same calculation"), and its weight converter `convert_llama_weights_to_hf.py`
# (`huggingface/transformers`)
# applies exactly this permutation to `wq` and `wk` ("permute for sliced rotary"), and not to `wv`.

# %% slideshow={"slide_type": "fragment"}
sigma = interleaved_to_half_permutation(d)
say("σ = {sigma}", sigma=sigma.tolist())
positions = torch.tensor([0, 3, 17, 250, 4000, 65535])
xs = torch.randn(6, d, dtype=torch.float64)
torch.testing.assert_close(apply_rope(xs[:, sigma], positions, layout="half"), apply_rope(xs, positions)[:, sigma])
assert not torch.allclose(apply_rope(xs, positions, layout="half"), apply_rope(xs, positions)), \
    "without σ the two layouts give different vectors"

W_Q, W_K, W_V = (w.detach() for w in (head.W_Q, head.W_K, head.W_V))
scores_inter = apply_rope(x @ W_Q, pos) @ apply_rope(x @ W_K, pos).T  # interleaved model
scores_half = apply_rope(x @ W_Q[:, sigma], pos, layout="half") @ apply_rope(x @ W_K[:, sigma], pos, layout="half").T
torch.testing.assert_close(scores_half, scores_inter)  # W_Q, W_K permuted: the same scores
wrong = apply_rope(x @ W_Q, pos, layout="half") @ apply_rope(x @ W_K, pos, layout="half").T
gap = float((wrong - scores_inter).abs().max())
assert gap > 0.1
say("half layout with permuted W_Q, W_K: identical scores")
say("half layout without the permutation: scores off by up to {gap:.2f}", gap=gap)

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "interleaved and half-split RoPE are different encodings" (or: "the layout does not matter").
# > Both are half true: a model converts exactly, but weights run with the other layout *without* permuting $W_Q$ and
# > $W_K$ get wrong scores (the gap above; exercise 6.3's checker calls this mix-up `half-layout`).

# %% slideshow={"slide_type": "skip"}
result = check_rope_attention(example_rope_mistakes("6.3")["half-layout"], quiet=True)
assert not result and result.mistake == "half-layout"
print(result)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 6.3 · Attention with RoPE (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** put RoPE inside attention: rotate $q$ and $k$, never $v$, in the interleaved layout.
#
# Write `rope_attention(q, k, v, positions)` for one head without a mask: rotate `q` and `k` (shape `[n, d]`) by
# `positions` in the **interleaved** layout (`apply_rope`'s default), then return
#
# $$\text{softmax}\big(\tilde Q\tilde K^\top/\sqrt{d}\big)\,V .$$
#
# The checker recognises rotating V too, the half layout, the wrong sign, rotating only one of q and k, and a
# missing $\sqrt{d}$.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="6.3" tags=["solution"]
import math

import torch

from pe_helpers import apply_rope


def rope_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Single-head attention with RoPE (interleaved pairs, base 10000, no mask) for q, k, v [n, d] at these positions."""
    q, k = apply_rope(q, positions), apply_rope(k, positions)
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_rope_attention(rope_attention)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 6.4 · Shift the whole sequence: predict, then reveal (★★★ hard · ~15 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** see exactly *what* in an additive encoding depends on absolute position
# (notebook 05's four terms), and why RoPE's score does not.
#
# The same tokens $x_0..x_{n-1}$ sit at positions $0..n-1$, then at $s..s+n-1$; take $q = k = x$. **Predict first**:
# does the $n \times n$ score matrix change under the shift
# - (a) with RoPE, $(R_i x_i)^\top(R_j x_j)$?
# - (b) with sinusoidal positions added, $(x_i + p_i)^\top(x_j + p_j)$?
#
# Then write `shift_gaps(x, shift)` returning `(rope_gap, additive_gap)`: for each scheme the largest absolute change of
# any score between the two placements (interleaved layout).

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* *Why it matters:* it is the property RoPE was designed for. Ask the students to write their
# prediction down before they code. The shift stands for a prefix of $s$ tokens before the same sentence; $q = k = x$
# (no projections) keeps the algebra to four terms. `sinusoidal` and `apply_rope` are allowed. The checker reveals the
# values and names the usual slips.

# %% slideshow={"slide_type": "skip"}
from pe_helpers.checks import check_shift_gaps

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="6.4" tags=["solution"]
import torch

from pe_helpers import apply_rope, sinusoidal


def shift_gaps(x: torch.Tensor, shift: int) -> tuple[float, float]:
    """(rope_gap, additive_gap): the largest |change| of each scheme's n × n scores when every position moves by shift."""
    n, d = x.shape
    pos = torch.arange(n)
    rope = [apply_rope(x, pos + s) for s in (0, shift)]
    added = [x + sinusoidal(n, d, offset=s, dtype=x.dtype) for s in (0, shift)]
    rope_gap = (rope[1] @ rope[1].T - rope[0] @ rope[0].T).abs().max()
    additive_gap = (added[1] @ added[1].T - added[0] @ added[0].T).abs().max()
    return float(rope_gap), float(additive_gap)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_shift_gaps(shift_gaps)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Reveal.** RoPE's score is unchanged for every $s$ and every content:
#
# $$(R_{i+s}x_i)^\top(R_{j+s}x_j) = x_i^\top R_{j-i}\,x_j .$$
#
# Additive: of the four terms
#
# $$x_i\!\cdot\!x_j + x_i\!\cdot\!p_j + p_i\!\cdot\!x_j + p_i\!\cdot\!p_j$$
#
# the first does not move and the last depends only on $j - i$ (notebook 04), but the two cross terms pair a token
# with an *absolute* position: they change with $s$. That is the mixing of notebook 05, §1.

# %% slideshow={"slide_type": "-"}
x_demo = torch.randn(6, 16, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
pe0, pe9 = sinusoidal(6, 16, dtype=torch.float64), sinusoidal(6, 16, offset=9, dtype=torch.float64)
torch.testing.assert_close(pe9 @ pe9.T, pe0 @ pe0.T)                    # position·position: does not move
cross_change = ((x_demo @ pe9.T) - (x_demo @ pe0.T)).abs().max()
assert cross_change > 0.5, cross_change                                 # content·position: moves
r0, r9 = apply_rope(x_demo, torch.arange(6)), apply_rope(x_demo, torch.arange(6) + 9)
torch.testing.assert_close(r9 @ r9.T, r0 @ r0.T)                        # RoPE: does not move
say("shift by 9: p·p unchanged, x·p changes by up to {change:.2f}, RoPE scores unchanged", change=cross_change)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4 · Precision: form the angle in float32 or float64, not bf16 (精度)
#
# **Claim.** The rotation angle $m\,\omega_i$ grows with the position: for pair 0 ($\omega_0 = 1$) it is $m$ radians.
# A number format with $p$ significant bits rounds $m$ to a spacing of $2^{\lfloor\log_2 m\rfloor + 1 - p}$. bfloat16
# has $p = 8$: above 256 it cannot even hold every integer position (257 becomes 256, 4097 becomes 4096), so the angle
# is off by whole radians and the direction of the pair is lost. float16 ($p = 11$) overflows above 65504. In float32
# ($p = 24$) the angle's error is at most about $2^{-23}\,m\,\omega_i$, if $\omega_i$ is the correctly rounded float32
# of $\text{base}^{-2i/d}$. `pe_helpers` computes $\omega_i$ and every angle in float64.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Where float32's bound comes from: float32 holds every integer position below $2^{24}$ exactly, and
# each rounding is off by at most $2^{-24}$ of the rounded value; the angle is rounded twice ($\omega_i$, then the
# product $m\,\omega_i$), so its error is at most about $2^{-23}\,m\,\omega_i$, and pair 0 ($\omega_0 = 1$) is exact.
# "Rounded twice" is the condition: $\omega_i$ must reach float32 in one rounding of its exact value, which is what
# computing it in float64 and casting once gives. Code that computes $\omega_i$ in float32 rounds more often (next slide).

# %% slideshow={"slide_type": "fragment"}
for dtype, p in ((torch.bfloat16, 8), (torch.float16, 11), (torch.float32, 24)):
    assert torch.finfo(dtype).eps == 2.0 ** (1 - p)  # spacing at m is eps·2^floor(log2 m) = 2^(floor(log2 m) + 1 - p)
assert torch.tensor(257.0).bfloat16().item() == 256.0 and torch.tensor(4097.0).bfloat16().item() == 4096.0
distinct = torch.arange(4096).bfloat16().unique().numel()
assert distinct < 1000
say("bfloat16 holds only {distinct} distinct values for the 4096 positions 0..4095", distinct=distinct)

probe = torch.tensor([257.0, 1001.0, 4097.0, 10001.0, 100003.0, 1000003.0])
exact = angles_in_dtype(probe, d)  # float64
say("position   {positions}", positions="".join(f"{int(p):>10d}" for p in probe))
errors = {}
for dtype in (torch.bfloat16, torch.float16, torch.float32):
    errors[dtype] = (angles_in_dtype(probe, d, dtype=dtype) - exact).abs().amax(dim=-1)
    print(f"{str(dtype)[6:]:<11}" + "".join(f"{e:>10.2g}" for e in errors[dtype].tolist()))
assert float(errors[torch.bfloat16][0]) >= 1.0 and float(errors[torch.bfloat16][3]) > 10
assert math.isinf(float(errors[torch.float16][-1]))
assert float(errors[torch.float32][4]) < 1e-3 and float(errors[torch.float32][-1]) < 1e-2

# %% [markdown] slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
# **Check the float32 bound against the table.** Per pair, the error is at most $2^{-23}(1 + 2^{-24})\,m\,\omega_i$;
# the largest is pair 1 ($\omega_1 = 10000^{-2/16} \approx 0.32$ for $d = 16$), a bound of about $4\cdot10^{-3}$ rad near
# $m = 10^5$. The table's row stays below it (rounding errors rarely reach their worst case), and pair 0 is exact.

# %% slideshow={"slide_type": "-"}
from pe_helpers import inverse_frequencies

per_pair = (angles_in_dtype(probe, d, dtype=torch.float32) - exact).abs()        # [positions, d/2]
bound = 2.0 ** -23 * (1 + 2.0 ** -24) * probe.double()[:, None] * inverse_frequencies(d)
assert bool((per_pair <= bound).all()), "float32 angle error within 2^-23 · m · ω_i for every pair"
assert bool((per_pair[:, 0] == 0).all()), "pair 0: ω_0 = 1 and m < 2^24 are exact in float32"
assert bool((per_pair[:, 1:].amax(dim=-1) <= bound[:, 1]).all()), "pair 1 has the largest bound of the others"
torch.testing.assert_close(per_pair.amax(dim=-1), errors[torch.float32])          # the table's float32 row
for m, err, worst in zip(probe.tolist(), errors[torch.float32].tolist(), bound[:, 1].tolist()):
    say("m = {m:>7}: float32 angle error {err:.1e} rad <= bound {bound:.1e} rad", m=int(m), err=err, bound=worst)

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
fig, ax = static_figure(height=3.6)
draw_angle_error(ax, torch.logspace(1, 6, 41).round(), d)
fig

# %% [markdown] slideshow={"slide_type": "subslide"}
# **When the bound holds.** It assumes one rounding of $\omega_i$. The seed's `base ** (-index / dim)` and the common
# `1 / base ** (torch.arange(0, d, 2).float() / d)` compute $\omega_i$ in float32: they round the exponent $2i/d$
# (exact only when $d$ is a power of two), then the power, and the second also the reciprocal. An error $\delta$ in
# the exponent becomes a relative error $\ln(\text{base})\,\delta$ of $\omega_i$, so the exponent's rounding is
# amplified by up to $\ln(\text{base})\cdot 2i/d$: about 9 for base $10^4$, 13 for base $5\cdot10^5$. The cell
# measures the three recipes on positions up to $2\cdot10^5$.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
from pe_helpers.rope import frequencies_as_computed

ulp = 2.0 ** -24
m_all = torch.arange(1, 200001, 7).double()
recipes = ("rounded", "power", "reciprocal")  # float64 rounded once; the seed's line; the common inv_freq line
say("worst ω error (units of 2^-24) and worst angle error / 2^-23·m·ω_i, per recipe:")
say("    {recipes}", recipes=" / ".join(map(repr, recipes)))
lines = []
worst = {}
for dim, base in ((96, 1e4), (96, 5e5), (128, 1e4), (128, 5e5)):
    omega, exact = inverse_frequencies(dim, base), angles_in_dtype(m_all, dim, base=base)
    limit = 2.0 ** -23 * (1 + ulp) * m_all[:, None] * omega
    amplified = math.log(base) * torch.arange(0, dim, 2) / dim  # ln(base)·2i/d
    for recipe in recipes:
        rel = ((frequencies_as_computed(dim, base=base, recipe=recipe) - omega) / omega).abs() / ulp
        assert bool((rel <= amplified + 2).all()), "the exponent's rounding amplified, plus the power's and the reciprocal's"
        angle = angles_in_dtype(m_all, dim, base=base, dtype=torch.float32, frequency_recipe=recipe)
        worst[dim, base, recipe] = float(rel.max()), float(((angle - exact).abs() / limit).max())
    lines.append((dim, base, " / ".join(f"{worst[dim, base, r][0]:4.2f}" for r in recipes),
                  " / ".join(f"{worst[dim, base, r][1]:4.2f}" for r in recipes)))
for dim, base, omega_error, angle_error in lines:
    say("d = {dim:3d}, base {base:>7,.0f}: ω {omega};  angle {angle}", dim=dim, base=base, omega=omega_error,
        angle=angle_error)
assert all(worst[dim, base, "rounded"][1] <= 1 for dim in (96, 128) for base in (1e4, 5e5))
assert worst[96, 1e4, "power"][1] > 1.5 and worst[128, 5e5, "reciprocal"][1] > 1.05

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Read the printout by recipe. "rounded" (one rounding of the float64 value, what `pe_helpers` does)
# stays within the bound at every $d$ and base. The seed's power line matches it when $d$ is a power of two (the
# exponent $2i/d$ is then exact) and exceeds the bound by a factor of about 2 to 3 at $d = 96$; the reciprocal line adds
# one more rounding and exceeds it even at $d = 128$. The bound grows with $\ln(\text{base})$: large bases (section
# "Where next") make the condition matter more. Even three times the bound is a fraction of a radian at $m = 10^6$;
# the lesson is that a stated bound carries its assumptions.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Claim.** Rounding breaks RoPE's promise itself. The score of a query at $m + t$ and a key at $n + t$ should be one
# number for every shift $t$; with the angles rounded per position it drifts, a little in float32, completely in bf16.
# A rounded *frequency* (one wrong $\omega_i$ everywhere) keeps it relative, but not as trained.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* The last line of the printout: with $\omega_i$ rounded to bf16 (the same wrong frequency at every
# position) the score still depends only on $n - m$, just not in the way the model was trained.

# %% slideshow={"slide_type": "-"}
shifts = torch.arange(0, 100001, 1000)
drift = {}
for dtype in (torch.float64, torch.float32, torch.bfloat16):
    s = shifted_scores(qc, kc, 5, 2, shifts, angle_dtype=dtype)
    drift[dtype] = float((s - s[0]).abs().max())
    shown = "< 1e-9" if drift[dtype] < 1e-9 else f"{drift[dtype]:.2g}"
    say("angles in {dtype:<8}: score at (5 + t, 2 + t), t <= 100000, drifts by up to {shown} (score at t = 0: {start:+.4f})",
        dtype=str(dtype)[6:], shown=shown, start=float(s[0]))
assert drift[torch.float64] < 1e-9 < drift[torch.float32] < 1e-2 < 1.0 < drift[torch.bfloat16]

far = shifted_scores(qc, kc, 1005, 2, shifts, frequency_dtype=torch.bfloat16)  # ω_i rounded to bf16, angles exact
true = float(shifted_scores(qc, kc, 1005, 2, [0])[0])
assert float((far - far[0]).abs().max()) < 1e-9 and abs(float(far[0]) - true) > 0.1
say("ω rounded to bf16: still one score for every shift ({score:+.4f}), but not the true one ({true:+.4f})",
    score=float(far[0]), true=true)

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "bf16 is fine for RoPE because sin and cos lie in [−1, 1]". The output range is not the problem:
# > the *argument* $m\,\omega_i$ is, and it grows to thousands of radians. Form positions, frequencies and their product
# > in float32 (better float64), take sin and cos, and only then cast down to the model's dtype.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Public bug reports** of exactly this (full titles and quotes in the notes):
#
# - EleutherAI/gpt-neox #1003 (2023): the table built in fp16 is off by up to 0.78; the cell below reproduces it.
# - huggingface/transformers #25681 (2023) and #29496 (2024): Llama's cached tables, Mistral's `inv_freq` in
#   fp16 / bf16.
# - huggingface/transformers pull request #29285 (2024): angles computed in bf16 under autocast; now forced to float32.
# - KellerJordan/modded-nanogpt #39 (2024): cos/sin tables stored in bf16.
# - sgl-project/sglang-jax #1472, fixed by pull request #1473: frequencies quantized before the phases.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* The reports, cited as facts (repository, number, title):
#
# - EleutherAI/gpt-neox issue #1003, "RotaryEmbedding computation is wrong for certain position/feature pairs in reduced
#   precision (both fp16 and bfloat)" (2023): with the table built in fp16 (d = 32, 2048 positions), the angle of position
#   1857, feature 1 is 1044.27 in float32 but 1045 in fp16, and the cos table is off by up to 0.78. The cell below
#   reproduces these numbers.
# - huggingface/transformers issue #25681, "LlamaRotaryEmbedding (wrong cache value when casting model to
#   float16/bfloat16)" (2023).
# - huggingface/transformers pull request #29285, "RoPE loses precision for Llama / Gemma + Gemma logits.float()"
#   (merged, 2024): under bf16 autocast the RoPE angles were computed in bf16 and lost precision "dramatically especially
#   for very large context lengths". Since then `LlamaRotaryEmbedding.forward` disables autocast around the angle
#   computation, with the comment "Force float32 since bfloat16 loses precision on long contexts".
# - huggingface/transformers issue #29496, "Precision issues in Mistral rotary embeddings" (2024): in bf16 mixed-precision
#   training, `inv_freq` was in bf16 and the rebuilt sin/cos tables were wrong.
# - KellerJordan/modded-nanogpt issue #39, "RoPE has precision errors when used with BFloat16" (2024): the cos/sin tables
#   were stored in bf16.
# - sgl-project/sglang-jax issue #1472, "[Bug] RoPE inverse frequencies are quantized before phase computation",
#   fixed by pull request #1473, "fix(rope): compute rotary phases in float32".

# %% slideshow={"slide_type": "-"}
# EleutherAI/gpt-neox #1003: d = 32, positions 0..2047, inverse frequencies and positions in fp16
table_positions = torch.arange(2048.0)
a32 = angles_in_dtype(table_positions, 32, dtype=torch.float32)
a16 = angles_in_dtype(table_positions, 32, dtype=torch.float16)
say("position 1857, feature 1: angle {a32:.2f} in float32, {a16:.0f} in float16", a32=float(a32[1857, 1]), a16=float(a16[1857, 1]))
worst = float((a16.cos() - a32.cos()).abs().max())
assert round(float(a32[1857, 1]), 2) == 1044.27 and float(a16[1857, 1]) == 1045.0 and round(worst, 2) == 0.78
say("largest error of the cos table: {worst:.2f}", worst=worst)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 5 · Side by side: the ways to give attention a sense of order
#
# **Claim.** The schemes of this collection differ in *what* carries position, *where* it enters, whether the values
# carry it, and whether the score sees relative distance directly. Past the training length $L$ only an experiment
# says how they fare: notebook 05's lab, on the copy task (the needed offset grows with the size $n$).

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* The numbers are the shipped reference of notebook 05's extrapolation lab
# (`pe_helpers.extrapolation.reference_results()`): five seeds, trained at sizes up to $L$, tested up to $4L$; token
# accuracy, mean ± standard deviation over the seeds, chance $= 1/\text{vocab size}$. `learned-extended` is the learned
# table grown with untrained rows; `error` means the model cannot run at that size (`PositionOutOfRangeError`).
# `rope-pi` and `rope-ntk` are the trained RoPE models evaluated with position interpolation (Chen et al. 2023,
# arXiv:2306.15595) or NTK-aware base scaling (bloc97 2023, as described by Peng et al. 2023, arXiv:2309.00071), each
# scaled for the current input's length: their dynamic variants. `randomized` is a learned table trained at random
# sorted positions (Ruoss et al. 2023, arXiv:2305.16843); notebook 05 says how each of these rows is evaluated.

# %% slideshow={"slide_type": "fragment"}
results = reference_results()
display(Markdown(results.table_markdown("copy", [1, results.train_len, 2 * results.train_len, 4 * results.train_len],
                                       encodings=("none", "learned", "learned-extended", "sinusoidal", "rope",
                                                  "rope-pi", "rope-ntk", "alibi", "randomized"))))

# %% [markdown] slideshow={"slide_type": "subslide"}
# **The five schemes at a glance**, built from measurements, not typed:

# %% slideshow={"slide_type": "-"}
rows = comparison_table(results)
display(Markdown(format_comparison_matrix(rows)))

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Read one row aloud, e.g. RoPE: position enters at $q$ and $k$, V carries none, the score sees the
# offset, and on look-back it holds just past $L$. How the table is built: "V carries position" and "relative distance
# explicit" are measured by `pe_helpers.comparison.position_probe` (one repeated token through one attention head: any
# difference between positions comes from the scheme); the accuracies are read from the lab's reference above, on the
# copy task (the needed offset grows with the size) and the look-back task (a fixed offset of 3), as means over the
# sizes named in each column. The cell below (not on the slides) prints the same rows in full sentences.

# %% slideshow={"slide_type": "skip"}
display(Markdown(format_comparison_table(rows)))

# %% [markdown] slideshow={"slide_type": "subslide"}
# **What the lab says** (the notebook asserts each point):
#
# - **Learned absolute.** No row past $L$: it cannot run. Grown with untrained rows, it falls towards chance.
# - **Sinusoidal absolute.** Near perfect up to $L$; past $L$ as weak as no encoding on look-back, collapsing on copy.
# - **RoPE.** On copy it degrades more slowly than the absolute ones, then collapses; on look-back (offset 3) it
#   *holds* just past $L$.
# - **ALiBi.** The gentlest on copy, yet far from flat; on look-back no better than the absolute schemes.
# - **No PE with a causal mask.** The mask alone teaches order; of these five, the weakest at $n \le L$ on copy, and
#   it collapses too.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# > **Misconception:** "sinusoidal encodings (or RoPE) extrapolate because they can be computed at any position". Being
# > able to compute an encoding for a longer position is not the same as the model having learned to use it: the lab row
# > of each scheme says what actually happened past $L$.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* The numbers are mean token accuracies over the sizes named in the table's columns.
#
# - Learned: the trained table has no row past its training positions (`PositionOutOfRangeError`); the grown rows were
#   never trained.
# - Sinusoidal: it collapses on copy from $2L$ on. Being able to compute an encoding for a longer position is not the
#   same as the model having learned to use it: the seed's point, measured.
# - RoPE: copying at size $n$ needs an offset of $n$, never seen past $L$. On look-back the needed offset, 3, was seen
#   in training, and RoPE holds to $2L$ and stays far above the absolute schemes at $4L$, yet falls there too: at a
#   longer size each query also meets more keys, at distances and with slow-pair angles it never saw, and a wider
#   softmax. Making relative distance explicit helps when the needed offsets were seen, not at any length; notebook 05
#   shows what rescaling RoPE at inference (PI, NTK, YaRN) changes.
# - ALiBi: its fixed distance penalty makes it degrade most gently on copy, yet far from flat: copying needs the
#   distant token, while Press et al. measured language-model perplexity, where a recency bias may ignore it. With this
#   lab's four heads the steepest slope is $1/4$, too gentle to single out "exactly 3 back".
# - No PE: Kazemnejad et al. 2023 found NoPE extrapolating better than absolute and rotary encodings on their tasks;
#   in this small lab it falls past $L$ as the absolute schemes do (notebook 05).

# %% slideshow={"slide_type": "skip"}
by = {row.key: row for row in rows}
L = results.train_len
# learned: no vector past its training positions; untrained extra rows do not help
assert not results.can_run("learned", L + 1) and by["learned"].lab.near is None
assert by["learned"].extended.far_verdict == "collapses"
# sinusoidal: computable at every length, near perfect at n <= L, and still fails past L
assert all(results.can_run("sinusoidal", n) for n in results.lengths)
assert by["sinusoidal"].lab.in_distribution > 0.95 and by["sinusoidal"].lab.near_verdict != "holds"
assert by["sinusoidal"].lookback.near_verdict != "holds" and by["sinusoidal"].lab.far_verdict == "collapses"
# RoPE: on copy better than both absolute schemes just past L, then collapses; on look-back it holds
assert by["rope"].lab.near > max(by["sinusoidal"].lab.near, by["learned"].extended.near) + 0.1
assert by["rope"].lab.far_verdict == "collapses"
assert by["rope"].lookback.near_verdict == "holds" and by["rope"].lookback.far > by["sinusoidal"].lookback.far + 0.3
# ALiBi: the gentlest on copy, no help on look-back
assert by["alibi"].lab.near_verdict == "holds" and by["alibi"].lab.far > max(by[k].lab.far for k in ("sinusoidal", "rope", "none"))
assert abs(by["alibi"].lookback.near - by["sinusoidal"].lookback.near) < 0.05
# ALiBi: far from flat on copy; with 4 heads its steepest slope is 2^(-8/4) = 1/4
assert by["alibi"].lab.far < by["alibi"].lab.in_distribution - 0.3 and results.config.n_heads == 4
# sinusoidal: on look-back no better than no encoding past L
assert abs(by["sinusoidal"].lookback.near - by["none"].lookback.near) < 0.05
# no PE: of these five, the weakest at n <= L on copy, and no extrapolation either
assert by["none"].lab.in_distribution < min(by[k].lab.in_distribution for k in ("learned", "sinusoidal", "rope", "alibi"))
assert by["none"].lab.far_verdict == "collapses"
# the measured columns
assert [row.value_carries_position for row in rows] == [True, True, False, False, False]
assert [row.score_dependence for row in rows] == ["absolute", "absolute", "offset-only", "offset-only", "none"]
print(format_comparison_accuracies(rows))

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Summary
#
# - RoPE rotates $q$ and $k$ by their positions, inside every attention layer; nothing is added to $x$ and V gets no
#   explicit position. The score becomes $q^\top\mathcal{R}_{n-m}k$: relative distance, with direction, made explicit.
# - It is notebook 04's $R(k)$ again: $\mathcal{R}_m = R(m)^\top = S\,R(m)\,S$, so the score is $q^\top R(m-n)\,k$.
# - Interleaved (GPT-J, RoFormer) and half-split (GPT-NeoX, Hugging Face Llama) pairs agree up to one permutation of
#   $W_Q$ and $W_K$.
# - Form the angles in float32 or float64, with $\omega_i$ rounded once: bf16 cannot even hold the positions above 256.
# - Absolute, rotary or none: what happens past the training length is an experimental question, and the lab answers it.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where next
#
# **Relative encodings after the four terms.** Shaw et al. 2018 (arXiv:1803.02155) first added a learned vector per
# clipped offset to the keys and values.
#
# - **Transformer-XL** (Dai et al. 2019, arXiv:1901.02860, §3.3) writes the score as the four terms (a)–(d) of
#   notebook 05 and makes them relative: the key's position becomes a sinusoid of the offset, the query's two learned
#   vectors $u$, $v$.
# - **T5** (Raffel et al. 2020, arXiv:1910.10683) adds one learned scalar per head and distance bucket to the score:
#   exact buckets when near, log-spaced ones beyond, one last bucket for every far distance.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Untying content and position, learning the distance.**
#
# - **TUPE** (Ke et al. 2020, arXiv:2006.15595) unties content and position: word·word and position·position each get
#   their own projections, and the cross terms (b), (c) are dropped as noise.
# - **Learned relative biases for length.** ALiBi's fixed slope (Press et al. 2022, arXiv:2108.12409) became a
#   learnable kernel of the distance in **Kerple** (Chi et al. 2022, arXiv:2205.09921), and a small network of the
#   normalised distance in **FIRE** (Li et al. 2023, arXiv:2310.04418): both aim at length generalisation. FIRE can
#   represent T5's buckets, ALiBi and Kerple.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Stretching a trained RoPE model.**
#
# - Position interpolation (Chen et al. 2023, arXiv:2306.15595) divides every position by $s = L'/L$.
# - NTK-aware scaling (bloc97 2023) raises the base instead, so the fast pairs barely change.
# - **YaRN** (Peng et al. 2023, arXiv:2309.00071) interpolates by parts (fast pairs untouched, slow pairs
#   interpolated, a ramp between) and adds an attention temperature. *Dynamic* NTK, described there too, picks the
#   scale from the current length at every step.
# - Notebook 05's lab compares PI, NTK and YaRN on the same trained RoPE models.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **RoPE's long-term decay, and the base.** RoFormer (arXiv:2104.09864, §3.4.3) bounds the score of a query and a key
# $m$ apart by a sum of $|S_j(m)| = |\sum_{i<j} e^{\mathrm{i}\,m\,\omega_i}|$ that falls, roughly, as $m$ grows;
# notebook 04's $\sum_i \cos m\omega_i$ is the real part of the last $S_j$. A larger base slows the slow pairs, so the
# bound keeps falling to longer distances. With $d = 128$ the slowest pair of base $10^4$ turns once every 54 000
# positions, that of base 500 000 (Llama 3, arXiv:2407.21783) once every 2.6 million: more than a long context.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
from pe_helpers.figures import draw_rope_decay

fig, ax = static_figure(height=3.4)
draw_rope_decay(ax, torch.logspace(0, 6, 600).round().unique(), 128, (1e4, 5e5))
fig

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* The bound is RoFormer's: with $S_j(m) = \sum_{i<j} e^{\mathrm{i}\,m\,\omega_i}$, summation by parts
# gives $|q^\top\mathcal{R}_m k| \le \max_i |h_{i+1} - h_i| \sum_j |S_j(m)|$, and the figure draws
# $\frac{1}{d/2}\sum_j |S_j(m)|$ (`pe_helpers.rope.rope_decay_bound`). It bounds the score, it is not the score. The
# cell below (not on the slides) asserts what the figure shows: above $m = 10$ the bound of base 500 000 stays higher
# for three decades, then both settle on the same floor. The released Llama 3 models' `config.json` gives the base as
# `rope_theta` = 500000.0. Large bases tie back to section 4: the smaller $\omega_i$ and the larger $\ln(\text{base})$, the more a
# frequency computed in float32 can drift.

# %% slideshow={"slide_type": "skip"}
from pe_helpers import wavelengths
from pe_helpers.rope import rope_decay_bound


def decade_mean(k: int, base: float) -> float:
    # RoFormer's bound at d = 128, averaged over log-spaced distances m in [10^k, 10^(k+1))
    return float(rope_decay_bound(torch.logspace(k, k + 1, 200)[:-1].round(), 128, base=base).mean())


say("mean bound over m in [1, 10), [10, 100), ..., [10^5, 10^6); the slowest pair's wavelength")
for base in (1e4, 5e5):
    say("base {base:>7,.0f}: {means};  {wavelength:>9,.0f} positions", base=base,
        means=" ".join(f"{decade_mean(k, base):5.1f}" for k in range(6)), wavelength=float(wavelengths(128, base)[-1]))
assert all(decade_mean(k, 5e5) > decade_mean(k, 1e4) + 1.5 for k in (1, 2, 3))
assert abs(decade_mean(5, 5e5) - decade_mean(5, 1e4)) < 1.0
assert float(wavelengths(128, 1e4)[-1]) < 128 * 1024 < float(wavelengths(128, 5e5)[-1])

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Caveats on length generalisation.**
#
# - Stable perplexity past $L$ is not the use of long context: in Sun et al. 2021 (arXiv:2109.09115) context beyond
#   2K tokens helps only a few tokens, such as those copied from far back.
# - No encoding at all (Haviv et al. 2022's NoPos, Kazemnejad et al. 2023's NoPE) has limits of its own: NoPE
#   generalises past $L$ only so far, as attention spreads thin (Wang et al. 2024, arXiv:2404.12224).
# - Results depend on the seed: in Zhou et al. 2024 (arXiv:2402.09371) length generalisation varies with weight
#   initialisation and data order, hence notebook 05's five seeds.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## References
#
# - [seed] 《绝对位置编码》 ("Absolute positional encoding", 2025-05-12), the syllabus; §1–§5 refer to it.
# - [2] Su et al. 2021, *RoFormer: Enhanced Transformer with Rotary Position Embedding*, arXiv:2104.09864.
# - [3] Press et al. 2022, ALiBi, arXiv:2108.12409.
# - [4] Haviv et al. 2022 (NoPos), arXiv:2203.16634; [5] Kazemnejad et al. 2023 (NoPE), arXiv:2305.19466.
# - [6] The public bug reports of section 4, by repository and number; the code of section 3, by repository, file
#   and function (speaker notes).
# - The lab numbers of section 5 are notebook 05's committed run, not published results.

# %% [markdown] slideshow={"slide_type": "subslide"}
# - [7] Shaw et al. 2018, relative position representations, arXiv:1803.02155.
# - [8] Dai et al. 2019, Transformer-XL, arXiv:1901.02860.
# - [9] Raffel et al. 2020, T5, arXiv:1910.10683.
# - [10] Ke et al. 2020, TUPE, arXiv:2006.15595.
# - [11] Chi et al. 2022, Kerple, arXiv:2205.09921; [12] Li et al. 2023, FIRE, arXiv:2310.04418.
# - [13] Chen et al. 2023, position interpolation, arXiv:2306.15595.
# - [14] Peng et al. 2023, YaRN, arXiv:2309.00071 (it also describes NTK-aware and dynamic NTK scaling).

# %% [markdown] slideshow={"slide_type": "subslide"}
# - [15] Ruoss et al. 2023, *Randomized Positional Encodings Boost Length Generalization of Transformers*,
#   arXiv:2305.16843.
# - [16] Llama Team, AI @ Meta 2024, *The Llama 3 Herd of Models*, arXiv:2407.21783.
# - [17] Sun et al. 2021, *Do Long-Range Language Models Actually Use Long-Range Context?*, arXiv:2109.09115.
# - [18] Wang et al. 2024, *Length Generalization of Causal Transformers without Position Encoding*, arXiv:2404.12224.
# - [19] Zhou et al. 2024, *Transformers Can Achieve Length Generalization But Not Robustly*, arXiv:2402.09371.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* What each reference is used for:
#
# - [seed]: §1.3 ("RoPE only rotates Q and K"), §3.4, §5.
# - [2]: the rotation of $q$ and $k$, interleaved pairs $(2i, 2i+1)$, $\omega_i = 10000^{-2i/d}$; its §3.4.3 is the
#   long-term decay bound drawn in "Where next".
# - [3], [4], [5]: ALiBi and the schemes without an encoding; no number quoted.
# - [6]: cited by repository, number and title where they are used; the numbers of EleutherAI/gpt-neox #1003
#   (1044.27, 1045, 0.78) are not quoted but reproduced by the cell after the list.
# - [7]–[12]: the relative encodings of "Where next"; [8] §3.3 is the four-term expansion notebook 05 uses.
# - [13], [14]: the inference-time rescalings of the lab's `rope-…` rows and of "Where next"; NTK-aware scaling was
#   first posted by bloc97 (2023) and is described in [14]. [15]: the lab's `randomized` row.
# - [16]: base 500 000 (the released models' `rope_theta`). [17]–[19]: the caveats; no number quoted.
# - The lab: `pe_helpers.extrapolation.reference_results()`.
