"""What a Chinese student reads has no English in it: a scan of the Chinese edition as stored.

A ``_()`` audit finds strings the code forgot to mark; this scan reads what a student actually sees, whatever
produced it: every Chinese notebook's stored outputs (printed text, HTML and Markdown tables, error messages, and
each figure's texts, which the figure toolkit writes into its PNG as the ``pe:texts`` chunk) and every Chinese
deck's visible text (its Markdown cells that are neither ``skip`` nor ``notes``, and the outputs of its shown code
cells). A word of two or more Latin letters must be on the allowlist below (identifiers, units, proper names,
formula words) or inside code: quoted text (``'dog bites man'``, a repr), backticks, inline maths, an identifier
with ``_``, digits or inner capitals. The test fails above zero; ``findings()`` lists them by notebook.
"""

from __future__ import annotations

import base64
import html
import json
import re
import struct
import zlib
from collections import Counter
from pathlib import Path

import pytest

from pe_helpers.extrapolation import ENCODINGS, TASKS

REPO = Path(__file__).resolve().parents[1]
CHINESE = sorted((REPO / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))
#: The figure toolkit's PNG text chunk that lists a figure's texts (pe_helpers.figures._base.PNG_TEXTS_KEY).
PNG_TEXTS_KEY = "pe:texts"

#: Words a Chinese page rightly keeps in Latin letters: proper names (schemes, libraries, people, products), units,
#: formula words and the few English example sentences the lessons use as data.
ALLOWED = {
    # proper names: schemes, models, libraries, tools, people
    "Transformer", "Transformers", "RoPE", "NoPE", "ALiBi", "BERT", "GPT", "LLaMA", "Llama", "PyTorch", "torch",
    "numpy", "NumPy", "Jupyter", "JupyterLab", "JupyterHub", "Notebook", "Voilà", "Voila", "Binder", "GitHub",
    "matplotlib", "ipywidgets", "nbval", "Python", "Chromium", "Babel", "Poedit", "Weblate", "tensor2tensor",
    "fairseq", "t2t", "d2l", "zh", "Vaswani", "Haviv", "Chen", "Press", "Su", "Kazemnejad", "Xavier", "Glorot",
    "Hugging", "Face", "Meta", "Mistral", "GPT-J", "EleutherAI", "gpt-neox", "huggingface", "transformers",
    "modded-nanogpt", "sgl-project", "sglang-jax", "Smith", "Lewis", "Ruoss", "Peng", "Adam", "AdamW", "Zhang", "Rush", "Huang", "Harvard", "Shaw", "Ke", "He", "Dai", "Sennrich", "Liu", "Raffel", "Chi", "Li", "Sun", "Wang", "Zhou", "Kerple", "FIRE", "TUPE", "Transformer-XL",
    "harvardnlp", "annotated-transformer", "Annotated", "Team", "google-deepmind", "logits", "bool", "autocast", "Toeplitz", "Frobenius", "Euler", "NTK", "PI", "YaRN", "SEP", "BOS", "EOS", "MLP", "GPU",
    "CPU", "AVX", "IEEE", "bfloat16", "bf16", "float16", "float32", "float64", "fp16", "fp32", "Noto", "Sans",
    "CJK", "SC", "OFL", "Google", "Colab", "reveal", "js", "pip", "conda", "make", "git", "uv", "macOS", "Linux",
    "Windows", "WSL", "SSH", "URL", "HTTP", "HTTPS", "PNG", "SVG", "PDF", "HTML", "CSS", "JSON", "API", "CLI",
    "Markdown", "LaTeX", "UTF", "ASCII", "ID", "OK", "Ctrl", "Shift", "Enter", "Esc", "Space", "PageUp",
    "PageDown", "Tab", "Alt", "Cmd", "Kernel", "Restart", "Run", "All",
    # formula words and functions
    "sin", "cos", "tan", "exp", "log", "ln", "softmax", "argmax", "max", "min", "det", "diag", "rank", "norm",
    "mod", "cat", "arange", "std", "var", "mean", "sqrt", "dropout", "Attention", "Linear", "LayerNorm", "rad",
    "pos", "dim", "seq", "len", "base", "perm", "Var", "tr", "id", "QK", "XW", "PE", "Pi", "sigma", "pi",
    "omega", "theta", "alpha", "beta", "lr", "inf", "nan", "NaN", "dB", "Hz",
    # units
    "px", "pt", "ms", "min", "ulp", "GB", "GiB", "MB", "MiB", "KB", "kB",
    # Python values shown as values
    "True", "False", "None",
}
#: The extrapolation lab's scheme and task names are identifiers (``encoding="rope"``): legends and results name
#: models by them in both editions, as the Chinese prose does in backticks.
IDENTIFIERS = set(ENCODINGS) | set(TASKS)
#: English example sentences of a notebook, its data (the prose talks about them in both editions).
EXAMPLES = {
    "01": {"dog", "bites", "man", "at", "the", "park", "love", "you", "me", "la"},
}

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
#: Markdown that rightly stays in Latin letters: a gloss after a Chinese term (置换等变（permutation equivariance）,
#: 前缀最大值（running maximum）), a quotation of the seed in its own words (「… attention score …」), a paper's title
#: in italics (*Attention Is All You Need*), English words quoted as English (“nearly identical”), a JupyterLab menu path
#: (**Run ▸ Run All Cells**). Outputs get no such
#: leeway: everything the code prints is the package's own text.
_KEPT = re.compile(r"(?<=[\u4e00-\u9fff*])\s?[（(][A-Za-z][A-Za-z '\"/-]*(?:[，,][^）)\n]*)?[）)]|「[^」]*」"
                   r"|（[^（）\n]*[\u4e00-\u9fff][，,] ?[A-Za-z][A-Za-z '/-]*）"
                   r"|“[^”\u4e00-\u9fff]*”|\*[^*\u4e00-\u9fff\n]+\*(?!\*)|\*\*[^*\n]*▸[^*\n]*\*\*")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_URL = re.compile(r"https?://\S+|\]\([^)]*\)|<[^>]+>|\bwww\.\S+|\b[\w./-]+\.(?:py|ipynb|md|po|json|png|toml|yml|cfg|txt)\b")
