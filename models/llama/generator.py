# One idea: one GGUF model in process, its prompts evaluated deterministically (see below).
"""Generators on llama.cpp (llama-cpp-python): any GGUF file, or a packaged model by name.

What this adapter adds to a bare ``llama_cpp.Llama``:

- **Silence.** llama.cpp's own logging never reaches the terminal (it would corrupt a TUI):
  :mod:`models.llama.log` keeps it in memory (it explains load failures) or in a log file.
- **Exact prompts and counts.** Chat messages go through the model's own chat template (the
  GGUF's ``tokenizer.chat_template``, rendered with jinja2 the way llama-cpp-python does);
  a base model (no template) gets messages rendered into a small versioned few-shot frame
  (:func:`models.few_shot.render_few_shot`). A plain string is a raw completion prompt for any
  model. Every ``Generation`` carries the exact text sent and its token count.
- **Prefix reuse, measured and exact.** Consecutive prompts that share a prefix evaluate only
  the new suffix; ``prompt_tokens_evaluated`` is the number of tokens this call actually sent
  to llama.cpp. A prompt is always evaluated in blocks of ``PROMPT_BLOCK`` tokens starting at
  position 0 (llama.cpp's ``n_batch``), and the cache is cut back only to a block boundary
  within the previous *prompt* (never into generated tokens, which were evaluated one by one):
  so a warm evaluation runs the very batches a cold one runs, and its logits are bit-identical
  (llama.cpp's numbers depend on how a prompt is split into batches; cutting back to the
  longest common prefix, as ``Llama.generate`` does, changed answers). The same prompt gives
  the same text whatever ran before it (tests/models/test_determinism.py).
  Models with sliding-window attention (Gemma 3) get a full-size SWA cache (``swa_full``):
  with the default pruned one, cutting the cache back and continuing silently attends to a
  window whose older cells were already dropped, and the logits differ from a cold run.
- **Context checks before llama.cpp.** A prompt whose tokens plus ``max_tokens`` do not fit
  raises ``ContextOverflow`` (the engine decides whether to truncate). Asking for an ``n_ctx``
  longer than the model was trained for is refused with a ModelError, not clamped: a silent
  clamp would change what the run header and the cache key say.
- **Untrusted text stays text.** ``control_tokens`` lists the model's own control tokens
  (read from the loaded vocabulary); the engine breaks them, and the common families' chat
  markers, in every untrusted part before building a prompt (:mod:`models.control_tokens`).
  The rendered text is still tokenized with special tokens parsed, since the chat template's
  own markers must become control tokens; tokenizing the untrusted parts apart would need the
  template rendered in pieces, which jinja2 templates do not offer, so the text rule is the
  one that holds here as for every other backend.
- **Replies are checked** (:func:`models.replies.checked_text`): text that cannot be stored
  is a ``ReplyError`` naming the model, an item error for the engine.
- **One lock per loaded model**, and one loaded model per (path, n_ctx, n_gpu_layers):
  ``LlamaGenerator.load`` returns the same instance for the same key.

GPU. The wheel installed here is the CPU build. llama.cpp offloads layers only when it was
built with a GPU backend; this adapter asks ``llama_cpp.llama_supports_gpu_offload()`` and, if
true, offloads every layer (``n_gpu_layers=-1``) and reports ``device='gpu'`` in each
Generation. To get the CUDA build (needs the CUDA toolkit, nvcc on PATH, and a compiler)::

    CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python==0.3.36 \\
        --no-binary llama-cpp-python --force-reinstall --no-cache-dir

(``-DGGML_METAL=on`` on Apple silicon, where it is the default). Check with
``python -c "import llama_cpp; print(llama_cpp.llama_supports_gpu_offload())"`` and
``mirage-tui models check smollm2-135m-instruct --json`` (its ``device`` field).
"""

from __future__ import annotations

import os
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

import llama_cpp
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

from models import packaged
from models.base import (ContextOverflow, Generation, ModelError, ModelIdentity, Prompt,
                         RequestCancelled, SamplingParams)
