"""The "Examples" section of every command's ``--help``, in one place.

:data:`EXAMPLES` maps a command path (``"data import"``) to its examples: the arguments after
``mirage-tui``, each with what it does. :func:`add_examples` puts them in each parser's epilog
(kept as written, as ``RawDescriptionHelpFormatter`` would, while descriptions still wrap).
tests/cli/test_help_config_runs_cli.py checks that every command and subcommand has examples
and that each one parses.
"""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "": [
        ("", "open the app on the default workspace"),
        ("data demo", "import the shipped demo pool"),
        ("run --dataset demo --generator smollm2-135m-instruct --sample 20",
         "a first run"),
        ("COMMAND --help", "each command's options and examples"),
    ],
    "data": [
        ("data list", "the datasets of the workspace"),
        ("data import ./mirage --name mirage", "import a MIRAGE folder"),
    ],
    "data import": [
        ("data import ./dev.json --format squad", "a SQuAD file, format given"),
        ("data import ./mirage --name mirage --json", "a MIRAGE folder, result as JSON"),
    ],
    "data list": [
        ("data list", "the newest version of each dataset"),
        ("data list --all-versions --json", "every version, as JSON"),
    ],
    "data show": [
        ("data show demo", "counts, languages and the first queries"),
        ("data show demo@1 --limit 5", "one version, five queries"),
    ],
    "data attach": [
        ("data attach mirage wiki-noise", "add distractor collection wiki-noise to mirage"),
    ],
    "data demo": [
        ("data demo", "import the demo pool once (nothing happens the second time)"),
    ],
    "models": [
        ("models list", "what can be used now"),
        ("models check smollm2-135m-instruct", "load a model and time one short run"),
    ],
    "models list": [
        ("models list", "packaged and local models, endpoints"),
        ("models list --json", "the same as JSON"),
    ],
    "models check": [
        ("models check smollm2-135m-instruct", "prompt and generation tokens/s"),
        ("models check minilm-l6-v2 --json", "an embedder's items/s, as JSON"),
    ],
    "models hosts": [
        ("models hosts", "the live model hosts"),
        ("models hosts --stop smollm2", "stop the hosts of models whose name has smollm2"),
    ],
    "index": [
        ("index demo --embedder minilm-l6-v2", "embed the demo pool's chunks"),
    ],
    "retrieve": [
        ("retrieve demo --embedder minilm-l6-v2 --depth 5", "P/R/F1/NDCG of the top 5"),
        ("retrieve demo --embedder minilm-l6-v2 --by language --json",
         "one table per language, as JSON"),
    ],
    "run": [
        ("run --dataset demo --generator smollm2-135m-instruct --sample 20 --name demo-smol",
         "20 queries × base, oracle, mixed"),
        ("run --dataset demo --generator smollm2 --settings base,retrieved@3 --retriever minilm",
         "base and top-3 retrieved contexts (add --dry-run: the plan and a time estimate)"),
        ("run --config run.toml", "a run file (New run's ctrl+o saves one)"),
        ("run --dataset demo --generator qwen3-0.6b --thinking on,off --dry-run",
         "a reasoning model thinking and not, as two systems (the plan gives each budget)"),
        ("run --resume demo-smol", "resume a stopped run with its own configuration"),
    ],
    "compare": [
        ("compare demo-smol demo-gemma", "two runs' systems on their shared items"),
        ("compare demo-smol demo-gemma --metric em_loose --fail-if-worse em_loose:2",
         "exit 1 when B is significantly worse by more than 2 points"),
    ],
    "report": [
        ("report demo-smol", "adaptability, accuracy and retrieval tables"),
        ("report demo-smol --by language --json", "split by language, as JSON"),
    ],
    "export": [
        ("export demo-smol", "./demo-smol.csv and its header sidecar"),
        ("export demo-smol --format jsonl -o out/demo.jsonl", "JSON lines, to a path"),
    ],
    "arena": [
        ("arena judge demo-smol --judge smollm2-135m-instruct", "judge the answers pairwise"),
        ("arena ratings demo-smol", "the Bradley-Terry leaderboard"),
    ],
    "arena judge": [
        ("arena judge demo-smol --judge smollm2-135m-instruct --queries 20",
         "pairwise on 20 queries"),
        ("arena judge demo-smol --judge smollm2-135m-instruct --order both",
         "each battle in both orders (position bias)"),
        ("arena judge demo-smol", "the default judge: config.toml's, else the best "
                                  "calibrated, else MiniLM against the reference"),
        ("arena judge demo-smol --judge smollm2-135m-instruct --dry-run --json",
         "judge nothing: the battles and estimate_s, the time it should take"),
    ],
    "arena ratings": [
        ("arena ratings demo-smol", "ratings with bootstrap CIs"),
        ("arena ratings demo-smol --arena pairwise:smollm2-135m-instruct --json",
         "one arena, as JSON"),
    ],
    "arena surrogate": [
        ("arena surrogate demo-smol", "the random-forest surrogate of the judge"),
    ],
    "arena export": [
        ("arena export demo-smol --format jsonl -o battles.jsonl", "the battles"),
        ("arena export demo-smol --what ratings", "the ratings as CSV"),
    ],
    "arena list": [
        ("arena list demo-smol", "the run's arenas"),
    ],
    "judge": [
        ("judge calibrate --judge smollm2-135m-instruct --labels ragchecker",
         "how far to trust a judge"),
    ],
    "judge calibrate": [
        ("judge calibrate --judge smollm2-135m-instruct --labels ragchecker --sample 60",
         "60 labelled pairs, one seeded order each"),
    ],
    "judge calibration": [
        ("judge calibration", "the newest stored calibration"),
        ("judge calibration --judge smollm2-135m-instruct --json", "one judge's, as JSON"),
    ],
    "judge compare": [
        ("judge compare 1 2", "two stored calibrations on their common pairs"),
    ],
    "judge fit": [
        ("judge fit best --labels ragchecker",
         "fit a judge to people's labels (cosine, F1, char-3gram, length), cross-validated"),
        ("judge fit mine --labels verdicts --features f1,length --force",
         "refit on every verdict recorded in the Inspector"),
    ],
    "judge list": [
        ("judge list", "every calibrated judge, best first, and the fitted judges"),
        ("judge list --labels ragchecker --json", "on one labels dataset, as JSON"),
    ],
    "judge verdicts": [
        ("judge verdicts", "your own verdicts (the Inspector's a/e/b): pair, verdict, who, when"),
        ("judge verdicts --run quick --json", "on one run's answers, as JSON"),
    ],
    "runs": [
        ("runs list", "the runs of the workspace"),
        ("runs log demo-smol", "what a run did"),
    ],
    "runs list": [
        ("runs list", "name, dataset, status and items of every run"),
        ("runs list --json", "the same as JSON"),
    ],
    "runs rename": [
        ("runs rename demo-smol smol-baseline", "a new name; the run is otherwise untouched"),
    ],
    "runs delete": [
        ("runs delete demo-smol", "the run goes; its cached generations stay for other runs"),
        ("runs delete demo-smol --purge-generations",
         "also the generations no other run uses"),
    ],
    "runs log": [
        ("runs log demo-smol", "sessions, model loads, retries, errors, ends"),
        ("runs log demo-smol --json", "the same as JSON lines"),
    ],
    "runs resplit": [
        ("runs resplit qwen3-run", "an older run whose answers hold <think>…</think>: the "
                                   "thinking apart, the answers rescored"),
        ("runs resplit qwen3-run --json", "the counts as JSON"),
    ],
    "config": [
        ("config", "the settings in effect and the file they come from"),
        ("config --init", "write a commented config.toml (never overwrites)"),
    ],
}

EPILOG_TITLE = "Examples:"


def epilog(path: str) -> str:
    lines = [EPILOG_TITLE]
    for argv, what in EXAMPLES.get(path, []):
        lines.append(f"  mirage-tui {argv}".rstrip())
        lines.append(f"      {what}")
    return "\n".join(lines)


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (aliases left out)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {name: p for name, p in action.choices.items()}
    return {}


def walk(parser: argparse.ArgumentParser, path: str = ""):
    """``(path, parser)`` for the parser and every subcommand below it."""
    yield path, parser
    for name, child in subparsers_of(parser).items():
        yield from walk(child, f"{path} {name}".strip())


class ExamplesFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual, but keeps the Examples epilog's lines as written."""

    def _fill_text(self, text, width, indent):
        if text.startswith(EPILOG_TITLE):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def add_examples(parser: argparse.ArgumentParser) -> None:
    """An Examples epilog on the parser and every subcommand (those in :data:`EXAMPLES`)."""
    for path, p in walk(parser):
        if path in EXAMPLES:
            p.epilog = epilog(path)
            p.formatter_class = ExamplesFormatter
