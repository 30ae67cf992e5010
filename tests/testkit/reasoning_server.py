"""An OpenAI-compatible stand-in for reasoning models (stdlib only; the fake at the edge).

It knows each question's gold answer (``answers``: question text -> answer, read from SQuAD
files by :func:`squad_answers`) and answers every chat prompt that holds a known question with
that answer after about 120 words of reasoning, the way real servers return thinking. Each
model id it lists (``/v1/models``) is one reply shape (:data:`SHAPES`):

- ``plain``: the answer only (a model that does not think);
- ``think-inline``: ``<think>…</think>`` at the head of the content (llama.cpp's chat templates
  of Qwen3 and the R1 distills, older Ollama);
- ``think-field``: the reasoning in ``message.reasoning_content`` (vLLM, llama-server
  ``--reasoning-format deepseek``, LM Studio);
- ``think-reasoning``: the reasoning in ``message.reasoning`` (newer vLLM, Ollama's
  ``thinking`` under the OpenAI name);
- ``think-opened``: a chat template that opened the thinking in the prompt, so the content
  holds only ``…</think> answer``;
- ``think-bracket``: Magistral's ``[THINK]…[/THINK]``;
- ``think-harmony``: gpt-oss's channels (``<|channel|>analysis<|message|>…<|end|>`` then
  ``<|start|>assistant<|channel|>final<|message|>answer``);
- ``think-hidden``: the thinking only counted (``usage``), never sent, as hosted reasoning
  APIs do.

``max_tokens`` is honoured: the reply (reasoning first, then the answer) is cut after that
many whitespace-separated tokens with ``finish_reason: "length"``; cut while thinking, a
field shape's content is ``""`` (``null`` with ``null_content``) and an inline shape's thinking
never closes. ``usage`` counts the tokens sent (``completion_tokens_details.reasoning_tokens``
the thinking's, as OpenAI and vLLM report it). A request with
``chat_template_kwargs: {"enable_thinking": false}`` or ``/no_think`` in its prompt gets the
answer only, whatever the shape. Every chat request's body is kept in ``bodies``.

``python -m testkit.reasoning_server --port 8099 [SQUAD_FILE_OR_FOLDER ...]`` (with ``tests/``
on ``PYTHONPATH``) serves it until interrupted; it knows the demo pool's questions unless told
other files.
"""

from __future__ import annotations

import argparse
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from testkit.openai_server import FakeState, fake_openai_server

DEMO_SQUAD = Path(__file__).resolve().parents[2] / "engine" / "datasets" / "demo"

# model id -> how it returns its thinking: (opening, closing, "") around it in the content,
# (the message's field, "", "field"), or only its count ("", "", "hidden"); None: no thinking
SHAPES: dict[str, tuple[str, str, str] | None] = {
    "plain": None,
    "think-inline": ("<think>\n", "\n</think>\n\n", ""),
    "think-opened": ("", "\n</think>\n\n", ""),
    "think-bracket": ("[THINK]", "[/THINK]", ""),
    "think-harmony": ("<|channel|>analysis<|message|>",
                      "<|end|><|start|>assistant<|channel|>final<|message|>", ""),
    "think-field": ("reasoning_content", "", "field"),
    "think-reasoning": ("reasoning", "", "field"),
    "think-hidden": ("", "", "hidden"),
}

_FILLER = ("I should read the context carefully before I answer, because the first sentence "
           "may only set the scene. The passage names several people, places and dates, and "
           "only one of them is what the question asks for. Another name mentioned nearby is "
           "Atlantis, but that does not fit what is asked. Let me check the wording of the "
           "question against the passage once more, so that the answer is short and exact "
           "and uses the words of the text itself rather than a paraphrase of them.")


def reasoning_for(question: str, answer: str) -> str:
    """About 120 words of deliberation that mention the answer (and a wrong name) on the way."""
    return (f"Okay, the user asks: {question} {_FILLER} The passage says {answer}, which "
            f"answers the question directly. So the answer is {answer}.")


