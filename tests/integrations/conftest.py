"""Fixtures for the framework adapter tests (helpers live in ``_rig``)."""

from ._rig import make_rig  # noqa: F401  (the fixture)
