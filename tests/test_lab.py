"""The extrapolation lab (pe_helpers.extrapolation): task generator, model, optimiser, determinism, the error past L,
the results API, the committed reference run and the command line.

Trainings here are tiny (train_len 3..4, tens of steps) except one: a fresh default-settings run of
one encoding compared with the committed reference (about 5 s).
"""

from __future__ import annotations

import io
import json

import pytest
import torch
from torch.nn import functional as F

from pe_helpers import PositionOutOfRangeError
from pe_helpers import cli
from pe_helpers import extrapolation as lab
from pe_helpers.extrapolation import training

@pytest.fixture(scope="module")
def tiny() -> lab.LabResults:
    return lab.run_lab(train_len=3, steps=25, warmup=5, d_model=16, progress="none")


# ---- the task -------------------------------------------------------------------------------

def test_copy_sequences_are_prompt_separator_copy_then_padding() -> None:
    seq = lab.copy_sequences([3, 1, 2], vocab_size=10, generator=torch.Generator().manual_seed(0))
    sep, pad = lab.separator_id(10), lab.pad_id(10)
    assert (sep, pad) == (10, 11)
    assert seq.shape == (3, 7)  # 2 * max_n + 1
    for row, n in zip(seq.tolist(), (3, 1, 2)):
        prompt, copy = row[:n], row[n + 1:2 * n + 1]
        assert row[n] == sep, "SEP sits right after the prompt"
        assert copy == prompt, "the second half repeats the first"
        assert all(0 <= x < 10 for x in prompt)
        assert row[2 * n + 1:] == [pad] * (6 - 2 * n), "PAD after the end"


def test_copy_batch_shapes_shift_and_loss_mask() -> None:
    gen = torch.Generator().manual_seed(1)
    batch = lab.copy_batch(64, 1, 6, vocab_size=7, generator=gen)
    assert batch.inputs.shape == batch.targets.shape == batch.loss_mask.shape == (64, 12)
    assert batch.loss_mask.dtype == torch.bool and batch.lengths.shape == (64,)
    assert batch.lengths.min() >= 1 and batch.lengths.max() <= 6
    torch.testing.assert_close(batch.inputs[:, 1:], batch.targets[:, :-1])  # targets = next tokens
    for b in range(64):
        n = int(batch.lengths[b])
        t = torch.nonzero(batch.loss_mask[b]).flatten().tolist()
        assert t == list(range(n, 2 * n)), "loss exactly on the copied half"
        assert batch.targets[b, n - 1] == lab.separator_id(7), "the SEP prediction is not in the loss"
        torch.testing.assert_close(batch.targets[b, n:2 * n], batch.inputs[b, :n])  # copied = prompt
        assert (batch.inputs[b, 2 * n + 1:] == lab.pad_id(7)).all()  # (position 2n holds x_n, target PAD)


def test_equal_lengths_give_no_padding() -> None:
    batch = lab.copy_batch(5, 4, 4, generator=torch.Generator().manual_seed(0))
    assert not (batch.inputs == lab.pad_id(10)).any()
    assert batch.loss_mask.sum() == 5 * 4


def test_copy_loss_mask_formula_and_errors() -> None:
    mask = lab.copy_loss_mask(torch.tensor([1, 3]), 6)
    assert mask.tolist() == [[False, True, False, False, False, False],
                             [False, False, False, True, True, True]]
    with pytest.raises(ValueError, match="total_len=4 is too short"):
        lab.copy_loss_mask([3], 4)
    with pytest.raises(ValueError, match="lengths must be >= 1"):
        lab.copy_loss_mask([0], 4)
    with pytest.raises(TypeError, match="lengths"):
        lab.copy_loss_mask(torch.tensor([1.5]), 4)


def test_batch_arguments_are_validated() -> None:
    with pytest.raises(ValueError, match="max_len"):
        lab.copy_batch(2, 5, 3)
    with pytest.raises(ValueError, match="vocab_size"):
        lab.copy_batch(2, 1, 3, vocab_size=1)
    with pytest.raises(TypeError, match="batch_size"):
        lab.copy_batch(2.0, 1, 3)


