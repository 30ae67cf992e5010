"""A copy of a real GGUF model with its ``tokenizer.chat_template`` rewritten: a small local
model that behaves, as far as its prompts go, like a reasoning model (Qwen3's
``enable_thinking`` switch, a generation prompt that opens ``<think>``).

The header is rewritten byte for byte except the one key/value; the tensor infos (whose
offsets count from the start of the data section) are copied as they were and the data
section is copied after the new header, padded to ``general.alignment``."""

from __future__ import annotations

import io
import shutil
import struct
from pathlib import Path

from models.gguf import DEFAULT_ALIGNMENT, STRING, _Reader, _value

QWEN3_LIKE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}")
"""ChatML (SmolLM2's own markers) with Qwen3's switch: thinking opened unless switched off."""

_KEY = "tokenizer.chat_template"


def with_chat_template(source: Path, target: Path, template: str = QWEN3_LIKE) -> Path:
    """``target``: ``source`` with its chat template replaced by ``template``."""
    with source.open("rb") as fh:
        head = fh.read(64 << 20)                 # the header (vocabulary included) fits
    cur = _Reader(io.BytesIO(head), len(head))  # models.gguf's reader, its positions kept
    assert cur.read(4) == b"GGUF"
    version, tensors, kvs = cur.unpack("<I"), cur.unpack("<Q"), cur.unpack("<Q")
    parts, alignment, replaced = [], DEFAULT_ALIGNMENT, False
    for _ in range(kvs):
        start = cur.tell()
        key = cur.string()
        value = _value(cur, cur.unpack("<I"), key, {})
        if key == "general.alignment":
            alignment = int(value)
        if key == _KEY:
            parts.append(_string_kv(key, template))
            replaced = True
        else:
            parts.append(head[start:cur.tell()])
    if not replaced:
        parts.append(_string_kv(_KEY, template))
    infos_start = cur.tell()
    for _ in range(tensors):
        cur.string()
        cur.skip(8 * cur.unpack("<I") + 4 + 8)   # the dims, the type, the offset
    infos = head[infos_start:cur.tell()]
    data_start = -(-cur.tell() // alignment) * alignment
    header = (b"GGUF" + struct.pack("<IQQ", version, tensors, kvs + (not replaced))
              + b"".join(parts) + infos)
    header += b"\0" * (-len(header) % alignment)
    with source.open("rb") as src, target.open("wb") as out:
        out.write(header)
        src.seek(data_start)
        shutil.copyfileobj(src, out, 1 << 20)
    return target


def _string_kv(key: str, text: str) -> bytes:
    k, v = key.encode("utf-8"), text.encode("utf-8")
    return struct.pack("<Q", len(k)) + k + struct.pack("<IQ", STRING, len(v)) + v
