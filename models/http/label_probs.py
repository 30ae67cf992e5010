"""Label probabilities from an OpenAI-compatible endpoint: the first generated token's
``top_logprobs`` (completions API: ``logprobs: N``; chat API: ``logprobs: true,
top_logprobs: N``).

The server only reports its top N tokens, so a label outside them gets probability 0 before
normalising; if no label is among them, that is a ModelError (a judge then falls back to
parsing a reply). Whether the server reports logprobs at all is probed once and cached in
``supports_label_probs``; when it does not, ``label_probs`` raises NotImplementedError.

Mixed into :class:`models.http.generator.HttpGenerator`: it uses the generator's ``_body``,
``_request``, ``_url``, ``_lock``, ``chat``, ``api``, ``base_url``, ``top_logprobs`` and
``_label_probs_n``.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..base import ModelError, Prompt, SamplingParams
from .errors import HttpStatusError


class LogprobLabels:
    """``supports_label_probs`` and ``label_probs`` from top logprobs (module docstring)."""

    def _logprob_body(self, prompt: Prompt, n: int) -> tuple[str, dict]:
        path, body, _ = self._body(prompt, SamplingParams(max_tokens=1, temperature=0.0))
        if self.chat:
            body.update(logprobs=True, top_logprobs=n)
        else:
            body["logprobs"] = n
        return path, body

    def _first_token_logprobs(self, response: dict) -> dict[str, float] | None:
        """The first generated token's top alternatives, or None if the server sent none."""
        try:
            logprobs = response["choices"][0].get("logprobs")
            if not logprobs:
                return None
            if self.chat:
                first = (logprobs.get("content") or [None])[0]
                if not first or not first.get("top_logprobs"):
                    return None
                pairs = [(t["token"], t["logprob"]) for t in first["top_logprobs"]]
            else:
                tops = logprobs.get("top_logprobs") or [None]
                if not tops[0]:
                    return None
                pairs = list(tops[0].items())
        except (KeyError, IndexError, TypeError, AttributeError):
            return None
        out: dict[str, float] = {}
        for token, logprob in pairs:
            if logprob is None or not math.isfinite(float(logprob)):
                continue
            out[token] = max(out.get(token, -math.inf), float(logprob))
        return out or None

    @property
    def supports_label_probs(self) -> bool:
        """Probed once: does the server return top logprobs for the first token?"""
        with self._lock:
            if self._label_probs_n is None:
                self._label_probs_n = self._probe_label_probs()
        return self._label_probs_n > 0

    def _probe_label_probs(self) -> int:
        # OpenAI's completions API allows at most 5; vLLM and llama.cpp allow 20 or more.
        for n in dict.fromkeys((self.top_logprobs, 5)):
            path, body = self._logprob_body("Hi" if not self.chat else
                                            [{"role": "user", "content": "Hi"}], n)
            try:
                response = self._request("POST", path, body)
            except HttpStatusError:
                continue      # the server refused logprobs (or this many of them)
            return n if self._first_token_logprobs(response) else 0
        return 0

    def label_probs(self, prompt: Prompt, labels: Sequence[str]) -> dict[str, float]:
        """P(label is the next token), normalised over the labels.

        A label matches a reported token when both are equal after stripping whitespace (so
        ``"A"`` also collects ``" A"``); a label's matches are summed.
        """
        if not self.supports_label_probs:
            raise NotImplementedError(f"{self.base_url} returns no logprobs for the "
                                      f"{self.api} API")
        path, body = self._logprob_body(prompt, self._label_probs_n)
        response = self._request("POST", path, body)
        tops = self._first_token_logprobs(response)
        if tops is None:
            raise ModelError(f"POST {self._url(path)}: no logprobs in the response")
        mass = {label: 0.0 for label in labels}
        for token, logprob in tops.items():
            for label in labels:
                if token.strip() == label.strip() and token.strip():
                    mass[label] += math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            raise ModelError(f"POST {self._url(path)}: none of the labels {list(labels)} is "
                             f"among the top {len(tops)} next tokens {sorted(tops)[:20]}")
        return {label: m / total for label, m in mass.items()}
