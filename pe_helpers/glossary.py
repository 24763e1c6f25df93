"""The one English ↔ 中文 glossary of the collection: the notebooks of both editions, TEACHING.md and
TEACHING.zh.md use these terms (``tests/test_glossary.py`` checks them).

The Chinese terms follow the seed article 《绝对位置编码》 (2025-05-12) and the Chinese edition of
*Dive into Deep Learning* (d2l-zh, 《动手学深度学习》) where the two agree; where a word is often
rendered another way that means something else, the other rendering is listed under ``avoid``
(for example 词嵌入 is *word* embedding, while a token is a 词元).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Term", "GLOSSARY", "markdown_table"]


@dataclass(frozen=True)
class Term:
    """One concept: its English and Chinese names, and Chinese renderings not to use for it."""

    en: str
    zh: str
    avoid: tuple[str, ...] = ()
    note: str = ""


GLOSSARY: tuple[Term, ...] = (
    Term("token", "词元", ("标记",), "d2l-zh; the seed writes token"),
    Term("token embedding", "词元嵌入", ("词嵌入",), "词嵌入 is word embedding"),
    Term("self-attention", "自注意力"),
    Term("query / key / value", "查询/键/值"),
    Term("attention score", "注意力分数"),
    Term("attention weights", "注意力权重"),
    Term("permutation", "置换"),
    Term("permutation equivariance", "置换等变", ("置换不变",), "invariance (不变) is a different property"),
    Term("causal mask", "因果掩码"),
    Term("positional encoding", "位置编码"),
    Term("absolute positional encoding", "绝对位置编码"),
    Term("relative positional encoding", "相对位置编码"),
    Term("learned position vectors", "可学习位置向量"),
    Term("embedding table", "嵌入表"),
    Term("sinusoidal positional encoding", "正弦位置编码"),
    Term("frequency", "频率"),
    Term("wavelength", "波长"),
    Term("dimension pair", "维度组"),
    Term("rotation matrix", "旋转矩阵"),
    Term("relative offset", "相对位移"),
    Term("additive mixing", "加法混合"),
    Term("length extrapolation", "长度外推"),
    Term("training length", "训练长度"),
    Term("rotary position embedding (RoPE)", "旋转位置编码（RoPE）"),
    Term("interleaved pairing", "相邻配对", ("前后半切分",)),
    Term("half-split pairing (rotate_half)", "前后两半配对", ("前后半切分",)),
    Term("exercise", "练习"),
)


def markdown_table(first: str = "en") -> str:
    """The glossary as a Markdown table, English first (``first="en"``) or Chinese first (``"zh"``)."""
    if first not in ("en", "zh"):
        raise ValueError(f"first must be 'en' or 'zh', got {first!r}.")
    head = "| English | 中文 |" if first == "en" else "| 中文 | English |"
    rows = [f"| {t.en} | {t.zh} |" if first == "en" else f"| {t.zh} | {t.en} |" for t in GLOSSARY]
    return "\n".join([head, "|---|---|", *rows])
