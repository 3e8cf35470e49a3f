"""DNS rebinding and cross-site requests against the real app process (issue 16, item 1).

A page whose domain re-resolves to 127.0.0.1 talks to the app with its own name in ``Host``
(and ``Origin``). ``python app.py`` on a free port must refuse every such request with a 4xx
before Gradio handles it — the page, ``/config``, the API info, joining the queue, uploads —
while requests to 127.0.0.1 / localhost keep working. No component takes an upload, so the
upload route is refused even for the app's own address.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

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
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        yield url, port
    finally:
        process.terminate()
        process.wait(20)


def _send(url: str, method: str, route: str, **headers: str) -> httpx.Response:
    files = [("files", ("x.txt", b"payload"))] if route.endswith("/upload") else None
    body = {} if route.endswith("/join") else None
    return httpx.request(method, url + route, headers=headers, files=files, json=body, timeout=10)


@pytest.mark.parametrize("method,route", ROUTES, ids=[r for _, r in ROUTES])
def test_a_foreign_host_or_origin_gets_4xx_on_every_route(app_url, method, route):
    url, port = app_url
    for headers in ({"Host": f"attacker.example:{port}"}, {"Host": "attacker.example"},
                    {"Host": f"127.0.0.1.attacker.example:{port}"},
                    {"Host": f"127.0.0.1:{port}", "Origin": f"http://attacker.example:{port}"},
                    {"Host": f"127.0.0.1:{port}", "Origin": "null"}):
        response = _send(url, method, route, **headers)
        assert 400 <= response.status_code < 500, (headers, response.status_code, response.text[:200])
        assert "Bracket" not in response.text or "not the one Bracket serves" in response.text


def test_the_app_answers_its_own_addresses_and_takes_no_uploads(app_url):
    url, port = app_url
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert _send(url, "GET", "/", Host=host).status_code == 200, host
        config = _send(url, "GET", "/config", Host=host, Origin=f"http://{host}")
        assert config.status_code == 200 and "components" in config.json()
    upload = _send(url, "POST", "/gradio_api/upload", Host=f"127.0.0.1:{port}")
    assert upload.status_code == 403 and "no uploads" in upload.text
