# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 02 · Adding position, and learned position vectors (可学习位置向量)
#
# Notebook 01 showed that attention cannot see order. The fix of the original Transformer and of
# BERT and GPT-2 is an **absolute positional encoding** (绝对位置编码): one vector per position,
# added to the token's vector. This notebook:
#
# 1. measures where the position goes: into $Q$, $K$ **and** $V$;
# 2. builds the **learned** table $P_{\text{learned}} \in \mathbb{R}^{L\times d}$ (an embedding table) and
#    trains it briefly on a toy task that needs order;
# 3. shows what the rows become, what happens past position $L-1$, and what an enlarged table contains;
# 4. lets you slide through the rows in an app.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* This notebook covers seed §1.3 and §2. The training in section 3 takes about a second on
# one core.

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
import time

import torch
from IPython import get_ipython

from pe_helpers import LearnedPositionalEmbedding, PositionOutOfRangeError, SelfAttention, apply_rope
from pe_helpers import learned, say
from pe_helpers.i18n import _, fill  # _("text"): the text in the edition's language
from pe_helpers.apps import learned_position_app
from pe_helpers.checks import check_positions_before_projection, check_row_similarity
from pe_helpers.figures.learned import plot_qkv_change, plot_similarity_heatmaps

torch.manual_seed(0)
torch.set_num_threads(1)
get_ipython().InteractiveTB.set_mode(mode="Minimal")  # short tracebacks, set silently (%xmode prints a line)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1 · Position goes in before $W_Q$, $W_K$, $W_V$
#
# **Claim.** The position matrix is added to the input, $\tilde X = X + P$, *before* the projections:
#
# $$Q = (X+P)W_Q,\qquad K = (X+P)W_K,\qquad V = (X+P)W_V .$$
#
# So the change caused by position alone is $PW_Q$, $PW_K$ and $PW_V$: all three carry position
# unless the weights themselves cancel it (section 1b). The architecture gives $V$ no separate input that
# stays position-free. **Measure it**: the same tokens, with and without a table.

# %% slideshow={"slide_type": "fragment"}
n, d = 8, 16
X = torch.randn(n, d)
head = SelfAttention(d, seed=0)
table = LearnedPositionalEmbedding(n, d, init_std=1.0, seed=1)   # an (untrained) table p_0 .. p_7
with torch.no_grad():
    plain = head.project(X)                  # XW_Q, XW_K, XW_V
    added = head.project(table(X))           # (X+P)W_Q, (X+P)W_K, (X+P)W_V
    rotated = (apply_rope(plain[0], torch.arange(n)), apply_rope(plain[1], torch.arange(n)), plain[2])
change = lambda new, old: float((new - old).norm() / old.norm())
changes = {
    "additive": {m: change(a, b) for m, a, b in zip("QKV", added, plain)},   # X + P
    "rope": {m: change(a, b) for m, a, b in zip("QKV", rotated, plain)},      # RoPE rotates q, k
}
for method, c in changes.items():
    say("{method:>20}: relative change  Q {Q:.2f}   K {K:.2f}   V {V:.2f}", method=learned.QKV_METHODS[method], **c)

# %% [markdown] slideshow={"slide_type": "fragment"}
# **Check it**: the change in $V$ is exactly $PW_V$ (likewise for $Q$, $K$), and every one is large.

# %% slideshow={"slide_type": "-"}
P = table.table.detach()
for M, W, new, old in zip("QKV", (head.W_Q, head.W_K, head.W_V), added, plain):
    torch.testing.assert_close(new - old, P @ W.detach())
    assert changes["additive"][M] > 0.5, M
# the same token in two slots gets two different values v
x = X[0]
v_two = head.project(table(torch.stack([x, x])))[2].detach()
assert not torch.allclose(v_two[0], v_two[1]), "one token, two positions: two different v"
assert changes["rope"]["V"] == 0.0
torch.testing.assert_close(rotated[0].norm(dim=-1), plain[0].norm(dim=-1))   # RoPE rotates, adds nothing
say("ΔQ = P W_Q, ΔK = P W_K, ΔV = P W_V: position reaches all three")

