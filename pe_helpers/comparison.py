r"""Notebook 06, "Toward RoPE", last section: the side-by-side table of every position scheme.

Each row is measured, not written by hand: whether the values carry position and whether the
score depends on the offset only come from :func:`position_probe` (one attention layer fed the
same token at every position); the columns "past the training length" are read from the
extrapolation lab's :class:`~pe_helpers.extrapolation.LabResults` (means over its seeds), for the
copy task (the offset grows with the length) and the look-back task (a fixed offset).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import _short, require_budget, require_choice, require_dim, require_instance, require_int, require_real, require_seed
from .attention import SelfAttention
from .encodings import LearnedPositionalEmbedding, apply_rope, sinusoidal
from .extrapolation.model import alibi_slopes
from .extrapolation.results import LabResults, _rjust
from .i18n import _, lazy_

__all__ = [
    "SCHEMES",
    "position_probe",
    "value_carries_position",
    "score_position_dependence",
    "extrapolation_verdict",
    "LabOutcome",
    "lab_outcome",
    "ComparisonRow",
    "comparison_table",
    "format_comparison_table",
    "format_comparison_matrix",
    "format_comparison_accuracies",
    "VERDICT_WORDS",
]


#: The schemes of the closing table: display name, lab encoding(s), what is added or rotated and where (the name and
#: the "what" speak the language current when the table is built).
SCHEMES: dict[str, dict[str, object]] = {
    "learned": {
        "name": lazy_("learned absolute"),
        "lab": ("learned", "learned-extended"),
        "what": lazy_("a trained row p_i of the table P (max_len×d) is added to x_i, once, at the input "
                      "(before W_Q, W_K, W_V)"),
    },
    "sinusoidal": {
        "name": lazy_("sinusoidal absolute"),
        "lab": ("sinusoidal",),
        "what": lazy_("the fixed PE(i) (sin, cos of i·ω_j) is added to x_i, once, at the input (before W_Q, W_K, W_V)"),
    },
    "rope": {
        "name": "RoPE",
        "lab": ("rope",),
        "what": lazy_("q_m and k_n are rotated by R_m and R_n in every attention layer, after W_Q and W_K; nothing is added"),
    },
    "alibi": {
        "name": "ALiBi",
        "lab": ("alibi",),
        "what": lazy_("a fixed penalty −m_h·|m − n| is added to head h's score (m_h = 2^(−8h/H)); nothing is added to x"),
    },
    "none": {
        "name": lazy_("no PE + causal mask"),
        "lab": ("none",),
        "what": lazy_("nothing is added or rotated; the causal mask (token i sees 0..i) is the only source of order"),
    },
}


def position_probe(scheme: str, *, n: int = 12, dim: int = 16, seed: int = 0) -> tuple[Tensor, Tensor]:
    r"""One attention layer under ``scheme``, fed the **same token** at positions ``0 .. n-1``.

    Returns ``(scores, values)``: the raw scores :math:`S_{mn} = \tilde q_m^\top \tilde k_n` (``[n, n]``) and
    the values ``[n, dim]``. With identical content everywhere, any difference between positions comes
    from the scheme alone. Weights: :class:`~pe_helpers.attention.SelfAttention` (``seed``); learned
    table: random rows (:class:`~pe_helpers.encodings.LearnedPositionalEmbedding`, std 1, ``seed``).
    """
    scheme = require_choice("scheme", scheme, tuple(SCHEMES))
    n = require_int("n", n, minimum=2)
    dim = require_dim("dim", dim)
    seed = require_seed("seed", seed, minimum=0)
    require_budget(f"position_probe(n={n}, dim={dim})", (n, max(n, dim)), torch.float64, copies=8)
    head = SelfAttention(dim, seed=seed).double()
    token = torch.randn(1, dim, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    x = token.expand(n, dim)
    positions = torch.arange(n)
    with torch.no_grad():
        if scheme == "learned":
            table = LearnedPositionalEmbedding(n, dim, init_std=1.0, seed=seed).double()
            x = table(x)
        elif scheme == "sinusoidal":
            x = x + sinusoidal(n, dim, dtype=torch.float64)
        q, k, v = head.project(x)
        if scheme == "rope":
            q, k = apply_rope(q, positions), apply_rope(k, positions)
    scores = q @ k.T
    if scheme == "alibi":  # the first of 8 heads: slope 1/2
        scores = scores - float(alibi_slopes(8)[0]) * (positions[:, None] - positions[None, :]).abs()
    return scores, v


def value_carries_position(scheme: str, *, n: int = 12, dim: int = 16, seed: int = 0) -> bool:
    """True when the values :math:`v_i` of one repeated token differ between positions (measured, :func:`position_probe`)."""
    _scores, v = position_probe(scheme, n=n, dim=dim, seed=seed)
    return not torch.allclose(v, v[:1].expand_as(v), atol=1e-9, rtol=0)


def score_position_dependence(scheme: str, *, n: int = 12, dim: int = 16, seed: int = 0) -> str:
    r"""How the score :math:`S_{mn}` of one repeated token depends on the positions (measured):

    * ``"none"``: the same for every ``(m, n)``, position does not enter the score;
    * ``"offset-only"``: :math:`S_{m+t,\,n+t} = S_{mn}` for every shift (constant along diagonals): relative distance explicit;
    * ``"absolute"``: neither; the score depends on where the pair sits, relative distance only implicit.
    """
    s, _values = position_probe(scheme, n=n, dim=dim, seed=seed)
    if torch.allclose(s, s[:1, :1].expand_as(s), atol=1e-9, rtol=0):
        return "none"
    if torch.allclose(s[1:, 1:], s[:-1, :-1], atol=1e-9, rtol=0):
        return "offset-only"
    return "absolute"


def _accuracy(name: str, value: object) -> float:
    """A token accuracy: a real number in 0..1."""
    number = require_real(name, value, minimum=0.0)
    if number > 1.0:
        raise ValueError(_("{0} must be an accuracy in 0..1, got {1}.").format(name, number))
    return number


def extrapolation_verdict(in_distribution: float, past: float | None, chance: float) -> str:
    r"""A word for the accuracy past the training length, from the fraction of above-chance accuracy kept:

    .. math:: r = \frac{\text{past} - \text{chance}}{\text{in-distribution} - \text{chance}}

    ``"holds"`` (r >= 0.9), ``"degrades"`` (0.35 <= r < 0.9), ``"collapses"`` (r < 0.35); ``"cannot run"`` if ``past`` is None.
    """
    in_distribution = _accuracy("in_distribution", in_distribution)
    chance = _accuracy("chance", chance)
    if not 0.0 < chance < 1.0:
        raise ValueError(_("chance must be a probability strictly between 0 and 1 (1 / vocab_size), got {0}.").format(chance))
    if past is None:
        return "cannot run"
    past = _accuracy("past", past)
    span = in_distribution - chance
    if span <= 1e-12:  # nothing above chance to keep: it holds unless it falls further
        return "holds" if past >= in_distribution - 1e-12 else "collapses"
    kept = (past - chance) / span
    if kept >= 0.9:
        return "holds"
    if kept >= 0.35:
        return "degrades"
    return "collapses"


#: Each verdict of :func:`extrapolation_verdict` as a reader sees it, in the current language.
VERDICT_WORDS = {"holds": lazy_("holds"), "degrades": lazy_("degrades"), "collapses": lazy_("collapses"),
                 "cannot run": lazy_("cannot run")}


@dataclass(frozen=True)
class LabOutcome:
    """One lab model's token accuracy at and past the training length ``L``, as means over copy lengths.

    ``in_distribution``: lengths ``1..L``; ``near``: just past ``L``, lengths ``L+1 .. L + max(1, L//4)``;
    ``far``: lengths ``2L+1 .. test_len``. ``None`` where the model cannot run (a learned table too short).
    """

    encoding: str
    train_len: int
    test_len: int
    chance: float
    in_distribution: float
    near: float | None
    far: float | None

    @property
    def near_span(self) -> tuple[int, int]:
        return self.train_len + 1, min(self.test_len, self.train_len + max(1, self.train_len // 4))

    @property
    def far_span(self) -> tuple[int, int]:
        return 2 * self.train_len + 1, self.test_len

    @property
    def near_verdict(self) -> str:
        return extrapolation_verdict(self.in_distribution, self.near, self.chance)

    @property
    def far_verdict(self) -> str:
        return extrapolation_verdict(self.in_distribution, self.far, self.chance)

    def past_text(self) -> str:
        """``"0.63 at n = 17..20 (degrades); 0.13 at n = 33..64 (collapses)"``."""
        (a, b), (c, e) = self.near_span, self.far_span
        return _("{near} at n = {a}..{b} ({near_verdict}); {far} at n = {c}..{e} ({far_verdict})").format(
            near=_fmt(self.near), a=a, b=b, near_verdict=VERDICT_WORDS[self.near_verdict],
            far=_fmt(self.far), c=c, e=e, far_verdict=VERDICT_WORDS[self.far_verdict])


def lab_outcome(results: LabResults, encoding: str, task: str = "copy") -> LabOutcome:
    """The :class:`LabOutcome` of ``encoding`` on ``task`` in a :class:`pe_helpers.extrapolation.LabResults`.

    Means over the results' seeds; chance = 1 / vocab_size.
    """
    require_instance("results", results, LabResults, _("a pe_helpers.extrapolation.LabResults"))
    L, top = results.train_len, results.test_len
    outcome = LabOutcome(encoding=encoding, train_len=L, test_len=top, chance=1.0 / results.config.vocab_size,
                         in_distribution=results.in_distribution(encoding, task), near=None, far=None)
    near = results.mean_accuracy(encoding, *outcome.near_span, task) if top > L else None
    far = results.mean_accuracy(encoding, *outcome.far_span, task) if top > 2 * L else None
    return LabOutcome(**{**outcome.__dict__, "near": near, "far": far})


@dataclass(frozen=True)
class ComparisonRow:
    """One scheme of the closing table; every field but ``what`` is measured or read from the lab's results."""

    key: str
    scheme: str
    what: str
    value_carries_position: bool
    score_dependence: str
    lab: LabOutcome
    extended: LabOutcome | None = None  # learned only: the trained table grown with untrained rows
    lookback: LabOutcome | None = None  # the same scheme on the look-back task (fixed offset), if run

    @property
    def relative(self) -> str:
        return {"offset-only": _("yes: q·k depends on n − m only"),
                "absolute": _("no: only implicit in the absolute positions"),
                "none": _("no: no position in q·k (order only from the mask)")}[self.score_dependence]

    @property
    def past_training(self) -> str:
        """The lab column: accuracy at copy lengths ≤ L, just past L, and from 2L+1 on, each with a verdict."""
        head = _("{accuracy:.2f} at n ≤ {L}").format(accuracy=self.lab.in_distribution, L=self.lab.train_len)
        if self.lab.near is None:
            text = _("{head}; past it: cannot run (PositionOutOfRangeError)").format(head=head)
            if self.extended is not None:
                text += _("; grown with untrained rows: {outcome}").format(outcome=self.extended.past_text())
            return text
        return _("{head}; {past}").format(head=head, past=self.lab.past_text())

    @property
    def past_training_lookback(self) -> str:
        """The look-back column (a fixed offset): the same three numbers on that task."""
        if self.lookback is None:
            return _("not run")
        head = _("{accuracy:.2f} at n ≤ {L}").format(accuracy=self.lookback.in_distribution, L=self.lookback.train_len)
        if self.lookback.near is None:
            return _("{head}; past it: cannot run").format(head=head)
        return _("{head}; {past}").format(head=head, past=self.lookback.past_text())


def _fmt(value: float | None) -> str:
    return _("n/a") if value is None else f"{value:.2f}"


def comparison_table(results: LabResults, *, dim: int = 16, seed: int = 0) -> list[ComparisonRow]:
    r"""The closing table of notebook 06, one :class:`ComparisonRow` per scheme in :data:`SCHEMES`.

    * "V carries position" and "relative distance explicit" are *measured* with :func:`position_probe`;
    * "past the training length" is read from ``results`` (a :class:`pe_helpers.extrapolation.LabResults`, e.g.
      ``pe_helpers.extrapolation.reference_results()``) by :func:`lab_outcome`: mean token accuracy at copy lengths
      ``1..L``, just past ``L`` and ``2L+1..test_len``, each with :func:`extrapolation_verdict`. The learned
      row also reports the ``learned-extended`` model when the results have it.
    """
    if not isinstance(results, LabResults):
        raise TypeError(_("results must be a pe_helpers.extrapolation.LabResults (e.g. pe_helpers.extrapolation.reference_results()), got {0}.").format(type(results).__name__))
    dim = require_dim("dim", dim)
    seed = require_seed("seed", seed, minimum=0)
    needed = [spec["lab"][0] for spec in SCHEMES.values()]
    missing = [e for e in needed if e not in results.encodings]
    if missing:
        raise ValueError(_("results lack the encoding(s) {0}; the table needs {1}.").format(', '.join(missing), ', '.join(needed)))
    rows = []
    for key, spec in SCHEMES.items():
        extended = lab_outcome(results, "learned-extended") \
            if key == "learned" and "learned-extended" in results.encodings else None
        if extended is not None:  # judged against the trained table's accuracy at n <= L
            extended = LabOutcome(**{**extended.__dict__,
                                     "in_distribution": results.in_distribution(spec["lab"][0])})
        rows.append(ComparisonRow(
            key=key,
            scheme=str(spec["name"]),
            what=str(spec["what"]),
            value_carries_position=value_carries_position(key, dim=dim, seed=seed),
            score_dependence=score_position_dependence(key, dim=dim, seed=seed),
            lab=lab_outcome(results, spec["lab"][0]),
            extended=extended,
            lookback=lab_outcome(results, spec["lab"][0], "lookback") if "lookback" in results.tasks else None,
        ))
    return rows


def _require_rows(rows: object) -> list[ComparisonRow]:
    """A list (or tuple) of :class:`ComparisonRow`, as :func:`comparison_table` returns; empty is allowed."""
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) \
            or not all(isinstance(r, ComparisonRow) for r in rows):
        raise TypeError(_("rows must be a list of ComparisonRow from comparison_table(results), got {0}.").format(_short(rows)))
    return list(rows)