# ---- the model ------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", lab.ENCODINGS)
def test_every_scheme_is_causal(encoding: str) -> None:
    model = lab.CopyTransformer(encoding, d_model=16, max_positions=12, seed=0).eval()
    x = lab.copy_batch(3, 5, 5, generator=torch.Generator().manual_seed(0)).inputs
    y = x.clone()
    y[:, 7:] = (y[:, 7:] + 1) % 10  # change only the last positions
    with torch.no_grad():
        a, b = model(x), model(y)
    assert a.shape == (3, 10, 12)
    torch.testing.assert_close(a[:, :7], b[:, :7])  # earlier positions cannot see later tokens
    assert not torch.allclose(a[:, 7:], b[:, 7:])


def test_position_schemes_use_the_core_modules() -> None:
    from pe_helpers.encodings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

    assert isinstance(lab.CopyTransformer("learned").position, LearnedPositionalEmbedding)
    assert isinstance(lab.CopyTransformer("sinusoidal").position, SinusoidalPositionalEncoding)
    assert lab.CopyTransformer("none").position is None and lab.CopyTransformer("rope").position is None
    assert all(b.attn.rope for b in lab.CopyTransformer("rope").blocks)


def test_learned_table_raises_past_its_rows_and_extended_runs() -> None:
    model = lab.CopyTransformer("learned", d_model=16, max_positions=8, seed=0).eval()
    long = torch.zeros(1, 9, dtype=torch.long)
    with pytest.raises(PositionOutOfRangeError, match="max_len=8"):
        model(long)
    bigger = model.extended(16, seed=1)
    assert bigger.encoding == "learned-extended" and bigger.position.max_len == 16
    torch.testing.assert_close(bigger.position.table[:8], model.position.table)
    short = torch.zeros(1, 8, dtype=torch.long)
    with torch.no_grad():
        torch.testing.assert_close(bigger(short), model(short))  # trained rows unchanged
        assert bigger(long).shape == (1, 9, 12)
    with pytest.raises(ValueError, match="only a learned table"):
        lab.CopyTransformer("sinusoidal").extended(16)


def test_model_arguments_are_validated() -> None:
    with pytest.raises(ValueError, match="'none', 'learned', 'learned-extended', 'sinusoidal', 'rope'"):
        lab.CopyTransformer("alibi")
    with pytest.raises(ValueError, match="heads of even size"):
        lab.CopyTransformer("rope", d_model=30, n_heads=2)


# ---- optimiser and training -----------------------------------------------------------------

def test_flat_adamw_matches_torch_adamw() -> None:
    torch.manual_seed(0)
    ours = lab.CopyTransformer("learned", d_model=16, max_positions=8)
    ref = lab.CopyTransformer("learned", d_model=16, max_positions=8)
    ref.load_state_dict(ours.state_dict())
    opt = training.AdamW(ours.parameters())
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=1e-2, weight_decay=0.0)
    batch = lab.copy_batch(8, 4, 4, generator=torch.Generator().manual_seed(3))
    for _ in range(3):
        for model, o in ((ours, opt), (ref, ref_opt)):
            o.zero_grad()
            F.cross_entropy(model.logits_at(batch.inputs, batch.loss_mask), batch.targets[batch.loss_mask]).backward()
        opt.step(1e-2)
        ref_opt.step()
    for (name, a), b in zip(ours.named_parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)


def test_training_lengths_follow_the_weight() -> None:
    gen = torch.Generator().manual_seed(0)
    lengths = torch.tensor(training.training_lengths(training.TrainConfig(train_len=4, steps=20000), gen))
    counts = torch.bincount(lengths, minlength=5)[1:].double() / 20000
    torch.testing.assert_close(counts, torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64), atol=0.015, rtol=0)
    uniform = training.training_lengths(training.TrainConfig(train_len=4, steps=4000, length_weight=0.0), gen)
    assert set(uniform) == {1, 2, 3, 4}


def test_training_learns_and_leaves_global_rng_and_threads_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    threads = torch.get_num_threads()
    trained = lab.train("sinusoidal", progress="none", train_len=3, steps=150, warmup=10, d_model=16)
    torch.testing.assert_close(torch.rand(3), expected)  # the caller's RNG stream is untouched
    assert torch.get_num_threads() == threads
    assert len(trained.losses) == 150 and trained.seconds > 0
    assert sum(trained.losses[-20:]) / 20 < 0.5 * sum(trained.losses[:20]) / 20, "the loss should fall"
    assert lab.accuracy(trained, 3) > 0.5