# %% [markdown] slideshow={"slide_type": "subslide"}
# **See it.** RoPE (rotary position embedding, notebook 06) is the contrast: it rotates $q$ and $k$
# *after* the projections and leaves $V$ alone.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
plot_qkv_change(changes)

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* With an additive $X + P$ the relative change is large in Q, K **and** V; RoPE (notebook 06)
# leaves V unchanged.

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "position only affects where a token attends (Q and K)". With an additive
# > encoding the values carry it too, unless $W_V$ learns to cancel it: what a token *passes on* can
# > depend on its slot. Only encodings that act after the projections, such as RoPE, keep $V$
# > position-free *by construction*.

# %% [markdown] slideshow={"slide_type": "slide"}
# ### 1b · The weights *could* keep position out of $V$
#
# **Claim.** The seed says the model "cannot" let only $Q, K$ carry position. That is too strong: the
# *architecture* does not keep position out of $V$, but the *weights* can. If the position vectors lie in a
# subspace $U$ (here the $n = 8$ rows of the table span 8 of the $d = 16$ dimensions), a value matrix
# $W_V' = (I - \Pi_U)\,W_V$, where $\Pi_U$ projects onto $U$, sends every position vector to zero:
# $(X + P)W_V' = XW_V'$. The price is paid in content: whatever part of $x$ lies in $U$ is lost from $V$ too,
# so $W_V'$ has rank $d - \dim U$. A trained model can find such weights when it pays off (large $d$,
# positions confined to a few directions); nothing forces it to.

