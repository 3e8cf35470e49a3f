"""The launched app serves files from the runs folder and nothing else (real HTTP, httpx).

Secrets are planted in the app's working directory (Gradio's default extra root), beside the
runs folder (reachable only with ``..``), and the project's ``.env`` path and /etc/passwd are
asked for too — through every Gradio route that reads a file. A PNG in the runs folder must
still come back, so the test would notice if nothing were served at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "BRACKET-SECRET-7f3a9c"

pytestmark = pytest.mark.timeout(180)

FILE_ROUTES = ("gradio_api/file={}", "file={}", "gradio_api/file/{}", "file/{}", "gradio_api/proxy={}", "proxy={}")
RELATIVE_ROUTES = ("static/{}", "assets/{}", "svelte/{}", "gradio_api/static/{}", "custom_component/a/b/c/{}")


def _targets(app) -> list[str]:
    outside = app.runs_dir.parent / "outside-secret.txt"
    outside.write_text(TOKEN)
    (app.cwd / "secret.txt").write_text(TOKEN)
    (app.cwd / ".env").write_text(f"BRACKET_AUTH=admin:{TOKEN}\n")
    session = app.runs_dir / "s1"
    session.mkdir(exist_ok=True)
    (session / "link.txt").symlink_to(app.cwd / "secret.txt")
    return ["/etc/passwd", str(ROOT / ".env"), str(app.cwd / "secret.txt"), str(app.cwd / ".env"),
            f"{app.runs_dir}/../outside-secret.txt", f"{session}/../../outside-secret.txt",
            f"{app.runs_dir}/%2e%2e/outside-secret.txt", str(session / "link.txt")]


def _refused(response: httpx.Response) -> bool:
    body = response.text
    return TOKEN not in body and "root:x:0:0" not in body


def test_only_the_runs_folder_is_served(launched_app):
    app = launched_app
    allowed = app.runs_dir / "s1" / "trials" / "sample.png"
    allowed.parent.mkdir(parents=True)
    Image.new("RGB", (8, 8), "red").save(allowed)
    targets = _targets(app)
    with httpx.Client(base_url=app.url, timeout=10) as client:
        served = client.get(f"gradio_api/file={allowed}")
        assert served.status_code == 200 and served.content.startswith(b"\x89PNG")
        for target in targets:
            for route in FILE_ROUTES:
                for form in (target, quote(target, safe="/"), quote(target, safe="")):
                    response = client.get(route.format(form))
                    assert _refused(response), (route, form, response.status_code)
                    if route.startswith("gradio_api/file="):
                        assert response.status_code in (403, 404), (form, response.status_code)
            relative = target.lstrip("/")
            for route in RELATIVE_ROUTES:
                for form in (f"../../../../../../../../{relative}", "..%2f..%2f..%2f..%2f..%2f..%2f" + relative):
                    assert _refused(client.get(route.format(form))), (route, form)
        # no component takes an upload: the route is refused before Gradio stores anything
        upload = client.post("gradio_api/upload", files=[("files", ("../../../../etc/passwd", b"uploaded"))])
        assert upload.status_code == 403
        assert Path("/etc/passwd").read_text() != "uploaded"
        # no endpoint is a public API
        info = client.get("gradio_api/info").json()
        assert info["named_endpoints"] == {} and info["unnamed_endpoints"] == {}


def test_listening_beyond_localhost_needs_a_login(tmp_path):
    env = {"BRACKET_RUNS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "BRACKET_AUTH": ""}
    for args in (["--host", "0.0.0.0"], ["--share"]):
        result = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, capture_output=True,
                                text=True, timeout=60, cwd=tmp_path)
        assert result.returncode == 2 and "--auth" in result.stderr
    result = subprocess.run([sys.executable, str(ROOT / "app.py"), "--auth", "nopassword"], env=env,
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode != 0 and "user:password" in result.stderr
