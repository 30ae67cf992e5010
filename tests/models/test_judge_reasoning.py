"""An LLM judge that is itself a reasoning model: its verdict is read after its thinking,
never from the labels it weighed while thinking; a judge cut while thinking gave none."""

from __future__ import annotations

import pytest

from models.base import Generation, ModelIdentity, SamplingParams
from models.judges import PairwiseJudge
from models.replies import apart


class _Thinker:
    """A chat judge that replies with scripted text (split like an adapter splits, or not)."""

    chat = True
    supports_label_probs = False
    name = "thinker"

    def __init__(self, reply: str, finish: str = "stop", split: bool = True):
        self.reply, self.finish, self.split = reply, finish, split

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity("thinker", "0" * 64, None, 4096, "fake")

    def generate(self, prompt, params: SamplingParams = SamplingParams()) -> Generation:
        out = Generation(self.reply, 10, 10, 10, 0.1, self.finish, "cpu")
        return apart(out, self.name) if self.split else out

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _verdict(generator) -> tuple:
    v = PairwiseJudge(generator).judge("Capital of France?", "Paris", "Lyon",
                                       documents=["Paris is the capital of France."])
    return v.label, v.parse_failed, v.raw


THOUGHT = "<think>Answer B says Lyon... [[B]] would be wrong. Verdict: A.</think>\n\n[[A]]"


def test_the_verdict_comes_after_the_thinking():
    assert _verdict(_Thinker(THOUGHT)) == ("A", False, "[[A]]")
    # a generator that hands back the raw reply is split before parsing too
    assert _verdict(_Thinker(THOUGHT, split=False)) == ("A", False, "[[A]]")
    assert _verdict(_Thinker("Let me weigh [[B]] first</think>[[A]]", split=False))[0] == "A"


def test_a_judge_cut_while_thinking_gives_no_verdict():
    cut = "<think>Answer A is right, so [[A]] is"
    assert _verdict(_Thinker(cut, finish="length")) == (None, True, "")
    assert _verdict(_Thinker(cut, finish="length", split=False)) == (None, True, "")


class _Recorder(_Thinker):
    """A thinker that keeps the sampling parameters it was asked with."""

    def generate(self, prompt, params: SamplingParams = SamplingParams()) -> Generation:
        self.asked = params
        return super().generate(prompt, params)


def test_a_judge_asks_in_its_thinking_mode_and_the_cache_key_records_it():
    from engine.arena.judges.cache import judgment_key

    fields = PairwiseJudge(_Thinker("[[A]]")).fields("Q?", "a", "b", documents=["d"])
    plain, off = _Recorder("[[A]]"), _Recorder("[[A]]")
    auto_judge, off_judge = PairwiseJudge(plain), PairwiseJudge(off, thinking="off")
    auto_judge.verdict(fields)
    off_judge.verdict(fields)
    assert (plain.asked.thinking, off.asked.thinking) == ("auto", "off")
    # label probabilities would be read inside the open think block: never for a mode asked
    off.supports_label_probs = True
    off.label_probs = lambda prompt, labels: pytest.fail("read label probabilities")
    verdict = off_judge.verdict(fields)
    assert (verdict.method, verdict.label) == ("parsed", "A")
    assert verdict.fallback_reason == "thinking off: the verdict is generated"
    # auto keys are the keys judgments were always stored under; another mode judges afresh
    assert judgment_key(auto_judge, fields) != judgment_key(off_judge, fields)
    import hashlib
    import json
    old = json.dumps([plain.identity.key(), auto_judge.template.id, dict(sorted(fields.items())),
                      True, 32, 0], ensure_ascii=False, sort_keys=True, default=str)
    assert judgment_key(auto_judge, fields) == hashlib.sha256(old.encode()).hexdigest()


def test_a_local_reasoning_judge_is_asked_with_thinking_off(tmp_path):
    from testkit.gguf_template import with_chat_template

    from engine.arena.judges.llm import judge_thinking
    from models import packaged

    source, _ = packaged.resolve_model_path("smollm2-135m-instruct")
    thinker = with_chat_template(source, tmp_path / "thinker.gguf")
    assert judge_thinking(str(thinker)) == "off"
    assert judge_thinking("smollm2-135m-instruct") == "auto"       # no switch: as always
    assert judge_thinking("http://127.0.0.1:9/v1#qwen3") == "auto"  # an endpoint: as always
