"""install.ps1 keeps up with install.sh (issue 27): every option, variable and pinned package.

PowerShell is not installed here, so this cannot run install.ps1; it checks that the Windows
twin offers what install.sh offers, so a step added to one and forgotten in the other fails.
"""

from __future__ import annotations

import re

from tests.reliability.rel_helpers import ROOT

SH = (ROOT / "install.sh").read_text(encoding="utf-8")
PS1 = (ROOT / "install.ps1").read_text(encoding="utf-8")


def _switch(option: str) -> str:
    """``--llm-trainers`` -> ``LlmTrainers`` (PowerShell's switch for an install.sh option)."""
    return "".join(part.capitalize() for part in option.lstrip("-").split("-"))


def test_every_install_sh_option_is_an_install_ps1_switch():
    options = re.findall(r"^\s*(--[a-z][a-z-]*)\)", SH, flags=re.MULTILINE)
    assert "--trainers" in options and "--tests" in options
    for option in options:
        assert re.search(rf"\[switch\]\${_switch(option)}\b", PS1), f"install.ps1 has no -{_switch(option)}"
        assert f"-{_switch(option)}" in PS1, f"install.ps1's header does not explain -{_switch(option)}"


def test_every_variable_install_sh_documents_install_ps1_reads_too():
    header = "\n".join(line for line in SH.split("set -euo pipefail")[0].splitlines() if line.startswith("#"))
    read = set(re.findall(r"\b([A-Z][A-Z0-9_]+) \(", header))
    assert {"PYTHON", "TRAINER_TORCH", "TRAINER_TORCH_INDEX_URL"} <= read
    for name in sorted(read):
        assert f"$env:{name}" in PS1, f"install.ps1 ignores {name}"


def test_pinned_packages_are_the_same():
    pins = set(re.findall(r"\b([A-Za-z][A-Za-z0-9_.-]*==[0-9][0-9A-Za-z.*+]*)", SH))
    for pin in sorted(pins):
        assert pin in PS1, f"install.ps1 does not pin {pin}"


def test_install_ps1_is_plain_ascii():
    """No byte-order mark is needed only while the file is ASCII (PowerShell 5.1 reads ANSI)."""
    assert PS1.isascii()
