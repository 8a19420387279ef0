"""The one exception tree of sage_memory.

    SageMemoryError
    ├── ConfigError(ValueError)        bad configuration or arguments at construction
    ├── ValidationError(ValueError)    bad input to a call (empty text, bad scope, too long)
    ├── NotFoundError(KeyError)        an id that is not in this scope
    ├── StorageError(OSError)          the folder cannot be opened, is locked, or is corrupt
    │   └── FolderBusyError            another process owns the memory folder
    ├── DependencyError(ImportError)   an optional package or the model weights are missing
    └── ExtractionError                an extractor or an LLM returned something unusable

Every message says the value, the rule it broke and how to fix it.
"""

from __future__ import annotations


class SageMemoryError(Exception):
    """Root of every error raised by sage_memory."""


class ConfigError(SageMemoryError, ValueError):
    """A configuration value or constructor argument is unusable."""


class ValidationError(SageMemoryError, ValueError):
    """An argument to a call breaks a documented rule (empty text, bad scope, too long...)."""


class NotFoundError(SageMemoryError, KeyError):
    """An id that does not exist in the scope it was asked for."""

    def __str__(self) -> str:  # KeyError would repr() the message; keep it readable
        return str(self.args[0]) if self.args else "not found"


class StorageError(SageMemoryError, OSError):
    """The storage folder cannot be used: unwritable, locked by another process, corrupt."""


class FolderBusyError(StorageError):
    """Another process owns the memory folder (open it with ``read_only=True`` to read, or
    wait for the owner; many writers means server mode)."""


class DependencyError(SageMemoryError, ImportError):
    """An optional dependency (or the local model weights) is not installed."""


class ExtractionError(SageMemoryError):
    """An extractor produced output that could not be parsed or validated."""


def require(module: str, install: str) -> None:
    """Fail with a DependencyError naming the command that installs ``module``."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise DependencyError(
            f"this feature needs the package {module!r}; install it with: {install}"
        )
