"""Reading a labels dataset back: answer pairs with every person's labels, by aspect
(written by :mod:`engine.datasets.formats.pairwise_labels` through the importer)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.datasets.catalog import DatasetNotFound, resolve
from engine.datasets.formats.pairwise_labels import UNNAMED, annotator_key
from engine.store import Store, json_column
from engine.store.datasets import dataset_identity
from engine.store.labels import (human_label_rows, label_aspects, label_pair_rows,
                                 labels_dataset_rows)


@dataclass(frozen=True)
class LabelledPair:
    rowid: int
    pair_id: str
    query: str
    answer_a: str
    answer_b: str
    reference: str | None
    domain: str | None
    metadata: dict
    labels: dict[str, dict[str, int]] = field(default_factory=dict)  # aspect -> annotator -> -2..2

    def aspect_labels(self, aspect: str) -> list[int]:
        """This aspect's labels, by annotator name (a stable order)."""
        found = self.labels.get(aspect, {})
        return [found[name] for name in sorted(found)]

    def annotator_labels(self, aspect: str) -> list[int]:
        """This aspect's labels of named annotators only (a row that named nobody is no
        annotator: :data:`~engine.datasets.formats.pairwise_labels.UNNAMED`), by name: the
        human ceiling compares the first two."""
        found = self.labels.get(aspect, {})
        return [found[name] for name in sorted(found) if not name.startswith(UNNAMED)]


def load_label_pairs(store: Store, dataset: str) -> list[LabelledPair]:
    """Every pair of the labels dataset ``dataset`` (``name`` or ``name@version``), in file
    order, with its labels. :class:`DatasetNotFound` for an unknown name or a dataset of
    another kind. One person is one annotator (:func:`annotator_key`): labels stored under two
    spellings of one name (a workspace imported before names were compared so, or verdicts
    typed under another spelling) are that person's one label, the latest stored, under the
    first spelling."""
    dataset_id = resolve(store, dataset)
    row = dataset_identity(store, dataset_id)
    if row["kind"] != "labels":
        raise DatasetNotFound(f"dataset {row['name']}@{row['version']} holds {row['kind']} "
                              "data, not human pairwise labels (import a labels file: "
                              "ragchecker-meta or pairwise-labels)")
    rows = label_pair_rows(store, dataset_id)
    labels: dict[int, dict[str, dict[str, int]]] = {}
    spelling: dict[str, str] = {}
    for r in human_label_rows(store, dataset_id):
        name = spelling.setdefault(annotator_key(r["annotator"]), r["annotator"])
        labels.setdefault(r[0], {}).setdefault(r["aspect"], {})[name] = r["label"]
    return [LabelledPair(r["id"], r["pair_id"], r["query"], r["answer_a"], r["answer_b"],
                         r["reference"], r["domain"], json_column(r["metadata"], {}) or {},
                         labels.get(r["id"], {})) for r in rows]


@dataclass(frozen=True)
class LabelsDataset:
    """One labels dataset in the store: ``ref`` (``name@version``), its pairs and aspects."""
    ref: str
    pairs: int
    aspects: tuple[str, ...]


def labels_datasets(store: Store) -> list[LabelsDataset]:
    """Every labels dataset in the store (newest version of a name last), with the number of
    pairs and the aspects its labels are on (the calibration dialog's choices)."""
    return [LabelsDataset(f"{r['name']}@{r['version']}", r["n"], label_aspects(store, r["id"]))
            for r in labels_dataset_rows(store)]


def labels_dataset_name(run_name: str) -> str:
    """The labels dataset that holds people's own verdicts on run ``run_name``'s answers
    (written from the app; renamed with the run)."""
    return f"verdicts:{run_name}"


def run_of_labels_dataset(dataset: str) -> str:
    """The run whose verdicts the labels dataset ``dataset`` holds (:func:`labels_dataset_name`
    read backwards); the name itself for another dataset."""
    return dataset.removeprefix(labels_dataset_name(""))
