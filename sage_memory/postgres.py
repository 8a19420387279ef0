"""Connecting to PostgreSQL: one pool per backend object, errors that name the fix.

Shared by :class:`~sage_memory.index.postgres.PostgresVectorIndex` and
:class:`~sage_memory.store.postgres.PostgresGraphStore`. psycopg 3 and psycopg_pool are imported
only when a pool is opened, so ``import sage_memory`` never needs them.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from sage_memory.errors import ConfigError, DependencyError, StorageError

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["open_pool", "schema_for", "translate_error"]

_INSTALL_HINT = (
    "server mode needs psycopg 3 and psycopg_pool; install them with: "
    "pip install 'sage-graph-memory[postgres]'"
)

#: A PostgreSQL identifier we create ourselves: lowercase, digits, underscore, < 64 bytes.
_SCHEMA_RE = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def schema_for(label: str) -> str:
    """A valid, deterministic schema name for an arbitrary label (a test folder, say)."""
    return "sm_" + hashlib.blake2b(label.encode("utf-8"), digest_size=12).hexdigest()


def check_schema(schema: str) -> str:
    """Reject schema names that would need quoting rules users could get wrong."""
    if not _SCHEMA_RE.fullmatch(schema):
        raise ConfigError(
            f"schema {schema!r} is not a plain PostgreSQL identifier; use lowercase letters, "
            "digits and underscores (at most 63), starting with a letter or underscore"
        )
    return schema


def split_schema(url: str, default: str = "sage_memory") -> tuple[str, str]:
    """Take our own ``schema=NAME`` query parameter out of a URL (libpq would reject it).

    ``postgresql://host/db?schema=team_a`` keeps one memory per schema in a shared database.
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = default
    kept = []
    for key, value in query:
        if key == "schema":
            schema = value
        else:
            kept.append((key, value))
    return urlunsplit(parts._replace(query=urlencode(kept))), check_schema(schema)


def _redact(url: str) -> str:
    """The URL without its password, for error messages."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


def translate_error(url: str, error: Exception) -> StorageError:
    """A StorageError that says what went wrong connecting to ``url`` and how to fix it."""
    text = str(error).strip()
    where = _redact(url)
    lowered = text.casefold()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        fix = "check the user and password in the URL (or PGPASSWORD / ~/.pgpass)"
    elif "does not exist" in lowered and "database" in lowered:
        fix = "create the database first (createdb NAME) or name an existing one in the URL"
    elif (
        "connection refused" in lowered
        or "could not translate host name" in lowered
        or "timeout" in lowered
        or "no such file or directory" in lowered
        or "couldn't get a connection" in lowered
    ):
        fix = "check that PostgreSQL runs and that host and port in the URL are right"
    else:
        fix = "check the URL and that the server accepts connections from this machine"
    return StorageError(f"cannot use PostgreSQL at {where}: {text}; {fix}")


def open_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 8,
    timeout: float = 10.0,
    search_path: str | None = None,
) -> Any:
    """Open a psycopg connection pool on ``url`` and check one connection works.

    Raises:
        DependencyError: If psycopg or psycopg_pool is not installed.
        StorageError: If the server cannot be reached or refuses the login (the message says
            which and what to fix).
    """
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError as error:
        raise DependencyError(_INSTALL_HINT) from error
    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            f"{_redact(url)!r} is not a PostgreSQL URL; write postgresql://USER:PASSWORD@HOST/DB"
        )
    try:
        # Fail fast with the server's own message (a pool would retry and time out vaguely).
        psycopg.connect(url, connect_timeout=int(timeout)).close()
    except psycopg.Error as error:
        raise translate_error(url, error) from error
    kwargs: dict[str, Any] = {"autocommit": False}
    if search_path is not None:
        kwargs["options"] = f"-c search_path={check_schema(search_path)},public"
    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
        open=True,
        kwargs=kwargs,
    )
    return pool


def ensure_pgvector(pool: Any, url: str) -> None:
    """Create the pgvector extension when missing, or fail naming how to install it."""
    import psycopg

    with pool.connection() as conn:
        installed = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        conn.rollback()
        if installed is not None:
            return  # nothing to do, and a user without CREATE rights gets this far
        try:
            available = conn.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if available is None:
                raise StorageError(
                    f"the PostgreSQL server at {_redact(url)} has no pgvector extension; "
                    "install pgvector >= 0.5 on the server (for example the package "
                    "postgresql-16-pgvector, or enable 'vector' on a managed service)"
                )
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            conn.commit()
        except psycopg.errors.UniqueViolation:
            conn.rollback()  # another process created it at the same moment
        except psycopg.errors.InsufficientPrivilege as error:
            conn.rollback()
            raise StorageError(
                f"the user cannot create the pgvector extension at {_redact(url)}; run "
                "'CREATE EXTENSION vector;' once as a superuser or the database owner"
            ) from error
