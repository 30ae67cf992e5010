"""``mirage-tui models check`` keeps its result in the workspace,
so run estimates use the speed it measured (and a later launch can show it again); a check
never creates a workspace."""

from __future__ import annotations

from engine.model_speeds import latest_model_check, measured_speeds
from engine.store import Store
from mirage_tui.cli import main as cli_main
from testkit.runs import SMOL


def test_models_check_is_kept_in_the_workspace(tmp_path, monkeypatch, capsys):
    import models.check

    result = {"name": SMOL, "kind": "generator", "ok": True, "device": "cpu", "seconds": 2.0,
              "load_seconds": 0.3, "tokens_per_s": 8.0, "prompt_tokens_per_s": 90.0,
              "items_per_s": None, "error": None, "prompt_tokens": 30,
              "completion_tokens": 16, "finish_reason": "length", "text": "Jupiter",
              "chat": True}
    monkeypatch.setattr(models.check, "check_model", lambda name, **kw: dict(result))
    missing = tmp_path / "none.db"
    assert cli_main(["models", "check", "--db", str(missing), SMOL]) == 0
    assert not missing.exists()                       # no workspace made for a check

    db = tmp_path / "w.db"
    Store(db).close()
    assert cli_main(["models", "check", "--db", str(db), SMOL]) == 0
    assert "8.0 tokens/s" in capsys.readouterr().out
    store = Store(db)
    assert latest_model_check(store, SMOL)["tokens_per_s"] == 8.0
    speed = measured_speeds(store, [SMOL])[SMOL]
    assert (speed.prompt_tps, speed.gen_tps) == (90.0, 8.0)
    assert speed.source.startswith("model check ")
