"""The quick comparison gives its answers New run's token budget (issue 34: it cut them at 32,
so "Uhuru Peak, stands 5,8" was scored wrong and `compare` warned about the difference)."""

from engine.runs import RunConfig
from engine.runs.config import DEFAULT_MAX_TOKENS
from mirage_tui.quick_comparison import quick_comparison_config


def test_the_quick_comparison_uses_new_runs_max_tokens():
    config = quick_comparison_config()
    assert config.max_tokens == DEFAULT_MAX_TOKENS == RunConfig("demo", ["g"]).max_tokens
    assert config.max_tokens >= 64
