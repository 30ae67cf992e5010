"""Where two compared systems were generated differently: thinking mode, max tokens (a
system that thinks has its own budget: the header's ``thinking``), prompt template,
sampling (temperature, top p, top k), seed and backend (llama.cpp in process or hosted,
llama-server, an HTTP endpoint).

Each side's settings are read from its run: the header's ``sampling`` and ``models``
(:mod:`engine.runs.header`), else the run's config; the template from the system's label
(``GENERATOR/TEMPLATE``). A setting one side did not record is not compared. Any of them
changes the answers (and the generation cache key: such runs share no cached answer), so a
comparison names each difference (:func:`differences_warning`) in the CLI text, ``--json``,
the Compare screen and the HTML page.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from engine.results.records import split_system
from engine.runs.header import ModelRecord, Sampling
from engine.runs.lookup import RunInfo

LABELS = {"thinking": "thinking", "max_tokens": "max tokens", "template": "prompt template",
          "temperature": "temperature", "top_p": "top p", "top_k": "top k", "seed": "seed",
          "backend": "backend"}
"""The settings compared, in the order a warning names them."""


@dataclass(frozen=True)
class SettingDifference:
    setting: str        # a key of LABELS
    a: str
    b: str

    @property
    def words(self) -> str:
        """``max tokens (32 vs 64)``."""
        return f"{LABELS[self.setting]} ({self.a} vs {self.b})"

    def as_json(self) -> dict:
        return asdict(self)


def generation_settings(run: RunInfo, system: str) -> dict[str, str]:
    """The settings ``system`` of ``run`` generated with, as text (those recorded)."""
    generator, template = split_system(system)
    config = run.config if isinstance(run.config, dict) else {}
    sampling = run.header.sampling or Sampling()
    model = run.header.models.get(generator) or ModelRecord()
    thinking = run.header.thinking_of(system)
    out = {"thinking": thinking.mode,
           "max_tokens": _first(thinking.max_tokens, config.get("max_tokens")),
           "template": template or config.get("template"),
           "temperature": sampling.temperature, "top_p": sampling.top_p,
           "top_k": sampling.top_k, "seed": _first(sampling.seed, config.get("seed")),
           "backend": model.backend}
    return {k: _text(v) for k, v in out.items() if isinstance(v, (str, int, float))}


def _first(recorded, configured):
    """The header's value, else the config's (a header that did not record it)."""
    return configured if recorded is None else recorded


def _text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def setting_differences(run_a: RunInfo, system_a: str, run_b: RunInfo,
                        system_b: str) -> list[SettingDifference]:
    """Each setting recorded on both sides with different values, in :data:`LABELS` order."""
    a, b = generation_settings(run_a, system_a), generation_settings(run_b, system_b)
    return [SettingDifference(k, a[k], b[k]) for k in LABELS
            if k in a and k in b and a[k] != b[k]]


def differences_warning(differences: list[SettingDifference], same_runs: bool,
                        same_generator: bool) -> str | None:
    """The warning in words, e.g. "the two runs differ in max tokens (32 vs 64) and backend
    (llama.cpp vs llama-server): their answers are not comparable as like for like"; None
    when the settings agree."""
    if not differences:
        return None
    words = [d.words for d in differences]
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    sides = "systems" if same_runs else "runs"
    tail = ("their answers are not comparable as like for like" if same_generator else
            "B − A measures these as well as the change of model")
    return f"the two {sides} differ in {listed}: {tail}"
