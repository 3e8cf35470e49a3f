"""Issue 34's journey on a real preset in a real browser: SDXL LoRA with the sd-scripts scripts
replaced by stand-ins that parse Bracket's command with the inventory's flags
(``tests.fakes.install_inventory_scripts``: an unknown flag or bad choice fails the run as the
real parser would) and train like the fake trainer (tfevents, samples at the saved steps).

The walk: switch presets several times, fill the SDXL fields, accept the prompts proposed from
the dataset's captions (their source and shared trigger word named under the field), read the
default budget's plan (warm start, LR bracket, shape draws, two TPE proposals) and the unknown
wall time, shorten the search, start, open Compare while the search runs and see its runs arrive
in the list without a click, rate one and see its chip say so, vote once, read the scores as
qualities (1–10) in the trial table and the leaderboard, read the winner's command in Results,
export it and run the exported ``train.sh`` from another working folder against the stand-ins.
Z-Image LoRA (musubi-tuner stand-ins) and Axolotl LoRA (tests/llm's fake Axolotl, prompts
proposed from the eval split's instructions) are walked through Start and the first grid.
Not walked here: a pause and resume in the app, finals, and the exported launcher of the
musubi and LLM presets.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
from PIL import Image

from tests.fakes import install_inventory_scripts, make_fake_python
from tests.fakes.browser_page import ARGS, CHROMIUM, open_app, press_start
from tests.ui.conftest import launch_app
from tests.ui.test_preset_switch_browser import DEMO, FLUX, SDXL, pick_preset

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]
SD_SCRIPTS = ("sdxl_train_network.py", "tools/cache_latents.py", "tools/cache_text_encoder_outputs.py")


def _fill(page, name: str, value: str) -> None:
    box = page.locator(f"#bk-field-{name} textarea, #bk-field-{name} input")
    box.fill(value)
    box.press("Tab")


def _accept_proposed(page, source: str) -> list[str]:
    """The prompt lines proposed from the dataset (the help naming ``source``), accepted as they are;
    before any run of the preset the wall time is unknown."""
    from playwright.sync_api import expect

    prompts = page.locator("#bk-prompts textarea")
    expect(page.locator("#bk-prompts")).to_contain_text(source)
    expect(prompts).to_have_value(re.compile(r"\S.* --d 1(\n|$)"))
    expect(page.get_by_text("Wall-time estimate: unknown until the first run")).to_be_visible()
    return prompts.input_value().splitlines()


def _column(page, table: str, header: str) -> list[str]:
    """The cells of the column of ``table`` (a Gradio Dataframe's elem id) whose header starts with ``header``."""
    found = page.evaluate("""([sel, head]) => {
        const heads = [...document.querySelectorAll(sel + ' thead [role=columnheader]')];
        const at = heads.find(h => h.innerText.trim().startsWith(head)); if (!at) return null;
        const column = at.getAttribute('aria-colindex');
        return [...document.querySelectorAll(sel + ' [role=row]')].filter(r => !r.closest('thead'))
            .map(r => r.querySelector(`[role=gridcell][aria-colindex="${column}"]`))
            .filter(c => c).map(c => c.innerText.trim());
    }""", [table, header])
    return found or []


def _places(page, table: str, header: str) -> list[tuple[int, int]]:
    """The ``3 of 12`` cells of that column as (place, count), once one shows (the table fills on the next poll)."""
    page.wait_for_function("""([sel, head]) => {
        const heads = [...document.querySelectorAll(sel + ' thead [role=columnheader]')];
        const at = heads.find(h => h.innerText.trim().startsWith(head)); if (!at) return false;
        const column = at.getAttribute('aria-colindex');
        return [...document.querySelectorAll(`${sel} [role=gridcell][aria-colindex="${column}"]`)]
            .some(c => !c.closest('thead') && /^\\d+ of \\d+$/.test(c.innerText.trim()));
    }""", arg=[table, header])
    cells = [re.fullmatch(r"(\d+) of (\d+)", c) for c in _column(page, table, header)]
    return [(int(m[1]), int(m[2])) for m in cells if m]


def test_sdxl_lora_journey_through_start_compare_results_and_export(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    from bracket.app.forms import default_budget

    images = tmp_path / "images"
    images.mkdir()
    for n, colour in enumerate(("red", "blue", "green", "white")):
        Image.new("RGB", (64, 64), colour).save(images / f"{n}.png")
        (images / f"{n}.txt").write_text(f"zqx, a {colour} square", encoding="utf-8")  # zqx: the trigger word
    sd = install_inventory_scripts(tmp_path / "sd-scripts", "kohya-ss/sd-scripts", SD_SCRIPTS)
    model = tmp_path / "sdxl.safetensors"
    model.write_bytes(b"fake")
    python = make_fake_python(tmp_path / "bin")
    with launch_app(tmp_path, {}, ["--allow-custom-executables"]) as app, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, app.url)
        forms = {SDXL: ("vae_path", "ae_path"), FLUX: ("ae_path", "vae_path"), DEMO: ("cpu_threads", "model_path")}
        for label in (SDXL, FLUX, DEMO, SDXL):  # switches leave nothing of another preset (item 2)
            pick_preset(page, label, *forms[label])
        for name, value in (("model_path", model), ("sd_scripts_dir", sd), ("trainer_python", python),
                            ("dataset", images)):
            _fill(page, name, str(value))
        expect(page.locator("#bk-preflight")).to_contain_text("✓ Dataset pre-flight: 4 images")
        # the prompts are proposed from the dataset's captions, named with their source and trigger word;
        # they are accepted as proposed (item 1)
        prompts = page.locator("#bk-prompts textarea")
        expect(prompts).to_have_value(re.compile(r"^zqx, a red square --d 1\n"))
        proposed = prompts.input_value().splitlines()
        marker = proposed.index("# held-out")  # 4 captions, then held-out contexts of the trigger word
        assert marker == 4 and all(line.startswith("zqx, a ") for line in proposed[:marker]), proposed
        assert len(proposed) == 8 and all(line.startswith("zqx, ") for line in proposed[marker + 1:]), proposed
        expect(page.locator("#bk-prompts")).to_contain_text(f"Proposed from 4 captions of {images}")
        expect(page.locator("#bk-prompts")).to_contain_text("every caption starts with 'zqx'")
        # the default budget is the one whose plan reaches TPE, and the plan shown says so: its
        # warm start, LR bracket, shape draws as their own phase and two TPE proposals
        steps = int(page.locator("#bk-steps input").input_value())
        budget = page.locator("#bk-budget input")
        assert int(budget.input_value()) == default_budget("sdxl-lora", steps=steps)
        expect(page.locator("#bk-plan")).to_contain_text(re.compile(r"plan: baseline, \d+ curated, 2 LR bracket, "
                                                                    r"4 shape draws, 2 TPE"))
        # no run of this preset yet: the wall time is unknown
        expect(page.get_by_text("Wall-time estimate: unknown until the first run")).to_be_visible()
        # a short search for the walk: 3 configs, so no confirmation rung (its 4 runs are the default budget's)
        for box, value in (("#bk-budget input", "3"), ("#bk-steps input", "6"), ("#bk-confirm input", "0")):
            page.locator(box).fill(value)
            page.locator(box).press("Tab")
        expect(page.locator("#bk-plan")).to_contain_text("= 3 configs × 1 seed — plan: baseline, 2 curated")
        press_start(page)
        # Compare opened while the search runs: its runs arrive in the list without a click (item 6)
        page.get_by_role("tab", name="Compare").click()
        expect(page.locator("#bk-progress")).to_contain_text("3 / 3 runs", timeout=150_000)
        page.locator("#bk-compare-runs input").click()
        expect(page.get_by_role("option")).to_have_count(3)
        page.keyboard.press("Escape")
        page.locator("#bk-next-unrated").click()
        grid = page.locator("#bk-grid table.bk-grid")
        expect(grid.locator("img").first).to_be_visible()
        expect(grid).to_contain_text(proposed[0].split(" --d ")[0])  # the grid rows are the accepted prompts
        rating = page.locator("[id^=bk-rate-]").first
        rating.get_by_text("8", exact=True).click()
        expect(page.locator("#bk-rated")).to_contain_text("rated 8")
        # the rated run's chip shows its rating and new score without a click (item 6)
        expect(page.locator("#bk-compare-runs")).to_contain_text("rating 8")
        page.locator("#bk-next-pair").click()
        # every prompt (4 captions, 3 held-out) × two runs
        expect(page.locator("#bk-pair img")).to_have_count(2 * (len(proposed) - 1))
        page.locator("#bk-pair-left").click()
        expect(page.locator("#bk-pair-status")).to_contain_text("left is better")
        # the trial table reads each run as its config's place among the scored configs (issue 43 item 1)
        page.get_by_role("tab", name="Search").click()
        trials = _places(page, "#bk-trials", "rank")
        assert len(trials) == 3 and all(1 <= place <= count for place, count in trials), trials
        # Results: the leaderboard counts the rating and the vote, in quality; the winner's command is sd-scripts'
        page.get_by_role("tab", name="Results").click()
        board = page.locator("#bk-leaderboard")
        expect(board).to_contain_text("baseline")
        expect(board).to_contain_text("your baseline")  # each config against the baseline (issue 43 item 1)
        expect(page.locator("#bk-winner-cmd")).to_contain_text("sdxl_train_network.py")
        expect(page.locator("#bk-winner-cmd")).to_contain_text("--learning_rate")
        # export the winner (item 3)
        page.locator("#bk-export").click()
        expect(page.locator("#bk-export-msg")).to_contain_text("Exported run #")
        message = page.locator("#bk-export-msg").inner_text()
        # back on Setup, the same preset, steps and resolution now have finished runs to estimate from
        page.get_by_role("tab", name="Setup").click()
        page.locator("#bk-budget input").fill("4")
        page.locator("#bk-budget input").press("Tab")
        expect(page.get_by_text("Estimated wall time ≈")).to_contain_text("× 4 runs")
        browser.close()
    runs = [json.loads(line) for line in (sd / "commands.jsonl").read_text().splitlines()]
    assert len(runs) == 3 and all("--max_train_steps" in r["argv"] for r in runs)
    # the export folder: <session>/export/<config>-run<ID>-<steps>steps, the one the message names
    scripts = list(app.runs_dir.glob("*/export/*/train.sh"))
    assert len(scripts) == 1, scripts
    folder = scripts[0].parent
    found = re.fullmatch(r"(.+)-run(\d+)-(\d+)steps", folder.name)
    assert found and f"Exported run #{found[2]} ({found[1]}) at {found[3]} steps" in message, (folder.name, message)
    # the exported launcher, run from another working folder, trains with the fake sd-scripts
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(["bash", str(scripts[0])], cwd=elsewhere, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith("BRACKET_")})
    assert done.returncode == 0
    runs = [json.loads(line) for line in (sd / "commands.jsonl").read_text().splitlines()]
    argv = runs[-1]["argv"]
    assert len(runs) == 4 and argv[argv.index("--max_train_steps") + 1] == found[3], runs[-1]
    assert list(folder.rglob("events.out.tfevents.*")) and list(folder.rglob("*.safetensors")), \
        sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    assert not any(elsewhere.iterdir())  # it wrote nothing where it was started from