def squad_answers(*paths: Path) -> dict[str, str]:
    """question text -> its first gold answer, from SQuAD-layout JSON files or folders."""
    answers: dict[str, str] = {}
    for path in paths:
        files = sorted(Path(path).glob("*.json")) if Path(path).is_dir() else [Path(path)]
        for file in files:
            data = json.loads(file.read_text(encoding="utf-8"))
            for article in data.get("data", []):
                for paragraph in article.get("paragraphs", []):
                    for qa in paragraph.get("qas", []):
                        if qa.get("answers"):
                            answers[qa["question"].strip()] = qa["answers"][0]["text"]
    return answers


def _cut(text: str, tokens: int) -> tuple[str, int]:
    """``text`` up to the end of its ``tokens``-th whitespace token, and how many it kept."""
    spans = [m.end() for m in re.finditer(r"\S+", text)]
    if tokens >= len(spans):
        return text, len(spans)
    return (text[:spans[tokens - 1]] if tokens > 0 else ""), tokens


@dataclass
class ReasoningState(FakeState):
    answers: dict[str, str] = field(default_factory=dict)
    null_content: bool = False
    bodies: list[dict] = field(default_factory=list)

    def answer_to(self, prompt: str) -> tuple[str, str]:
        """(question, answer) for the longest known question in ``prompt``, else the base
        stand-in's reply (a judge's verdict, "I don't know") to an unknown one."""
        known = [q for q in self.answers if q in prompt]
        if not known:
            return prompt[-200:], self.reply(prompt)
        question = max(known, key=len)
        return question, self.answers[question]

    def completion(self, body: dict, prompt: str, chat: bool) -> dict:
        with self.lock:
            self.bodies.append(body)
        model = str(body.get("model") or "plain")
        question, answer = self.answer_to(prompt)
        shape = SHAPES.get(model)
        kwargs = body.get("chat_template_kwargs") or {}
        if kwargs.get("enable_thinking") is False or "/no_think" in prompt:
            shape = None
        limit = int(body.get("max_tokens") or 1 << 30)
        reasoning = reasoning_for(question, answer) if shape else ""
        message: dict = {"role": "assistant"}
        if shape is None:
            content, used = _cut(answer, limit)
            thought, whole = 0, len(answer.split())
        elif shape[2] in ("field", "hidden"):
            sent, thought = _cut(reasoning, limit)
            if shape[0]:
                message[shape[0]] = sent
            content, used = _cut(answer, limit - thought)
            used += thought
            whole = len(reasoning.split()) + len(answer.split())
            if not content and self.null_content:
                content = None
        else:
            opening, closing, _ = shape
            text = f"{opening}{reasoning}{closing}{answer}"
            content, used = _cut(text, limit)
            whole = len(text.split())
            thought = min(used, len(f"{opening}{reasoning}{closing}".split()))
        message["content"] = content
        choice = {"message": message} if chat else {"text": content or ""}
        return {"id": "x", "object": "chat.completion", "model": model, "choices": [
            {"index": 0, "finish_reason": "length" if used < whole else "stop", **choice}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": used,
                      "total_tokens": len(prompt) // 4 + used,
                      "completion_tokens_details": {"reasoning_tokens": thought}}}


@contextmanager
def reasoning_server(answers: dict[str, str] | None = None, models=tuple(SHAPES),
                     null_content: bool = False):
    """The stand-in on a free loopback port (its ``url`` ends in ``/v1``), knowing ``answers``
    (the demo pool's unless given); ``models``: the shapes it lists."""
    state = ReasoningState(list(models), answers=(squad_answers(DEMO_SQUAD)
                                                  if answers is None else answers),
                           null_content=null_content)
    with fake_openai_server(state=state) as served:
        yield served


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m testkit.reasoning_server")
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("squad", nargs="*", type=Path, default=[DEMO_SQUAD])
    args = parser.parse_args(argv)
    import http.server

    from testkit.openai_server import _handler, _Server

    state = ReasoningState(list(SHAPES), answers=squad_answers(*args.squad))
    try:
        httpd: http.server.ThreadingHTTPServer = _Server(("127.0.0.1", args.port),
                                                         _handler(state))
    except OSError as e:
        raise SystemExit(f"reasoning stand-in: cannot listen on 127.0.0.1:{args.port}: "
                         f"{e.strerror or e}") from None
    print(f"reasoning stand-in on http://127.0.0.1:{args.port}/v1 "
          f"({len(state.answers)} questions; models: {', '.join(SHAPES)})", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
