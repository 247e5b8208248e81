"""Groups for pytest-xdist: `--dist loadgroup` by a table of module (or module::test) -> group, given by
tests/conftest.py (XDIST_GROUPS). Each group is one unit of work that one worker runs test after test; every
other test is a unit of its own; the units with the most tests are sent first.

pytest-xdist's own loadgroup reads `xdist_group` marks through a suffix it appends to the test ids, which pytest 9
no longer keeps, so its groups fall apart; this scheduler reads the table instead.
"""
from __future__ import annotations

import pytest


def group_of(nodeid: str, groups: dict[str, str]) -> str | None:
    """The group of a test id (tests/test_x.py::test_y[param]) in `groups`, or None."""
    path, _, test = nodeid.partition("::")
    module = path.rsplit("/", 1)[-1]
    return groups.get(f"{module}::{test.split('[', 1)[0]}") or groups.get(module)


def scheduler(config: pytest.Config, log, groups: dict[str, str]):
    """The scheduler for `--dist loadgroup` (None for any other --dist: pytest-xdist's own then)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            group = group_of(nodeid, groups)
            return f"group:{group}" if group else nodeid

    return GroupScheduling(config, log)