# %% slideshow={"slide_type": "-"}
U = torch.linalg.qr(P.T.double()).Q                      # [d, 8]: an orthonormal basis of the rows of P
null_pos = torch.eye(d, dtype=torch.float64) - U @ U.T   # I - Π_U
W_V0 = null_pos @ head.W_V.detach().double()             # W_V' = (I - Π_U) W_V
v_plain, v_added = X.double() @ W_V0, (X.double() + P.double()) @ W_V0
torch.testing.assert_close(v_added, v_plain)               # position no longer reaches V ...
assert not torch.allclose(X.double() @ head.W_V.detach().double(), v_added)   # ... unlike with the original W_V
rank = int(torch.linalg.matrix_rank(W_V0))
assert rank == d - torch.linalg.matrix_rank(P.double()) == 8, rank   # ... at the price of 8 content directions
say("W_V' = (I - Π_U) W_V: (X+P)W_V' = XW_V' up to rounding; rank W_V' = {rank} of {d}", rank=rank, d=d)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 2.1 · Positions before the projections (★☆☆ easy · ~5 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** see in code that $P$ is added before all three projections, so $Q$, $K$ and $V$ all receive it.
#
# Write `project_with_positions(x, table, w_q, w_k, w_v)` returning `(q, k, v)` for `x` of shape
# `[n, d]` and a table of `L >= n` rows: add the first `n` rows of the table to `x`, then project.
# The checker names the usual slips (adding $P$ after the projection, leaving $V$ without positions,
# transposed weights).

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="2.1" tags=["solution"]
import torch


def project_with_positions(
    x: torch.Tensor, table: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(Q, K, V) of one attention layer whose input x [n, d] gets learned positions from table [L, d], L >= n."""
    x_tilde = x + table[: x.shape[0]]
    return x_tilde @ w_q, x_tilde @ w_k, x_tilde @ w_v


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_positions_before_projection(project_with_positions)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2 · The learned table is an embedding table
#
# **Claim.** With a maximum length $L$ and width $d$, the learned encoding is a parameter matrix, and
# position $i$ gets its row:
#
# $$P_{\text{learned}} \in \mathbb{R}^{L\times d},\qquad p_i = P_{\text{learned}}[i],\qquad \tilde x_i = x_i + p_i .$$
#
# Row $i$ is looked up exactly like a token embedding (`nn.Embedding`) and trained by back-propagation
# with the rest of the model. `LearnedPositionalEmbedding(L, d)` is that table; `forward(x)` returns $X + P[:n]$.

# %% slideshow={"slide_type": "fragment"}
L, d_model = 16, 32
emb = LearnedPositionalEmbedding(L, d_model, seed=0)
as_embedding = torch.nn.Embedding.from_pretrained(emb.table.detach())
torch.testing.assert_close(emb.lookup(torch.arange(L)), as_embedding(torch.arange(L)))   # p_i = row i
x = torch.zeros(2, 10, d_model)
torch.testing.assert_close(emb(x), emb.table[:10].expand(2, 10, d_model))                  # X + P[:n]
say("{emb} | {count} parameters: one free vector per position", emb=emb, count=emb.table.numel())
say("forward: x of shape {shape} -> x + P[:10], the same 10 rows added to each of the 2 sequences", shape=list(x.shape))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3 · Train it briefly on a task that needs order
#
# The task: **running maximum** of digits, $y_i = \max(x_0, \dots, x_i)$. The answer at slot $i$
# depends on which digits come *before* it, so order matters; by notebook 01 a model without
# positions sees only the multiset and cannot tell slot 0 from slot 15. The model: token
# embedding, the learned table, one attention head, a linear read-out; 500 Adam steps on
# sequences of length $L = 16$, about a second on one core, deterministic.

# %% slideshow={"slide_type": "fragment"}
start = time.perf_counter()
trained = learned.train_running_max()                     # with learned positions
blind = learned.train_running_max(use_positions=False)    # the same model, no positions
say("two trainings: {seconds:.1f} s elapsed", seconds=time.perf_counter() - start)

# %% slideshow={"slide_type": "skip"} tags=["nbval-ignore-output"]
by_slot = learned.accuracy_by_position(blind.model, L)
say("accuracy with learned positions: {trained:.2f}; without positions: {blind:.2f}", trained=trained.accuracy, blind=blind.accuracy)
say("without positions, accuracy at slots 0..4: {accuracies}", accuracies=[round(a, 2) for a in by_slot[:5].tolist()])
assert trained.accuracy > 0.95
assert blind.accuracy < 0.8 and by_slot[0] < 0.3, "slot 0 cannot know it is first"

# %% [markdown] slideshow={"slide_type": "subslide"}
# **See it.** The cosine similarity of every pair of rows, $C_{ij} = \cos(p_i, p_j)$, before and
# after training. Before: random vectors, nearly orthogonal. After: a band. Neighbouring positions
# have similar vectors and distant ones point apart: the task taught the table an order.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
plot_similarity_heatmaps({_("before training (random init)"): trained.initial_table,
                          _("after training (running maximum)"): trained.trained_table})

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Random before, a band after: the order of the rows comes from the task, not from the
# design.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Check it**, in numbers: the mean cosine of neighbouring rows and of distant rows, before and after training.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
before, after = learned.row_cosine_similarity(trained.initial_table), learned.row_cosine_similarity(trained.trained_table)
far = torch.ones(L, L, dtype=torch.bool).triu(8)       # pairs at distance >= 8
say("before training: mean cos of neighbours (|i-j| = 1) {near:+.2f}, of distant rows (|i-j| >= 8) {far:+.2f}",
    near=torch.diagonal(before, 1).mean(), far=before[far].mean())
say(" after training: mean cos of neighbours (|i-j| = 1) {near:+.2f}, of distant rows (|i-j| >= 8) {far:+.2f}",
    near=torch.diagonal(after, 1).mean(), far=after[far].mean())
assert torch.diagonal(after, 1).mean() > 0.6 and after[far].mean() < 0
assert torch.diagonal(before, 1).abs().mean() < 0.2

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "learned position vectors are ordered by design, neighbours close". They start
# > as random, unrelated vectors (left heatmap); any structure comes from the task and the data.
# > Another task would carve another pattern; rows the data never reach stay random.

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 2.2 · The similarity heatmap (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** measure the structure a learned table acquires (cosine similarity of its rows), the tool of sections 3 and 5.
#
# Write `row_similarity(table)` returning the $L\times L$ matrix $C_{ij} = \dfrac{p_i \cdot p_j}{\lVert p_i\rVert\,\lVert p_j\rVert}$
# of a table's rows (the heatmaps above). The checker names the usual slips: raw dot products,
# normalising one side only, comparing columns instead of rows.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="2.2" tags=["solution"]
import torch


def row_similarity(table: torch.Tensor) -> torch.Tensor:
    """The [L, L] matrix of cosine similarities between the rows (positions) of table [L, d]."""
    unit = table / table.norm(dim=1, keepdim=True)
    return unit @ unit.T


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_row_similarity(row_similarity)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4 · Position $L$ does not exist
#
# **Claim.** The table has rows $0 .. L-1$. A sequence longer than $L$ asks for a row that was never
# built, and `LearnedPositionalEmbedding` says so, naming $L$:

# %% slideshow={"slide_type": "fragment"}
import contextlib
import io

from pe_helpers.checks import expect_error

with contextlib.redirect_stdout(io.StringIO()) as shown, expect_error(PositionOutOfRangeError, match="max_len=16"):
    trained.positions(torch.zeros(1, L + 1, d_model))      # 17 tokens, 16 rows
print(fill(shown.getvalue().strip(), width=100))   # the error's message, in lines that fit a slide (CJK: 2 columns)

# %% slideshow={"slide_type": "skip"}
try:
    trained.positions.lookup([L])
except PositionOutOfRangeError as err:
    assert err.max_len == L and f"max_len={L}" in str(err)
    say("PositionOutOfRangeError names the table size: max_len={max_len}", max_len=err.max_len)
else:
    raise AssertionError("position L must raise")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 5 · Enlarging the table gives rows that were never trained
#
# **Claim.** We can always make the table longer (`.extended(new_len)` keeps the $L$ trained rows and
# appends fresh ones), but the new rows have never seen a gradient. Their similarity to the trained
# rows is that of unrelated random vectors, about $\sqrt{2/(\pi d)}$ in absolute value, and they
# continue none of the learned band. The model has never learned what they mean (外推, extrapolation, is
# weak; notebook 05 measures it).

# %% slideshow={"slide_type": "fragment"} tags=["nbval-ignore-output"]
bigger = trained.positions.extended(24, seed=1)
torch.testing.assert_close(bigger.table[:L], trained.positions.table)     # trained rows kept as they are
big = learned.row_cosine_similarity(bigger.table)
untrained_vs_trained = big[L:, :L].abs().mean()
random_level = (2 / (torch.pi * d_model)) ** 0.5
say("mean |cos| between new and trained rows: {new:.2f} (random vectors: {random:.2f})", new=untrained_vs_trained,
    random=random_level)
say("cos(p_15, p_14) = {old:+.2f} (trained neighbours), cos(p_16, p_15) = {new:+.2f} (new row)", old=big[15, 14], new=big[16, 15])
assert abs(untrained_vs_trained - random_level) < 0.05
assert big[15, 14] > 0.6 and abs(big[16, 15]) < 0.4

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
enlarged = _("trained table enlarged to {rows} rows").format(rows=24)
plot_similarity_heatmaps({enlarged: bigger.table.detach(),
                          _("reference: {rows} random rows").format(rows=24): LearnedPositionalEmbedding(24, d_model, seed=2).table.detach()},
                         trained_rows={enlarged: L})

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 6 · Slide through the rows
#
# **See it.** Move the position $i$. Left: the row $p_i$ (scaled by the table's largest entry).
# Middle: the similarity heatmap, with row $i$ outlined. Right: $\cos(p_i, p_j)$ for every $j$; the
# grey band marks the rows added by `.extended` that were never trained. Switch **table** to
# *before training* to see the random start.

# %% [markdown] slideshow={"slide_type": "-"}
# **Check it** first: the app shows the same numbers as the compute layer (driven headless here).

# %% slideshow={"slide_type": "skip"}
from pe_helpers.i18n import _

app = learned_position_app()  # an app driven from code (not displayed)

# %% slideshow={"slide_type": "-"}
for i in (0, 7, 15, 16, 23):
    app.controls["position"].value = i
    expected = learned.row_cosine_similarity(bigger.table)[i]
    torch.testing.assert_close(torch.as_tensor(app.artists["cosines"].get_ydata()), expected)
    assert (_("never-trained row") in app.caption.value) == (i >= L)  # the caption, in either language
say("app rows 0, 7, 15 (trained) and 16, 23 (never trained) match the table")

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
learned_position_app()

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Slide `position i` past the training length into the grey band: the new rows look like
# noise, because they were never trained.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Exercise 2.3 · A value projection blind to position (★★★ hard · ~20 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** the architecture puts $x_i + p_i$ into $W_V$, but *weights* can still keep
# position out of the values: see what that needs and what it costs.
#
# Write `position_blind_value(table)`: given a table of position vectors (rows $p_i$, shape $[L, d]$,
# with $L < d$), return a $d \times d$ matrix $W_V$ such that $p_i W_V = 0$ for **every** row, while
# any content vector with no component along the positions passes unchanged. The table may have fewer
# independent rows than rows.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* *Why it matters:* it is the precise form of "position always reaches V": true of the wiring,
# not forced on the weights. Ask the room first: which vectors must $W_V$ kill, and why is "kill each $p_i$ in
# turn" not enough when the rows are not orthogonal?

# %% slideshow={"slide_type": "skip"}
from pe_helpers.checks import check_position_blind_value

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="2.3" tags=["solution"]
import torch


def position_blind_value(table: torch.Tensor) -> torch.Tensor:
    """A d × d value projection that sends every row of table to 0 and keeps what is orthogonal to them."""
    _, s, vh = torch.linalg.svd(table, full_matrices=False)
    basis = vh[s > 1e-9 * s.max()]                     # orthonormal basis of the rows' span (rank r)
    return torch.eye(table.shape[1], dtype=table.dtype) - basis.T @ basis


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_position_blind_value(position_blind_value)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **The cost**, on the table trained in section 3: its $L = 16$ rows span 16 of the $d = 32$
# directions, so a value projection blind to them also discards the content in those 16
# directions. A random content vector keeps only about
#
# $$\frac{\lVert x W_V \rVert}{\lVert x \rVert} \approx \sqrt{\frac{d - r}{d}} = \sqrt{16/32} \approx 0.71$$
#
# of its norm ($r$: the rank of the table). A trained model can choose to do this, in part; nothing in
# $\tilde X = X + P$ makes it.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
P_trained = trained.trained_table.detach().double()            # [L, d_model], trained in section 3
rank = int(torch.linalg.matrix_rank(P_trained))
Pi = torch.linalg.pinv(P_trained) @ P_trained                   # projector onto the rows' span
W_blind = torch.eye(d_model, dtype=torch.float64) - Pi
torch.testing.assert_close(P_trained @ W_blind, torch.zeros_like(P_trained), rtol=0, atol=1e-9)
contents = torch.randn(2000, d_model, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
kept = float(((contents @ W_blind).norm(dim=1) ** 2).mean().sqrt() / (contents.norm(dim=1) ** 2).mean().sqrt())
assert abs(kept - ((d_model - rank) / d_model) ** 0.5) < 0.02, kept
say("rank of the trained table: {rank} of {d}; p_i W_V = 0 for all {rows} rows", rank=rank, d=d_model, rows=L)
say("a random content vector keeps {kept:.2f} of its norm (√((d − r)/d) = {bound:.2f})", kept=kept,
    bound=((d_model - rank) / d_model) ** 0.5)

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** "a bigger table means the model handles longer inputs". The table can grow
# > but its new rows are random: computing or allocating a vector for position 20 is not the same as
# > the model having learned to use it.
#
# ## Summary
#
# * $\tilde X = X + P$ enters before $W_Q, W_K, W_V$: $Q$, $K$ **and** $V$ all change by $PW$. RoPE leaves $V$ alone.
# * A learned table is an embedding table, $p_i = P[i]$; training gives its rows a structure (here a band).
# * Position $\ge L$ raises `PositionOutOfRangeError`; enlarged rows are untrained, unrelated to the rest.
#
# Next: **03**, a table that is computed instead of learned: the sinusoidal encoding.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* The same holds, less visibly, for sinusoidal encodings: they can be computed at any
# position, but the model has not learned to use the new ones (notebooks 03 and 05).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## References
#
# - [seed] 《绝对位置编码》 ("Absolute positional encoding", 2025-05-12), the syllabus; section numbers §1–§5 refer to it. Used here: §1.3 (position added before $W_Q, W_K, W_V$; section 1b qualifies its "cannot") and §2.
# - [1] Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762: §3.5 (learned positional embeddings were tried and "produced nearly identical results", Table 3 row (E)).
# - [2] Su et al. 2021, RoFormer, arXiv:2104.09864: RoPE rotates only the query and the key (the contrast in section 1).
# - No published number is quoted: every number above is computed in this notebook.
