"""The curated package ``__init__``s (``bracket.lazy_exports``): every public name resolves to
the object its module defines, an unknown name is an AttributeError, and importing a package
imports none of the modules behind its names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = ("bracket.report", "bracket.session", "bracket.session.process", "bracket.session.scoring",
            "bracket.session.store", "bracket.status")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_its_modules_object(package):
    module = importlib.import_module(package)
    assert module.__all__ and set(module.__all__) <= set(dir(module))
    for name in module.__all__:
        owner = importlib.import_module(f"{package}.{module._WHERE[name]}")
        assert getattr(module, name) is getattr(owner, name), name
    with pytest.raises(AttributeError, match="has no attribute 'not_a_name'"):
        module.__getattr__("not_a_name")


def test_importing_a_package_imports_none_of_its_modules():
    code = ("import sys, importlib\n"
            f"for package in {PACKAGES!r}:\n"
            "    module = importlib.import_module(package)\n"
            "    behind = {f'{package}.{m}' for m in module._WHERE.values()}\n"
            "    loaded = sorted(behind & set(sys.modules))\n"
            "    assert not loaded, (package, loaded)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
