"""Endpoints through the CLI as a user types it: ``models list`` shows configured and running
endpoints, ``run --generator URL#MODEL`` and a named endpoint store a real run, ``arena judge
--judge URL#MODEL`` judges one; the API key is used and never written or printed. The server is
the tiny OpenAI-compatible fake of :mod:`testkit.openai_server`."""

from __future__ import annotations

import json
import os

from testkit.arena import answered_run
from testkit.openai_server import fake_openai_server
from testkit.runs import cli_run

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from mirage_tui import cli

SECRET = "sk-SECRET-0123456789"


def _config(folder, url: str) -> None:
    (folder / "endpoints.toml").write_text(
        f'[endpoints.secured]\nurl = "{url}"\nmodel = "fake-b"\napi_key_env = "FAKE_API_KEY"\n',
        encoding="utf-8")


def _port(url: str) -> str:
    return url.split(":")[2].split("/")[0]


def test_models_list_shows_configured_and_running_endpoints(tmp_path, monkeypatch, capsys):
    with fake_openai_server(["fake-a", "fake-b"]) as server:
        _config(tmp_path, server.url)
        monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(tmp_path))
        monkeypatch.setenv("MIRAGE_ENDPOINT_PORTS", _port(server.url))
        monkeypatch.setenv("FAKE_API_KEY", SECRET)
        assert cli.main(["models", "list"]) == 0
        out = capsys.readouterr().out
        assert cli.main(["models", "list", "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
    lines = out[out.index("ENDPOINT"):].splitlines()
    assert lines[1].split() == ["secured", "configured", server.url, "fake-b", "FAKE_API_KEY"]
    assert lines[2].split()[:2] == [f"{server.url}#fake-a", "discovered"]
    assert lines[3].split()[0] == f"{server.url}#fake-b"
    remote = {e["name"]: e for e in listed if e["kind"] == "endpoint"}
    assert remote["secured"]["api_key_env"] == "FAKE_API_KEY"
    assert remote[f"{server.url}#fake-a"]["model"] == "fake-a"
    assert SECRET not in out and SECRET not in json.dumps(listed)


def test_run_against_endpoints_stores_a_real_run_without_the_key(tmp_path):
    db = tmp_path / "w.db"
    ensure_demo(Store(db))
    with fake_openai_server(["fake-a", "fake-b"]) as server:
        _config(tmp_path, server.url)
        env = {**os.environ, "MIRAGE_CONFIG_DIR": str(tmp_path), "FAKE_API_KEY": SECRET}
        url_spec = f"{server.url}#fake-a"
        done = cli_run("--dataset", "demo", "--generator", f"{url_spec},secured",
                       "--sample", "3", "--name", "ep", "--json", db=db, env=env)
        assert done.returncode == 0, done.stderr
        keyed = {auth for path, auth in server.seen if path == "/v1/chat/completions"}
    assert keyed == {None, f"Bearer {SECRET}"}             # only the secured one sent it
    assert SECRET not in done.stdout + done.stderr
    store = Store(db)
    header = json.loads(store.query("SELECT header FROM runs WHERE name = 'ep'")[0][0])
    ep = header["models"][url_spec]["endpoint"]
    assert (ep["url"], ep["model"], ep["identity"]) == (server.url, "fake-a", "weak: id only")
    assert header["models"]["secured"]["endpoint"]["api_key_env"] == "FAKE_API_KEY"
    rows = store.query("SELECT COUNT(*) FROM run_items i JOIN runs r ON r.id = i.run_id WHERE "
                       "r.name = 'ep' AND i.error IS NULL AND i.generation_key IS NOT NULL")[0][0]
    assert rows == 2 * 3 * 3                                # systems × queries × settings
    store.close()
    for path in tmp_path.glob("w.db*"):                    # the file, its WAL and journal
        assert SECRET.encode() not in path.read_bytes()


def test_arena_judge_with_an_endpoint_judge(tmp_path, capsys):
    path = tmp_path / "w.db"
    store = Store(path)
    ensure_demo(store)
    answered_run(store, settings=("oracle",))
    with fake_openai_server(["judge-m"]) as server:
        code = cli.main(["arena", "judge", "r", "--judge", f"{server.url}#judge-m",
                         "--db", str(path), "--json"])
        out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "done" and summary["done"] == summary["total"] == 3
    winners = [r[0] for r in store.query("SELECT winner FROM battles")]
    assert len(winners) == 3 and set(winners) <= {"a", "b"}     # the judge always says A
    header = json.loads(store.query("SELECT header FROM arenas")[0][0])
    assert header["judge"]["endpoint"]["url"] == server.url
    assert header["judge"]["name"] == "judge-m"


def test_run_against_a_faulty_endpoint_with_requests_in_flight_then_resume(tmp_path):
    """``run --generator http://127.0.0.1:PORT/v1#MODEL --concurrency 4`` against a server
    that refuses and fails requests: every item ends stored or failed (none twice), several
    requests were out at once, and ``run --resume NAME`` fills exactly the failed ones."""
    from testkit.fault_server import FaultServer

    db = tmp_path / "w.db"
    ensure_demo(Store(db))
    with FaultServer(seed=5, refuse=0.45, error=0.25, stall=0.0, latency_s=0.05) as server:
        args = ("--dataset", "demo", "--generator", f"{server.url}#fault-model",
                "--sample", "6", "--name", "faulty", "--concurrency", "4",
                "--max-errors", "100%", "--json")
        first = cli_run(*args, db=db, backoff=0.05)
        assert first.returncode == 0, first.stderr
        assert server.faults["refuse"] and server.faults["error"]
        assert server.peak >= 2                                  # requests overlapped
        store = Store(db)
        items = store.query("SELECT system, setting, query_rowid, generation_key, error "
                            "FROM run_items")
        stored = [r for r in items if r[3] is not None and r[4] is None]
        failed = [r for r in items if r[3] is None and r[4] is not None]
        assert len(items) == 18 == len(stored) + len(failed)     # 6 queries × 3 settings
        assert len({r[:3] for r in items}) == 18
        assert failed, "the seed should make some item fail all its attempts"
        store.close()
        server.faulty = False
        asked = sum(server.asked.values())
        refused = cli_run("--resume", "faulty", "--sample", "3", db=db)
        assert refused.returncode != 0 and "drop --sample" in refused.stderr
        second = cli_run("--resume", "faulty", "--concurrency", "2", "--json", db=db,
                         backoff=0.05)
        assert second.returncode == 0, second.stderr
        assert json.loads(second.stdout)["generated"] == len(failed)
        assert sum(server.asked.values()) - asked == len(failed)
    store = Store(db)
    items = store.query("SELECT generation_key, error FROM run_items")
    assert len(items) == 18 and all(key and error is None for key, error in items)
    store.close()


def test_a_runs_errors_and_its_log_carry_the_servers_message(demo, capsys, tmp_path):
    """A server's refusal in its own words, in the run's stored errors and ``runs log``."""
    from testkit.fault_server import FaultServer
    from testkit.runs import config, run

    from models.http.generator import HttpGenerator

    said = "prompt contains a forbidden word \\x1b[31m (invalid_request_error)"
    body = {"error": {"message": "prompt contains a forbidden word \x1b[31m",
                      "type": "invalid_request_error"}}
    with FaultServer(refuse=0, error=0, stall=0) as server:
        server.refusal = ("application/json", json.dumps(body).encode())
        _, summary = run(demo, config(generators=["endpoint"], sample=2, settings=["base"],
                                      name="refused"),
                         {"endpoint": HttpGenerator(server.url, timeout=10)})
    assert summary.errors == 2
    errors = [r[0] for r in demo.query("SELECT error FROM run_items")]
    assert len(errors) == 2 and all(f"HTTP 400 Bad Request: {said}" in e for e in errors)
    code = cli.main(["runs", "log", "refused", "--db", str(demo.path)])
    out = capsys.readouterr().out
    logged = [line for line in out.splitlines() if "  error  " in line]
    assert code == 0 and len(logged) == 2 and all(said in line for line in logged), out
