"""The Results tab of an SDXL LoRA session fits a 1280-px window (a real browser: Debian's
Chromium via Playwright). Seen in review: the slice plot was 300 px wide per knob (2100 px
for SDXL's seven, cut off after the fourth) and the session's search-space table ran past
the page's edge ("only when" cut to "optimiz…"), unlike Setup's table of the same knobs; the
leaderboard scrolled sideways with its raw-figures column cut (issue 43).

The session is made before the app starts, with ``bracket run`` on sd-scripts stand-ins that
parse Bracket's command (``tests.fakes.install_inventory_scripts``), and opened as a person
opens a past session. Screenshot: test-output/results-width/."""

from __future__ import annotations

import pytest
from PIL import Image

from tests.fakes import install_inventory_scripts, make_fake_python
from tests.fakes.cli_search import cli_search
from tests.ui.conftest import launch_app
from tests.ui.test_ui_browser import ARGS, CHROMIUM

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

#: the element's right edge in page pixels, and what inside it is wider than its box (a cut or a scroll)
_OVERFLOW = """(box) => {
  const right = box.getBoundingClientRect().right;
  const wide = [...box.querySelectorAll('*')].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.right > right + 1;
  }).map((el) => `${el.tagName}.${el.className?.baseVal ?? el.className}`
    + ` ends at ${Math.round(el.getBoundingClientRect().right)}`);
  return {right, wide: wide.slice(0, 5)};
}"""


def test_results_leaderboard_space_table_and_slice_plot_fit_1280_px(tmp_path, output_dir):
    from playwright.sync_api import expect, sync_playwright

    images = tmp_path / "images"
    images.mkdir()
    for n, colour in enumerate(("red", "blue", "green")):
        Image.new("RGB", (64, 64), colour).save(images / f"{n}.png")
        (images / f"{n}.txt").write_text(f"zqx, a {colour} square", encoding="utf-8")
    sd = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", (
        "sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py"))
    (tmp_path / "sdxl.safetensors").write_bytes(b"fake")
    fields = {"model_path": str(tmp_path / "sdxl.safetensors"), "sd_scripts_dir": str(sd), "dataset": str(images),
              "trainer_python": str(make_fake_python(tmp_path / "bin"))}
    runs = tmp_path / "runs"
    session = cli_search(["run", "--preset", "sdxl-lora", "--budget", "3", "--steps", "6", "--confirm", "0",
                          "--prompts", "zqx, a red square --d 1", "--out", str(runs), "--name", "wide"],
                         fields, runs / "wide")
    session.close()
    shots = output_dir / "results-width"
    shots.mkdir(parents=True, exist_ok=True)
    with launch_app(tmp_path, {}, []) as app, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(app.url)
        past = page.get_by_label("Past sessions", exact=True)
        expect(past).to_be_visible(timeout=60_000)
        past.click()
        page.get_by_role("option").filter(has_text="wide").first.click()
        page.get_by_role("button", name="Open").click()
        expect(page.get_by_role("tab", name="Search")).to_have_attribute("aria-selected", "true", timeout=60_000)
        page.get_by_role("tab", name="Results").click()
        space = page.locator("#bk-space-results")
        expect(space).to_contain_text("optimizer_type = Prodigy", timeout=60_000)  # an "only when" cell
        slices = page.locator("#bk-slice")
        for knob in ("learning_rate", "network_alpha", "network_dim", "optimizer_type"):
            expect(slices.locator("svg text", has_text=knob).first).to_be_visible(timeout=60_000)
        board = page.locator("#bk-leaderboard")
        expect(board).to_contain_text("raw figures", timeout=60_000)
        expect(board).to_contain_text("optimizer_type=", timeout=60_000)  # the params column, the last one
        page.screenshot(path=str(shots / "results-1280.png"), full_page=True)
        for box in (board, space, slices):
            found = box.evaluate(_OVERFLOW)
            assert not found["wide"], found
        browser.close()
