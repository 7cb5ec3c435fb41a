"""The public surface: every name in ``__all__`` is importable, and nothing public is missing."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import otel_cycleguard

# Subpackages whose import needs an optional extra are skipped when the extra is absent.
SUBPACKAGES = sorted(
    info.name
    for info in pkgutil.walk_packages(otel_cycleguard.__path__, "otel_cycleguard.")
    if info.ispkg
)


def test_root_all_is_exactly_the_public_api():
    """`otel_cycleguard.__all__` names every public member and no module or private helper.

    The root imports lazily, so its public members are what ``dir()`` lists; each resolves to a
    class, function or the version, never a module."""
    exported = set(otel_cycleguard.__all__)
    public = {
        name
        for name in dir(otel_cycleguard)
        if not name.startswith("_")
        and not isinstance(getattr(otel_cycleguard, name), types.ModuleType)
    }
    assert exported - {"__version__"} == public - {"annotations", "TYPE_CHECKING"}
    for name in exported:
        assert not isinstance(getattr(otel_cycleguard, name), types.ModuleType), name
    assert len(otel_cycleguard.__all__) == len(exported), "duplicates in __all__"


def test_root_refuses_an_unknown_name():
    """A name the root does not export raises AttributeError, as for any module."""
    with pytest.raises(AttributeError):
        otel_cycleguard.not_a_member  # noqa: B018


@pytest.mark.parametrize("name", otel_cycleguard.__all__)
def test_each_root_name_is_importable(name):
    """`from otel_cycleguard import <name>` works for every exported name."""
    namespace: dict = {}
    exec(f"from otel_cycleguard import {name}", namespace)
    assert namespace[name] is getattr(otel_cycleguard, name)


def test_version_matches_the_distribution():
    """`__version__` is the installed distribution's version."""
    from importlib.metadata import version

    assert otel_cycleguard.__version__ == version("otel-cycleguard")


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_subpackage_all_is_importable_and_complete(package):
    """Every subpackage has an `__all__`; each name in it exists and nothing public is left out."""
    module = importlib.import_module(package)
    assert hasattr(module, "__all__"), f"{package} has no __all__"
    for name in module.__all__:
        assert hasattr(module, name), f"{package}.__all__ names missing {name!r}"
    public = {
        name
        for name in dir(module)  # lazy packages list their exports in __dir__
        if not name.startswith("_") and not isinstance(getattr(module, name), types.ModuleType)
    }
    assert set(module.__all__) >= public - {"annotations", "TYPE_CHECKING"}, (
        f"{package}: public names not in __all__"
    )
