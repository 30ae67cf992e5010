"""The identity of an endpoint's model (the cache key, :mod:`models.http.generator`): the served model
id plus what the server reports about its weights, probed once with short timeouts (a probe that does not answer in time counts as one
the server does not have, and the endpoint's ``identity`` names it): llama.cpp's ``/props``
(model path, n_ctx, build, chat template), Ollama's ``/api/show`` and ``/api/tags`` (digest,
details), LM Studio's ``/api/v0/models/ID``, and the ``/v1/models`` entry's ``root``,
``parent``, ``max_model_len`` and ``meta`` (vLLM, llama-server). The whole report is hashed, so
a changed model never reuses a stale cache; ``created`` and ``owned_by`` are left out (vLLM and
llama.cpp stamp ``created`` with the time of the request). A server that reports nothing but
the id gets a *weak* identity, the hash of URL + id as before, and ``endpoint["identity"]``
says ``weak: id only`` (the run header shows it).
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from typing import TYPE_CHECKING

from ..base import ModelIdentity

if TYPE_CHECKING:
    from .generator import HttpGenerator


def probe_identity(gen: HttpGenerator, entry: dict) -> tuple[ModelIdentity, list[str]]:
    """The identity of ``gen``'s model from its ``/v1/models`` ``entry`` and the server's
    reports, and the names of the reports found (empty: a *weak* identity, the hash of URL +
    id, the key of earlier versions)."""
    facts: dict = {"id": gen.model}
    listed = {k: entry[k] for k in ("root", "parent", "max_model_len", "meta")
              if entry.get(k) not in (None, "", {}, [])}
    if listed:
        facts["models"] = listed
    for source, probe in _probes(gen.server):
        found = probe(gen)
        if found:
            facts[source] = found
    reported = [k for k in facts if k != "id"]
    context = _context_length(entry, facts)
    quantization = (facts.get("ollama", {}).get("details", {}).get("quantization_level")
                    or facts.get("lmstudio", {}).get("quantization"))
    if reported:
        digest = hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode())
    else:          # the id alone: tied to this URL (the key of earlier versions)
        digest = hashlib.sha256((gen.base_url + gen.model).encode())
    identity = ModelIdentity(name=gen.model, sha256=digest.hexdigest(),
                             quantization=quantization if isinstance(quantization, str)
                             else None, context_length=context, backend="http")
    return identity, reported


def _probes(server: str | None):
    table = {"llamacpp": ("props", _probe_props), "ollama": ("ollama", _probe_ollama),
             "lmstudio": ("lmstudio", _probe_lmstudio)}
    if server is not None:
        return [table[server]] if server in table else []
    return list(table.values())


def _context_length(entry: dict, facts: dict) -> int:
    """The context window the server reports (llama.cpp /props, vLLM, Ollama, LM Studio,
    the /v1/models entry), else 0."""
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    ollama_info = facts.get("ollama", {}).get("model_info") or {}
    for value in (facts.get("props", {}).get("n_ctx"), entry.get("max_model_len"),
                  entry.get("context_length"), entry.get("n_ctx"),
                  facts.get("lmstudio", {}).get("max_context_length"),
                  meta.get("n_ctx"), meta.get("n_ctx_train"),
                  *(v for k, v in ollama_info.items() if k.endswith(".context_length"))):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def _probe_props(gen: HttpGenerator) -> dict | None:
    """llama.cpp's llama-server: the model file, its context, the build and chat template."""
    props = gen._probe("GET", "/props")
    if not props:
        return None
    settings = props.get("default_generation_settings") or {}
    found = {"model_path": props.get("model_path"), "build_info": props.get("build_info"),
             "n_ctx": settings.get("n_ctx") if isinstance(settings, dict) else None}
    template = props.get("chat_template")
    if isinstance(template, str) and template:
        found["chat_template_sha256"] = hashlib.sha256(template.encode()).hexdigest()
    found = {k: v for k, v in found.items() if v not in (None, "")}
    return found or None


def _probe_ollama(gen: HttpGenerator) -> dict | None:
    """Ollama: the digest of the model's manifest (/api/tags) and its details (/api/show)."""
    show = gen._probe("POST", "/api/show", {"model": gen.model})
    if not show or not isinstance(show.get("details"), dict):
        return None
    found: dict = {"details": show["details"]}
    info = show.get("model_info")
    if isinstance(info, dict):
        found["model_info"] = {k: v for k, v in info.items()
                               if not isinstance(v, list)}   # tokenizer tables are huge
    for key in ("template", "parameters", "modelfile"):
        if isinstance(show.get(key), str):
            found[key + "_sha256"] = hashlib.sha256(show[key].encode()).hexdigest()
    tags = gen._probe("GET", "/api/tags") or {}
    for m in tags.get("models") or []:
        if isinstance(m, dict) and gen.model in (m.get("name"), m.get("model"),
                                                 str(m.get("name", "")).removesuffix(":latest")):
            found["digest"] = m.get("digest")
            break
    return found


def _probe_lmstudio(gen: HttpGenerator) -> dict | None:
    """LM Studio's REST API: architecture, quantization, publisher, context of the model."""
    found = gen._probe("GET", "/api/v0/models/" + urllib.parse.quote(gen.model, safe=""))
    if not found or found.get("id") != gen.model:
        return None
    keep = ("arch", "quantization", "compatibility_type", "publisher", "max_context_length",
            "type")
    return {k: found[k] for k in keep if k in found} or None