def format_comparison_table(rows: Sequence[ComparisonRow]) -> str:
    """The rows as a Markdown (pipe) table, readable as plain text too; it speaks the current language."""
    rows = _require_rows(rows)
    head = [_("scheme"), _("what is added or rotated, and where"), _("V carries position"), _("relative distance explicit"),
            _("past the training length, copy (notebook 05's lab, L = {L}, token accuracy)").format(
                L=rows[0].lab.train_len if rows else "L")]
    body = [[r.scheme, r.what, _("yes") if r.value_carries_position else _("no"), r.relative, r.past_training] for r in rows]
    if any(r.lookback is not None for r in rows):
        head.append(_("past the training length, look-back (fixed offset 3)"))
        for cells, r in zip(body, rows):
            cells.append(r.past_training_lookback)
    def row(cells: Sequence[str]) -> str:  # a "|" inside a cell (ALiBi's |m − n|) would split it
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    lines = [row(head), "|" + "|".join("---" for _ in head) + "|"]
    lines += [row(cells) for cells in body]
    return "\n".join(lines)


#: The symbol of each verdict of :func:`extrapolation_verdict` in :func:`format_comparison_matrix`.
VERDICT_SYMBOLS = {"holds": "✓", "degrades": "~", "collapses": "✗", "cannot run": "—"}