_WORD = re.compile(r"(?<![\w.\\])[A-Za-z][\w'’-]*")


def png_texts(png: bytes) -> list[str]:
    """The texts a figure toolkit PNG lists in its ``pe:texts`` chunk (``iTXt``, JSON), or ``[]``."""
    texts, at = [], 8
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        data = png[at + 8:at + 8 + length]
        key, _, rest = data.partition(b"\0")
        if key.decode("latin-1") == PNG_TEXTS_KEY and kind == b"tEXt":
            texts += json.loads(rest.decode("latin-1"))
        elif key.decode("latin-1") == PNG_TEXTS_KEY and kind == b"iTXt":
            compressed, text = rest[0], rest[2:].split(b"\0", 2)[2]
            texts += json.loads((zlib.decompress(text) if compressed else text).decode("utf-8"))
        at += 12 + length
    return texts


def _is_identifier(word: str) -> bool:
    """A name of code or maths: digits, ``_``, Greek letters or sub/superscripts (``kωᵢ``, ``Pᵀ``), inner capitals
    (camelCase, ``QK``), or an all-capital acronym."""
    return bool(re.search(r"[\d_\u0370-\u03ff\u1d00-\u1dbf\u2070-\u209f²³]", word)) or bool(re.search(r"[a-z][A-Z]|^[A-Z]{2,}$", word))


def english_words(text: str, *, extra: set[str] = frozenset(), markdown: bool = False) -> list[str]:
    """The English words of ``text`` a Chinese reader would see as untranslated prose (``markdown``: prose of a
    Markdown cell, where glosses, quotations of the seed, titles and menu paths are kept)."""
    text = html.unescape(text)
    for pattern in (_MATH, _CODE, _URL, *([_KEPT] if markdown else []), _QUOTED):
        text = pattern.sub(" ", text)
    words = []
    for match in _WORD.finditer(text):
        word = match.group().strip("'’-")
        if word in IDENTIFIERS:  # learned-extended, rope-pi: one name with its hyphen
            continue
        tail = text[match.end():match.end() + 1]
        head = text[match.start() - 1:match.start()] if match.start() else ""
        if len(word) < 2 or tail in ("(", "[", ".", "]", "=", "·") or head + tail == "()" or _is_identifier(word):
            continue  # one letter is a variable; word( a call, word[ and x[:, word] an index, f(word) and word= an
            #           argument, word·ω a product
        if re.fullmatch(r"[A-Za-z](?:-[A-Za-z])+", word):
            continue  # i-j: a formula
        if word in ALLOWED or word in IDENTIFIERS or word in extra or word.lower() in extra:
            continue
        words.append(word)
    return words


