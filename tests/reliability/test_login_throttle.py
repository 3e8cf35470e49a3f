"""Wrong passwords slow down and lock out, per client (issue 35, item 11).

Gradio's ``/login`` answered 200 wrong passwords in 3.6 s. ``python app.py --auth …`` on a
free port must now answer the first few wrong ones (400) and then refuse logins from that
client with **429** and ``Retry-After`` — the right password too, until the lockout ends —
and let the right one in afterwards. :class:`ui.login_throttle.LoginThrottle` is checked on
its own with a fake monotonic clock: the doubling lockout and its cap, tries sent in
parallel, clients kept apart (an IPv6 client by its /64), forgetting, bounded memory.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import httpx
import pytest

from tests.fakes.waiting import wait_for_answer
from tests.reliability.rel_helpers import ROOT
from tests.ui.conftest import free_port
from tests.ui.test_ui_browser import ARGS, CHROMIUM
from ui.login_throttle import FIRST_LOCK_S, FREE_TRIES, LoginThrottle

PASSWORD = "correct-horse-battery"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _fail(throttle: LoginThrottle, client: str, times: int = 1) -> None:
    for _ in range(times):
        assert throttle.attempt(client)


def test_failures_lock_out_for_doubling_then_capped_times():
    clock = Clock()
    throttle = LoginThrottle(clock=clock, max_lock_s=60)
    _fail(throttle, "10.0.0.1", FREE_TRIES)
    assert throttle.retry_after("10.0.0.1") == 0
    waits = []
    for _ in range(9):
        _fail(throttle, "10.0.0.1")
        waits.append(throttle.retry_after("10.0.0.1"))
        assert not throttle.attempt("10.0.0.1")  # locked: refused without counting
        clock.now += waits[-1]
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert throttle.retry_after("10.0.0.2") == 0 and throttle.attempt("10.0.0.2")  # another client
    throttle.succeeded("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") == 0


def test_tries_in_parallel_count_before_their_answer():
    throttle = LoginThrottle(clock=Clock())
    started = [throttle.attempt("10.0.0.1") for _ in range(200)]  # none has been answered yet
    assert started.count(True) == FREE_TRIES + 1


def test_ipv6_clients_are_kept_by_their_64_and_records_are_bounded_and_forgotten():
    clock = Clock()
    throttle = LoginThrottle(clock=clock, max_clients=50, forget_s=100)
    _fail(throttle, "2001:db8::1", FREE_TRIES + 1)
    assert not throttle.attempt("2001:db8::ffff:2")  # same /64
    assert throttle.attempt("2001:db8:0:1::1")  # another /64
    for n in range(500):
        throttle.attempt(f"192.0.2.{n % 250}") if n < 250 else throttle.attempt(f"198.51.100.{n % 250}")
    assert len(throttle) <= 50
    _fail(throttle, "203.0.113.7", FREE_TRIES + 1)
    clock.now += 1 + 100 + 1  # the lockout ended and was forgotten
    assert throttle.attempt("203.0.113.7") and throttle.retry_after("203.0.113.7") == 0


@pytest.fixture(scope="module")
def app_with_login(tmp_path_factory):
    yield from _app(tmp_path_factory.mktemp("throttle"))


def _app(tmp, *extra: str):
    """``python app.py --auth …`` (and ``extra``) on a free port; yields its URL."""
    port = free_port()
    env = dict(os.environ, BRACKET_RUNS_DIR=str(tmp / "runs"), GRADIO_ANALYTICS_ENABLED="False",
               GRADIO_TEMP_DIR=str(tmp / "gradio-tmp"), PYTHONUNBUFFERED="1")
    env.pop("BRACKET_TRUSTED_PROXIES", None)
    env.pop("FORWARDED_ALLOW_IPS", None)
    log = tmp / "app.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port), "--auth",
                                    f"admin:{PASSWORD}", *extra], cwd=tmp, env=env, stdout=handle,
                                   stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_answer(url + "/", process, log, ok=(200, 401))
        yield url
    finally:
        process.terminate()
        process.wait(20)


def _login(url: str, password: str, **headers: str) -> httpx.Response:
    # as the login page sends it (FormData: multipart)
    return httpx.post(url + "/login", files={"username": (None, "admin"), "password": (None, password)},
                      headers=headers, timeout=60)


def most_let_through(elapsed_s: float) -> int:
    """The most wrong tries one client gets answered (400, the password tried) within ``elapsed_s``
    seconds: the free ones, then one each time a lockout (1 s, 2 s, 4 s …) has run out — the n-th
    after at least 2**(n-1) - 1 lockout seconds. A machine slow to answer lets that many more through
    (30 tries took over 15 s under load), and no throttle that works lets more."""
    return FREE_TRIES + math.floor(math.log2(elapsed_s / FIRST_LOCK_S + 1)) + 1


@pytest.mark.parametrize("every_s", [0.01, 0.3, 0.6, 1.7, 5.0])
def test_the_bound_on_wrong_tries_let_through_holds_at_any_pace(every_s):
    """The real app's checks allow :func:`most_let_through` of the elapsed time: the throttle, tried
    at a steady pace on its fake clock, lets no more through, and reaches it at some pace."""
    now = [0.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    let_through = 0
    for n in range(30):
        now[0] = n * every_s
        let_through += throttle.attempt("203.0.113.9")
    assert FREE_TRIES < let_through <= most_let_through(29 * every_s)
    if every_s == 1.7:
        assert let_through == most_let_through(29 * every_s)


_FORWARDED = ("X-Forwarded-For", "X-Real-IP", "Forwarded", "True-Client-IP", "CF-Connecting-IP")


def _rotating(n: int) -> dict[str, str]:
    """Headers naming another client address for try ``n`` (each a way a proxy names one)."""
    address = f"198.51.100.{n % 250 + 1}"
    return {name: (f"for={address}" if name == "Forwarded" else address) for name in _FORWARDED}


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_the_login_page_still_logs_in_through_the_guard(app_with_login):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page()
        page.goto(app_with_login)
        page.locator("input[type=text]").first.fill("admin")
        page.locator("input[type=password]").first.fill(PASSWORD)
        page.get_by_role("button", name="Login").click()
        expect(page.locator("#bk-tabs")).to_be_visible(timeout=60_000)
        browser.close()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_wrong_passwords_lock_the_client_out_of_the_real_app(app_with_login):
    url = app_with_login
    began = time.monotonic()
    answers = [_login(url, f"guess-{n}") for n in range(30)]
    most, codes = most_let_through(time.monotonic() - began), [a.status_code for a in answers]
    assert codes[:FREE_TRIES] == [400] * FREE_TRIES, codes
    assert codes.count(400) <= most and codes.count(429) >= len(codes) - most and set(codes) <= {400, 429}, \
        (most, codes)
    locked = _right_password_while_locked(url)  # the right password waits for the lockout too
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1, locked.text
    time.sleep(int(locked.headers["retry-after"]) + 0.5)
    assert _login(url, PASSWORD).status_code == 200
    assert _login(url, "wrong again").status_code == 400  # the success cleared the record


def _right_password_while_locked(url: str) -> httpx.Response:
    """The right password's answer, sent while a lockout surely still runs: once a wrong try is
    answered 429 with ``Retry-After`` of 5 s or more, the right one goes at once. Its answer counts
    when it came within that time less a second, or was a refusal (only a lockout refuses the right
    password); a machine too slow for both let it in after the lockout (which clears the record), and
    the tries begin again. A shorter lockout is waited out first (the next wrong try then starts one
    twice as long)."""
    for _ in range(20):
        sent = time.monotonic()
        wrong = _login(url, "one more guess")
        wait = int(wrong.headers.get("retry-after", "0"))
        if wrong.status_code == 429 and wait >= 5:
            right = _login(url, PASSWORD)
            if time.monotonic() - sent < wait - 1 or right.status_code == 429:
                return right
            continue
        time.sleep(wait)
    raise AssertionError("no lockout of 5 s or more answered in time after 20 wrong tries")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_forwarded_headers_from_127_0_0_1_do_not_choose_the_throttled_client(app_with_login):
    """Issue 44, item 5: uvicorn trusted X-Forwarded-For from 127.0.0.1 by default, so 40 wrong
    passwords with rotating headers went through while locked out. Now no proxy is trusted
    unless the operator names one: the tries count against 127.0.0.1 whatever they claim."""
    url = app_with_login
    began = time.monotonic()
    codes = [_login(url, f"rotating-{n}", **_rotating(n)).status_code for n in range(40)]
    most = most_let_through(time.monotonic() - began)
    assert codes.count(400) <= most and codes.count(429) >= len(codes) - most and set(codes) <= {400, 429}, \
        (most, codes)
    assert _login(url, PASSWORD, **_rotating(99)).status_code == 429  # still locked out


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_proxy_the_operator_names_is_trusted_to_name_the_client(tmp_path):
    """``--trusted-proxy 127.0.0.1``: behind a proxy of one's own, each forwarded client has its own record."""
    app = _app(tmp_path, "--trusted-proxy", "127.0.0.1")
    url = next(app)
    try:
        codes = [_login(url, f"guess-{n}", **{"X-Forwarded-For": f"203.0.113.{n + 1}"}).status_code
                 for n in range(3 * FREE_TRIES)]
        assert codes == [400] * (3 * FREE_TRIES), codes
    finally:
        app.close()
