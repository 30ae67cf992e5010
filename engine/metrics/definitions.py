"""The recorded choices behind a report's numbers: the retrieval gold definition, the
correct-language detector and rule, and the parity mode that fixes them to a reference's.

- **Gold** (which chunks count as relevant for P/R/F1/NDCG): ``oracle``, the pool rows marked
  supporting in the dataset file (MIRAGE's own definition; for XQuAD, the paragraph the question
  was asked on), or ``oracle+answer-match``, those plus the sibling paragraphs the importer
  found to contain a gold answer string (``support_source = 'answer-match'``). The default is
  ``oracle``: it is the reference's definition, so numbers compare with published ones, and an
  answer string inside a paragraph ("1723", "Paris") does not make the paragraph answer the
  question. The widened set is one key (TUI) or one flag (``--gold``) away.
- **Correct language**: the detector and the rule (:mod:`engine.metrics.language`).
- **Parity** ``mirage`` or ``bergen``: the reference's choices, fixed: MIRAGE's gold is the
  file's (``oracle``); BERGEN judges the raw response with fastText (the closest fastText model
  that installs offline), and its gold is the file's too. Asking for parity and a different
  choice at once is an error.

A run records its choices in its config (``parity``, ``gold``, ``language_rule``,
``language_detector``); a report uses them unless told otherwise, and says in its header which
ones produced its numbers. Every per-item score behind every choice is stored, so changing a
choice changes only what the report picks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from engine.metrics.language import (DETECTORS, FASTTEXT, LANGID, RULE_BERGEN, RULE_MIRAGE_TUI,
                                     RULES, describe, detector_version, language_metric)

GOLD_ORACLE = "oracle"
GOLD_WIDENED = "oracle+answer-match"
GOLD_DEFINITIONS = (GOLD_ORACLE, GOLD_WIDENED)
DEFAULT_GOLD = GOLD_ORACLE

GOLD_DESCRIPTIONS = {
    GOLD_ORACLE: "oracle (chunks marked supporting in the dataset file; MIRAGE's definition)",
    GOLD_WIDENED: "oracle+answer-match (those plus sibling chunks that contain a gold answer, "
                  "marked at import)",
}

PARITY_MODES = ("mirage", "bergen")
NO_PARITY = "none"
"""Asked of a report: ignore the parity mode the run recorded (its other choices still hold)."""
PARITY_PRESETS: dict[str, dict[str, str]] = {
    "mirage": {"gold": GOLD_ORACLE},
    "bergen": {"gold": GOLD_ORACLE, "language_rule": RULE_BERGEN,
               "language_detector": FASTTEXT},
}
"""What each parity mode fixes. MIRAGE has no language metric, so ``mirage`` leaves it alone."""

DEFAULTS = {"gold": DEFAULT_GOLD, "language_rule": RULE_MIRAGE_TUI, "language_detector": LANGID}
CHOICES = {"gold": GOLD_DEFINITIONS, "language_rule": RULES, "language_detector": DETECTORS}
FIELDS = ("parity", *DEFAULTS)


class DefinitionError(ValueError):
    """An unknown choice, or a choice that contradicts the parity mode asked for."""


@dataclass(frozen=True)
class Definitions:
    """The resolved choices: every field set, and where each came from."""

    gold: str = DEFAULT_GOLD
    language_rule: str = RULE_MIRAGE_TUI
    language_detector: str = LANGID
    parity: str | None = None

    @property
    def language_metric(self) -> str:
        """The stored metric that holds correct language under this detector and rule."""
        return language_metric(self.language_detector, self.language_rule)

    def language_text(self) -> str:
        return describe(self.language_detector, self.language_rule)

    def gold_text(self) -> str:
        return GOLD_DESCRIPTIONS[self.gold]

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "language_metric": self.language_metric,
                "language_detector_version": detector_version(self.language_detector),
                "language": self.language_text(), "gold_description": self.gold_text()}


def check_choice(field: str, value: Any) -> str | None:
    """``value`` when it is a known choice for ``field`` (None passes), else DefinitionError."""
    if value is None:
        return None
    known = (*PARITY_MODES, NO_PARITY) if field == "parity" else CHOICES[field]
    if not isinstance(value, str) or value not in known:
        raise DefinitionError(f"{field}: {value!r} is not one of {', '.join(known)}")
    return value


def resolve(recorded: Mapping[str, Any] | None = None, **asked: str | None) -> Definitions:
    """The choices in force: what is ``asked`` (a report's flags), else what the run
    ``recorded`` (its config), else the defaults. A parity mode fixes its preset's fields: one
    asked or recorded otherwise is an error, except that a parity asked for now replaces the
    recorded choices it fixes, and ``parity="none"`` sets the recorded parity aside."""
    recorded = dict(recorded or {})
    for field in FIELDS:
        check_choice(field, asked.get(field))
        check_choice(field, recorded.get(field))
    unknown = set(asked) - set(FIELDS)
    if unknown:
        raise DefinitionError(f"unknown choice(s): {', '.join(sorted(unknown))}")
    if recorded.get("parity") == NO_PARITY:
        recorded["parity"] = None
    parity = asked.get("parity") or recorded.get("parity")
    if parity == NO_PARITY:
        parity = None
    preset = PARITY_PRESETS.get(parity or "", {})
    values: dict[str, str] = {}
    for field, default in DEFAULTS.items():
        mine = asked.get(field)
        if field in preset:
            if mine is not None and mine != preset[field]:
                raise DefinitionError(f"{field} {mine!r} contradicts parity {parity!r}, which "
                                      f"uses {preset[field]!r}")
            if asked.get("parity") is None and recorded.get(field) not in (None, preset[field]):
                raise DefinitionError(f"the run records {field} {recorded[field]!r} and parity "
                                      f"{parity!r}, which uses {preset[field]!r}")
            values[field] = preset[field]
        else:
            values[field] = mine or recorded.get(field) or default
    return Definitions(parity=parity, **values)


def gold_line(gold: str, answer_match_rows: int) -> str:
    """The retrieval header line: which gold definition, and what it leaves out or adds."""
    text = f"Retrieval gold: {GOLD_DESCRIPTIONS[gold]}"
    if not answer_match_rows:
        return text + "; the dataset has no answer-match rows, so both definitions agree"
    rows = f"{answer_match_rows:,} answer-match row{'s' if answer_match_rows != 1 else ''}"
    if gold == GOLD_WIDENED:
        return text + f"; includes {rows}"
    return text + f"; {rows} not counted ({GOLD_WIDENED} counts them)"


def language_line(definitions: Definitions) -> str:
    """The correct-language header line: detector (with version) and rule."""
    return f"Correct language: {definitions.language_text()}"


def definition_lines(definitions: Definitions, answer_match_rows: int = 0) -> list[str]:
    """The header lines of a report: the parity mode when one is set, the correct-language
    detector and rule, the retrieval gold definition (``answer_match_rows``: the dataset's rows
    the two gold definitions differ by)."""
    lines = []
    if definitions.parity:
        fixed = PARITY_PRESETS.get(definitions.parity, {})
        lines.append(f"Parity: {definitions.parity} (fixes "
                     + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in fixed.items()) + ")")
    lines.append(language_line(definitions))
    lines.append(gold_line(definitions.gold, answer_match_rows))
    return lines
