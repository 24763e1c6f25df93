"""The one English ↔ 中文 glossary of the collection: the notebooks of both editions, TEACHING.md and
TEACHING.zh.md use these terms (``tests/test_teaching.py`` checks that TEACHING.zh.md's glossary table is
:func:`markdown_table` ``("zh")``).

The Chinese terms follow the seed article 《绝对位置编码》 (2025-05-12) where it names a concept (置换等变,
可学习位置向量, 相对位移, 长度外推, 加法混合, …) and otherwise the Chinese edition of *Dive into Deep Learning*
(d2l-zh, 《动手学深度学习》: 词元, 查询/键/值, 掩码, 强制教学, …). Where a word is often rendered another way that
means something else, the other rendering is listed under ``avoid`` (for example 词嵌入 is *word* embedding,
while a token is a 词元). ``zh_gloss`` is an alternative name or abbreviation shown in parentheses in the table
(``旋转位置编码（RoPE）``); the term itself is ``zh``.

The order is the teaching order of TEACHING.md's glossary table; the last rows are words of the notebooks'
own apparatus (notebook, slider, claim, …).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Term", "GLOSSARY", "markdown_table", "term"]


@dataclass(frozen=True)
class Term:
    """One concept: its English and Chinese names, and Chinese renderings not to use for it."""

    en: str
    zh: str
    avoid: tuple[str, ...] = ()
    note: str = ""
    zh_gloss: str = ""

    @property
    def zh_cell(self) -> str:
        """The Chinese column of the table: the term, with its alternative name in （）."""
        return f"{self.zh}（{self.zh_gloss}）" if self.zh_gloss else self.zh


GLOSSARY: tuple[Term, ...] = (
    Term("Transformer", "Transformer", (), "not translated, as in the seed and d2l-zh"),
    Term("token", "词元", ("标记",), "d2l-zh; the seed writes token"),
    Term("token embedding", "词元嵌入", ("词嵌入",), "词嵌入 is word embedding"),
    Term("embedding", "嵌入"),
    Term("self-attention", "自注意力", (), "the seed writes Self-Attention"),
    Term("attention", "注意力"),
    Term("query, key, value (Q, K, V)", "查询/键/值", (), "d2l-zh 查询（query）、键（key）和值（value）"),
    Term("attention score", "注意力分数", (), "the seed writes attention score"),
    Term("attention weights", "注意力权重"),
    Term("scaled dot-product attention", "缩放点积注意力", (), "d2l-zh §10.3"),
    Term("projection matrix ($W_Q$, $W_K$, $W_V$)", "投影矩阵"),
    Term("permutation", "置换", (), "the seed: 置换矩阵"),
    Term("permutation matrix", "置换矩阵"),
    Term("permutation equivariance", "置换等变", ("置换不变",), "invariance (不变) is a different property"),
    Term("permutation invariance", "置换不变"),
    Term("mask", "掩码", ("遮罩",), "d2l-zh"),
    Term("causal mask", "因果掩码"),
    Term("encoder / decoder", "编码器 / 解码器"),
    Term("no positional encoding (NoPE)", "无位置编码", (), "", "NoPE"),
    Term("positional encoding", "位置编码"),
    Term("position vector", "位置向量"),
    Term("absolute positional encoding", "绝对位置编码"),
    Term("relative positional encoding", "相对位置编码"),
    Term("additive mixing", "加法混合", (), "the seed's §4.1 heading"),
    Term("additive (an encoding added to x)", "加性", ("加法式",), "加性位置编码"),
    Term("learned position vectors (learned absolute positional encoding)", "可学习位置向量", (),
         "the seed's §2 heading is 可学习绝对位置编码", "可学习绝对位置编码"),
    Term("embedding table", "嵌入表", (), "the seed writes embedding table"),
    Term("maximum length / training length", "最大长度 / 训练长度", (), "the seed: 最大上下文长度, 训练长度"),
    Term("cosine similarity", "余弦相似度"),
    Term("length extrapolation", "长度外推", (), "the seed's §4.3 heading"),
    Term("extrapolation", "外推"),
    Term("length generalisation", "长度泛化"),
    Term("sinusoidal positional encoding", "正弦位置编码", (), "the seed writes Sinusoidal 位置编码",
         "Sinusoidal 位置编码"),
    Term("frequency (angular frequency)", "频率", (), "ω_i", "角频率"),
    Term("wavelength", "波长", (), "2π/ω_i positions"),
    Term("period", "周期"),
    Term("phase", "相位"),
    Term("base (the 10000)", "底数"),
    Term("dimension pair", "维度组", (), "the seed: 维度组 i（每组对应一对 sin / cos 通道）"),
    Term("geometric sequence", "等比数列"),
    Term("heatmap", "热力图", (), "the seed's 频率热力图"),
    Term("interleaved layout (sin, cos, sin, cos, …)", "交错布局", (), "notebook 03"),
    Term("concatenated layout ([sin … \\| cos …])", "拼接布局", (), "notebook 03; the | is escaped for the table"),
    Term("numerical precision", "数值精度"),
    Term("single precision (float32) / bfloat16", "单精度浮点（float32）/ bfloat16（bf16）"),
    Term("unit circle", "单位圆", (), "the seed: 单位圆上的一个点"),
    Term("rotation matrix", "旋转矩阵"),
    Term("block-diagonal matrix", "分块对角矩阵"),
    Term("orthogonal matrix", "正交矩阵"),
    Term("relative shift (offset $k$)", "相对位移", ("相对偏移", "偏移"), "the seed: 只依赖相对位移 k; its 漂移 is a drift"),
    Term("relative position (distance)", "相对位置", (), "the seed's §4.2 heading is 相对距离", "相对距离"),
    Term("angle-addition formulas", "和角公式", (), "the seed: 三角恒等式"),
    Term("linear map", "线性变换"),
    Term("dot product", "点积"),
    Term("rotary position embedding (RoPE)", "旋转位置编码", (), "the seed: RoPE 旋转位置编码", "RoPE"),
    Term("interleaved pairing (RoPE, pairs $2i, 2i+1$)", "相邻配对", ("前后半切分",)),
    Term("half-split pairing (RoPE, `rotate_half`, pairs $i, i + d/2$)", "前后两半配对", ("前后半切分",)),
    Term("ALiBi (attention with linear biases)", "ALiBi", (), "", "线性偏置注意力"),
    Term("collision (of sums)", "碰撞"),
    Term("concatenation $[x; p]$", "拼接"),
    Term("Toeplitz matrix", "托普利茨矩阵"),
    Term("copy task", "复制任务"),
    Term("separator (SEP)", "分隔符"),
    Term("loss mask", "损失掩码"),
    Term("token accuracy", "词元准确率"),
    Term("teacher forcing", "强制教学", ("教师强制",), "d2l-zh §9.7 强制教学（teacher forcing）"),
    Term("copy head", "复制头"),
    Term("look-back task", "回看任务", (), "notebook 05's second task: output the token a fixed number of places back"),
    Term("beginning-of-sequence token (BOS)", "序列开始词元", (), "", "BOS"),
    Term("linear probe", "线性探针", (), "Haviv et al. 2022: a linear read-out of the position from hidden states"),
    Term("position interpolation", "位置插值", (), "Chen et al. 2023", "PI"),
    Term("NTK-aware scaling", "NTK 感知缩放", (), "RoPE's base raised at inference"),
    Term("exercise checker", "练习检查器"),
    Term("stub", "空函数", ("桩函数",), "the student edition's function whose body raises NotImplementedError"),
    Term("exercise", "练习"),
    Term("chance level", "随机水平", ("随机猜测",), "1/vocab size: the accuracy of a guess"),
    Term("notebook cell", "单元", ("单元格",), "a cell of a notebook (a matrix cell is a 格子)"),
    Term("speaker notes", "讲者提示", ("讲课提示",), "the notes cells, shown by the S speaker view"),
    Term("notebook", "笔记本", ("记事本",), "a Jupyter notebook; a laptop is 笔记本电脑"),
    Term("slider", "滑块"),
    Term("claim", "论断", (), "the **Claim.** label of each section: **论断**："),
    Term("misconception", "常见误区", (), "the **Misconception:** box: > **常见误区**："),
)


def term(en: str) -> Term:
    """The glossary entry whose English name is ``en`` (exactly as in :data:`GLOSSARY`)."""
    for t in GLOSSARY:
        if t.en == en:
            return t
    raise KeyError(f"en must be an English term of the glossary, got {en!r}; see pe_helpers.glossary.GLOSSARY.")


def markdown_table(first: str = "en") -> str:
    """The glossary as a Markdown table, English first (``first="en"``) or Chinese first (``"zh"``)."""
    if first not in ("en", "zh"):
        raise ValueError(f"first must be 'en' or 'zh', got {first!r}.")
    head = "| English | 中文 |" if first == "en" else "| 中文 | English |"
    rows = [f"| {t.en} | {t.zh_cell} |" if first == "en" else f"| {t.zh_cell} | {t.en} |" for t in GLOSSARY]
    return "\n".join([head, "|---|---|", *rows])
