"""The quick comparison (``g``): both packaged generators on a seeded sample of the demo pool,
with and without context and with MiniLM retrieval, so a first launch has numbers to look at
within minutes."""

from __future__ import annotations

from engine.datasets.demo_pool import DEMO_NAME

QUICK_NAME = "quick-comparison"
QUICK_GENERATORS = ("smollm2-135m-instruct", "gemma3-270m")
QUICK_RETRIEVER = "minilm-l6-v2"
QUICK_SAMPLE = 10
QUICK_MAX_TOKENS = 32


def quick_comparison_config(threads: int | None = None):
    """Both packaged generators on a seeded sample of the demo pool: base, oracle, mixed and
    MiniLM retrieval at 1, 3 and 5 (120 items; a few minutes on two CPU cores)."""
    from engine.runs import RunConfig

    return RunConfig(dataset=DEMO_NAME, generators=list(QUICK_GENERATORS),
                     settings=["base", "oracle", "mixed", "retrieved@1", "retrieved@3",
                               "retrieved@5"],
                     retrievers=[QUICK_RETRIEVER], sample=QUICK_SAMPLE, seed=0,
                     max_tokens=QUICK_MAX_TOKENS, threads=threads, name=QUICK_NAME)


def missing_models(config) -> list[str]:
    """What of ``config``'s models is not installed here, each with how to get it."""
    from engine.runs.plan import check_embedder, check_generator

    missing = []
    for name in config.generators:
        try:
            check_generator(name)
        except LookupError as exc:
            missing.append(str(exc))
    for name in config.retrievers:
        try:
            check_embedder(name)
        except LookupError as exc:
            missing.append(str(exc))
    return missing