ZIMAGE = "Z-Image › Z-Image LoRA (base / Turbo)"


def test_zimage_lora_journey_through_start_and_the_first_grid(tmp_path):
    """The same walk on a musubi-tuner preset, through Start and the first grid."""
    from playwright.sync_api import expect, sync_playwright

    from bracket.trainer.inventory import flags_by_repo

    images = tmp_path / "images"
    images.mkdir()
    for n, colour in enumerate(("red", "blue", "green", "white")):
        Image.new("RGB", (64, 64), colour).save(images / f"{n}.png")
        (images / f"{n}.txt").write_text(f"zqx, a {colour} square", encoding="utf-8")
    scripts = [k for k in flags_by_repo()["kohya-ss/musubi-tuner"]["scripts"] if "/zimage_" in k]
    musubi = install_inventory_scripts(tmp_path / "musubi", "kohya-ss/musubi-tuner", scripts)
    values = {"musubi_dir": str(musubi), "trainer_python": str(make_fake_python(tmp_path / "bin")),
              "dataset": str(images)}
    for name in ("dit", "vae", "text_encoder"):
        (tmp_path / f"{name}.safetensors").write_bytes(b"fake")
        values[name] = str(tmp_path / f"{name}.safetensors")
    env = {"BRACKET_FAKE_SAMPLE_STYLE": "musubi"}  # musubi's sample names (frame suffix)
    with launch_app(tmp_path, env, ["--allow-custom-executables"]) as app, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, app.url)
        pick_preset(page, SDXL, "vae_path", "dit")
        pick_preset(page, ZIMAGE, "dit", "model_path")
        for name, value in values.items():
            _fill(page, name, value)
        expect(page.locator("#bk-preflight")).to_contain_text("Dataset pre-flight: 4 images")
        lines = _accept_proposed(page, f"Proposed from 4 captions of {images}")
        proposed = [line for line in lines if not line.startswith("#")]  # the held-out marker is a comment
        assert all(line.startswith("zqx, ") for line in proposed) and "# held-out" in lines, lines
        for box, value in (("#bk-budget input", "2"), ("#bk-steps input", "6"), ("#bk-confirm input", "0")):
            page.locator(box).fill(value)
            page.locator(box).press("Tab")
        expect(page.locator("#bk-plan")).to_contain_text("= 2 configs × 1 seed")
        press_start(page)
        page.get_by_role("tab", name="Compare").click()
        expect(page.locator("#bk-progress")).to_contain_text("2 / 2 runs", timeout=150_000)
        page.locator("#bk-next-unrated").click()
        grid = page.locator("#bk-grid table.bk-grid")
        expect(grid.locator("img")).to_have_count(2 * len(proposed))  # first and last step
        expect(grid).to_contain_text(proposed[0].split(" --d ")[0])
        browser.close()


