"""kaleido (and choreographer, which it ships with): what static export uses beyond their public API.

* Warm exports: kaleido reloads its page (parsing plotly.js afresh) after every
  image before it hands the image back, most of a warm export's time. On the
  kaleido versions the tests cover (``TESTED``), :func:`fast_tab_reuse` hands
  the tab straight back and reloads it only every ``RELOAD_EVERY`` images, in
  the background, by overriding kaleido's private ``_return_kaleido_tab``;
  elsewhere kaleido's own behaviour stands.
* Finding the browser: choreographer's public ``Chromium.find_browser``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from . import in_range

__all__ = ["TESTED", "RELOAD_EVERY", "version_tested", "fast_tab_reuse", "find_chromium"]

TESTED = ((1, 0), (2, 0))  # [from, to) major.minor: the range pyproject.toml allows and the tests run
RELOAD_EVERY = 32


def version_tested() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return in_range(TESTED, version("kaleido"))
    except PackageNotFoundError:
        return False


def fast_tab_reuse(base: type) -> type:
    """``base`` (kaleido's ``Kaleido``) with tabs handed back before their reload,
    or ``base`` itself where that is not known to be safe."""
    if not version_tested() or not hasattr(base, "_return_kaleido_tab"):
        return base

    class _Kaleido(base):
        async def _return_kaleido_tab(self, tab: Any) -> None:
            uses = self.__dict__.setdefault("_smemviz_uses", {})
            uses[id(tab)] = uses.get(id(tab), 0) + 1
            if uses[id(tab)] % RELOAD_EVERY:  # read at each use, so a test can lower it
                await self.tabs_ready.put(tab)
                return

            async def reload_then_return() -> None:
                try:
                    await tab.reload()
                finally:
                    await self.tabs_ready.put(tab)

            pending = self.__dict__.setdefault("_smemviz_reloads", set())
            task = asyncio.get_running_loop().create_task(reload_then_return())
            pending.add(task)
            task.add_done_callback(pending.discard)

    return _Kaleido


def find_chromium() -> str | None:
    """The Chrome/Chromium choreographer would start, or ``None``."""
    try:
        from choreographer.browsers.chromium import Chromium
    except ImportError:
        return None
    return Chromium.find_browser(skip_local=False) or None
