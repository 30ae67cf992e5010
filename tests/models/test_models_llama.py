"""The llama.cpp generators on the two packaged models, for real (short prompts, few tokens),
plus GGUF metadata and every bad-input case."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest
from testkit.paths import ROOT

from models import packaged
from models.base import ContextOverflow, Generator, ModelError, SamplingParams
from models.few_shot import (
    FEW_SHOT_HEADER,
    FEW_SHOT_STOP,
    FEW_SHOT_VERSION,
    few_shot_prompt,
    render_few_shot,
)
from models.gguf import FILE_TYPES, read_gguf, write_gguf
from models.llama.generator import LlamaGenerator

SMOL = "smollm2-135m-instruct"
GEMMA = "gemma3-270m"
FRANCE = [{"role": "user", "content": "What is the capital of France? Answer with one word."}]


# One thread: on this 2-core machine, shared with other test runs, two llama.cpp threads that
# spin-wait for each other can stall for tens of seconds when one of them is descheduled.
@pytest.fixture(scope="module")
def smol() -> LlamaGenerator:
    return LlamaGenerator.load(SMOL, n_threads=1)


@pytest.fixture(scope="module")
def gemma() -> LlamaGenerator:
    return LlamaGenerator.load(GEMMA, n_threads=1)


def few(n: int = 8, **kw) -> SamplingParams:
    return SamplingParams(max_tokens=n, **kw)


# --------------------------------------------------------------------------- GGUF metadata

def test_gguf_metadata_of_the_packaged_models():
    smol = read_gguf(packaged.packaged_gguf_path(SMOL))
    assert (smol.architecture, smol.quantization, smol.context_length) == ("llama", "Q4_1", 8192)
    assert smol.has_chat_template and "<|im_start|>" in smol.chat_template
    assert smol.license == "apache-2.0" and smol.vocab_size == 49152
    assert 130e6 < smol.parameter_count < 140e6
    assert smol.file_size == packaged.packaged_gguf_path(SMOL).stat().st_size

    gemma = read_gguf(packaged.packaged_gguf_path(GEMMA))
    assert (gemma.architecture, gemma.quantization, gemma.context_length) == (
        "gemma3", "Q4_K_M", 32768)
    assert not gemma.has_chat_template and gemma.chat_template is None
    assert gemma.sliding_window == 512 and gemma.license == "gemma"
    assert 260e6 < gemma.parameter_count < 280e6


def test_gguf_reader_round_trip_and_skipped_arrays(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", {
        "general.architecture": "llama", "general.name": "tiny", "general.file_type": 15,
        "llama.context_length": 2048, "tokenizer.chat_template": "{{ messages }}",
        "small": [1, 2, 3], "tokenizer.ggml.tokens": [f"t{i}" for i in range(500)],
        "tokenizer.ggml.scores": [0.5] * 300, "general.license": "mit"}, version=2)
    info = read_gguf(path)
    assert (info.version, info.name, info.quantization, info.context_length) == (
        2, "tiny", "Q4_K_M", 2048)
    assert info.metadata["small"] == [1, 2, 3] and info.has_chat_template
    assert "tokenizer.ggml.tokens" not in info.metadata        # long arrays are skipped...
    assert info.vocab_size == 500                              # ...but their length is kept
    assert info.array_lengths["tokenizer.ggml.scores"] == 300
    assert info.license == "mit" and info.parameter_count is None
    assert [FILE_TYPES[i] for i in (0, 1, 2, 3, 7, 8, 9, 10, 14, 15, 17, 18)] == [
        "F32", "F16", "Q4_0", "Q4_1", "Q8_0", "Q5_0", "Q5_1", "Q2_K", "Q4_K_S", "Q4_K_M",
        "Q5_K_M", "Q6_K"]


# --------------------------------------------------------------------------- prompts

def test_smollm2_uses_its_chat_template(smol):
    assert smol.chat and isinstance(smol, Generator)
    gen = smol.generate(FRANCE, few(8))
    assert gen.prompt_text.startswith("<|im_start|>system\n")
    assert gen.prompt_text.endswith(
        "<|im_start|>user\nWhat is the capital of France? Answer with one word.<|im_end|>\n"
        "<|im_start|>assistant\n")
    assert gen.extra["mode"] == "chat-template"
    assert gen.prompt_tokens == len(smol.render(FRANCE).tokens) > 20
    assert "Paris" in gen.text
    assert 1 <= gen.completion_tokens <= 8 and gen.device == "cpu"
    assert gen.finish_reason in ("stop", "length") and gen.seconds > 0


def test_gemma_base_model_gets_the_few_shot_frame(gemma):
    assert not gemma.chat
    gen = gemma.generate([{"role": "user", "content": "What is the capital of France?"}], few(8))
    assert gen.prompt_text == few_shot_prompt("What is the capital of France?")
    assert gen.prompt_text.startswith(FEW_SHOT_HEADER)
    assert gen.prompt_text.endswith("\n\nQuestion: What is the capital of France?\nAnswer:")
    assert gen.extra["mode"] == FEW_SHOT_VERSION and gen.extra["stop"] == list(FEW_SHOT_STOP)
    assert "Paris" in gen.text and "Question" not in gen.text
    # a plain string stays a raw completion prompt
    raw = gemma.generate("Monday, Tuesday, Wednesday,", few(4))
    assert raw.prompt_text == "Monday, Tuesday, Wednesday," and raw.extra["mode"] == "raw"
    assert raw.text.startswith(" Thursday")


def test_few_shot_frame_renders_chat_messages():
    frame = render_few_shot([
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user",
         "content": "Question : Who is Ada?\n\nContext : Ada wrote code.\n\nAnswer :\n"},
    ])
    assert frame.startswith("You are a helpful assistant.\n" + FEW_SHOT_HEADER + "\n\n")
    assert frame.endswith("\n\nQuestion: Who is Ada?\n\nContext : Ada wrote code.\nAnswer:")
    assert frame.count("Question:") == 4                 # three examples and the real one
    turns = render_few_shot([{"role": "user", "content": "2+2?"},
                             {"role": "assistant", "content": "4"},
                             {"role": "user", "content": "3+3?"}])
    assert turns.endswith("Question: 2+2?\nAnswer: 4\n\nQuestion: 3+3?\nAnswer:")


# --------------------------------------------------------------------------- sampling

def test_greedy_is_deterministic_and_seeded_sampling_reproducible(smol):
    smol.reset()
    first = smol.generate("The three primary colours are", few(8))
    second = smol.generate("The three primary colours are", few(8))
    assert first.text == second.text and first.completion_tokens == second.completion_tokens
    assert first.extra["seed"] == 0
    hot = [smol.generate("Once upon a time", few(8, temperature=0.9, seed=7)).text
           for _ in range(2)]
    assert hot[0] == hot[1]


def test_stop_sequences_are_respected(smol):
    free = smol.generate("1, 2, 3, 4,", few(8))
    assert free.text.startswith(" 5, 6") and free.finish_reason == "length"
    stopped = smol.generate("1, 2, 3, 4,", few(8, stop=(" 6",)))
    assert stopped.text == " 5," and stopped.finish_reason == "stop"
    assert stopped.extra["stop"] == [" 6"]


# --------------------------------------------------------------------------- prefix reuse

def _long_context(n: int) -> str:
    return " ".join(f"Fact {i}: the number {i} is {'even' if i % 2 == 0 else 'odd'}."
                    for i in range(n))


def test_prefix_reuse_evaluates_only_the_new_suffix(smol):
    from models.llama.generator import PROMPT_BLOCK

    context = _long_context(60)
    smol.reset()
    a = smol.generate(context + "\nQuestion: Is 7 even or odd?\nAnswer:", few(2))
    assert a.prompt_tokens_evaluated == a.prompt_tokens > 600
    b = smol.generate(context + "\nQuestion: Is 12 even or odd?\nAnswer:", few(2))
    shared = len(smol.render(context + "\nQuestion: Is").tokens)
    assert b.prompt_tokens_evaluated < 0.15 * b.prompt_tokens
    # the cache is cut back to a block boundary (exactness: tests/models/test_determinism.py)
    assert b.prompt_tokens_evaluated <= b.prompt_tokens - shared + PROMPT_BLOCK
    assert (b.prompt_tokens - b.prompt_tokens_evaluated) % PROMPT_BLOCK == 0
    smol.reset()
    cold = smol.generate(context + "\nQuestion: Is 12 even or odd?\nAnswer:", few(2))
    assert cold.prompt_tokens_evaluated == cold.prompt_tokens
    assert cold.text == b.text


def test_prefix_reuse_is_exact_on_sliding_window_models(gemma):
    # Gemma 3 attends over a 512-token window; reusing a cut-back cache must give the same
    # next-token distribution as a cold run (it did not with llama.cpp's pruned SWA cache).
    context = _long_context(100)
    longer = context + "\nQuestion: Is 7 even or odd?\nAnswer:"
    shorter = context[:len(context) // 2] + "\nQuestion: Is 12 even or odd?\nAnswer:"
    assert len(gemma.render(longer).tokens) > 1200
    gemma.reset()
    gemma.label_probs(longer, ["even", "odd"])
    warm = gemma.label_probs(shorter, ["even", "odd"])
    gemma.reset()
    cold = gemma.label_probs(shorter, ["even", "odd"])
    assert warm == pytest.approx(cold, abs=1e-5)


# --------------------------------------------------------------------------- label_probs

def test_label_probs_sum_to_one_and_prefer_the_right_label(smol):
    france = smol.label_probs(FRANCE, ["Paris", "London"])
    assert sum(france.values()) == pytest.approx(1.0)
    assert france["Paris"] > 0.9
    england = smol.label_probs(
        [{"role": "user", "content": "What is the capital of England? Answer with one word."}],
        ["Paris", "London"])
    assert england["London"] > england["Paris"]
    three = smol.label_probs(FRANCE, ["Paris", "London", "Rome"])
    assert set(three) == {"Paris", "London", "Rome"} and sum(three.values()) == pytest.approx(1)


def test_label_probs_is_one_forward_pass_that_generation_reuses(smol):
    smol.reset()
    cold = smol.generate(FRANCE, few(1))
    smol.reset()
    smol.label_probs(FRANCE, ["Paris", "London"])
    warm = smol.generate(FRANCE, few(1))
    assert warm.prompt_tokens_evaluated == 0         # the prompt was already in the cache
    assert warm.text == cold.text and cold.prompt_tokens_evaluated == cold.prompt_tokens


def test_label_probs_refuses_labels_it_cannot_tell_apart(smol):
    with pytest.raises(ValueError, match="same token"):
        smol.label_probs(FRANCE, ["Paris", "Paris is"])
    with pytest.raises(ValueError):
        smol.label_probs(FRANCE, [])


def test_label_probs_reads_digit_grades_whose_spaced_form_starts_with_a_bare_space(smol):
    # SmolLM2 tokenizes " 4" as " " + "4"; grades 1-5 must still be told apart in one pass
    probs = smol.label_probs([{"role": "user", "content": "Pick a grade from 1 to 5. "
                               "Reply with the digit only."}], ["1", "2", "3", "4", "5"])
    assert set(probs) == {"1", "2", "3", "4", "5"}
    assert abs(sum(probs.values()) - 1.0) < 1e-9
    assert len({round(p, 6) for p in probs.values()}) > 1  # a real distribution, not uniform


def test_count_tokens(smol, gemma):
    text = "Retrieval-augmented generation, evaluated locally."
    assert smol.count_tokens(text) == len(smol.render(text).tokens) > 3   # no BOS for SmolLM2
    assert gemma.count_tokens(text) + 1 == len(gemma.render(text).tokens)  # Gemma adds BOS


# --------------------------------------------------------------------------- instances, threads

def test_same_key_gives_the_same_instance(smol):
    assert LlamaGenerator.load(SMOL) is smol
    assert LlamaGenerator.load(packaged.packaged_gguf_path(SMOL)) is smol
    other = LlamaGenerator.load(SMOL, n_ctx=512)
    try:
        assert other is not smol and other.n_ctx == 512
        assert LlamaGenerator.load(SMOL, n_ctx=512) is other
    finally:
        other.close()


def test_two_threads_generating_at_once_both_succeed(smol):
    prompts = ["1, 2, 3, 4,", "Monday, Tuesday,"]
    expected = [smol.generate(p, few(6)).text for p in prompts]
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(2):
                results[i] = smol.generate(prompts[i], few(6)).text
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and [results[0], results[1]] == expected


# --------------------------------------------------------------------------- identity

def test_identity_hash_is_computed_once_and_remembered(smol, tmp_path, monkeypatch):
    monkeypatch.setattr(packaged, "hash_cache_file", lambda: tmp_path / "sha256.json")
    monkeypatch.setattr(packaged, "_hash_memo", {})
    calls = []
    real = packaged._hash_file
    monkeypatch.setattr(packaged, "_hash_file", lambda p: calls.append(p) or real(p))
    monkeypatch.setattr(smol, "_sha256", None)

    ident = smol.identity
    path = packaged.packaged_gguf_path(SMOL)
    assert ident.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (ident.name, ident.quantization, ident.context_length, ident.backend) == (
        SMOL, "Q4_1", smol.n_ctx, "llama.cpp")
    assert len(calls) == 1 and (tmp_path / "sha256.json").exists()

    monkeypatch.setattr(packaged, "_hash_memo", {})      # as if in a new process
    monkeypatch.setattr(smol, "_sha256", None)
    assert smol.identity == ident and len(calls) == 1    # read from the JSON cache

    other = tmp_path / "f.bin"
    other.write_bytes(b"one")
    assert packaged.file_sha256(other) == hashlib.sha256(b"one").hexdigest()
    other.write_bytes(b"two!")                           # changed file: hashed again
    assert packaged.file_sha256(other) == hashlib.sha256(b"two!").hexdigest()
    assert len(calls) == 3


# --------------------------------------------------------------------------- stderr

QUIET_SCRIPT = """
import sys
from models.base import ModelError, SamplingParams
from models.gguf import write_gguf
from models.llama.generator import LlamaGenerator
g = LlamaGenerator.load("smollm2-135m-instruct", n_threads=1)
print(g.generate("Hello", SamplingParams(max_tokens=2)).completion_tokens)
print(sorted(g.label_probs("Hello", ["a", "b"])))
write_gguf(sys.argv[1], {"general.architecture": "notarealarch"})
try:
    LlamaGenerator.load(sys.argv[1])