def _matrix_cell(outcome: LabOutcome | None, which: str) -> str:
    """The verdict symbol of ``outcome``'s mean accuracy ``which`` (``"near"`` or ``"far"``), bold to be seen from the
    back row: ✓ holds, ~ degrades, ✗ collapses, — cannot run."""
    value = None if outcome is None else getattr(outcome, which)
    if value is None:
        return VERDICT_SYMBOLS["cannot run"]
    return f"**{VERDICT_SYMBOLS[getattr(outcome, which + '_verdict')]}**"


def _unbroken(label: str) -> str:
    """``label`` with its ``n = 9–10`` kept on one line when a narrow column wraps it (no-break spaces around ``=``
    and ``≤``, a word joiner after the dash)."""
    return label.replace(" = ", "\u00a0=\u00a0").replace(" ≤ ", "\u00a0≤\u00a0").replace("–", "–\u2060")


def format_comparison_matrix(rows: Sequence[ComparisonRow]) -> str:
    """The rows of :func:`comparison_table` as a matrix to read in seconds, as Markdown: one row per scheme, where
    position enters, then one symbol per cell, ✓ always the good outcome: V free of position, relative distance
    explicit, and the lab's verdicts past the training length ``L`` (✓ holds, ~ degrades, ✗ collapses); a one-line
    legend under it.

    The numbers behind the verdicts are the rows' own (the full sentences are :func:`format_comparison_table`'s, the
    accuracies :meth:`pe_helpers.extrapolation.LabResults.table_markdown`'s); the labels speak the current language
    (:func:`pe_helpers.set_language`).
    """
    rows = _require_rows(rows)
    if not rows:
        return ""
    where = {"learned": _("x, added"), "sinusoidal": _("x, added"), "rope": _("q and k, rotated"),
             "alibi": _("score, penalty"), "none": _("nowhere (mask)")}
    names = {"learned": _("learned absolute"), "sinusoidal": _("sinusoidal absolute"), "rope": "RoPE",
             "alibi": "ALiBi", "none": _("no PE + causal mask")}
    first = rows[0].lab
    (a, b), (c, e) = first.near_span, first.far_span
    head = [_("scheme"), _("position enters"), _("V free of position"), _("relative distance explicit"),
            _("copy, n = {a}–{b}").format(a=a, b=b), _("copy, n = {a}–{b}").format(a=c, b=e)]
    lookback = any(r.lookback is not None for r in rows)
    if lookback:
        head += [_("look-back, n = {a}–{b}").format(a=a, b=b), _("look-back, n = {a}–{b}").format(a=c, b=e)]
    head = head[:4] + [_unbroken(h) for h in head[4:]]
    body = []
    for r in rows:
        cells = [names.get(r.key, r.scheme), where.get(r.key, ""),
                 "**✗**" if r.value_carries_position else "**✓**",
                 "**✓**" if r.score_dependence == "offset-only" else "**✗**",
                 _matrix_cell(r.lab, "near"), _matrix_cell(r.lab, "far")]
        if lookback:
            cells += [_matrix_cell(r.lookback, "near"), _matrix_cell(r.lookback, "far")]
        body.append(cells)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + ":---:|" * (len(head) - 2)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    legend = _("✓ holds (keeps ≥ 90 % of its accuracy above chance, L = {L}) · ~ degrades (35–90 %) · ✗ collapses "
               "(< 35 %) · — cannot run")
    return "\n".join([*lines, "", legend.format(L=first.train_len)])


