import pytest

from yeebench.vcluster import owner


@pytest.fixture(autouse=True)
def private_owner_claim(tmp_path, monkeypatch):
    """Every test claims the cluster names in its own file, never the machine's real claim."""
    monkeypatch.setattr(owner, "CLAIM_PATH", str(tmp_path / "vcluster.owner.json"))
