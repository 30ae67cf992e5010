"""Every ``MIRAGE_*`` variable is parsed in one place that names it and its range (issue 35,
item 5): ``MIRAGE_HOST_GRACE=abc`` failed a run with "could not convert string to float:
'abc'", and ``-1`` was accepted."""

from __future__ import annotations

import pytest

from models.env_settings import (SETTINGS, EnvSettingError, check_all, env_choice, env_ports,
                                 env_seconds)
from models.host import supervisor
from models.host.llama_server import health_timeout
from models.host.server import GRACE_ENV


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf", "0", "1e9"])
def test_a_grace_out_of_range_names_the_variable_and_its_range(monkeypatch, value):
    monkeypatch.setenv(GRACE_ENV, value)
    with pytest.raises(EnvSettingError) as info:
        env_seconds(GRACE_ENV)
    message = str(info.value)
    assert message.startswith(f"$MIRAGE_HOST_GRACE={value!r}: expected a number of seconds "
                              "from 0.5 to 86400") and "\n" not in message
    assert "could not convert" not in message
    # refused before a host is looked for or started
    with pytest.raises(EnvSettingError, match="MIRAGE_HOST_GRACE"):
        supervisor.find_or_start(None)
    assert check_all() == [message]


def test_unset_or_empty_is_the_default_and_good_values_pass(monkeypatch):
    monkeypatch.delenv(GRACE_ENV, raising=False)
    assert env_seconds(GRACE_ENV) == 10.0
    monkeypatch.setenv(GRACE_ENV, " ")
    assert env_seconds(GRACE_ENV) == 10.0
    monkeypatch.setenv(GRACE_ENV, "2.5")
    assert env_seconds(GRACE_ENV) == 2.5
    monkeypatch.setenv("MIRAGE_HOST_START_TIMEOUT", "-3")
    with pytest.raises(EnvSettingError, match=r"^\$MIRAGE_HOST_START_TIMEOUT='-3'"):
        health_timeout()


def test_choices_and_ports(monkeypatch):
    monkeypatch.setenv("MIRAGE_HOSTING", "In-Process")
    assert env_choice("MIRAGE_HOSTING") == "in-process" and not supervisor.hosting_default()
    monkeypatch.setenv("MIRAGE_HOSTING", "remote")
    with pytest.raises(EnvSettingError, match=r"^\$MIRAGE_HOSTING='remote': expected hosted, "):
        supervisor.hosting_default()
    monkeypatch.setenv("MIRAGE_ENDPOINT_PORTS", "8080, 99999")
    with pytest.raises(EnvSettingError, match="port numbers from 1 to 65535"):
        env_ports("MIRAGE_ENDPOINT_PORTS")
    monkeypatch.setenv("MIRAGE_ENDPOINT_PORTS", "8080,11434")
    assert env_ports("MIRAGE_ENDPOINT_PORTS") == [8080, 11434]


def test_the_table_names_every_variable_the_code_reads():
    import re

    from testkit.paths import ROOT

    read = set()
    for package in ("engine", "models", "mirage_tui"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            read |= set(re.findall(r'environ\.get\("(MIRAGE_[A-Z_]+)"', text))
            read |= set(re.findall(r'_ENV\s*=\s*"(MIRAGE_[A-Z_]+)"', text))
    assert "MIRAGE_HOST_GRACE" in read and read <= set(SETTINGS), read - set(SETTINGS)


def test_config_names_a_bad_variable(monkeypatch, tmp_path, capsys):
    from mirage_tui import cli

    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv(GRACE_ENV, "abc")
    assert cli.main(["config", "--db", str(tmp_path / "w.db")]) == 1
    err = capsys.readouterr().err
    assert "mirage-tui: warning: $MIRAGE_HOST_GRACE='abc': expected a number of seconds" in err
