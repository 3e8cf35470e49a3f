"""No module reaches into another module's private names (docs/ARCHITECTURE.md; the checker is
tests/contract/private_names.py); the few that must are listed with their reason."""

from __future__ import annotations

from tests.contract.private_names import ALLOWED, house_reach_ins, reach_ins

FOUND = house_reach_ins()


def test_no_module_reads_another_modules_private_names():
    wrong = [f for f in FOUND if f not in ALLOWED]
    assert not wrong, "private names read from another module (give them a public name):\n" + "\n".join(wrong)


def test_every_allowed_reach_in_still_exists():
    stale = [f for f in ALLOWED if f not in FOUND]
    assert not stale, "allowed reach-ins that are gone (drop them from ALLOWED):\n" + "\n".join(stale)


def test_the_checker_catches_a_planted_reach_in(tmp_path):
    (tmp_path / "bracket").mkdir()
    (tmp_path / "bracket" / "a.py").write_text(
        "from __future__ import annotations\nfrom bracket.b import _hidden, shown\nfrom . import _x\n"
        "class A:\n    def f(self, other):\n        self._mine, super()._base, other.__len__\n"
        "        return other._theirs + mod._SECRET\n")
    assert house_reach_ins(tmp_path, ("bracket",)) == [
        "bracket/a.py: from bracket.b import _hidden", "bracket/a.py: from . import _x",
        "bracket/a.py: other._theirs", "bracket/a.py: mod._SECRET"]
    assert reach_ins("x = obj.public\n", "clean.py") == []