AXOLOTL = "LLM (Axolotl) › Axolotl: LoRA / QLoRA"


def test_axolotl_lora_journey_through_start_and_the_first_grid(tmp_path):
    """The walk on an LLM preset (the fake Axolotl of tests/llm), through Start and the first grid."""
    from playwright.sync_api import expect, sync_playwright

    from tests.llm.llm_helpers import write_alpaca
    from tests.llm.test_llm_judges_session import dispatching_python

    (tmp_path / "model").mkdir()
    values = {"base_model": str(tmp_path / "model"), "dataset": str(write_alpaca(tmp_path / "alpaca.jsonl", rows=40)),
              "trainer_python": str(dispatching_python(tmp_path)), "eval_size": "6", "max_new_tokens": "16"}
    with launch_app(tmp_path, {"FAKE_LLM_ANSWERS": "sum"}, ["--allow-custom-executables"]) as app, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = open_app(browser, app.url)
        pick_preset(page, SDXL, "vae_path", "base_model")
        pick_preset(page, AXOLOTL, "base_model", "vae_path")
        for name, value in values.items():
            _fill(page, name, value)
        proposed = _accept_proposed(page, "held-out instructions of")  # the eval split's, not training rows
        for box, value in (("#bk-budget input", "2"), ("#bk-steps input", "4"), ("#bk-confirm input", "0")):
            page.locator(box).fill(value)
            page.locator(box).press("Tab")
        expect(page.locator("#bk-plan")).to_contain_text("= 2 configs × 1 seed")
        press_start(page)
        page.get_by_role("tab", name="Compare").click()
        expect(page.locator("#bk-progress")).to_contain_text("2 / 2 runs", timeout=200_000)
        page.locator("#bk-next-unrated").click()
        expect(page.locator("#bk-grid table.bk-grid")).to_contain_text(proposed[0].split(" --d ")[0])
        browser.close()
