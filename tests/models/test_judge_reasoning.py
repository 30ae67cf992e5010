"""An LLM judge that is itself a reasoning model: its verdict is read after its thinking,
never from the labels it weighed while thinking; a judge cut while thinking gave none."""

from __future__ import annotations

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
