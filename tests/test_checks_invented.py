"""Mistakes the checkers were never told about: the general diagnoses must name them, in both languages.

Each entry is a plausible student answer with one slip (an off-by-one, a wrong axis, a forgotten or wrong
scale, a transpose, degrees, float16, a list, an input modified in place, ...), written here and in none of
the package's ``mistakes`` tables, for every exercise. Each must be rejected with a specific diagnosis (one of
the labels listed beside it, never the generic ``"other"``), in English and in Chinese, and the Chinese message
must hold no English words other than identifiers. The share of entries named specifically must stay at least
:data:`REQUIRED_SHARE`.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

import pe_helpers.checks as checks
from pe_helpers import apply_rope, causal_mask, layout_permutation, set_language, shift_matrix, sinusoidal
from pe_helpers.i18n import get_language

REQUIRED_SHARE = 0.8


# --- building blocks a student would write ----------------------------------------------------------------------

def _attention(q, k, v, *, scale=None, dim=-1):
    s = q @ k.T / (math.sqrt(q.shape[-1]) if scale is None else scale)
    return torch.softmax(s, dim) @ v


def _causal_weights(s, perm, diagonal=0, dim=-1):
    s = s[perm][:, perm]
    allowed = torch.ones(len(perm), len(perm), dtype=torch.bool).tril(diagonal)
    return torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=dim)


def _projections(x, table, wq, wk, wv):
    h = x + table[: x.shape[0]]
    return h @ wq, h @ wk, h @ wv


def _unit_rows(t):
    return t / t.norm(dim=1, keepdim=True)


def _table(n, d, *, positions=None, dtype=torch.float64, scale=1.0):
    pos = (torch.arange(n) if positions is None else positions).to(dtype)[:, None]
    omega = (10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)).to(dtype)
    angles = scale * pos * omega
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=2).reshape(n, d)


def _order(d):
    return torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], 1).reshape(-1)


def _distinct(n, decimals, step=2, start=2):
    d = start
    while len({tuple(r) for r in _table(n, d + d % 2)[:, :d].round(decimals=decimals).tolist()}) < n:
        d += step
    return d


def _block(theta):
    c, s = math.cos(theta), math.sin(theta)
    return torch.tensor([[c, s], [-s, c]], dtype=torch.float64)


def _shift(k, d, *, degrees=False):
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.block_diag(*[_block(math.radians(k * float(w)) if degrees else k * float(w)) for w in omega])


def _mask(lengths, total, low=0, high=0):
    t, n = torch.arange(total)[None, :], lengths[:, None]
    return (t >= n + low) & (t < 2 * n + high)


def _relative(m, half=True):
    out = torch.zeros_like(m)
    for i in range(0, m.shape[0], 2):
        a = m[i, i] + m[i + 1, i + 1]
        b = m[i, i + 1] - m[i + 1, i]
        if half:
            a, b = a / 2, b / 2
        out[i, i], out[i, i + 1], out[i + 1, i], out[i + 1, i + 1] = a, b, -b, a
    return out


def _rotate(pair, theta):
    a, b = float(pair[0]), float(pair[1])
    return torch.tensor([a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)])


def _score(q, k, offset):
    return q @ apply_rope(k[None], [offset])[0]


def _rope_attention(q, k, v, positions, *, scale=None, dim=-1):
    q, k = apply_rope(q, positions), apply_rope(k, positions)
    return torch.softmax(q @ k.T / (math.sqrt(q.shape[-1]) if scale is None else scale), dim) @ v


def _gaps(x, shift, reduce=lambda t: t.abs().max()):
    n, d = x.shape
    rope = lambda p: apply_rope(x, p) @ apply_rope(x, p).T  # noqa: E731
    add = lambda o: (x + sinusoidal(n, d, offset=o, dtype=x.dtype)) @ (x + sinusoidal(n, d, offset=o, dtype=x.dtype)).T  # noqa: E731
    return float(reduce(rope(torch.arange(n) + shift) - rope(torch.arange(n)))), float(reduce(add(shift) - add(0)))


# --- the invented mistakes: (checker, student's function, accepted diagnoses) -------------------------------------

def _q_scaled_in_place(q, k, v):
    q /= math.sqrt(q.shape[-1])
    return torch.softmax(q @ k.T, -1) @ v


def _scores_in_place(s, perm):
    s[:] = s[perm][:, perm]
    return s


def _x_permuted_in_place(f, x, perm):
    x[:] = x[perm]
    return float((f(x) - f(x[torch.argsort(perm)])[perm]).abs().max())


def _scores_masked_in_place(s, perm):
    s[:] = s[perm][:, perm]
    return torch.softmax(s.masked_fill_(~causal_mask(len(perm)), float("-inf")), -1)


def _x_plus_table_in_place(x, table, wq, wk, wv):
    x += table[: x.shape[0]]
    return x @ wq, x @ wk, x @ wv


def _normalise_in_place(t):
    t /= t.norm(dim=1, keepdim=True)
    return t @ t.T


def _table_normalised_in_place(t):
    t /= t.norm(dim=1, keepdim=True)
    return torch.eye(t.shape[1], dtype=t.dtype) - torch.linalg.pinv(t) @ t


def _lengths_unsqueezed_in_place(lengths, total):
    lengths.unsqueeze_(1)
    t = torch.arange(total)[None, :]
    return (t >= lengths) & (t < 2 * lengths)


def _m_zeroed_in_place(m):
    r = _relative(m)
    m.copy_(r)
    return m


def _pair_in_place(pair, position, omega):
    pair[:] = _rotate(pair, position * omega)
    return pair


def _q_rotated_in_place(q, k, v, positions):
    q.copy_(apply_rope(q, positions))
    k = apply_rope(k, positions)
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1) @ v


def _x_shifted_in_place(x, shift):
    n, d = x.shape
    rope = lambda p: apply_rope(x, p) @ apply_rope(x, p).T  # noqa: E731
    rope_gap = float((rope(torch.arange(n) + shift) - rope(torch.arange(n))).abs().max())
    before = x + sinusoidal(n, d, dtype=x.dtype)
    moved = x.add_(sinusoidal(n, d, offset=shift, dtype=x.dtype))  # x itself now holds the moved input
    return rope_gap, float((moved @ moved.T - before @ before.T).abs().max())


def _half_attention(q, k, v):
    s = (q.half() @ k.half().T) / math.sqrt(q.shape[-1])
    return torch.softmax(s.float(), -1) @ v.float()


def _half_table_angles(n, d):
    pos = torch.arange(n).half()[:, None]
    omega = (10000.0 ** (-torch.arange(0, d, 2) / d)).half()
    angles = (pos * omega).float()
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=2).reshape(n, d)


def _integer_table(n, d):
    pe = torch.zeros(n, d, dtype=torch.long)
    angles = _table(n, d)
    pe[:, :] = angles
    return pe


def _integer_exponent(n, d):
    pe = torch.zeros(n, d, dtype=torch.float64)
    for pos in range(n):
        for i in range(d // 2):
            w = 10000.0 ** -(2 * i // d)
            pe[pos, 2 * i], pe[pos, 2 * i + 1] = math.sin(pos * w), math.cos(pos * w)
    return pe


INVENTED = {
    # 1.1 attention from scratch
    "1.1 float16 scores": (checks.check_attention, _half_attention, {"reduced-precision"}),
    "1.1 q scaled in place": (checks.check_attention, _q_scaled_in_place, {"modified-input"}),
    "1.1 divided by sqrt(d_v)": (checks.check_attention, lambda q, k, v: _attention(q, k, v, scale=math.sqrt(v.shape[-1])),
                                 {"argument-scaled"}),
    "1.1 returned in bfloat16": (checks.check_attention, lambda q, k, v: _attention(q, k, v).bfloat16(), {"reduced-precision"}),
    "1.1 scaled by n": (checks.check_attention, lambda q, k, v: _attention(q, k, v, scale=q.shape[0]), {"argument-scaled"}),
    # 1.2 the permuted score matrix
    "1.2 scores permuted in place": (checks.check_permuted_scores, _scores_in_place, {"modified-input"}),
    "1.2 P S P": (checks.check_permuted_scores, lambda s, p: s[p][:, torch.argsort(p)], {"columns-permuted"}),
    "1.2 float16": (checks.check_permuted_scores, lambda s, p: s.half()[p][:, p], {"reduced-precision"}),
    "1.2 perm shifted by one": (checks.check_permuted_scores, lambda s, p: s[(p + 1) % len(p)][:, (p + 1) % len(p)],
                                {"relabelled"}),
    "1.2 1-based perm": (checks.check_permuted_scores, lambda s, p: s[p - 1][:, p - 1], {"relabelled"}),
    # 1.3 the permutation check
    "1.3 x permuted in place": (checks.check_equivariance_error, _x_permuted_in_place, {"modified-input"}),
    "1.3 bfloat16 difference": (checks.check_equivariance_error,
                                lambda f, x, p: float((f(x[p]).bfloat16() - f(x)[p].bfloat16()).abs().max()),
                                {"reduced-precision"}),
    "1.3 max over one axis": (checks.check_equivariance_error, lambda f, x, p: (f(x[p]) - f(x)[p]).abs().max(dim=0).values,
                              {"not-a-number"}),
    "1.3 returns a string": (checks.check_equivariance_error, lambda f, x, p: f"{float((f(x[p]) - f(x)[p]).abs().max()):.4f}",
                             {"not-a-number"}),
    # 1.4 causal weights after reordering
    "1.4 tril(-1)": (checks.check_causal_reorder, lambda s, p: _causal_weights(s, p, diagonal=-1), {"empty-row"}),
    "1.4 tril(1)": (checks.check_causal_reorder, lambda s, p: _causal_weights(s, p, diagonal=1), {"mask-diagonal"}),
    "1.4 softmax over queries": (checks.check_causal_reorder, lambda s, p: _causal_weights(s, p, dim=0), {"normalised-wrong-dim"}),
    "1.4 tril(-1), NaN zeroed": (checks.check_causal_reorder,
                                 lambda s, p: torch.nan_to_num(_causal_weights(s, p, diagonal=-1)), {"mask-diagonal"}),
    "1.4 scores masked in place": (checks.check_causal_reorder, _scores_masked_in_place, {"modified-input"}),
    # 2.1 positions before the projections
    "2.1 (q, v, k)": (checks.check_positions_before_projection, lambda *a: _projections(*a)[::2] + _projections(*a)[1:2],
                      {"items-swapped"}),
    "2.1 x += table in place": (checks.check_positions_before_projection, _x_plus_table_in_place, {"modified-input"}),
    "2.1 table[1:n+1]": (checks.check_positions_before_projection,
                         lambda x, t, a, b, c: _projections(x, t[1:], a, b, c), {"argument-shifted"}),
    "2.1 float16": (checks.check_positions_before_projection,
                    lambda x, t, a, b, c: tuple(w.half().double() for w in _projections(x.half(), t.half(), a.half(), b.half(), c.half())),
                    {"reduced-precision"}),
    "2.1 returns a dict": (checks.check_positions_before_projection,
                           lambda *a: dict(zip("qkv", _projections(*a))), {"not-a-triple"}),
    # 2.2 cosine similarity of the rows
    "2.2 cosine distance": (checks.check_row_similarity, lambda t: 1 - _unit_rows(t) @ _unit_rows(t).T, {"affine"}),
    "2.2 normalised in place": (checks.check_row_similarity, _normalise_in_place, {"modified-input"}),
    "2.2 float16": (checks.check_row_similarity, lambda t: (_unit_rows(t).half() @ _unit_rows(t).half().T), {"reduced-precision"}),
    "2.2 rows normalised, t.T @ t": (checks.check_row_similarity, lambda t: _unit_rows(t).T @ _unit_rows(t), {"wrong-shape"}),
    "2.2 divided by d": (checks.check_row_similarity, lambda t: _unit_rows(t) @ _unit_rows(t).T / t.shape[1], {"scaled"}),
    # 2.3 a value projection blind to position
    "2.3 table normalised in place": (checks.check_position_blind_value, _table_normalised_in_place, {"modified-input"}),
    "2.3 float16": (checks.check_position_blind_value,
                    lambda t: (torch.eye(t.shape[1]) - torch.linalg.pinv(t.float()) @ t.float()).half(), {"reduced-precision"}),
    "2.3 projector, sign flipped": (checks.check_position_blind_value,
                                    lambda t: torch.linalg.pinv(t) @ t - torch.eye(t.shape[1], dtype=t.dtype), {"sign-flipped"}),
    # 3.1 the sinusoidal table
    "3.1 angles in float16": (checks.check_sinusoidal, _half_table_angles, {"reduced-precision"}),
    "3.1 integer table": (checks.check_sinusoidal, _integer_table, {"truncated-to-integers"}),
    "3.1 transposed": (checks.check_sinusoidal, lambda n, d: _table(n, d).T, {"wrong-shape"}),
    "3.1 integer division in the exponent": (checks.check_sinusoidal, _integer_exponent, {"other-schedule"}),
    "3.1 halved amplitude": (checks.check_sinusoidal, lambda n, d: _table(n, d) / 2, {"scaled"}),
    # 3.2 concatenated -> interleaved
    "3.2 float indices": (checks.check_concatenated_to_interleaved, lambda d: _order(d).float(), {"not-integers"}),
    "3.2 1-based": (checks.check_concatenated_to_interleaved, lambda d: _order(d) + 1, {"not-a-permutation"}),
    "3.2 descending argsort": (checks.check_concatenated_to_interleaved,
                               lambda d: torch.argsort(layout_permutation(d), descending=True), {"reversed"}),
    # 3.3 how many columns tell every position apart
    "3.3 odd steps": (checks.check_smallest_distinct_dim, lambda n, k: _distinct(n, k, step=1, start=1), {"odd-dimension"}),
    "3.3 one step too far": (checks.check_smallest_distinct_dim, lambda n, k: _distinct(n, k) + 2, {"not-the-smallest"}),
    "3.3 returns a string": (checks.check_smallest_distinct_dim, lambda n, k: str(_distinct(n, k)), {"not-a-number"}),
    # 4.1 the 2x2 block
    "4.1 degrees": (checks.check_rotation_block, lambda k, w: _block(math.radians(k * w)), {"argument-scaled"}),
    "4.1 float16": (checks.check_rotation_block, lambda k, w: _block(k * w).half(), {"reduced-precision"}),
    "4.1 flat list of four": (checks.check_rotation_block, lambda k, w: _block(k * w).reshape(-1), {"wrong-shape"}),
    "4.1 half angle": (checks.check_rotation_block, lambda k, w: _block(k * w / 2), {"argument-scaled"}),
    # 4.2 the whole R(k)
    "4.2 degrees": (checks.check_shift_matrix, lambda k, d: _shift(k, d, degrees=True), {"argument-scaled"}),
    "4.2 float16": (checks.check_shift_matrix, lambda k, d: _shift(k, d).half(), {"reduced-precision"}),
    "4.2 k - 1": (checks.check_shift_matrix, lambda k, d: _shift(k - 1, d), {"argument-off-by-one"}),
    "4.2 list of blocks": (checks.check_shift_matrix,
                           lambda k, d: [_block(k * 10000.0 ** (-2 * i / d)) for i in range(d // 2)], {"not-a-tensor"}),
    # 4.3 a score that peaks k0 ahead
    "4.3 k0 - 1": (checks.check_offset_peak, lambda d, k0: shift_matrix(-(k0 - 1), d), {"peaks-elsewhere"}),
    "4.3 negated": (checks.check_offset_peak, lambda d, k0: -shift_matrix(-k0, d), {"peaks-elsewhere"}),
    # 5.1 the prediction (recorded, never scored; what keeps it from being recorded is named)
    "5.1 percentages": (checks.check_extrapolation_prediction,
                        lambda: {"none": 30, "learned": None, "sinusoidal": 20, "rope": 25}, {"not-a-probability"}),
    "5.1 a list": (checks.check_extrapolation_prediction, lambda: [0.3, None, 0.2, 0.25], {"not-a-dict"}),
    # 5.2 the copy-task loss mask
    "5.2 starts at n + 1": (checks.check_copy_loss_mask, lambda n, t: _mask(n, t, low=1), {"boundary-off-by-one"}),
    "5.2 ends at 2n inclusive": (checks.check_copy_loss_mask, lambda n, t: _mask(n, t, high=1), {"boundary-off-by-one"}),
    "5.2 lengths unsqueezed in place": (checks.check_copy_loss_mask, _lengths_unsqueezed_in_place, {"modified-input"}),
    "5.2 transposed": (checks.check_copy_loss_mask, lambda n, t: _mask(n, t).T, {"wrong-shape"}),
    # 5.3 the relative part
    "5.3 m overwritten in place": (checks.check_relative_part, _m_zeroed_in_place, {"modified-input"}),
    "5.3 sums, not means": (checks.check_relative_part, lambda m: _relative(m, half=False), {"scaled"}),
    "5.3 float16": (checks.check_relative_part, lambda m: _relative(m.half()).double(), {"reduced-precision"}),
    # 6.1 RoPE for one pair
    "6.1 degrees": (checks.check_rope_pair, lambda p, m, w: _rotate(p, math.radians(m * w)), {"argument-scaled"}),
    "6.1 pair rotated in place": (checks.check_rope_pair, _pair_in_place, {"modified-input"}),
    "6.1 float16": (checks.check_rope_pair, lambda p, m, w: _rotate(p, m * w).half(), {"reduced-precision"}),
    "6.1 half angle": (checks.check_rope_pair, lambda p, m, w: _rotate(p, m * w / 2), {"argument-scaled"}),
    # 6.2 the score from the offset alone
    "6.2 returns a string": (checks.check_relative_score, lambda q, k, o: f"{float(_score(q, k, o)):.4f}", {"not-a-number"}),
    "6.2 divided by sqrt(d)": (checks.check_relative_score, lambda q, k, o: _score(q, k, o) / math.sqrt(q.shape[0]), {"scaled"}),
    "6.2 float16": (checks.check_relative_score, lambda q, k, o: _score(q.half(), k.half(), o), {"reduced-precision"}),
    "6.2 offset + 1": (checks.check_relative_score, lambda q, k, o: _score(q, k, o + 1), {"argument-off-by-one"}),
    "6.2 rotated key returned": (checks.check_relative_score, lambda q, k, o: apply_rope(k[None], [o])[0], {"wrong-shape"}),
    # 6.3 attention with RoPE
    "6.3 divided by d": (checks.check_rope_attention, lambda q, k, v, p: _rope_attention(q, k, v, p, scale=q.shape[-1]),
                         {"argument-scaled"}),
    "6.3 q rotated in place": (checks.check_rope_attention, _q_rotated_in_place, {"modified-input"}),
    "6.3 float16": (checks.check_rope_attention, lambda q, k, v, p: _rope_attention(q.half(), k.half(), v.half(), p).float(),
                    {"reduced-precision"}),
    "6.3 returns (output, weights)": (checks.check_rope_attention,
                                      lambda q, k, v, p: (_rope_attention(q, k, v, p), None), {"not-a-tensor"}),
    "6.3 softmax over queries": (checks.check_rope_attention, lambda q, k, v, p: _rope_attention(q, k, v, p, dim=0),
                                 {"normalised-wrong-dim"}),
    # 6.4 shift the whole sequence
    "6.4 a dict": (checks.check_shift_gaps, lambda x, s: dict(zip(("rope", "additive"), _gaps(x, s))), {"not-two-numbers"}),
    "6.4 x modified in place": (checks.check_shift_gaps, _x_shifted_in_place, {"modified-input"}),
    "6.4 half of the gaps": (checks.check_shift_gaps, lambda x, s: tuple(g / 2 for g in _gaps(x, s)), {"scaled"}),
    "6.4 mean, not max": (checks.check_shift_gaps, lambda x, s: _gaps(x, s, reduce=lambda t: t.abs().mean()), {"other"}),
    # the same classes again, on other exercises
    "1.1 inputs in bfloat16": (checks.check_attention, lambda q, k, v: _attention(q.bfloat16().float(), k.bfloat16().float(), v),
                               {"reduced-precision"}),
    "1.1 negated": (checks.check_attention, lambda q, k, v: -_attention(q, k, v), {"sign-flipped"}),
    "1.1 k modified in place": (checks.check_attention, lambda q, k, v: _attention(q, k.mul_(1.0000001), v), {"modified-input"}),
    "1.2 rows reversed": (checks.check_permuted_scores, lambda s, p: s[p][:, p].flip(0), {"reversed"}),
    "1.2 columns rolled": (checks.check_permuted_scores, lambda s, p: s[p][:, p].roll(1, 1), {"shifted-by-one"}),
    "1.4 inverse permutation": (checks.check_causal_reorder, lambda s, p: _causal_weights(s, torch.argsort(p)), {"argument-inverted"}),
    "1.4 transposed": (checks.check_causal_reorder, lambda s, p: _causal_weights(s, p).T, {"transposed"}),
    "2.1 table subtracted": (checks.check_positions_before_projection, lambda x, t, a, b, c: _projections(x, -t, a, b, c),
                             {"argument-scaled"}),
    "2.1 w_q for q and k": (checks.check_positions_before_projection, lambda x, t, a, b, c: _projections(x, t, a, a, c),
                            {"item-mixed-up"}),
    "2.2 rounded to integers": (checks.check_row_similarity, lambda t: (_unit_rows(t) @ _unit_rows(t).T).long(),
                                {"truncated-to-integers"}),
    "4.1 rows swapped": (checks.check_rotation_block, lambda k, w: _block(k * w).flip(0), {"reversed"}),
    "4.1 k + 1": (checks.check_rotation_block, lambda k, w: _block((k + 1) * w), {"argument-off-by-one"}),
    "5.2 both ends one early": (checks.check_copy_loss_mask, lambda n, t: _mask(n, t, low=-1, high=-1), {"shifted-by-one"}),
    "5.3 negated": (checks.check_relative_part, lambda m: -_relative(m), {"sign-flipped"}),
    "6.1 position + 1": (checks.check_rope_pair, lambda p, m, w: _rotate(p, (m + 1) * w), {"argument-off-by-one"}),
    "6.2 degrees": (checks.check_relative_score, lambda q, k, o: _score(q, k, o * math.pi / 180), {"argument-scaled"}),
    "6.3 positions reversed": (checks.check_rope_attention, lambda q, k, v, p: _rope_attention(q, k, v, p.flip(0)),
                               {"argument-reversed"}),
    "1.3 squared": (checks.check_equivariance_error, lambda f, x, p: float((f(x[p]) - f(x)[p]).abs().max()) ** 2, {"squared"}),
    "2.2 squared cosines": (checks.check_row_similarity, lambda t: (_unit_rows(t) @ _unit_rows(t).T) ** 2, {"squared"}),
    "6.4 inputs in bfloat16": (checks.check_shift_gaps, lambda x, s: _gaps(x.bfloat16().double(), s), {"reduced-precision"}),
}

#: Entries no general diagnosis can name (the relation is hidden inside the computation); they count against the share.
HARD = {"6.4 mean, not max"}

_ENGLISH_WORD = re.compile(r"(?<![A-Za-z0-9_.\[(])[A-Za-z][A-Za-z0-9_]*(?![A-Za-z0-9_(\[])")
#: Words that may stay in a Chinese message: identifiers, function and dtype names, the reference's symbols.
_IDENTIFIERS = {"float16", "bfloat16", "float32", "float64", "int64", "tensor", "torch", "math", "sqrt", "clone", "none",
                "learned", "sinusoidal", "rope", "softmax", "tril", "triu", "arange", "dim", "keepdim", "abs", "max",
                "min", "mean", "sum", "norm", "cos", "sin", "radians", "return", "None", "True", "False", "NaN", "inf",
                "nan", "exp", "log", "perm", "scores", "table", "lengths", "total_len", "pair", "position", "omega",
                "positions", "offset", "shift", "dtype", "long", "float", "int", "str", "list", "tuple", "dict", "half",
                "double", "rope_gap", "additive_gap", "layout", "interleaved", "apply_rope", "masked_fill", "decimals",
                "n_positions", "seq_len", "numpy", "round", "copy", "copy_", "zeros", "bool", "flip", "descending",
                "add_", "mul_", "masked_fill_", "unsqueeze_", "zeros_like", "argsort", "rope_gap", "additive_gap"}


def english_words(message: str) -> list[str]:
    """Words of three or more Latin letters in ``message`` that are not identifiers, code or symbols."""
    code_free = re.sub(r"`[^`]*`|'[^']*'|fn\([^)]*\)|\b\w+\.\w+(\([^)]*\))?|\w+\[[^\]]*\]|\w+\([^)]*\)|\w+=\w+", " ", message)
    words = [w for w in _ENGLISH_WORD.findall(code_free) if sum(c.isalpha() for c in w) >= 3]
    words += re.findall(r"(?<![A-Za-z])an? (?=[A-Za-z]{3})", code_free)  # an English article: "got a dict"
    return [w for w in words if w not in _IDENTIFIERS and w.lower() not in _IDENTIFIERS]


def _run(name: str):
    checker, fn, _labels = INVENTED[name]
    return checker(fn, quiet=True)


@pytest.mark.parametrize("name", sorted(INVENTED))
def test_an_invented_mistake_is_named_in_both_languages(name: str) -> None:
    labels = INVENTED[name][2]
    result = _run(name)
    assert not result.passed, (name, str(result))
    if name in HARD:
        return
    assert result.mistake in labels, (name, str(result))
    assert "tensor(" not in result.message and "\n" not in result.message and len(result.message) < 700
    english = result.message
    try:
        set_language("zh")
        result = _run(name)
    finally:
        set_language("en")
    assert result.mistake in labels and result.message != english, (name, str(result))
    assert not english_words(result.message), (name, english_words(result.message), result.message)


def test_the_share_named_specifically_is_at_least_the_goal() -> None:
    named = sum(1 for name in INVENTED if name not in HARD)
    assert len(INVENTED) >= 50 and named / len(INVENTED) >= REQUIRED_SHARE, (named, len(INVENTED))
    assert get_language() == "en"


#: What the message of some entries must say: where the mistake shows and what it is, in the student's terms.
SAYS = {
    "1.1 divided by sqrt(d_v)": ("q multiplied by √4/√3", "v.shape[1]"),
    "1.1 q scaled in place": ("argument q in place", "q.clone()"),
    "1.2 P S P": ("column 0 holds what column 1 should",),
    "1.4 tril(-1)": ("row of NaN only (row 0)", "tril(-1)"),
    "1.4 tril(1)": ("key i + 1", "tril(0)"),
    "1.4 softmax over queries": ("dim 0 (queries)", "dim=1"),
    "2.1 (q, v, k)": ("(q, v, k) where (q, k, v)",),
    "2.1 table[1:n+1]": ("t shifted by one along dim 0",),
    "2.1 float16": ("in q (item 0", "float16"),
    "2.2 divided by d": ("1/4 (4 = t.shape[1])",),
    "3.1 integer table": ("whole number", "integer tensor"),
    "3.2 descending argsort": ("reversed", "descending=True"),
    "4.1 degrees": ("π/180", "degrees"),
    "4.2 k - 1": ("k = 2 instead of k = 3",),
    "4.2 list of blocks": ("got a list of 4 items",),
    "5.2 starts at n + 1": ("the start is off by one",),
    "5.2 ends at 2n inclusive": ("the end is off by one",),
    "5.2 lengths unsqueezed in place": ("shape changed from (1,) to (1, 1)",),
    "6.2 returns a string": ("should return one number (the score), got a string",),
    "6.2 divided by sqrt(d)": ("1/√8 (8 = q.shape[0])",),
    "6.3 softmax over queries": ("weights A that multiply v",),
    "6.4 half of the gaps": ("in additive_gap", "the number is ½ times"),
}


@pytest.mark.parametrize("name", sorted(SAYS))
def test_the_message_says_where_and_what(name: str) -> None:
    message = _run(name).message
    for words in SAYS[name]:
        assert words in message, (name, words, message)
    assert "division by zero" not in message


def test_types_are_named_grammatically_in_both_languages() -> None:
    cases = {checks.check_relative_score: (lambda q, k, o: "1.5", "a string ('1.5')"),
             checks.check_attention: (lambda q, k, v: {"out": 1}, "a dict (keys 'out')"),
             checks.check_sinusoidal: (lambda n, d: 3, "an int (3)"),
             checks.check_shift_matrix: (lambda k, d: 0.5, "a float (0.5)")}
    for checker, (fn, words) in cases.items():
        message = checker(fn, quiet=True).message
        assert words in message and not re.search(r"\ba (int|object|empty|array|integer)\b", message), message
        try:
            set_language("zh")
            message = checker(fn, quiet=True).message
        finally:
            set_language("en")
        assert not english_words(message), message


def test_an_input_modified_in_place_fails_even_when_the_answer_is_right() -> None:
    def in_place(s, perm):
        s[:] = s[perm][:, perm]
        return s.clone()

    result = checks.check_permuted_scores(in_place, quiet=True)
    assert not result and result.mistake == "modified-input" and "s in place" in result.message
    assert checks.check_permuted_scores(lambda s, perm: s.clone()[perm][:, perm], quiet=True)
    lists = checks.check_rope_pair(lambda pair, m, w: pair.mul_(1.0) if False else _rotate(pair, m * w), quiet=True)
    assert lists, lists
