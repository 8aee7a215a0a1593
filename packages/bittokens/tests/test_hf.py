"""Acceptance item 8: NumberTokenizer and BitTokensForCausalLM on locally built HF models."""

from __future__ import annotations

import os

import pytest
import torch

from bittokens import format_number
from bittokens._train import AdamW
from bittokens.data import make_task

transformers = pytest.importorskip("transformers")
from bittokens.hf import BitTokensForCausalLM, NumberTokenizer  # noqa: E402


def _texts(n: int, seed: int = 0) -> list[str]:
    task = make_task("minmax", n, seed=seed)
    out = []
    for p, a in zip(task.prompts, task.answers):
        nums = ", ".join(format_number(v) for v in p if isinstance(v, float))
        out.append(f"{p[0]} of {nums} = {format_number(a[0])}")
    return out


def _model(kind: str, vocab: int):
    if kind == "gpt2":
        cfg = transformers.GPT2Config(
            vocab_size=vocab, n_positions=64, n_embd=128, n_layer=2, n_head=4
        )
        return transformers.GPT2LMHeadModel(cfg)
    cfg = transformers.LlamaConfig(
        vocab_size=vocab,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
    )
    return transformers.LlamaForCausalLM(cfg)


def test_tokenizer_round_trips_text(hf_offline, bpe_tokenizer):
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    nt = NumberTokenizer(bpe_tokenizer)
    texts = [
        "the price is 12.5 and the sum is -3",
        "x = 1.5e-06, y = 1e16 and 0.1",
        "no numbers here",
        "max of 7, -0.004, 123456 = 123456",
    ]
    enc = nt(texts)
    assert set(enc) == {"input_ids", "attention_mask", "number_values", "number_mask"}
    assert enc["number_values"].dtype == torch.float64
    assert int(enc["number_mask"].sum()) == 2 + 3 + 0 + 4
    assert enc["number_values"][0][enc["number_mask"][0]].tolist() == [12.5, -3.0]
    assert nt.decode(enc["input_ids"], enc["number_values"], enc["attention_mask"]) == texts
    for t in _texts(30):
        ids, vals = nt.encode(t)
        assert nt.decode(ids, vals) == t


def test_tokenizer_warns_on_big_integers(bpe_tokenizer):
    nt = NumberTokenizer(bpe_tokenizer)
    with pytest.warns(UserWarning, match="exceeds 2\\^53"):
        nt("id 12345678901234567890")


def test_tokenizer_wraps_transformers_fast_tokenizer(bpe_tokenizer):
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe_tokenizer)
    nt = NumberTokenizer(fast)
    ids, vals = nt.encode("a 2.5 b")
    assert nt.decode(ids, vals) == "a 2.5 b"
    with pytest.raises(TypeError, match=r"tok must be a tokenizers\.Tokenizer"):
        NumberTokenizer("gpt2")


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_causal_lm_trains_saves_and_reloads(
    kind, hf_offline, bpe_tokenizer, tmp_path, torch_threads
):
    torch.manual_seed(0)
    nt = NumberTokenizer(bpe_tokenizer)
    model = BitTokensForCausalLM(_model(kind, nt.vocab_size), nt.num_id)
    batch = nt(_texts(64))
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    opt = AdamW(model.parameters(), lr=2e-3, weight_decay=0.0)
    losses = []
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        idx = torch.randint(0, 64, (16,), generator=g)
        out = model(
            batch["input_ids"][idx],
            batch["attention_mask"][idx],
            batch["number_values"][idx],
            batch["number_mask"][idx],
            labels=labels[idx],
        )
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        losses.append(float(out.loss.detach()))
    assert sum(losses[-5:]) / 5 < 0.7 * sum(losses[:5]) / 5
    assert out.number_logits.shape[-1] == 64 and out.bit_loss is not None

    model.eval()
    model.save_pretrained(tmp_path / "m")
    again = BitTokensForCausalLM.from_pretrained(tmp_path / "m").eval()
    with torch.no_grad():
        a = model(batch["input_ids"][:4], batch["attention_mask"][:4], batch["number_values"][:4])
        b = again(batch["input_ids"][:4], batch["attention_mask"][:4], batch["number_values"][:4])
    assert torch.equal(a.logits, b.logits) and torch.equal(a.number_logits, b.number_logits)

    prompt = nt(["max of 1.5, 2 ="])
    ids, vals = model.generate(prompt["input_ids"], prompt["number_values"], max_new_tokens=4)
    assert ids.shape == (1, prompt["input_ids"].shape[1] + 4)
    gen_num = ids[0] == nt.num_id
    assert vals[0][gen_num].dtype == torch.float64
    assert isinstance(nt.decode(ids[0], vals[0]), str)


def test_wrapper_bad_input(bpe_tokenizer):
    nt = NumberTokenizer(bpe_tokenizer)
    model = BitTokensForCausalLM(_model("gpt2", nt.vocab_size), nt.num_id)
    ids = torch.zeros(2, 5, dtype=torch.long)
    with pytest.raises(ValueError, match="number_values must have shape"):
        model(ids, number_values=torch.zeros(2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="values must have shape"):
        nt.decode(ids[0], torch.zeros(3))