def test_two_runs_give_identical_numbers_and_threads_change_nothing(tiny: lab.LabResults) -> None:
    again = lab.run_lab(train_len=3, steps=25, warmup=5, d_model=16, progress="none", parallel=False)
    assert again.accuracy == tiny.accuracy  # exact equality, every length, every encoding
    for e in tiny.encodings:
        assert again.models[e].losses == tiny.models[e].losses
        for a, b in zip(again.models[e].model.parameters(), tiny.models[e].model.parameters()):
            assert torch.equal(a, b)


def test_a_different_seed_gives_different_numbers(tiny: lab.LabResults) -> None:
    other = lab.run_lab(["sinusoidal"], train_len=3, steps=25, warmup=5, d_model=16, seed=1, progress="none")
    assert other.models["sinusoidal"].losses != tiny.models["sinusoidal"].losses


def test_learned_raises_past_L_and_reports_none(tiny: lab.LabResults) -> None:
    L = tiny.train_len
    learned = tiny.model("learned")
    assert lab.accuracy(learned, L) >= 0
    with pytest.raises(PositionOutOfRangeError):
        lab.accuracy(learned, L + 1)
    assert all(v is not None for v in tiny.accuracy["learned"][:L])
    assert all(v is None for v in tiny.accuracy["learned"][L:])
    assert all(v is not None for e in tiny.encodings if e != "learned" for v in tiny.accuracy[e])
    assert tiny.model("learned-extended").model.position.max_len == 2 * tiny.test_len


def test_learned_extended_reuses_the_trained_learned_model(tiny: lab.LabResults) -> None:
    L = tiny.train_len
    assert tiny.accuracy["learned-extended"][:L] == tiny.accuracy["learned"][:L]
    table = tiny.model("learned").model.position.table
    torch.testing.assert_close(tiny.model("learned-extended").model.position.table[:2 * L], table)


def test_run_lab_validates_its_arguments() -> None:
    with pytest.raises(ValueError, match="allowed|one of"):
        lab.run_lab(["sinusodial"], progress="none")
    with pytest.raises(ValueError, match="twice"):
        lab.run_lab(["rope", "rope"], progress="none")
    with pytest.raises(TypeError, match="unknown setting"):
        lab.run_lab(["rope"], progress="none", stepz=3)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        lab.run_lab(["rope"], progress="none", steps=0)
    with pytest.raises(ValueError, match="progress must be one of"):
        lab.run_lab(["rope"], progress="loud", steps=1)


# ---- progress ---------------------------------------------------------------------------------

def test_dots_progress_prints_deterministic_text() -> None:
    out = io.StringIO()
    bar = training.Progress(7, "training x", "dots", stream=out)
    for step in range(1, 8):
        bar.update(step)
    bar.close()
    text = out.getvalue()
    assert text.startswith("training x .......... done, ") and text.endswith(" s elapsed\n")
    assert "\r" not in text


def test_bar_progress_redraws_one_line() -> None:
    out = io.StringIO()
    bar = training.Progress(5, "rope", "bar", stream=out)
    for step in range(1, 6):
        bar.advance()
    bar.close()
    text = out.getvalue()
    assert text.startswith("\rrope [") and "100% 5/5 steps" in text and text.count("\n") == 1


# ---- results API, reference ------------------------------------------------------------------

def test_results_api_and_json_round_trip(tiny: lab.LabResults, tmp_path) -> None:
    assert tiny.encodings == lab.ENCODINGS and list(tiny.lengths) == list(range(1, 13))
    assert tiny.accuracy_at("rope", 2) == tiny.accuracy["rope"][1]
    assert tiny.in_distribution("rope") == pytest.approx(sum(tiny.accuracy["rope"][:3]) / 3)
    assert tiny.mean_accuracy("learned", 4, 12) is None
    assert "error" in tiny.table() and "learned-extended" in tiny.table()
    path = tiny.save_json(tmp_path / "sub" / "r.json")
    back = lab.LabResults.load_json(path)
    assert back.config == tiny.config and back.test_len == tiny.test_len
    for e in tiny.encodings:
        assert back.accuracy[e] == pytest.approx(tuple(None if v is None else round(v, 4) for v in tiny.accuracy[e]))
    with pytest.raises(ValueError, match="no trained models"):
        back.model("rope")
    with pytest.raises(ValueError, match="length must be <= test_len=12"):
        tiny.accuracy_at("rope", 13)


