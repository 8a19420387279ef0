"""Progress bars for the long operations: import, load, export, evolve, index rebuild.

Off unless asked for (``progress=True`` in the API); the command line asks for them when
stderr is a terminal and ``--quiet`` is not given. tqdm draws them; without it (a slim
install), a plain counter line on stderr does.
"""

from __future__ import annotations

import sys
from types import TracebackType


class Progress:
    """A counter shown on stderr while it runs; a no-op when disabled.

    Args:
        total: How many units there will be (None when unknown).
        desc: What is being done ("loading").
        unit: What one unit is ("record").
        enabled: False makes every method a no-op.
    """

    def __init__(self, total: int | None, desc: str, unit: str, *, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total
        self.desc = desc
        self.unit = unit
        self.count = 0
        self._bar = None
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency; slim installs fall back
            return
        self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        if not self.enabled:
            return
        self.count += n
        if self._bar is not None:
            self._bar.update(n)
        else:
            of = f"/{self.total}" if self.total is not None else ""
            print(f"\r{self.desc} {self.count}{of} {self.unit}", end="", file=sys.stderr)

    def close(self) -> None:
        """Remove the bar (or end the counter line)."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            print(file=sys.stderr)
        self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def wanted(quiet: bool) -> bool:
    """The command line's default: bars on a terminal, never with ``--quiet``."""
    return not quiet and sys.stderr.isatty()