def format_comparison_accuracies(rows: Sequence[ComparisonRow]) -> str:
    """The lab's mean token accuracies behind the rows, as aligned plain text: one line per scheme, at copy lengths
    ``n ≤ L``, just past ``L`` and from ``2L+1`` on, and on look-back from ``2L+1`` on (``cannot run`` where the model
    has no position for it). Headers and words speak the current language; CJK characters count two columns."""
    rows = _require_rows(rows)

    def columns(text: str) -> int:  # terminal columns, as _rjust counts them
        return len(_rjust(text, 0)) + sum(unicodedata.east_asian_width(c) in "WF" for c in text)

    def cell(value: float | None, width: int) -> str:
        return _rjust(str(VERDICT_WORDS["cannot run"]) if value is None else f"{value:.2f}", width)

    name = max([20, *(columns(r.scheme) for r in rows)])
    head = [_("copy n <= L"), _("copy L+1.."), _("copy 2L+1.."), _("look-back 2L+1..")]
    title = _("scheme")
    lines = [title + " " * (name - columns(title)) + " " + " ".join(_rjust(h, 17 if i == 3 else 12)
                                                                    for i, h in enumerate(head))]
    for r in rows:
        far_lookback = None if r.lookback is None else r.lookback.far
        lines.append(r.scheme + " " * (name - columns(r.scheme)) + " " + " ".join(
            [cell(r.lab.in_distribution, 12), cell(r.lab.near, 12), cell(r.lab.far, 12), cell(far_lookback, 17)]))
    return "\n".join(lines)