except ModelError as exc:
    print("refused")
"""

BARE_SCRIPT = """
import sys, llama_cpp
from models.gguf import write_gguf
write_gguf(sys.argv[1], {"general.architecture": "notarealarch"})
try:
    llama_cpp.Llama(sys.argv[1], verbose=True)
except ValueError:
    print("refused")
"""


def test_nothing_from_llama_cpp_reaches_stderr(tmp_path):
    run = subprocess.run([sys.executable, "-c", QUIET_SCRIPT, str(tmp_path / "x.gguf")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[1:3] == ["['a', 'b']", "refused"]
    assert run.stderr == ""
    # llama.cpp left to itself does write there (so the check above can fail)
    bare = subprocess.run([sys.executable, "-c", BARE_SCRIPT, str(tmp_path / "y.gguf")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "refused" in bare.stdout and "notarealarch" in bare.stderr


# --------------------------------------------------------------------------- bad input

@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> Iterator[dict[str, Path]]:
    folder = tmp_path_factory.mktemp("bad")
    smol = packaged.packaged_gguf_path(SMOL)
    with smol.open("rb") as fh:
        head = fh.read(1 << 20)
    info = read_gguf(smol)
    files = {
        "missing": folder / "missing.gguf",
        "not_gguf": folder / "notes.gguf",
        "truncated_header": folder / "head.gguf",
        "truncated_data": folder / "half.gguf",
        "last_tensor_cut": folder / "almost.gguf",
        "unknown_arch": folder / "fake.gguf",
        "version": folder / "v9.gguf",
    }
    files["not_gguf"].write_text("just some text, not a model\n")
    files["truncated_header"].write_bytes(head)
    with smol.open("rb") as src:
        files["truncated_data"].write_bytes(src.read(info.data_offset + (1 << 20)))
    with smol.open("rb") as src, files["last_tensor_cut"].open("wb") as dst:
        shutil.copyfileobj(src, dst)
        dst.truncate(info.data_end + 16)       # only llama.cpp's own check can tell
    write_gguf(files["unknown_arch"], {"general.architecture": "notarealarch",
                                       "notarealarch.context_length": 2048})
    write_gguf(files["version"], {"general.architecture": "llama"}, version=9)
    yield files
    files["last_tensor_cut"].unlink()          # ~100 MB


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file"),
    ("not_gguf", "not a GGUF file"),
    ("truncated_header", "truncated GGUF header"),
    ("truncated_data", "truncated GGUF file: the tensor data runs past the end"),
    ("last_tensor_cut", "llama.cpp could not load this model: tensor 'output_norm.weight' "
                        "data is not within the file bounds"),
    ("unknown_arch", "architecture 'notarealarch' is not supported by this llama.cpp build"),
    ("version", "unsupported GGUF version 9"),
])
def test_bad_model_files_raise_a_clear_model_error(bad_files, case, message):
    path = bad_files[case]
    with pytest.raises(ModelError) as err:
        LlamaGenerator.load(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_the_process_survives_bad_files_and_still_generates(bad_files, smol):
    for path in bad_files.values():
        with pytest.raises(ModelError):
            LlamaGenerator.load(path)
    assert smol.generate("1, 2, 3,", few(2)).completion_tokens == 2


def test_a_context_longer_than_the_model_allows_is_refused():
    with pytest.raises(ModelError, match=r"n_ctx 9000 is longer than the 8192 tokens") as err:
        LlamaGenerator.load(SMOL, n_ctx=9000)
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in str(err.value)


def test_a_prompt_too_long_raises_context_overflow_before_llama(smol):
    prompt = "word " * 5000
    smol.reset()
    with pytest.raises(ContextOverflow) as err:
        smol.generate(prompt, few(8))
    assert err.value.context_length == smol.n_ctx == 4096
    assert err.value.prompt_tokens == len(smol.render(prompt).tokens) > 4096
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in str(err.value)
    with pytest.raises(ContextOverflow):         # prompt fits, but not with max_tokens
        smol.generate("word " * 4090, few(64))
    with pytest.raises(ContextOverflow):
        smol.label_probs(prompt, ["a", "b"])
    assert smol._llm.n_tokens == 0               # llama.cpp was never called


def test_llama_failures_and_aborts_say_which_and_forget_the_prompt(smol, monkeypatch):
    """llama.cpp failing (RuntimeError) or a request cut by stop_serving, while the prompt is
    evaluated or while tokens are generated: a ModelError that says which, the cached prompt
    forgotten; the next request runs as usual."""
    import threading

    def fails(*args, **kwargs):
        raise RuntimeError("llama_decode returned -3")

    def failing_stream(*args, **kwargs):
        yield from ()
        raise RuntimeError("llama_decode returned -1")

    stopped, evaluate = threading.Event(), smol._llm.eval

    def evaluate_then_stop(tokens):                   # stop_serving() as the prompt is done
        evaluate(tokens)
        stopped.set()

    def refused(message: str, prompt: str, *patches) -> None:
        with monkeypatch.context() as m:
            for target, name, value in patches:
                m.setattr(target, name, value)
            with pytest.raises(ModelError, match=message):
                smol.generate(prompt, few(2))
        assert smol._prompt_len == 0 and smol._llm.n_tokens == 0

    smol.reset()
    refused(r"llama\.cpp failed to evaluate the prompt \(llama_decode returned -3\)",
            "1, 2, 3,", (smol._llm, "eval", fails))
    smol.generate("1, 2, 3,", few(2))                 # a prompt held, then generation fails
    refused(r"llama\.cpp failed while generating \(llama_decode returned -1\)", "1, 2, 3,",
            (smol._llm, "generate", failing_stream))
    aborted = "the request was aborted"
    refused(aborted, "2, 4, 6,", (smol, "_abort", stopped),       # cut at its first token
            (smol._llm, "eval", evaluate_then_stop))
    refused(aborted, "1, 2, 3, 4,", (smol, "_abort", stopped))    # before its first block
    assert smol.generate("1, 2, 3,", few(2)).completion_tokens == 2
