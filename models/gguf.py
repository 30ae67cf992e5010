"""Read a GGUF file's metadata without loading its weights.

The header is parsed here, in Python, so the catalog can list a folder of models in well under
a second and the loader can explain a bad file before llama.cpp sees it. The layout (GGUF v2
and v3, little-endian): magic ``GGUF``, uint32 version, uint64 tensor count, uint64 key/value
count, the typed key/values, the tensor infos, then the tensor data aligned to
``general.alignment`` (32 by default). Arrays are skipped without being decoded, except small
ones (see ``SMALL_ARRAY``): the tokenizer's vocabulary alone is 50k to 260k strings.

``write_gguf`` writes a header-only file: tests use it to make malformed and unknown models.
``find_gguf_files`` finds the files under a folder (the catalog's scan).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterable

from models.base import ModelError

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
SMALL_ARRAY = 64          # arrays up to this many elements are decoded, longer ones skipped
DEFAULT_ALIGNMENT = 32

# gguf_type: value type codes of a key/value (ggml/include/gguf.h)
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, \
    FLOAT64 = range(13)
_SCALAR = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
           FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}

# llama_ftype (llama.cpp include/llama.h), stored as general.file_type. 4-6 and 33-35 were
# removed from llama.cpp; they are kept here so that old files still get a name.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 4: "Q4_1_SOME_F16", 5: "Q4_2", 6: "Q4_3",
    7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L",
    14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS",
    20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
    26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
    33: "Q4_0_4_4", 34: "Q4_0_4_8", 35: "Q4_0_8_8", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0", 41: "Q2_0",
}


class _Truncated(Exception):
    pass


_SKIPPED = object()   # an array too long to decode: only its length is kept


@dataclass
class GGUFInfo:
    """What a GGUF header says about the model (no weights read)."""

    path: Path
    version: int
    file_size: int
    tensor_count: int
    metadata: dict[str, Any] = field(repr=False)   # scalars, strings, small arrays
    array_lengths: dict[str, int] = field(repr=False)  # every array key, decoded or not
    parameter_count: int | None = None             # from the tensor shapes
    data_offset: int | None = None                 # where the tensor data starts
    data_end: int | None = None                    # largest tensor start offset (absolute)

    @property
    def name(self) -> str | None:
        return self.metadata.get("general.name")

    @property
    def architecture(self) -> str | None:
        return self.metadata.get("general.architecture")

    @property
    def file_type(self) -> int | None:
        value = self.metadata.get("general.file_type")
        return value if isinstance(value, int) else None

    @property
    def quantization(self) -> str | None:
        if self.file_type is None:
            return None
        return FILE_TYPES.get(self.file_type, f"ftype {self.file_type}")

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) else None

    @property
    def sliding_window(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.attention.sliding_window")
        return int(value) if isinstance(value, int) else None

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def has_chat_template(self) -> bool:
        return self.chat_template is not None

    @property
    def license(self) -> str | None:
        return self.metadata.get("general.license")

    @property
    def size_label(self) -> str | None:
        return self.metadata.get("general.size_label")

    @property
    def vocab_size(self) -> int | None:
        return self.array_lengths.get("tokenizer.ggml.tokens")

    def summary(self) -> dict:
        return {"name": self.name, "architecture": self.architecture,
                "quantization": self.quantization, "context_length": self.context_length,
                "chat_template": self.has_chat_template, "license": self.license,
                "size_label": self.size_label, "parameter_count": self.parameter_count,
                "file_size": self.file_size, "version": self.version}


class _Reader:
    """Buffered little-endian reads that turn a short read into _Truncated."""

    def __init__(self, fh: BinaryIO, size: int):
        self.fh = fh
        self.size = size
        self.buf = b""
        self.pos = 0          # position of buf[0] in the file
        self.off = 0          # read offset inside buf

    def tell(self) -> int:
        return self.pos + self.off

    def _fill(self, n: int) -> None:
        if len(self.buf) - self.off >= n:
            return
        rest = self.buf[self.off:]
        self.pos += self.off
        chunk = self.fh.read(max(n - len(rest), 1 << 20))
        self.buf, self.off = rest + chunk, 0
        if len(self.buf) < n:
            raise _Truncated

    def read(self, n: int) -> bytes:
        self._fill(n)
        out = self.buf[self.off:self.off + n]
        self.off += n
        return out

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        self._fill(size)
        (value,) = struct.unpack_from(fmt, self.buf, self.off)
        self.off += size
        return value

    def skip(self, n: int) -> None:
        if len(self.buf) - self.off >= n:
            self.off += n
            return
        target = self.tell() + n
        if target > self.size:
            raise _Truncated
        self.fh.seek(target)
        self.buf, self.pos, self.off = b"", target, 0

    def string(self) -> str:
        n = self.unpack("<Q")
        if n > self.size:
            raise _Truncated
        return self.read(n).decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        for _ in range(count):
            self.skip(self.unpack("<Q"))


def _value(r: _Reader, vtype: int, key: str, lengths: dict[str, int]) -> Any:
    if vtype in _SCALAR:
        return r.unpack(_SCALAR[vtype])
    if vtype == STRING:
        return r.string()
    if vtype == ARRAY:
        etype, count = r.unpack("<I"), r.unpack("<Q")
        lengths[key] = count
        if count <= SMALL_ARRAY and etype != ARRAY:
            return [_value(r, etype, key, {}) for _ in range(count)]
        if etype in _SCALAR:
            r.skip(count * struct.calcsize(_SCALAR[etype]))
        elif etype == STRING:
            r.skip_strings(count)
        else:
            for _ in range(count):
                _value(r, etype, key, {})
        return _SKIPPED
    raise ValueError(f"unknown value type {vtype} for key {key!r}")


def read_gguf(path: str | os.PathLike, *, file_size: int | None = None,
              check_data: bool = True) -> GGUFInfo:
    """Parse the header of ``path``. Raises ModelError naming the file on any problem.

    ``file_size`` overrides the size on disk (a header read from the first chunk of a split
    package); ``check_data=False`` skips the check that the tensor data fits in the file.
    """
    path = Path(path)
    try:
        size = path.stat().st_size if file_size is None else file_size
        fh = path.open("rb")
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ModelError(f"{path}: is a folder, not a GGUF file") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with fh:
        r = _Reader(fh, size)
        try:
            magic = r.read(4)
        except _Truncated:
            raise ModelError(f"{path}: not a GGUF file (only {size} bytes)") from None
        if magic != MAGIC:
            raise ModelError(f"{path}: not a GGUF file (starts with {magic!r}, "
                             f"expected {MAGIC!r})")
        try:
            version = r.unpack("<I")
            if version not in SUPPORTED_VERSIONS:
                raise ModelError(f"{path}: unsupported GGUF version {version} "
                                 f"(this reader knows versions 2 and 3)")
            tensor_count, kv_count = r.unpack("<Q"), r.unpack("<Q")
            metadata: dict[str, Any] = {}
            lengths: dict[str, int] = {}
            for _ in range(kv_count):
                key = r.string()
                value = _value(r, r.unpack("<I"), key, lengths)
                if value is not _SKIPPED:
                    metadata[key] = value
            params, max_offset = 0, 0
            for _ in range(tensor_count):
                r.string()
                n_dims = r.unpack("<I")
                count = 1
                for _ in range(n_dims):
                    count *= r.unpack("<Q")
                r.unpack("<I")                  # ggml type
                max_offset = max(max_offset, r.unpack("<Q"))
                params += count
            align = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
            align = align if isinstance(align, int) and align > 0 else DEFAULT_ALIGNMENT
            data_offset = -(-r.tell() // align) * align
        except _Truncated:
            raise ModelError(f"{path}: truncated GGUF header (file ends at {size} bytes, "
                             f"inside the metadata)") from None
        except (ValueError, UnicodeDecodeError, struct.error) as exc:
            raise ModelError(f"{path}: corrupt GGUF header ({exc})") from None
    info = GGUFInfo(path=path, version=version, file_size=size, tensor_count=tensor_count,
                    metadata=metadata, array_lengths=lengths,
                    parameter_count=params if tensor_count else None,
                    data_offset=data_offset, data_end=data_offset + max_offset)
    if check_data and tensor_count and info.data_end >= size:
        raise ModelError(f"{path}: truncated GGUF file: the tensor data runs past the end of "
                         f"the file ({size:,} bytes)")
    return info


# --------------------------------------------------------------------------- writing

def _pack_value(value: Any) -> tuple[int, bytes]:
    if isinstance(value, bool):
        return BOOL, struct.pack("<?", value)
    if isinstance(value, int):
        return (UINT32, struct.pack("<I", value)) if 0 <= value < 2**32 else \
            (INT64, struct.pack("<q", value))
    if isinstance(value, float):
        return FLOAT32, struct.pack("<f", value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return STRING, struct.pack("<Q", len(raw)) + raw
    if isinstance(value, (list, tuple)):
        items = [_pack_value(v) for v in value]
        etype = items[0][0] if items else UINT32
        return ARRAY, struct.pack("<IQ", etype, len(items)) + b"".join(b for _, b in items)
    raise TypeError(f"cannot write {type(value).__name__} to GGUF")


def write_gguf(path: str | os.PathLike, metadata: dict[str, Any], *, version: int = 3) -> Path:
    """Write a GGUF file with the given key/values and no tensors (for tests and tools)."""
    path = Path(path)
    out = [MAGIC, struct.pack("<IQQ", version, 0, len(metadata))]
    for key, value in metadata.items():
        raw = key.encode("utf-8")
        vtype, packed = _pack_value(value)
        out += [struct.pack("<Q", len(raw)), raw, struct.pack("<I", vtype), packed]
    path.write_bytes(b"".join(out))
    return path


# --------------------------------------------------------------------------- finding files

MAX_DEPTH = 4                      # folder levels below each root that are scanned


def find_gguf_files(folders: Iterable[Path], max_depth: int = MAX_DEPTH) -> list[Path]:
    """GGUF files under the folders (first shard only of split models; no mmproj files).
    Unreadable folders and files are skipped."""
    found: dict[Path, None] = {}
    for root in folders:
        root = Path(root).expanduser()
        try:
            if not root.is_dir():
                continue
        except OSError:                 # a name too long: no folder there either
            continue
        stack = [(root, 0)]
        while stack:
            folder, depth = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir() and not entry.name.startswith("."):
                        if depth < max_depth:
                            stack.append((Path(entry.path), depth + 1))
                    elif entry.is_file() and entry.name.lower().endswith(".gguf"):
                        if _skipped_file(entry.name) or not os.access(entry.path, os.R_OK):
                            continue
                        found[Path(entry.path).resolve()] = None
                except OSError:
                    continue
    return list(found)


def _skipped_file(name: str) -> bool:
    lower = name.lower()
    if lower.startswith("mmproj"):
        return True
    # llama.cpp loads a split model from its first shard: name-00001-of-00003.gguf
    stem = lower[:-5]
    if "-of-" in stem:
        part = stem.rsplit("-of-", 1)[0].rsplit("-", 1)[-1]
        return part.isdigit() and int(part) != 1
    return False
