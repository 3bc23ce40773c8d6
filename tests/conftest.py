import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own response store; nothing touches ~/.cache."""
    monkeypatch.setenv("GENDERPROBE_CACHE_DIR", str(tmp_path / "cache"))
