"""Every preset's export stands without the session (issue 43, item 5): nothing an exported
command (or a command its script runs first) reads or writes lies in the session folder, except
the export's own folder and — only in the session-cache twin — the session's caches.

One test per preset in ``bracket.registry.PRESETS``, with fake inputs (``tests.contract.fakes``),
the way ``bracket.report.export.export_run`` builds it: the session's trainer (``cache_dir`` the
session's cache), a ``standalone`` request into ``<session>/export/<name>/run`` with its own
cache folder. A trainer that trains only from caches (musubi-tuner) must make them first.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bracket.registry import PRESETS
from bracket.trainer.base import RunRequest
from bracket.trainer.musubi.base import MusubiTrainer
from bracket.trainer.prompts import SamplePrompt
from tests.contract.fakes import built_trainer

PROMPTS = [SamplePrompt("a red fox in the snow", seed=11)]


def _toml(cmd) -> dict:
    return tomllib.loads(Path(cmd[list(cmd).index("--dataset_config") + 1]).read_text(encoding="utf-8"))


def _session_paths(text: str, session: Path, export: Path) -> bool:
    return str(session) in text.replace(str(export), "")


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_an_export_reads_nothing_of_the_session(preset, tmp_path):
    trainer, values, dataset, _folder = built_trainer(preset, tmp_path)
    session = (tmp_path / "session").resolve()
    trainer.session_setup_commands(dataset=dataset, run_dir=session / "setup")  # the session's caches' TOML
    exported = type(trainer)({**values, "cache_dir": str(session / "cache")})
    folder = session / "export" / "winner-run1-40steps"
    knobs = exported.config_from_dict(exported.baseline_config().knobs)
    request = RunRequest(run_dir=folder / "run", knobs=knobs, dataset=dataset, max_steps=40, seed=1,
                         sample_prompts=PROMPTS if exported.writes_samples else (), sample_every_n_steps=10,
                         standalone=True, cache_dir=folder / "cache")
    spec = exported.prepare_run(request)
    setup = exported.export_setup_commands(request)
    twin = exported.session_cache_variant(request, spec)
    words = [str(w) for launch in (spec, *setup) for w in launch.cmd] + [str(spec.cwd)]
    assert not [w for w in words if _session_paths(w, session, folder)], words
    written = [p for p in folder.rglob("*") if p.is_file() and p.name != "dataset.session-cache.toml"]
    for path in written:
        assert not _session_paths(path.read_text(encoding="utf-8", errors="replace"), session, folder), path
    if isinstance(exported, MusubiTrainer):  # trains only from caches: the script makes its own first
        assert [s.label for s in setup] == ["cache latents", "cache text encoder outputs"]
        own = {d["cache_directory"] for d in _toml(spec.cmd)["datasets"]}
        assert all({d["cache_directory"] for d in _toml(s.cmd)["datasets"]} == own for s in setup)
        assert all(Path(c).is_relative_to(folder / "cache") for c in own)
    else:
        assert setup == []
    if twin is not None:
        folders, command = twin
        assert all(Path(f).is_relative_to(session / "cache") for f in folders) and command[0] == spec.cmd[0]
