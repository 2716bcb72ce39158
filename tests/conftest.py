from __future__ import annotations

from pathlib import Path

import pytest

from context.session import Session
from context.tokens import TokenCounter

DATA = Path(__file__).parent / "data"
SHARED_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return TokenCounter()


@pytest.fixture
def open_data(counter):
    """Open a session from tests/data by file name."""

    def opener(name: str, **kwargs) -> Session:
        session = Session.open(DATA / name, **kwargs)
        return session

    return opener


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path, monkeypatch):
    """Pins made in UI tests go to a temporary state directory, never the user's."""
    monkeypatch.setenv("CTXTOP_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"
