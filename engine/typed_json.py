"""Typed, frozen JSON records that keep what they were read with.

A :class:`Part` is a JSON object as a frozen dataclass: a field per key this version knows
(its default when the key is missing), the keys it was read or written with in their order
(``present``), and every key it does not know, or value not of the shape its field reads, kept
as it came (``extra``). So a record read and written again is the same JSON, and one an older
or newer version wrote reads with defaults and loses nothing. The run header
(``engine/runs/header.py``) and the arena header (``engine/arena/header.py``) are built of
them; nothing here knows what a run is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, ClassVar, Mapping, TypeVar

EMPTY: Mapping[str, Any] = MappingProxyType({})


def empty_map() -> Mapping[str, Any]:
    return EMPTY


_UNREAD = object()                  # a value not of the shape its field reads: kept as it came
P = TypeVar("P", bound="Part")
R = TypeVar("R", bound="StoredRecord")


def frozen(value):
    """``value`` read-only: mappings as read-only mappings, lists as tuples (parts as they
    are)."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def plain(value):
    """``value`` as JSON holds it: parts and mappings as dicts, tuples as lists."""
    if isinstance(value, Part):
        return value.as_dict()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Part:
    """A JSON object of the header, typed: a field per key this version knows (its default
    when the key is missing), ``present`` (the keys it was read or written with, in order: the
    order they are written in) and ``extra`` (keys it does not know, and values not of the
    shape their field reads, as they came)."""

    present: tuple[str, ...] = field(default=(), repr=False, compare=False)
    extra: Mapping[str, Any] = field(default_factory=empty_map, repr=False)

    NESTED: ClassVar[Mapping[str, tuple[str, type[Part]]]] = {}
    """Fields holding parts: ``(how, Part type)``, how is ``one``, ``map`` (name -> part) or
    ``list``."""

    @classmethod
    def json_keys(cls) -> tuple[str, ...]:
        """The JSON keys this version reads into fields."""
        return tuple(cls._shapes())

    @classmethod
    def _shapes(cls) -> dict[str, type | None]:
        """Each field's key and the JSON shape it reads: a mapping (``Mapping``), a list
        (``tuple``) or anything (None), from its default."""
        return {f.name: Mapping if f.default_factory is empty_map else
                tuple if f.default == () else None
                for f in fields(cls) if f.name not in ("present", "extra")}

    @classmethod
    def read(cls: type[P], data: Mapping[str, Any]) -> P:
        shapes, values, extra = cls._shapes(), {}, {}
        for key, value in data.items():
            parsed = (_parse(cls.NESTED.get(key), value, shapes[key]) if key in shapes
                      else _UNREAD)
            if parsed is _UNREAD:
                extra[key] = frozen(value)
            else:
                values[key] = parsed
        return cls(present=tuple(data), extra=MappingProxyType(extra), **values)

    def as_dict(self) -> dict[str, Any]:
        return {key: plain(self.extra[key] if key in self.extra else getattr(self, key))
                for key in self.present}

    def raw(self, key: str):
        """The value of ``key`` as JSON holds it (None when missing)."""
        return plain(self.extra[key] if key in self.extra else getattr(self, key, None))

    def _set(self: P, **changes) -> P:
        """A copy with ``changes`` (a key new to it written last)."""
        present = self.present + tuple(k for k in changes if k not in self.present)
        extra = MappingProxyType({k: v for k, v in self.extra.items() if k not in changes})
        return replace(self, present=present, extra=extra,
                       **{k: frozen(v) for k, v in changes.items()})

    def _drop(self: P, key: str) -> P:
        """A copy without ``key`` (its field back to its default)."""
        if key not in self.present:
            return self
        default = next(f for f in fields(self) if f.name == key)
        value = default.default_factory() if callable(default.default_factory) \
            else default.default
        extra = MappingProxyType({k: v for k, v in self.extra.items() if k != key})
        return replace(self, present=tuple(k for k in self.present if k != key), extra=extra,
                       **{key: value})

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):       # frozen all the way down: a copy is itself
        return self


@dataclass(frozen=True)
class StoredRecord(Part):
    """A part stored whole as JSON text (a header): read by :meth:`from_json`, written by
    :meth:`to_json`."""

    WHAT: ClassVar[str] = "a stored record"
    """What it is, for the error on text that is not a JSON object."""

    @classmethod
    def from_json(cls: type[R], data: str | bytes | Mapping[str, Any] | None) -> R:
        """The record stored as ``data`` (its JSON text, or that JSON read as a dict); empty
        text or None is the empty record. Raises ValueError for text that is not a JSON
        object."""
        if data is None or data == "" or data == b"":
            return cls()
        if isinstance(data, (str, bytes)):
            data = json.loads(data)
        if not isinstance(data, Mapping):
            raise ValueError(f"{cls.WHAT} is a JSON object, not {type(data).__name__}")
        return cls.read(data)

    def to_json(self) -> str:
        """The record as stored."""
        return json.dumps(self.as_dict(), ensure_ascii=False)


def _parse(nested: tuple[str, type[Part]] | None, value, shape: type | None):
    """``value`` for a field: frozen, or read into its part(s); ``_UNREAD`` when it is not of
    the field's shape (None stands for no part)."""
    if nested is None:
        if shape is Mapping and not isinstance(value, Mapping) or \
                shape is tuple and not isinstance(value, list):
            return _UNREAD
        return frozen(value)
    how, part = nested
    if how == "one":
        return None if value is None else part.read(value) if isinstance(value, Mapping) \
            else _UNREAD
    if how == "map" and isinstance(value, Mapping) and all(
            isinstance(v, Mapping) for v in value.values()):
        return MappingProxyType({k: part.read(v) for k, v in value.items()})
    if how == "list" and isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        return tuple(part.read(v) for v in value)
    return _UNREAD
