"""The contract test's own checker catches what it claims to catch."""

from __future__ import annotations

from tests.contract.inventory import find_script, flag_problems, load_inventory, toml_problems

FLAGS, KEYS = load_inventory()
SDXL = FLAGS["kohya-ss/sd-scripts"]["scripts"]["sdxl_train_network.py"]
GOOD = ["--pretrained_model_name_or_path", "m", "--network_module", "networks.lora", "--output_dir", "o",
        "--dataset_config", "d.toml"]


def test_good_command_has_no_problems():
    assert flag_problems(GOOD + ["--gradient_checkpointing", "--optimizer_args", "a=1", "b=2"], SDXL) == []


def test_each_kind_of_mistake_is_reported():
    problems = flag_problems(
        GOOD + ["--text_encoder_lr1", "1e-5", "--gradient_checkpointing", "true", "--mixed_precision", "fp64",
                "--seed", "1", "2", "--seed", "3"], SDXL)
    text = "\n".join(problems)
    assert "--text_encoder_lr1 is not a flag" in text
    assert "--gradient_checkpointing takes no value" in text
    assert "--mixed_precision ['fp64'] not among" in text
    assert "--seed takes one value" in text and "--seed is given twice" in text


def test_required_in_practice_alternatives():
    assert any("--dataset_config|--train_data_dir" in p for p in flag_problems(GOOD[:6], SDXL))
    assert flag_problems(GOOD[:6] + ["--train_data_dir", "x"], SDXL) == []


def test_script_matching_covers_musubi_paths_and_wrappers():
    assert find_script(["py", "/x/sd-scripts/flux_train.py"], FLAGS).key == "flux_train.py"
    entry = find_script(["py", "-m", "accelerate", "/m/src/musubi_tuner/wan_train_network.py"], FLAGS)
    assert (entry.repo, entry.index) == ("kohya-ss/musubi-tuner", 3)
    assert find_script(["py", "/m/wan_train_network.py"], FLAGS).key == "src/musubi_tuner/wan_train_network.py"
    assert find_script(["py", "/x/demo_train.py"], FLAGS) is None


def test_toml_keys(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text("[general]\nbatch_size = 1\n[[datasets]]\nresolution = 512\n"
                    "[[datasets.subsets]]\nimage_dir = 'x'\n")
    assert toml_problems(good, "kohya-ss/sd-scripts", KEYS) == []
    bad = tmp_path / "bad.toml"
    bad.write_text("[general]\ncache_directory = 'c'\n[[datasets]]\nimage_directory = 'x'\n")
    problems = toml_problems(bad, "kohya-ss/sd-scripts", KEYS)
    assert any("cache_directory" in p for p in problems) and any("image_directory" in p for p in problems)
    assert toml_problems(bad, "kohya-ss/musubi-tuner", KEYS) == ["[general] key 'cache_directory' is not allowed"]
    musubi = tmp_path / "musubi.toml"
    musubi.write_text("[general]\nbatch_size = 1\n[[datasets]]\nimage_directory = 'x'\ncache_directory = 'c'\n")
    assert toml_problems(musubi, "kohya-ss/musubi-tuner", KEYS) == []
