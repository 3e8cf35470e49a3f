"""DNS rebinding, cross-origin requests and bodies against the real app process (issue 16,
item 1; issue 35, items 5 and 6).

A page whose domain re-resolves to 127.0.0.1 talks to the app with its own name in ``Host``
(and ``Origin``). ``python app.py`` on a free port must refuse every such request with a 4xx
before Gradio handles it — the page, ``/config``, the API info, joining the queue, uploads —
while requests to 127.0.0.1 / localhost keep working. No component takes an upload, so the
upload route is refused even for the app's own address.

Another page on this machine is another origin: another port, ``localhost`` while the app is
used as ``127.0.0.1`` (and the reverse), ``https``. Its requests carry its ``Origin`` and must
be refused too (Gradio's CORS layer would let it read the answer). And no route may store a
body: ``process_recording`` and ``component_server`` took a multipart upload into Gradio's
temporary folder; a body past 1 MB (sized or chunked) is refused before any route reads it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from tests.fakes.waiting import wait_for_answer
from tests.reliability.rel_helpers import ROOT
from tests.ui.conftest import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ROUTES = [("GET", "/"), ("GET", "/config"), ("GET", "/gradio_api/info"), ("GET", "/gradio_api/app_id"),
          ("POST", "/gradio_api/queue/join"), ("GET", "/gradio_api/queue/data?session_hash=x"),
          ("POST", "/gradio_api/upload"), ("GET", "/gradio_api/upload_progress?upload_id=x")]


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("guard")
    port = free_port()
    env = dict(os.environ, BRACKET_RUNS_DIR=str(tmp / "runs"), GRADIO_ANALYTICS_ENABLED="False",
               GRADIO_TEMP_DIR=str(tmp / "gradio-tmp"), PYTHONUNBUFFERED="1")
    env.pop("BRACKET_AUTH", None)
    log = tmp / "app.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], cwd=tmp, env=env,
                                   stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_answer(url + "/", process, log)
        yield url, port, tmp / "gradio-tmp"
    finally:
        process.terminate()
        process.wait(20)


def _send(url: str, method: str, route: str, **headers: str) -> httpx.Response:
    files = [("files", ("x.txt", b"payload"))] if route.endswith("/upload") else None
    body = {} if route.endswith("/join") else None
    return httpx.request(method, url + route, headers=headers, files=files, json=body, timeout=60)


@pytest.mark.parametrize("method,route", ROUTES, ids=[r for _, r in ROUTES])
def test_a_foreign_host_or_origin_gets_4xx_on_every_route(app_url, method, route):
    url, port, _ = app_url
    for headers in ({"Host": f"attacker.example:{port}"}, {"Host": "attacker.example"},
                    {"Host": f"127.0.0.1.attacker.example:{port}"},
                    {"Host": f"127.0.0.1:{port}", "Origin": f"http://attacker.example:{port}"},
                    {"Host": f"127.0.0.1:{port}", "Origin": "null"}):
        response = _send(url, method, route, **headers)
        assert 400 <= response.status_code < 500, (headers, response.status_code, response.text[:200])
        assert "Bracket" not in response.text or "not the one Bracket serves" in response.text


def test_the_app_answers_its_own_addresses_and_takes_no_uploads(app_url):
    url, port, _ = app_url
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert _send(url, "GET", "/", Host=host).status_code == 200, host
        config = _send(url, "GET", "/config", Host=host, Origin=f"http://{host}")
        assert config.status_code == 200 and "components" in config.json()
    upload = _send(url, "POST", "/gradio_api/upload", Host=f"127.0.0.1:{port}")
    assert upload.status_code == 403 and "no uploads" in upload.text


def _files(folder) -> set[str]:
    return {str(p) for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


ORIGIN_ROUTES = [("GET", "/config"), ("GET", "/gradio_api/info"), ("POST", "/gradio_api/queue/join"),
                 ("GET", "/gradio_api/queue/data?session_hash=x"), ("GET", "/")]


@pytest.mark.parametrize("method,route", ORIGIN_ROUTES, ids=[r for _, r in ORIGIN_ROUTES])
def test_another_local_origin_gets_4xx(app_url, method, route):
    url, port, _ = app_url
    for host, origin in ((f"127.0.0.1:{port}", f"http://127.0.0.1:{port + 1}"),
                         (f"127.0.0.1:{port}", f"http://localhost:{port}"),
                         (f"localhost:{port}", f"http://127.0.0.1:{port}"),
                         (f"127.0.0.1:{port}", f"https://127.0.0.1:{port}"),
                         (f"127.0.0.1:{port}", "http://127.0.0.1"),
                         (f"127.0.0.1:{port}", f"http://[::1]:{port}"),
                         (f"127.0.0.1:{port}", f"http://user@127.0.0.1:{port}")):
        response = _send(url, method, route, Host=host, Origin=origin)
        assert response.status_code == 403, (host, origin, response.status_code, response.text[:200])
        assert "access-control-allow-origin" not in response.headers or "Origin header" in response.text
    same = _send(url, "GET", "/config", Host=f"127.0.0.1:{port}", Origin=f"http://127.0.0.1:{port}")
    assert same.status_code == 200 and "components" in same.json()


def test_listening_on_all_interfaces_accepts_only_the_requests_own_origin():
    from ui.host_guard import HostPolicy

    policy = HostPolicy("0.0.0.0")

    def refused(host: str, origin: str) -> bool:
        headers = {"host": host, "origin": origin}
        return policy.refusal({"type": "http", "scheme": "http", "path": "/config"}, headers) is not None

    assert not refused("192.168.1.5:7860", "http://192.168.1.5:7860")
    for origin in ("http://192.168.1.5:8000", "http://10.0.0.9:7860", "http://192.168.1.5", "null",
                   "http://localhost:7860"):
        assert refused("192.168.1.5:7860", origin), origin
    policy.allow("https://abc123.gradio.live")  # the share link, once known
    assert not refused("abc123.gradio.live", "https://abc123.gradio.live")
    assert refused("abc123.gradio.live", "http://abc123.gradio.live:8080")


def test_no_route_stores_a_body(app_url):
    url, port, temp = app_url
    before = _files(temp)
    video = ("video", ("clip.mp4", b"\0" * ((1 << 20) - 1), "video/mp4"))
    for route, files in (("/gradio_api/process_recording", [video]),
                         ("/gradio_api/component_server", [("files", ("x.bin", b"\0" * 4096))]),
                         ("/gradio_api/upload", [video])):
        response = httpx.post(url + route, files=files, data={"session_hash": "x", "component_id": "1",
                                                                "fn_name": "x"}, timeout=60)
        assert response.status_code == 403, (route, response.status_code, response.text[:200])
    big = b'{"data": ["' + b"x" * (2 << 20) + b'"], "fn_index": 0, "session_hash": "x"}'
    sized = httpx.post(url + "/gradio_api/queue/join", content=big, headers={"Content-Type": "application/json"},
                       timeout=60)
    chunked = httpx.post(url + "/gradio_api/queue/join", content=iter([big[i:i + 65536] for i in
                                                                       range(0, len(big), 65536)]),
                         headers={"Content-Type": "application/json"}, timeout=60)
    assert sized.status_code == 413 and chunked.status_code == 413, (sized.status_code, chunked.status_code)
    assert _files(temp) == before
    # a small JSON body still reaches Gradio (which answers it as usual, here: an unknown event)
    small = httpx.post(url + "/gradio_api/queue/join", json={"data": [], "fn_index": 99999, "session_hash": "x"},
                       timeout=60)
    assert small.status_code not in (403, 413), small.text[:200]


def test_a_refusal_carries_no_cors_allow_headers(app_url):
    """Issue 44, item 8: Gradio's CORS layer ran before the guard and added
    ``Access-Control-Allow-Origin: <the refused origin>`` to its 403, and answered a preflight
    itself. The guard now runs first: a refusal allows no origin, a foreign preflight is refused."""
    url, port, _ = app_url
    for origin in (f"http://localhost:{port + 1}", f"http://attacker.example:{port}", "null"):
        for method, route in (("GET", "/config"), ("POST", "/gradio_api/queue/join")):
            response = _send(url, method, route, Host=f"127.0.0.1:{port}", Origin=origin)
            assert response.status_code == 403, (origin, route, response.status_code)
            allow = [h for h in response.headers if h.lower().startswith("access-control-allow")]
            assert not allow, (origin, route, dict(response.headers))
        preflight = httpx.options(url + "/gradio_api/queue/join", timeout=60, headers={
            "Host": f"127.0.0.1:{port}", "Origin": origin, "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 403, (origin, preflight.status_code)
        assert not [h for h in preflight.headers if h.lower().startswith("access-control-allow")], origin
    own = _send(url, "GET", "/config", Host=f"127.0.0.1:{port}", Origin=f"http://127.0.0.1:{port}")
    assert own.status_code == 200  # the app's own origin is still answered
