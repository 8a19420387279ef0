"""When a run happens besides an explicit ``evolve()``: after adds, or on a background timer."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from sage_memory.config import SageConfig
from sage_memory.evolve.state import load_state
from sage_memory.store.base import EvolvingStore
from sage_memory.types import Scope


class Triggers:
    """Decides after each add whether a scope is due for a run (every N adds, growth by X%)."""

    def __init__(self, store: EvolvingStore, config: SageConfig) -> None:
        self.store = store
        self.cfg = config.evolve
        self._adds: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.cfg.every_n_adds > 0 or self.cfg.every_growth_percent > 0

    def after_add(self, scope: Scope, count: int) -> bool:
        """Count ``count`` adds to ``scope``; True when a run is due (the counter restarts)."""
        if not self.enabled:
            return False
        key = scope.partition.key
        with self._lock:
            self._adds[key] += count
            due = 0 < self.cfg.every_n_adds <= self._adds[key]
        if not due and self.cfg.every_growth_percent > 0:
            base = int(load_state(self.store, scope).get("raw", {}).get("nodes", 0))
            nodes, _ = self.store.count_graph(scope.partition)
            due = nodes >= max(1, base) * (1 + self.cfg.every_growth_percent / 100)
        if due:
            with self._lock:
                self._adds[key] = 0
        return due


class Schedule:
    """The opt-in background thread: calls ``job`` every ``seconds`` until stopped."""

    def __init__(self, seconds: float, job: Callable[[], object]) -> None:
        self.seconds = seconds
        self.job = job
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sage-evolver", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.job()
            except Exception as exc:  # a failed run must not kill the schedule; keep the last few
                self.errors = [*self.errors[-9:], exc]

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
