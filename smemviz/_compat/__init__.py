"""Every use smemviz makes of another package's private parts, one module per package.

Each module states the versions its tests cover and checks, before using a
private part, that the installed version is one of them and that the part is
there; outside that range smemviz takes the package's public API instead
(slower or plainer, never wrong). Nothing else in smemviz touches another
package's internals.
"""

from __future__ import annotations

__all__ = ["in_range"]


def in_range(tested: tuple[tuple[int, int], tuple[int, int]], version: str) -> bool:
    """Whether ``version`` ("7.1.0", "1.5.0rc1") lies in ``[tested[0], tested[1])`` by major.minor."""
    parts = (version.split(".") + ["0"])[:2]
    try:
        major_minor = (int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0))
    except ValueError:
        return False
    return tested[0] <= major_minor < tested[1]
