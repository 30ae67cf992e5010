"""The GPU check's pack (scripts/gpu_pack.py) and the first step of scripts/gpu_check.sh: the
pack is split into parts that join back byte for byte, each with its sha256, and the check
refuses a part that does not match or a pack with no parts, naming it, before it installs or
builds anything. (`make gpu-pack` and `gpu_check.sh --cpu` end to end: docs/hosting.md.)"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess

from testkit.paths import ROOT


def _pack_module():
    spec = importlib.util.spec_from_file_location("gpu_pack", ROOT / "scripts" / "gpu_pack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parts_join_back_and_carry_their_sha256(tmp_path):
    tar = tmp_path / "pack.tar"
    blob = os.urandom(2_500_000)
    tar.write_bytes(blob)
    parts = _pack_module().split(tar, tmp_path / "out", part_bytes=1_000_000)
    assert [p.name for p in parts] == ["part-01", "part-02", "part-03"]
    chunks = [(p / f"pack.tar.{i:02d}").read_bytes() for i, p in enumerate(parts, start=1)]
    assert b"".join(chunks) == blob and max(len(c) for c in chunks) == 1_000_000
    for i, (part, chunk) in enumerate(zip(parts, chunks), start=1):
        digest, name = (part / f"pack.tar.{i:02d}.sha256").read_text().split()
        assert digest == hashlib.sha256(chunk).hexdigest() and name == f"pack.tar.{i:02d}"


def _check(tmp_path, pack) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPU_PACK": str(pack), "GPU_WORK": str(tmp_path / "work")}
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--cpu"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_the_check_refuses_a_damaged_part_and_a_missing_pack(tmp_path):
    tar = tmp_path / "pack.tar"
    tar.write_bytes(b"x" * 3000)
    parts = _pack_module().split(tar, tmp_path / "pack", part_bytes=1000)
    (parts[1] / "pack.tar.02").write_bytes(b"y" * 1000)           # damaged in transit
    out = _check(tmp_path, tmp_path / "pack")
    assert out.returncode == 1
    assert f"gpu_check: {tmp_path / 'pack'}/part-02/pack.tar.02 does not match its sha256" \
        in out.stderr
    assert not (tmp_path / "work" / "site").exists()              # nothing installed
    out = _check(tmp_path, tmp_path / "nothing")
    assert out.returncode == 1 and "no parts under" in out.stderr and "make gpu-pack" in out.stderr