from models.control_tokens import usable_markers
from models.reasoning import prompt_opens_thinking
from models.replies import apart, checked_text
from models.few_shot import FEW_SHOT_STOP, FEW_SHOT_VERSION, render_few_shot
from models.gguf import GGUFInfo, read_gguf
from models.llama.log import log_mark, recent_log, set_log_file
from models.thinking import soft_switched, template_switch, template_variables

DEFAULT_MAX_CTX = 4096
PROMPT_BLOCK = 64         # n_batch: prompts are evaluated in blocks of this many tokens, and a
                          # reused prefix ends on a block boundary (module docstring)


def gpu_offload_available() -> bool:
    return bool(llama_cpp.llama_supports_gpu_offload())


@dataclass(frozen=True)
class RenderedPrompt:
    text: str                 # the exact text sent (template or frame applied)
    tokens: list[int]         # what llama.cpp evaluates (BOS included when the model wants it)
    mode: str                 # 'raw', 'chat-template' or FEW_SHOT_VERSION
    stop: tuple[str, ...]     # stop sequences the mode adds


_INSTANCES: dict[tuple, "LlamaGenerator"] = {}
_INSTANCES_LOCK = threading.Lock()
_LOAD_LOCK = threading.Lock()     # one load at a time: the log capture is process-wide


