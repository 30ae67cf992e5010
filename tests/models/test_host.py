"""The model host: a real ``python -m models.host`` subprocess on loopback serving the packaged
SmolLM2, found through the registry of a temporary data dir.

Byte-identical to in-process, an OpenAI client against it, what the host process imports,
kill -9 (named error, one restart, then a plain ModelError), two client processes sharing one
host that exits after its last client is gone (one killed with -9), the threads budget, a host
that cannot start, and the optional llama-server binary lookup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from testkit.hosts import dead_within, hosting  # noqa: F401 - a fixture
from testkit.paths import ROOT
from testkit.runs import SMOL

from engine.inflight import is_transient
from models.base import ContextOverflow, ModelError, SamplingParams, TransientModelError
from models.catalog import load_generator
from models.host import registry, supervisor
from models.host.client import HostedGenerator
from models.host.supervisor import HostSpec
from models.host.llama_server import find_llama_server

ASK = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
GREEDY = SamplingParams(max_tokens=12)


def _kill_host(gen: HostedGenerator) -> int:
    pid = gen.host.pid
    os.kill(pid, signal.SIGKILL)
    return pid


def test_hosted_generator_is_byte_identical_to_in_process(hosting):
    hosted = load_generator(SMOL, n_threads=1)
    assert isinstance(hosted, HostedGenerator)
    hosting.append(hosted.host.pid)
    local = load_generator(SMOL, hosted=False, n_threads=1)
    assert hosted.identity == local.identity and hosted.identity.backend == "llama.cpp"
    assert (hosted.name, hosted.chat, hosted.n_ctx) == (local.name, local.chat, local.n_ctx)
    a, b = hosted.generate(ASK, GREEDY), local.generate(ASK, GREEDY)
    assert a.text == b.text and a.prompt_text == b.prompt_text and a.text
    assert (a.prompt_tokens, a.completion_tokens, a.finish_reason, a.device) == \
        (b.prompt_tokens, b.completion_tokens, b.finish_reason, b.device)
    # prefix reuse happens in the host: the same prompt again evaluates its last block only
    assert hosted.generate(ASK, GREEDY).prompt_tokens_evaluated <= 64
    assert hosted.label_probs(ASK, ["Paris", "London"]) == \
        pytest.approx(local.label_probs(ASK, ["Paris", "London"]), abs=1e-9)
    assert hosted.count_tokens("hello world") == local.count_tokens("hello world")
    assert hosted.render(ASK).tokens == local.render(ASK).tokens
    assert hosted.generate("The capital of France is", GREEDY).text == \
        local.generate("The capital of France is", GREEDY).text
    with pytest.raises(ContextOverflow) as overflow:
        hosted.generate("word " * 5000, GREEDY)
    assert overflow.value.context_length == hosted.n_ctx and overflow.value.prompt_tokens > 4096
    with pytest.raises(ValueError, match="at least one label"):
        hosted.label_probs(ASK, [])
    assert load_generator(SMOL) is hosted                  # one per model in a process
    entry = registry.live_entries()
    assert len(entry) == 1 and entry[0].pid == hosted.host.pid
    assert entry[0].clients() == [os.getpid()]
    log = entry[0].log
    assert log.startswith(str(registry.hosts_dir())) and "serving" in open(log).read()


def test_an_openai_client_talks_to_the_host(hosting):
    from models.http.generator import HttpGenerator

    hosted = load_generator(SMOL, n_threads=1)
    hosting.append(hosted.host.pid)
    over_http = HttpGenerator(hosted.host.url, model=hosted.name, api="chat",
                              api_key=hosted.host.token)         # the host's own token
    assert over_http.generate(ASK, GREEDY).text == hosted.generate(ASK, GREEDY).text
    raw = HttpGenerator(hosted.host.url, model=hosted.name, api="completions",
                        api_key=hosted.host.token)
    assert raw.generate("The capital of France is", GREEDY).text == \
        hosted.generate("The capital of France is", GREEDY).text


def test_the_host_process_imports_no_library_that_crashes_beside_cuda_llama(hosting):
    hosted = load_generator(SMOL, n_threads=1)
    hosting.append(hosted.host.pid)
    modules = supervisor.get_json(hosted.host, "/mirage/modules")["modules"]
    assert "llama_cpp" in modules and "models.llama.generator" in modules
    heavy = {"pandas", "pyarrow", "sqlite_utils", "torch", "sklearn", "textual", "engine",
             "sentence_transformers", "mirage_tui"}
    assert not [m for m in modules if m.split(".")[0] in heavy]
    # and the client side never loads llama.cpp (checked in a fresh interpreter)
    code = ("import sys; from models.catalog import load_generator; "
            f"g = load_generator({SMOL!r}, n_threads=1); g.generate('Hi', "
            "__import__('models.base').base.SamplingParams(max_tokens=2)); "
            "print(sorted(m for m in sys.modules if m.startswith('llama')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_kill_9_names_the_model_restarts_once_then_stops(hosting):
    gen = load_generator(SMOL, n_threads=1)
    first = gen.generate(ASK, GREEDY).text
    hosting.append(_kill_host(gen))
    with pytest.raises(TransientModelError) as died:
        gen.generate(ASK, GREEDY)
    message = str(died.value)
    assert SMOL in message and "signal 9 (SIGKILL)" in message and "log:" in message
    assert gen.generate(ASK, GREEDY).text == first            # restarted, same answer
    hosting.append(gen.host.pid)
    assert gen.host.pid != hosting[0]
    _kill_host(gen)
    with pytest.raises(ModelError) as again:
        gen.count_tokens("hello")
    assert not isinstance(again.value, TransientModelError)
    assert "second time" in str(again.value) and SMOL in str(again.value)
    # nothing in its chain looks transient, so the engine does not retry it (it did: a
    # transport error was its __context__, and three deaths in one run were each restarted)
    assert not is_transient(again.value)
    events = gen.take_host_events()                  # for the run's log: each death, once
    assert len(events) == 2 and all("signal 9 (SIGKILL)" in e for e in events)
    assert "restarted" in events[0] and "the run stops" in events[1]
    assert gen.take_host_events() == []
    fresh = load_generator(SMOL, n_threads=1)                  # a new object starts afresh
    assert fresh is not gen and fresh.generate(ASK, GREEDY).text == first
    hosting.append(fresh.host.pid)


def test_a_host_that_native_code_crashes_before_its_first_answer_says_how_to_rebuild(hosting):
    """llama.cpp built with AMX dies by SIGSEGV at its first token (ggml-org/llama.cpp#20824):
    the host's death names the log line behind it and the one command that rebuilds safely.
    The same signal after the host has answered gets no such advice."""
    gen = load_generator(SMOL, n_threads=1)
    entry = gen.host
    hosting.append(entry.pid)
    with open(entry.log, "a") as log:                 # what llama.cpp logs on an AMX CPU
        log.write("load_tensors: AMX model buffer size = 95.34 MiB\n")
    os.kill(entry.pid, signal.SIGSEGV)
    with pytest.raises(TransientModelError) as died:
        gen.generate(ASK, GREEDY)
    message = str(died.value)
    assert (f"{SMOL}: the model host (pid {entry.pid}) was killed by signal 11 (SIGSEGV) before "
            "its first answer: llama.cpp crashed in native code (SIGSEGV); the log says: "
            "'load_tensors: AMX model buffer size = 95.34 MiB'. Rebuild it with safe flags: "
            f"bash {ROOT / 'scripts' / 'setup.sh'} --llama-safe {sys.prefix} (log: ") \
        in message, message
    assert gen.generate(ASK, GREEDY).text                     # restarted; this one answers
    hosting.append(gen.host.pid)
    os.kill(gen.host.pid, signal.SIGSEGV)
    with pytest.raises(ModelError) as again:
        gen.count_tokens("hello")
    assert "signal 11 (SIGSEGV)" in str(again.value)
    assert "--llama-safe" not in str(again.value) and "first answer" not in str(again.value)


CLIENT = textwrap.dedent("""
    import sys
    from models.catalog import load_generator
    from models.base import SamplingParams
    g = load_generator({smol!r}, n_threads=1)
    g.generate('Hello', SamplingParams(max_tokens=2))
    print(g.host.pid, flush=True)
    sys.stdin.read()          # hold the host until the test closes stdin (or kills us)
""")


def _client(smol: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", CLIENT.format(smol=smol)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.strip():
        proc.kill()
        pytest.fail(f"client failed: {proc.communicate()[1][-2000:]}")
    return proc, int(line)


def test_two_processes_share_one_host_which_exits_after_the_last_client(hosting):
    a, host_a = _client(SMOL)
    b, host_b = _client(SMOL)
    hosting += [host_a, host_b]
    try:
        assert host_a == host_b
        entries = registry.live_entries()
        assert [e.pid for e in entries] == [host_a]
        assert entries[0].clients() == sorted([a.pid, b.pid])
        os.kill(a.pid, signal.SIGKILL)                  # no chance to drop its lease
        a.wait(10)
        time.sleep(2.5)                                  # past the grace: b still holds it
        assert registry.pid_alive(host_a) and entries[0].clients() == [b.pid]
        b.stdin.close()                                  # b exits normally
        b.wait(30)
        assert dead_within([host_a], 15), "the host outlived its last client"
        assert registry.live_entries() == []
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_host_exits_when_the_process_that_started_it_is_killed_9(hosting):
    a, host = _client(SMOL)
    hosting.append(host)
    os.kill(a.pid, signal.SIGKILL)
    a.wait(10)
    assert dead_within([host], 15)


def test_threads_of_all_hosts_stay_within_the_cores(hosting):
    cores = os.cpu_count() or 1
    big = load_generator(SMOL)                                  # asks for every core
    other = load_generator(SMOL, n_ctx=2048)                    # another key: another host
    hosting += [big.host.pid, other.host.pid]
    entries = registry.live_entries()
    assert len(entries) == 2 and all(e.threads >= 1 for e in entries)
    if cores >= 2:
        assert sum(e.threads for e in entries) <= cores
    served = {e.pid: supervisor.get_json(e, "/mirage/identity")["threads"] for e in entries}
    assert served == {e.pid: e.threads for e in entries}
    assert big.generate(ASK, GREEDY).text == other.generate(ASK, GREEDY).text


def test_a_host_that_cannot_start_names_the_model_the_status_and_the_log(hosting):
    with pytest.raises(ModelError) as failed:
        load_generator(SMOL, n_ctx=99_999)
    message = str(failed.value)
    assert SMOL in message and "exited with status 3" in message
    assert "longer than the 8192 tokens" in message and ".log)" in message
    assert registry.live_entries() == []
    with pytest.raises(ModelError, match="no such file"):
        load_generator(ROOT / "no-such-model.gguf")


def test_hosting_mode_from_the_environment(monkeypatch):
    monkeypatch.setenv("MIRAGE_HOSTING", "in-process")
    assert supervisor.hosting_default() is False
    monkeypatch.setenv("MIRAGE_HOSTING", "hosted")
    assert supervisor.hosting_default() is True
    monkeypatch.setenv("MIRAGE_HOSTING", "sideways")
    with pytest.raises(ModelError, match="MIRAGE_HOSTING"):
        supervisor.hosting_default()
    from models.llama.generator import DEFAULT_MAX_CTX

    assert supervisor._DEFAULT_MAX_CTX == DEFAULT_MAX_CTX


def test_llama_server_binary_lookup_and_its_own_identity(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("MIRAGE_LLAMA_SERVER", raising=False)
    monkeypatch.delenv("MIRAGE_HOST_BACKEND", raising=False)
    assert find_llama_server() is None
    plain = HostSpec.resolve(SMOL)
    assert plain.backend == "llama.cpp"
    binary = tmp_path / "data" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert find_llama_server() == binary
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama-server")  # a CPU build not measured: asked
    served = HostSpec.resolve(SMOL)
    assert served.backend == "llama-server" and served.key != plain.key
    monkeypatch.delenv("MIRAGE_HOST_BACKEND")
    monkeypatch.setenv("MIRAGE_LLAMA_SERVER", "")              # empty: the backend is off
    assert find_llama_server() is None and HostSpec.resolve(SMOL).key == plain.key
    monkeypatch.setenv("MIRAGE_HOST_BACKEND", "llama-server")
    with pytest.raises(ModelError, match="make llama-server"):
        HostSpec.resolve(SMOL)