def _joined(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def _output_texts(output: dict) -> list[str]:
    if output.get("output_type") == "stream":
        return [_joined(output.get("text", ""))]
    if output.get("output_type") == "error":
        return [f"{output.get('evalue', '')}"]
    data = output.get("data", {})
    texts = []
    if "image/png" in data:
        texts += png_texts(base64.b64decode(_joined(data["image/png"])))
    for kind in ("text/html", "text/markdown", "text/latex"):
        if kind in data:
            body = _joined(data[kind])
            body = re.sub(r"<(style|script)\b.*?</\1>", " ", body, flags=re.S) if kind == "text/html" else body
            texts.append(re.sub(r"<[^>]+>", " ", body) if kind == "text/html" else body)
            break
    else:
        if "text/plain" in data and "image/png" not in data:
            texts.append(_joined(data["text/plain"]))
    return texts


def _slide_type(cell: dict) -> str:
    return (cell.get("metadata", {}).get("slideshow") or {}).get("slide_type", "-")


def findings(path: Path) -> dict[str, Counter]:
    """``{"notebook": Counter(word), "deck": Counter(word)}``: English words in what the notebook and its deck show."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    extra = EXAMPLES.get(path.stem[:2], set())
    found = {"notebook": Counter(), "deck": Counter()}
    for cell in cells:
        shown_on_slide = _slide_type(cell) not in ("skip", "notes")
        if cell["cell_type"] == "markdown":
            if shown_on_slide:
                found["deck"].update(english_words("".join(cell["source"]), extra=extra, markdown=True))
            continue
        for output in cell.get("outputs", []):
            for text in _output_texts(output):
                words = english_words(text, extra=extra)
                found["notebook"].update(words)
                if shown_on_slide:
                    found["deck"].update(words)
    return found


def test_the_scan_reads_figures_and_skips_code():
    assert english_words("形状 (8, 4)，max_len = 16，`apply_rope`，'dog bites man'，$\\sin x$，RoPE") == []
    assert english_words("准确率 accuracy 0.9，relative change") == ["accuracy", "relative", "change"]
    from pe_helpers.figures._base import encode_png
    import numpy as np

    png = encode_png(np.zeros((2, 2, 4), np.uint8), dpi=72, text={PNG_TEXTS_KEY: json.dumps(["位置 position"], ensure_ascii=False)})
    assert png_texts(png) == ["位置 position"]
    assert english_words(" ".join(png_texts(png))) == ["position"]
    assert english_words("位置 position", markdown=True) == ["position"]
    assert english_words("置换等变（permutation equivariance），「attention score」", markdown=True) == []


@pytest.mark.parametrize("path", CHINESE, ids=lambda p: p.stem[:2])
def test_a_chinese_notebook_and_its_deck_show_no_english(path: Path) -> None:
    found = findings(path)
    report = {where: dict(words.most_common(15)) for where, words in found.items() if words}
    assert not report, f"{path.name}: English words a Chinese student reads ({sum(found['notebook'].values())} in the " \
                       f"notebook's outputs, {sum(found['deck'].values())} on its slides): {report}"


if __name__ == "__main__":  # python tests/test_chinese_edition_scan.py: the counts per notebook
    for p in CHINESE:
        f = findings(p)
        print(f"{p.stem[:2]}  notebook {sum(f['notebook'].values()):4d}  deck {sum(f['deck'].values()):4d}  "
              f"{', '.join(w for w, _ in (f['notebook'] + f['deck']).most_common(12))}")
