"""One cache owner per process (``bracket.session.store.change_memo.CHANGE_MEMO``): every view keyed by
the store's change marker is built again after the marker moves; the app's snapshot and thumbnails
are its declared, bounded parts; nothing is written onto the session or another object."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import pytest
from PIL import Image

from bracket.app import snapshot_cache, thumbs
from bracket.app.manager import SessionManager
from bracket.session import SearchSettings, Session
from bracket.session.loop.search_reading import search_view
from bracket.session.store import change_memo
from bracket.session.store.change_memo import CHANGE_MEMO, PARTS, stored_rows
from bracket.standings import importance, standings
from bracket.status.refresh import build_view
from tests.fakes.filled_store import fill_store

pytestmark = pytest.mark.timeout(180)
RUNS = 6


def filled_session(runs_dir: Path, fields: dict[str, str], count: int = RUNS) -> Path:
    session = Session.create("demo-cpu", fields, SearchSettings(budget=count + 2, sample_prompts=""),
                             out_dir=runs_dir, name="owner")
    fill_store(session, count, series_points=20)
    folder = session.folder
    session.close()
    return folder


def add_run(session: Session, index: int, now: float) -> int:
    params = {"learning_rate": 1e-4 * (index + 1)}
    config_id = session.store.add_config(session.name, trial_number=index, kind="search",
                                         name=f"search-{index}", params=params)
    session.store.update_config(config_id, status="done", value=index / 10)
    return session.store.add_run(session.name, config_id=config_id, kind="search", stage="search",
                                 label=f"search-{index}", seed=42, seed_index=0, params=params, status="done",
                                 max_steps=20, last_step=20, started_at=now, finished_at=now, duration_s=1.0,
                                 loss=[[s, 1.0 / (s + index)] for s in range(1, 21)])


@pytest.fixture
def opened(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    session = manager.open(filled_session(runs_dir, demo_fields))
    yield manager, session
    manager.close()


def views(manager: SessionManager, session: Session) -> dict[str, object]:
    """Each view of the session that is kept until the store changes, read through its public call."""
    return {
        "rows": stored_rows(session),
        "scores": session.scores(),
        "standings": standings(session),
        "importance": importance(session),
        "search view": search_view(session),
        "status view": build_view(session),
        "snapshot view": manager.memo("test-view", lambda: object(), structural=True),
    }


def test_a_change_marker_bump_builds_each_view_again_and_only_then(opened):
    manager, session = opened
    first = views(manager, session)
    again = views(manager, session)
    assert {name: again[name] is value for name, value in first.items()} == dict.fromkeys(first, True)
    add_run(session, RUNS, time.time())  # the store's change marker moves
    moved = views(manager, session)
    assert {name: moved[name] is value for name, value in first.items()} == dict.fromkeys(first, False)
    assert len(moved["rows"][0]) == RUNS + 1 and len(moved["search view"].runs) == RUNS + 1
    run_id = first["rows"][0][0]["id"]
    session.add_rating(run_id, 4.0)  # a rating moves the marker too
    rated = views(manager, session)
    assert rated["scores"] is not moved["scores"] and rated["standings"] is not moved["standings"]


def own_fixed_properties(obj: object) -> set[str]:
    """The object's own ``cached_property`` values (fixed when it is opened: ARCHITECTURE's table)."""
    return {name for name, value in vars(type(obj)).items() if isinstance(value, functools.cached_property)}


def test_nothing_is_written_onto_the_session_or_the_manager(opened):
    manager, session = opened
    assert own_fixed_properties(session) == {"budget", "search_plan"}  # the only ones, each listed
    for name in own_fixed_properties(session):
        getattr(session, name)
    before = {"session": dict(vars(session)), "manager": dict(vars(manager)), "store": dict(vars(session.store))}
    views(manager, session)
    manager.snapshot()
    manager.thumbs.path_for(Path("missing.png"))
    after = {"session": dict(vars(session)), "manager": dict(vars(manager)), "store": dict(vars(session.store))}
    assert {k: sorted(v) for k, v in after.items()} == {k: sorted(v) for k, v in before.items()}
    assert all(after["session"][name] is value for name, value in before["session"].items())


def test_the_snapshot_and_thumbnails_are_declared_parts_kept_across_changes(opened):
    manager, session = opened
    assert set(PARTS) == {"snapshot", "thumbnails"}
    manager.snapshot()
    cache, pictures = CHANGE_MEMO.part(session, "snapshot", object), manager.thumbs
    assert isinstance(cache, snapshot_cache.SnapshotCache) and cache.version == manager.version
    assert CHANGE_MEMO.part(session, "thumbnails", object) is pictures
    add_run(session, RUNS, time.time())
    manager.snapshot()  # rebuilt by the same part: its own key, not the marker, decides
    assert CHANGE_MEMO.part(session, "snapshot", object) is cache and cache.version == manager.version
    assert manager.thumbs is pictures
    with pytest.raises(KeyError, match="not a declared part"):
        CHANGE_MEMO.part(session, "elsewhere", dict)


class Named:
    """A session as the memo sees it: a store URL, a name, settings with weights."""

    def __init__(self, index: int) -> None:
        self.name = f"s{index}"
        self.store = type("S", (), {"url": "sqlite:///x.db", "change_marker": lambda _self, name: (0,)})()
        self.settings = type("W", (), {"weights": {}})()


def test_memory_is_bounded_sessions_views_and_thumbnails(tmp_path, monkeypatch):
    memo = change_memo.ChangeMemo(sessions=3)
    sessions = [Named(i) for i in range(10)]
    for session in sessions:
        memo.value(session, "k", lambda: bytearray(10))
        memo.part(session, "snapshot", dict)
    assert memo.sizes() == (3, 3)
    assert memo.peek(sessions[0], "k") is None and memo.peek(sessions[-1], "k") is not None
    assert memo.part(sessions[0], "snapshot", lambda: "made again") == "made again"

    monkeypatch.setattr(snapshot_cache, "MAX_VIEWS", 4)
    fake = type("F", (), {})()
    cache = snapshot_cache.SnapshotCache(fake)
    monkeypatch.setattr(cache, "snapshot", lambda: None)
    for key in range(10):
        cache.memo(key, lambda key=key: key, fresh=False)
    assert cache.views() == 4 and cache.memo(9, lambda: "built again", fresh=False) == 9

    monkeypatch.setattr(thumbs, "MAX_KNOWN", 3)
    pictures = thumbs.ThumbnailCache(tmp_path)
    for index in range(6):
        source = tmp_path / f"p{index}.png"
        Image.new("RGB", (8, 8)).save(source)
        assert pictures.path_for(source) is not None
    assert pictures.known() == 3


def test_a_closed_session_is_dropped_from_the_owner(runs_dir, demo_fields):
    manager = SessionManager(runs_dir, snapshot_ttl=0.0)
    session = manager.open(filled_session(runs_dir, demo_fields))
    manager.snapshot()
    views(manager, session)
    assert CHANGE_MEMO.peek(session, "standings") is not None
    manager.close()
    assert CHANGE_MEMO.peek(session, "standings") is None  # nothing keeps the closed session in memory
    assert CHANGE_MEMO.part(session, "snapshot", lambda: "made again") == "made again"
    change_memo.drop(session)
