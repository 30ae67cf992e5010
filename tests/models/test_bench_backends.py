"""benchmarks/bench_backends.py on a tiny run (3 XQuAD items, 2 tokens, 2 in flight)
through both real backends: the JSON it writes has every figure docs/measured.md's table reads, and
the measurement it records is the one a new host's backend choice then reads. Needs a
llama-server binary, found as the product finds it ($MIRAGE_LLAMA_SERVER, the default data
dir's bin/, PATH); skipped, saying so, without one."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
from testkit.paths import ROOT, SHARED_DATA

from models.host import client
from models.host.backend_choice import choose_backend


def _real_binary() -> Path | None:
    import platformdirs

    env = os.environ.get("MIRAGE_LLAMA_SERVER")
    found = [Path(env)] if env else []
    found += [Path(platformdirs.user_data_dir("mirage-tui")) / "bin" / "llama-server"]
    on_path = shutil.which("llama-server")
    found += [Path(on_path)] if on_path else []
    return next((p for p in found if p.is_file() and os.access(p, os.X_OK)), None)


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_backends", ROOT / "benchmarks" / "bench_backends.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_backends_json_shape_and_the_recorded_choice(tmp_path, monkeypatch):
    binary = _real_binary()
    if binary is None:
        pytest.skip("no llama-server binary here (make llama-server builds one)")
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", str(binary))
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    monkeypatch.setenv("MIRAGE_HOST_GRACE", "1")
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "auto")
    out = tmp_path / "backends.json"
    try:
        assert _bench().main(["--items", "3", "--max-tokens", "2", "--concurrency", "2",
                              "--out", str(out),
                              "--data", str(SHARED_DATA / "xquad" / "xquad.en.json")]) == 0
    finally:
        client.stop_hosts()
    result = json.loads(out.read_text())
    assert result["machine"]["cpus"] == os.cpu_count() and result["queries"] == 1
    assert [r["concurrency"] for r in result["rows"]] == [2]
    for row in result["rows"]:
        for side in ("default", "llama_server"):
            assert row[side]["status"] == "done" and row[side]["items"] == 3
            assert row[side]["items_per_s"] > 0
        assert row["llama_server"]["slots"] >= 1 and row["default"]["slots"] == 1
        assert row["ratio_llama_server_over_default"] == pytest.approx(
            row["llama_server"]["items_per_s"] / row["default"]["items_per_s"], rel=0.01)
        assert row["greedy_identical"]["of"] == 3
        assert 0 <= row["greedy_identical"]["identical"] <= 3
        paired = row["paired"]
        assert paired["shared_items"] == 3
        assert {(r["metric"], r["setting"]) for r in paired["rows"]} == {
            (m, s) for m in ("em_loose", "f1_mirage", "char3_recall")
            for s in ("base", "oracle", "mixed")}
        assert paired["verdict"]
    recorded = json.loads(Path(result["recorded"]).read_text())
    assert set(recorded["items_per_s"]) == {"2"}
    choice = choose_backend()
    ratio = recorded["ratio"]
    assert choice.backend == ("llama-server" if ratio > 1 else "llama.cpp")
    assert f"{ratio:.2f}x" in choice.reason
