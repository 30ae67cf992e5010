"""The arena's judges: what ``--judge`` names (:mod:`.specs`, :mod:`.names`; the kinds in
:mod:`.registry`, the built-in ones in :mod:`.kinds`, imported here so the registry always
holds them) and each kind that
judges a shown pair: an LLM through a template (:mod:`.llm`), the reference judges
(:mod:`.reference`, :mod:`.blend`), the judges fitted to people's labels (:mod:`.fitted`,
:mod:`.fit_features`, :mod:`.fit_methods`, :mod:`.fitted_report`); the cache of every judge call
(:mod:`.cache`) and position bias (:mod:`.orders`)."""

from engine.arena.judges import kinds  # noqa: F401 - registers the built-in kinds first