def test_attention_map_is_the_copy_heads_weights(tiny: lab.LabResults) -> None:
    layer, head = tiny.copy_head("sinusoidal")
    n = 5
    weights = tiny.models["sinusoidal"].model.attention(tiny.example(n)[None])
    torch.testing.assert_close(tiny.attention_map("sinusoidal", n), weights[layer, 0, head])
    a = tiny.attention_map("sinusoidal", n)
    assert a.shape == (10, 10)
    torch.testing.assert_close(a.sum(-1), torch.ones(10))
    assert torch.all(a.triu(1) == 0), "causal"
    with pytest.raises(PositionOutOfRangeError):
        tiny.attention_map("learned", tiny.train_len + 1)


def test_latest_results_is_the_last_run(tiny: lab.LabResults) -> None:
    last = lab.run_lab(["none"], train_len=2, steps=3, warmup=1, d_model=8, progress="none")
    assert lab.latest_results() is last


def test_reference_file_holds_the_default_run() -> None:
    ref = lab.reference_results()
    assert ref.config == lab.TrainConfig() and ref.test_len == 64
    assert ref.encodings == lab.ENCODINGS
    assert all(len(acc) == 64 for acc in ref.accuracy.values())
    for e in ("learned", "learned-extended", "sinusoidal", "rope"):
        assert ref.in_distribution(e) >= 0.95, e
    assert all(v is None for v in ref.accuracy["learned"][16:])


def test_a_fresh_run_matches_the_reference() -> None:
    """Sinusoidal at the default settings, trained from scratch (~5 s), against the committed numbers.

    On the machine and torch build that wrote the reference the numbers are identical (training is
    deterministic); the tolerance allows another CPU's floating-point rounding to steer training a
    little: 0.02 on the in-distribution accuracy, 0.15 at any single length.
    """
    ref = lab.reference_results()
    fresh = lab.run_lab(["sinusoidal"], progress="none")
    assert abs(fresh.in_distribution("sinusoidal") - ref.in_distribution("sinusoidal")) <= 0.02
    diffs = [abs(a - b) for a, b in zip(fresh.accuracy["sinusoidal"], ref.accuracy["sinusoidal"])]
    assert max(diffs) <= 0.15, max(diffs)


# ---- command line ---------------------------------------------------------------------------

def test_cli_smoke(tmp_path, capsys) -> None:
    out, js = tmp_path / "fig" / "lab.png", tmp_path / "lab.json"
    code = cli.main(["--encodings", "none,learned,sinusoidal,rope", "--train-len", "3", "--test-len", "9",
                     "--steps", "20", "--warmup", "2", "--d-model", "16", "--progress", "none",
                     "--out", str(out), "--save-json", str(js)])
    assert code == 0
    text = capsys.readouterr().out
    assert "length" in text and "sinusoidal" in text and "error" in text
    assert f"figure saved to {out}" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(js.read_text())
    assert data["test_len"] == 9 and set(data["accuracy"]) == {"none", "learned", "sinusoidal", "rope"}


@pytest.mark.parametrize("argv, words", [
    (["--encodings", "none,alibi"], "allowed: none,learned,learned-extended,sinusoidal,rope"),
    (["--encodings", "rope,rope"], "twice"),
    (["--steps", "0"], "expected a positive integer, got 0"),
    (["--lr", "-1"], "expected a positive finite number"),
    (["--d-model", "30"], "heads of even size"),
    (["--vocab", "1"], "at least 2 data tokens"),
    (["--progress", "loud"], "invalid choice"),
])
def test_cli_rejects_bad_arguments_clearly(argv, words, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert words.lower() in capsys.readouterr().err.lower()