class LlamaGenerator:
    """A GGUF model behind ``models.base.Generator``. Use ``LlamaGenerator.load`` (cached)."""

    backend = "llama.cpp"
    supports_label_probs = True
    prompt_block = PROMPT_BLOCK

    @classmethod
    def load(cls, name_or_path: str | os.PathLike, *, n_ctx: int | None = None,
             n_gpu_layers: int | None = None, **opts) -> "LlamaGenerator":
        """The loaded model for (file, n_ctx, n_gpu_layers), loading it on first request.
        Other options (n_threads, swa_full, log_file, name) apply only to that first load."""
        path, name = packaged.resolve_model_path(name_or_path)
        info = _read_info(path)
        n_ctx = _effective_n_ctx(path, info, n_ctx)
        n_gpu_layers = _effective_gpu_layers(n_gpu_layers)
        key = (str(path.resolve()), n_ctx, n_gpu_layers)
        with _INSTANCES_LOCK:
            found = _INSTANCES.get(key)
            if found is not None:
                return found
            made = cls(path, n_ctx=n_ctx, n_gpu_layers=n_gpu_layers, name=opts.pop("name", name),
                       info=info, **opts)
            _INSTANCES[key] = made
            return made

    def __init__(self, path: str | os.PathLike, *, n_ctx: int | None = None,
                 n_threads: int | None = None, n_gpu_layers: int | None = None,
                 swa_full: bool | None = None, log_file: str | os.PathLike | None = None,
                 name: str | None = None, info: GGUFInfo | None = None):
        self.path = Path(path).expanduser()
        self.info = info or _read_info(self.path)
        self.n_ctx = _effective_n_ctx(self.path, self.info, n_ctx)
        self.n_gpu_layers = _effective_gpu_layers(n_gpu_layers)
        self.n_threads = n_threads or os.cpu_count() or 1
        self.device = "gpu" if self.n_gpu_layers != 0 and gpu_offload_available() else "cpu"
        self.swa_full = bool(self.info.sliding_window) if swa_full is None else swa_full
        self.name = name or packaged.name_for_path(self.path) or self.path.stem
        self.context_length = self.info.context_length  # as trained
        self.quantization = self.info.quantization
        self._lock = threading.Lock()
        self._abort = threading.Event()     # stop_serving: this request and every later one
        self._cut = threading.Event()       # abort: the requests begun before it
        self._prompt_len = 0      # the tokens of the cache that were a prompt (block-evaluated)
        self._sha256: str | None = None
        if log_file is not None:
            set_log_file(log_file)
        self._llm = self._load_llama()
        self._vocab = self._llm._model.vocab
        self._control_tokens: tuple[str, ...] | None = None
        self.chat = self.info.has_chat_template
        self._formatter = self._chat_formatter() if self.chat else None
        self.thinking_switch = template_switch(self.info.chat_template)

    # ----------------------------------------------------------------------- loading

    def _load_llama(self) -> llama_cpp.Llama:
        with _LOAD_LOCK:
            mark = log_mark()
            try:
                return llama_cpp.Llama(
                    str(self.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                    n_threads_batch=self.n_threads, n_gpu_layers=self.n_gpu_layers,
                    n_batch=self.prompt_block, n_ubatch=self.prompt_block,
                    swa_full=self.swa_full, verbose=False)
            except Exception as exc:  # noqa: BLE001 - ValueError, RuntimeError, ...
                raise ModelError(self._explain_load_failure(exc, recent_log(mark))) from None

    def _explain_load_failure(self, exc: Exception, log: list[str]) -> str:
        arch = self.info.architecture
        text = "".join(log)
        if arch and re.search(r"unknown model architecture", text):
            return (f"{self.path}: architecture '{arch}' is not supported by this llama.cpp "
                    f"build (llama-cpp-python {llama_cpp.__version__})")
        lines = [line.strip() for line in log]
        errors = ([ln for ln in lines if "error" in ln.lower()]
                  or [ln for ln in lines if "fail" in ln.lower()])
        detail = re.sub(r"^\w+: (error loading model: )?", "", errors[-1]) if errors else str(exc)
        return f"{self.path}: llama.cpp could not load this model: {detail}"

    def _chat_formatter(self) -> Jinja2ChatFormatter:
        model = self._llm._model
        eos, bos = self._llm.token_eos(), self._llm.token_bos()
        try:
            return Jinja2ChatFormatter(
                template=self.info.chat_template,
                eos_token=model.token_get_text(eos) if eos != -1 else "",
                bos_token=model.token_get_text(bos) if bos != -1 else "")
        except Exception as exc:  # noqa: BLE001 - jinja2 syntax errors
            raise ModelError(f"{self.path}: its chat template cannot be parsed ({exc})") from None

    # ----------------------------------------------------------------------- protocol

    @property
    def identity(self) -> ModelIdentity:
        if self._sha256 is None:
            self._sha256 = packaged.file_sha256(self.path)
        return ModelIdentity(name=self.name, sha256=self._sha256,
                             quantization=self.quantization, context_length=self.n_ctx,
                             backend=self.backend)

    @property
    def control_tokens(self) -> tuple[str, ...]:
        """The text of every token the vocabulary marks as control (``<|im_start|>``,
        ``<end_of_turn>``, ...): the markers untrusted text must not hold."""
        if self._control_tokens is None:
            model, flag = self._llm._model, llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
            count = llama_cpp.llama_vocab_n_tokens(self._vocab)
            self._control_tokens = usable_markers(
                model.token_get_text(t) for t in range(count)
                if llama_cpp.llama_vocab_get_attr(self._vocab, t) & flag)
        return self._control_tokens

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as part of a prompt (no BOS, special tokens not parsed)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def render(self, prompt: Prompt, thinking: str = "auto") -> RenderedPrompt:
        """What ``generate(prompt)`` would send: the exact text, its tokens, the mode.
        ``thinking`` (on, off) is passed to the chat template through the model's own switch
        (:mod:`models.thinking`); ``auto`` renders the template as it comes."""
        if isinstance(prompt, str):
            text, mode, stop = prompt, "raw", ()
        elif self._formatter is not None:
            switch = self.thinking_switch
            try:
                text = self._formatter(
                    messages=soft_switched(list(prompt), switch, thinking),
                    **template_variables(switch, thinking)).prompt
            except Exception as exc:  # noqa: BLE001 - templates raise their own errors
                raise ModelError(f"{self.path}: its chat template rejected the messages "
                                 f"({exc})") from None
            mode, stop = "chat-template", ()
        else:
            text, mode, stop = render_few_shot(prompt), FEW_SHOT_VERSION, FEW_SHOT_STOP
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        bos = self._llm.token_bos()
        if self._llm._model.add_bos_token() and bos != -1 and tokens[:1] != [bos]:
            tokens = [bos] + tokens
        if not tokens:
            raise ValueError(f"{self.name}: the prompt is empty")
        return RenderedPrompt(text=text, tokens=tokens, mode=mode, stop=stop)

    def generate(self, prompt: Prompt, params: SamplingParams = SamplingParams(), *,
                 cancel: threading.Event | None = None) -> Generation:
        """Generate up to ``params.max_tokens`` tokens. Stops at an end-of-generation token or
        at the first stop sequence (cut from the text; the frame of a base model adds its
        own). Raises ContextOverflow, before touching llama.cpp, when the prompt's tokens plus
        ``max_tokens`` exceed ``n_ctx``. ``cancel`` (the model host's, for one request; by
        default the one :meth:`abort` sets) set ends this request within a prompt block or a
        token: ``RequestCancelled``."""
        cancel = cancel if cancel is not None else self._cut
        if params.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1 (got {params.max_tokens})")
        rendered = self.render(prompt, params.thinking)
        tokens = rendered.tokens
        if len(tokens) + params.max_tokens > self.n_ctx:
            raise ContextOverflow(
                f"{self.path.name}: the prompt is {len(tokens)} tokens and max_tokens "
                f"{params.max_tokens}, more than the context of {self.n_ctx} tokens "
                f"({self.path})", prompt_tokens=len(tokens), context_length=self.n_ctx)
        stops = tuple(dict.fromkeys(tuple(params.stop) + rendered.stop))
        with self._lock:
            llm = self._llm
            started = time.perf_counter()
            self._check_cancel(cancel, 0, params.max_tokens)   # cut while it waited its turn
            evaluated = self._eval_prompt(tokens, cancel, params.max_tokens)
            prompt_done = time.perf_counter()
            llm.set_seed(params.seed)
            completion: list[int] = []
            finish, text = "length", None
            stream = llm.generate([], reset=False, top_k=params.top_k, top_p=params.top_p,
                                  min_p=0.0, temp=params.temperature, repeat_penalty=1.0)
            try:
                with self._failing("while generating"):
                    for token in stream:
                        if self._abort.is_set():
                            raise _Aborted()
                        self._check_cancel(cancel, len(completion), params.max_tokens)
                        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                            finish = "stop"
                            break
                        completion.append(token)
                        if stops:
                            so_far = self._detok(completion)
                            cut = min((i for i in (so_far.find(s) for s in stops) if i >= 0),
                                      default=-1)
                            if cut >= 0:
                                text, finish = so_far[:cut], "stop"
                                break
                        if len(completion) >= params.max_tokens:
                            break
            finally:
                stream.close()
            if text is None:
                text = self._detok(completion)
            done = time.perf_counter()
        prompt_s, gen_s = prompt_done - started, done - prompt_done
        generation = Generation(
            text=checked_text(self.name, text), prompt_tokens=len(tokens),
            completion_tokens=len(completion),
            prompt_tokens_evaluated=evaluated, seconds=done - started, finish_reason=finish,
            device=self.device, prompt_text=rendered.text,
            extra={"mode": rendered.mode, "stop": list(stops), "seed": params.seed,
                   "prompt_seconds": prompt_s, "generation_seconds": gen_s,
                   "prompt_tokens_per_s": evaluated / prompt_s if prompt_s > 0 else 0.0,
                   "generation_tokens_per_s": len(completion) / gen_s if gen_s > 0 else 0.0,
                   "n_ctx": self.n_ctx, "n_threads": self.n_threads})
        # the thinking apart (a template that opened <think> leaves only </think> to reply)
        return apart(generation, self.name, opened=prompt_opens_thinking(rendered.text),
                     count_tokens=self.count_tokens)

    def label_probs(self, prompt: Prompt, labels: Sequence[str], *,
                    cancel: threading.Event | None = None) -> dict[str, float]:
        """P(label) from one forward pass: the next-token distribution after the prompt, summed
        over the first token of each label written with and without a leading space, then
        normalised over the labels. Labels whose first tokens collide are refused. ``cancel``
        as in :meth:`generate` (checked between prompt blocks)."""
        cancel = cancel if cancel is not None else self._cut
        if not labels:
            raise ValueError("label_probs needs at least one label")
        rendered = self.render(prompt)
        tokens = rendered.tokens
        if len(tokens) > self.n_ctx:
            raise ContextOverflow(
                f"{self.path.name}: the prompt is {len(tokens)} tokens, more than the context "
                f"of {self.n_ctx} tokens ({self.path})",
                prompt_tokens=len(tokens), context_length=self.n_ctx)
        ids = self._labels_token_ids(labels)
        with self._lock:
            self._check_cancel(cancel, 0, 1)
            self._eval_prompt(tokens, cancel, 1)
            logits = np.ctypeslib.as_array(
                llama_cpp.llama_get_logits_ith(self._llm.ctx, -1),
                shape=(self._llm.n_vocab(),)).astype(np.float64)
        logp = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
        mass = {label: np.logaddexp.reduce(logp[sorted(token_ids)])
                for label, token_ids in ids.items()}
        top = max(mass.values())
        total = sum(np.exp(v - top) for v in mass.values())
        return {label: float(np.exp(v - top) / total) for label, v in mass.items()}

    # ----------------------------------------------------------------------- helpers

    def _labels_token_ids(self, labels: Sequence[str]) -> dict[str, set[int]]:
        """Each label's first tokens (:meth:`_label_token_ids`); a ValueError when two labels
        share one (one forward pass cannot tell them apart)."""
        ids = {label: self._label_token_ids(label) for label in labels}
        seen: dict[int, str] = {}
        for label, token_ids in ids.items():
            for t in token_ids:
                if t in seen and seen[t] != label:
                    raise ValueError(f"labels {seen[t]!r} and {label!r} start with the same "
                                     f"token; one forward pass cannot tell them apart")
                seen[t] = label
        return ids

    def _label_token_ids(self, label: str) -> set[int]:
        variants = {label, " " + label.lstrip()} if label.strip() else {label}
        out = set()
        for v in variants:
            toks = self._llm.tokenize(v.encode("utf-8"), add_bos=False, special=False)
            # some vocabularies write " 4" as a bare space then "4": a whitespace-only first
            # token says nothing about the label, so that spelling is left out
            if toks and (self._detok(toks[:1]).strip() or not v.strip()):
                out.add(toks[0])
        if not out:
            raise ValueError(f"label {label!r} has no tokens")
        return out

    def _detok(self, tokens: list[int]) -> str:
        return self._llm.detokenize(tokens).decode("utf-8", errors="ignore")

    def _eval_prompt(self, tokens: list[int], cancel: threading.Event | None = None,
                     max_tokens: int = 0) -> int:
        """Bring the KV cache to ``tokens``, evaluating only what differs from the previous
        prompt, cut back to a block boundary so the batches are those of a cold evaluation
        (module docstring). Returns the number of tokens evaluated. ``cancel`` set between two
        blocks: the cache is reset and ``RequestCancelled`` raised."""
        llm, block = self._llm, self._llm.n_batch
        held = llm.input_ids[:min(self._prompt_len, llm.n_tokens, len(tokens))]
        diff = np.flatnonzero(held != np.asarray(tokens[:len(held)], dtype=held.dtype))
        common = int(diff[0]) if diff.size else len(held)
        if common == len(tokens) == llm.n_tokens and not llm._requires_eval:
            return 0          # this very prompt was the last thing evaluated: logits current
        # at least the prompt's last block again (its logits), from a block boundary
        reuse = min(common, len(tokens) - 1) // block * block
        if reuse > 0 and llm._ctx.kv_cache_seq_rm(-1, reuse, -1):
            llm.n_tokens = reuse
        else:
            llm.reset()
            reuse = 0
        self._prompt_len = 0
        with self._failing("to evaluate the prompt"):
            for start in range(reuse, len(tokens), block):
                if self._abort.is_set():
                    raise _Aborted()
                if cancel is not None and cancel.is_set():
                    llm.reset()
                    self._check_cancel(cancel, 0, max_tokens)
                llm.eval(tokens[start:start + block])
        self._prompt_len = len(tokens)
        return len(tokens) - reuse

    def _check_cancel(self, cancel: threading.Event | None, generated: int,
                      max_tokens: int) -> None:
        """``RequestCancelled`` when this request's ``cancel`` is set. A cut generation leaves
        the cache as a finished one does (its prompt, then generated tokens never reused)."""
        if cancel is not None and cancel.is_set():
            raise RequestCancelled(f"{self.name}: the request was cancelled after {generated} "
                                   f"of {max_tokens} tokens", completion_tokens=generated)

    def _forget_prompt(self) -> None:
        self._llm.reset()
        self._prompt_len = 0

    @contextmanager
    def _failing(self, doing: str):
        """A request that :meth:`stop_serving` cut (``_Aborted``) or llama.cpp failed
        (``RuntimeError``, ``llama.cpp failed {doing}``) inside: the cached prompt forgotten
        and a ModelError raised that says which."""
        try:
            yield
        except _Aborted:
            self._forget_prompt()
            raise ModelError(f"{self.name}: the request was aborted (the model is being "
                             "closed)") from None
        except RuntimeError as exc:
            self._forget_prompt()
            raise ModelError(f"{self.path}: llama.cpp failed {doing} ({exc})") from None

    def reset(self) -> None:
        """Forget the cached prompt (the next call evaluates everything)."""
        with self._lock:
            self._forget_prompt()

    def abort(self) -> None:
        """Cut the requests begun before this call (running, or waiting for the model's lock)
        within a block or a token: each raises ``RequestCancelled``; later requests run as
        usual. What the engine calls on a cancel (:mod:`engine.inflight`). Needs no lock."""
        cut, self._cut = self._cut, threading.Event()
        cut.set()

    def stop_serving(self) -> None:
        """End the request in flight within a block or a token (it raises ModelError), and
        every later one: for a host that is stopping. Needs no lock."""
        self._abort.set()

    def close(self) -> None:
        """Free the model and drop it from the instance cache."""
        with _INSTANCES_LOCK:
            for key, value in list(_INSTANCES.items()):
                if value is self:
                    del _INSTANCES[key]
        with self._lock:
            self._llm.close()

    def __repr__(self) -> str:
        return (f"LlamaGenerator({self.name!r}, n_ctx={self.n_ctx}, device={self.device!r}, "
                f"threads={self.n_threads})")


class _Aborted(Exception):
    """Internal: ``abort()`` was called while a request was running."""


def unload_all() -> None:
    """Free every model loaded through ``LlamaGenerator.load``."""
    with _INSTANCES_LOCK:
        loaded = list(_INSTANCES.values())
    for gen in loaded:
        gen.close()


def _read_info(path: Path) -> GGUFInfo:
    if not path.exists():
        raise ModelError(f"{path}: no such file")
    return read_gguf(path)


def _effective_n_ctx(path: Path, info: GGUFInfo, n_ctx: int | None) -> int:
    trained = info.context_length
    if n_ctx is None:
        return min(trained or DEFAULT_MAX_CTX, DEFAULT_MAX_CTX)
    if n_ctx < 1:
        raise ModelError(f"{path}: n_ctx must be positive (got {n_ctx})")
    if trained and n_ctx > trained:
        raise ModelError(f"{path}: n_ctx {n_ctx} is longer than the {trained} tokens this model "
                         f"was trained for; ask for at most {trained}")
    return n_ctx


def _effective_gpu_layers(n_gpu_layers: int | None) -> int:
    if n_gpu_layers is None:
        return -1 if gpu_offload_available() else 0
    return n_gpu_layers
