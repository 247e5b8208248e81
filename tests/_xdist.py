"""Groups for pytest-xdist: `--dist loadgroup` by a table of module (or module::test) -> group, given by
tests/conftest.py (XDIST_GROUPS). Each group is one unit of work that one worker runs test after test; every
other test is a unit of its own. The units named in conftest's XDIST_FIRST go first, in its order (the longest
first, so that no long one starts late and runs alone at the end), then the other groups, most tests first, then
the other tests in the order pytest collected them.

pytest-xdist's own loadgroup reads `xdist_group` marks through a suffix it appends to the test ids, which pytest 9
no longer keeps, so its groups fall apart; this scheduler reads the table instead.
"""
from __future__ import annotations

import pytest


def group_of(nodeid: str, groups: dict[str, str]) -> str | None:
    """The group of a test id (tests/test_x.py::test_y[param]) in `groups`, or None. A key names a module, a test
    (module::test: each of its parameters) or the parameters of a test whose id begins with what follows the
    bracket (module::test[ex01: test_y[ex01_tracing] and test_y[ex01_tracing.count_nodes: ...]); the most
    precise key that matches decides."""
    path, _, test = nodeid.partition("::")
    module = path.rsplit("/", 1)[-1]
    if "[" in test:
        own = f"{module}::{test}"
        found = [key for key in groups if "[" in key and own.startswith(key)]
        if found:
            return groups[max(found, key=len)]
    return groups.get(f"{module}::{test.split('[', 1)[0]}") or groups.get(module)


def first(scope: str, order: tuple[str, ...]) -> int:
    """Where a unit (`group:NAME` or a test id) goes in `order` (group names, modules or module::test prefixes,
    without the tests/ folder): its index, or len(order) when it is not named there."""
    name = scope.removeprefix("group:") if scope.startswith("group:") else scope.rsplit("/", 1)[-1]
    for i, key in enumerate(order):
        if name == key or (not scope.startswith("group:") and name.startswith(key if "::" in key else key + "::")):
            return i
    return len(order)


def scheduler(config: pytest.Config, log, groups: dict[str, str], order: tuple[str, ...] = ()):
    """The scheduler for `--dist loadgroup` (None for any other --dist: pytest-xdist's own then)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            group = group_of(nodeid, groups)
            return f"group:{group}" if group else nodeid

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:  # the first assignment: the queue is whole (groups by size, then tests)
                self._ordered = True
                units = sorted(self.workqueue.items(), key=lambda unit: first(unit[0], order))  # stable
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)
