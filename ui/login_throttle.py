"""Failed logins slow down, per client: after a few wrong passwords, a lockout that doubles.

Gradio's ``/login`` answers as fast as it can, so a script tried 200 passwords in 3.6 s. The
host guard (:mod:`ui.host_guard`) asks :class:`LoginThrottle` before each login: a client
(an IP address; an IPv6 client by its /64, which one machine usually holds whole) gets
:data:`FREE_TRIES` tries, then each further failure locks it out for twice as long as the one
before — 1 s, 2 s, 4 s … up to :data:`MAX_LOCK_S` — and a login while locked is answered
**429** without trying the password. An attempt counts as failed until it succeeds (so tries
sent in parallel are counted too); a success clears the client's record, and a record is
forgotten :data:`FORGET_S` after its lockout ended. Time is the monotonic clock (a clock
change neither lifts nor extends a lockout); at most :data:`MAX_CLIENTS` records are kept,
the least recently touched dropped first.

With ``--share`` every login arrives through Gradio's tunnel from this machine, so all of
them share one record: someone guessing passwords there locks the owner out too, for a while.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable

FREE_TRIES = 5
FIRST_LOCK_S = 1.0
MAX_LOCK_S = 300.0
FORGET_S = 900.0
MAX_CLIENTS = 4096


def client_key(address: str) -> str:
    """The record a client's failures go to: its IPv4 address, its IPv6 /64, else the text."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class LoginThrottle:
    """Failure counts and lockouts per client (see the module docstring)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, free_tries: int = FREE_TRIES,
                 first_lock_s: float = FIRST_LOCK_S, max_lock_s: float = MAX_LOCK_S,
                 forget_s: float = FORGET_S, max_clients: int = MAX_CLIENTS) -> None:
        self.clock = clock
        self.free_tries, self.first_lock_s, self.max_lock_s = free_tries, first_lock_s, max_lock_s
        self.forget_s, self.max_clients = forget_s, max_clients
        #: client → (failures, locked until); oldest touched first
        self._records: OrderedDict[str, tuple[int, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def _current(self, key: str, now: float) -> tuple[int, float]:
        failures, until = self._records.get(key, (0, now))
        if failures and now > until + self.forget_s:
            self._records.pop(key, None)
            return 0, now
        return failures, until

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        now = self.clock()
        _, until = self._current(client_key(client), now)
        return max(0.0, until - now)

    def attempt(self, client: str) -> bool:
        """A login from ``client`` begins: False (and nothing counted) while it is locked out;
        otherwise it is counted as a failure until :meth:`succeeded` says otherwise."""
        now, key = self.clock(), client_key(client)
        failures, until = self._current(key, now)
        if until > now:
            return False
        failures += 1
        over = failures - self.free_tries
        lock = min(self.first_lock_s * 2 ** min(over - 1, 40), self.max_lock_s) if over > 0 else 0.0
        self._records[key] = (failures, now + lock)
        self._records.move_to_end(key)
        while len(self._records) > self.max_clients:
            self._records.popitem(last=False)
        return True

    def succeeded(self, client: str) -> None:
        """``client`` logged in: its failures are forgotten."""
        self._records.pop(client_key(client), None)
