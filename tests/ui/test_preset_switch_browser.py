"""Issue 34, item 2, in a real browser: after demo → SDXL LoRA → FLUX.1 LoRA → SDXL LoRA → demo →
SDXL LoRA, with the dataset typed in each form, the pre-flight names no field of another preset
and Start refuses only what this form lacks (never the demo's resolution 32 while the form shows
1024)."""

from __future__ import annotations

import re

import pytest

from tests.fakes.browser_page import ARGS, CHROMIUM, open_app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

SDXL, FLUX, DEMO = "SDXL › SDXL LoRA (sd-scripts)", "FLUX.1 › FLUX.1 LoRA (sd-scripts)", "Demo (CPU) › Demo"


def pick_preset(page, label: str, present: str, absent: str) -> None:
    """Pick a preset in the list as a person does (type to filter, click the option) and wait
    for its form: field ``present`` shown, ``absent`` (another preset's) gone."""
    box = page.get_by_label("Preset", exact=True)
    box.click()
    box.fill(label.split(" › ")[0])
    page.get_by_role("option").filter(has_text=label).first.click()
    page.wait_for_function("([a, b]) => document.querySelector('#bk-field-' + a) && "
                           "!document.querySelector('#bk-field-' + b)", arg=[present, absent])


def test_switching_presets_keeps_no_hidden_value_of_another(launched_app, tmp_path):
    from PIL import Image
    from playwright.sync_api import expect, sync_playwright

    images = tmp_path / "images"
    images.mkdir()
    for n in range(3):
        Image.new("RGB", (64, 64), "red").save(images / f"{n}.png")
        (images / f"{n}.txt").write_text("a red square", encoding="utf-8")
    foreign = {SDXL: ("cpu_threads", "train_script", "ae_path", "t5xxl_path", "clip_l_path"),
               FLUX: ("cpu_threads", "train_script", "vae_path"), DEMO: ("model_path", "ae_path", "sd_scripts_dir")}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, launched_app.url)
        forms = {SDXL: ("vae_path", "ae_path"), FLUX: ("ae_path", "vae_path"), DEMO: ("cpu_threads", "model_path")}
        previous = ("", "")
        start = page.locator("#bk-start-status")
        for label in (SDXL, FLUX, SDXL, DEMO, SDXL):
            pick_preset(page, label, *forms[label])
            expect(page.get_by_label("Preset", exact=True)).to_have_value(re.compile("^" + re.escape(label)))
            expect(start).not_to_contain_text("⚠")  # the previous preset's refusal went with the switch
            dataset = page.locator("#bk-field-dataset textarea, #bk-field-dataset input")
            expect(dataset).to_be_visible()
            dataset.fill(str(images))
            dataset.press("Tab")
            preflight = page.locator("#bk-preflight")
            # the line once no event that writes it is pending (Gradio shows a timer there meanwhile)
            expect(preflight).to_have_text(re.compile(r"^\s*[✓✗] Dataset pre-flight"))
            said = preflight.inner_text().strip()
            assert said.startswith("✓"), (label, said)
            if label == DEMO:
                continue  # the demo could start (its fake-free python is checked by Start); not wanted here
            page.locator("#bk-start").click()
            expect(start).to_contain_text("⚠")
            refused = start.inner_text()
            assert previous[0] == label or refused != previous[1], (label, refused)  # each in its own words
            assert "got 32" not in refused and "Unknown field" not in refused, (label, refused)
            assert not any(name in said or name in refused for name in foreign[label]), (label, said, refused)
            previous = (label, refused)
        browser.close()
