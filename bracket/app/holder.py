"""What the tab collaborators of :class:`~bracket.app.manager.SessionManager` read it through.

``manager.reading``, ``manager.compare`` and ``manager.results`` (:mod:`bracket.app.reading`,
:mod:`bracket.app.compare`, :mod:`bracket.app.results`) each get the manager as a
:class:`SessionHolder`: the open session, its one cached snapshot and what is derived from it
once per change (``memo``, the standings), and ``forget`` after this process changed the store.
A typing protocol, so they never import the manager (which builds them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from bracket.app.thumbs import ThumbnailCache
    from bracket.session import Session, SessionSnapshot
    from bracket.standings import Standings


class SessionHolder(Protocol):
    """The public pieces of ``SessionManager`` its collaborators use."""

    runs_dir: Path
    storage_url: str | None

    @property
    def session(self) -> "Session | None": ...

    @property
    def running(self) -> bool: ...

    @property
    def thumbs(self) -> "ThumbnailCache": ...

    def require(self) -> "Session": ...

    def snapshot(self) -> "SessionSnapshot | None": ...

    def require_snapshot(self) -> "SessionSnapshot": ...

    def memo(self, key: Any, build: Callable[[], Any], *, structural: bool = False, fresh: bool = True) -> Any: ...

    def standings(self) -> "Standings | None": ...

    def forget(self, *, changed: bool = False) -> None: ...
