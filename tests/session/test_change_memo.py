"""The one owner of store-derived values in a process (``bracket.session.store.change_memo``): keyed by
the store and the session, built again when the store's change marker or the weights move, bounded."""

from __future__ import annotations

from types import SimpleNamespace

from bracket.session.store.change_memo import ChangeMemo


class FakeStore:
    """Only what the memo reads: the URL and a change marker a test moves (its reads counted)."""

    def __init__(self, url: str) -> None:
        self.url, self.marker, self.reads = url, 0, 0

    def change_marker(self, name: str) -> tuple:
        self.reads += 1
        return (self.marker,)


def _session(store: FakeStore, name: str = "s", weights: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(store=store, name=name, settings=SimpleNamespace(weights=weights or {"loss": 1.0}))


def test_a_value_is_built_once_per_change_and_nested_builds_read_the_marker_once():
    memo, store, built = ChangeMemo(), FakeStore("sqlite:///a.db"), []
    session = _session(store)

    def scores() -> str:
        built.append("scores")
        return "scores of " + memo.value(session, "rows", lambda: built.append("rows") or "rows")

    assert memo.value(session, "scores", scores) == "scores of rows"
    assert built == ["scores", "rows"] and store.reads == 1  # the inner build used the outer marker
    assert memo.value(session, "scores", scores) == "scores of rows" and built == ["scores", "rows"]
    store.marker += 1
    memo.value(session, "scores", scores)
    assert built == ["scores", "rows"] * 2


def test_a_change_during_a_build_makes_the_next_call_build_again():
    memo, store, built = ChangeMemo(), FakeStore("sqlite:///a.db"), []
    session = _session(store)

    def changing() -> int:
        built.append(store.marker)
        store.marker += 1  # lands while the value is built: the value is for the marker read before
        return len(built)

    assert memo.value(session, "v", changing) == 1
    assert memo.value(session, "v", changing) == 2 and built == [0, 1]


def test_values_are_kept_per_open_session_and_weights_and_the_oldest_sessions_are_dropped():
    memo = ChangeMemo(sessions=2)
    one = FakeStore("sqlite:///1.db")
    first, again, other = _session(one), _session(one), _session(one, "other")
    assert memo.value(first, "k", lambda: "one") == "one"
    assert memo.value(first, "k", lambda: "built again") == "one"
    assert memo.value(again, "k", lambda: "again") == "again"  # opened again: afresh, as another process
    first.settings.weights = {"loss": 2.0}
    assert memo.value(first, "k", lambda: "weighted") == "weighted"  # the weights are in the key
    memo.value(other, "k", lambda: "other")  # a third session: the least recently used one is dropped
    assert memo.peek(again, "k") is None and memo.peek(first, "k") == "weighted" and memo.peek(other, "k") == "other"
    memo.forget(other)
    assert memo.peek(other, "k") is None


def test_a_sessions_parts_outlive_its_changes_and_forget_but_go_with_it():
    """One entry per session holds its change-keyed values and its parts: a new marker or ``forget``
    drops the values only; the session dropped (closed, or the least recently used) takes both."""
    memo, store = ChangeMemo(sessions=2), FakeStore("sqlite:///a.db")
    first, second, third = _session(store), _session(store, "b"), _session(store, "c")
    kept = memo.part(first, "snapshot", object)
    memo.value(first, "k", lambda: "before")
    store.marker += 1
    assert memo.value(first, "k", lambda: "after") == "after" and memo.part(first, "snapshot", dict) is kept
    memo.forget(first)
    assert memo.peek(first, "k") is None and memo.part(first, "snapshot", dict) is kept
    assert memo.sizes() == (0, 1)
    memo.value(second, "k", lambda: "b")
    memo.part(first, "thumbnails", list)  # looked at: the first session is the most recent again
    memo.value(third, "k", lambda: "c")  # the least recently used session, the second, goes whole
    assert memo.peek(second, "k") is None and memo.part(first, "snapshot", dict) is kept
    assert memo.sizes() == (1, 1)
    memo.drop(first)
    assert memo.part(first, "snapshot", lambda: "made again") == "made again"
