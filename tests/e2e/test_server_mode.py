"""Server mode end to end: SageMemory(url=...) on a real PostgreSQL, several processes at once."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections import Counter
from pathlib import Path

import pytest

from sage_memory import SageMemory
from sage_memory.errors import ConfigError
from sage_memory.store.base import name_key
from sage_memory.types import Scope


def _url(postgres_url: str, schema: str) -> str:
    sep = "&" if "?" in postgres_url else "?"
    return f"{postgres_url}{sep}schema={schema}"


@pytest.fixture
def url(postgres_url: str) -> str:
    return _url(postgres_url, "t_" + uuid.uuid4().hex[:12])


def test_add_search_reopen(url: str) -> None:
    mem = SageMemory(url=url, embedder="hashing")
    mem.add("Alice lives in Paris", user_id="alice")
    mem.add("Bob lives in Rome", user_id="bob")
    hits = mem.search("where does alice live?", user_id="alice").memories
    assert [m.text for m in hits] == ["Alice lives in Paris"]
    mem.close()
    again = SageMemory(url=url, embedder="hashing")
    try:
        assert [m.text for m in again.get_all(user_id="alice")] == ["Alice lives in Paris"]
        # Bob's memory never reaches Alice's results.
        assert "Bob lives in Rome" not in [
            m.text for m in again.search("Rome", user_id="alice").memories
        ]
    finally:
        again.close()


def test_url_and_folder_together_is_a_config_error(url: str, tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="not both"):
        SageMemory(str(tmp_path), url=url)


WRITER = textwrap.dedent(
    """
    import sys
    from sage_memory import SageMemory
    url, worker = sys.argv[1], int(sys.argv[2])
    mem = SageMemory(url=url, embedder="hashing")
    cities = ["Paris", "Rome", "Oslo", "Lima", "Kyoto"]
    for i in range(15):
        mem.add(f"Alice lives in {cities[(worker + i) % len(cities)]}", user_id="shared")
    mem.close()
    print("ok")
    """
)


def test_processes_writing_one_scope_never_duplicate_or_double_current(url: str) -> None:
    SageMemory(url=url, embedder="hashing").close()  # create the schema once, up front
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, str(worker)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.strip() == "ok"

    mem = SageMemory(url=url, embedder="hashing")
    try:
        scope = Scope(user_id="shared")
        assert mem.store.count_memories(scope) == 60  # no acknowledged write lost
        nodes = mem.store.list_nodes(scope)
        names = Counter(name_key(n.name) for n in nodes)
        assert names and max(names.values()) == 1, names  # no duplicate node
        alice = [n for n in nodes if name_key(n.name) == "alice"]
        assert len(alice) == 1
        current = [
            e
            for e in mem.store.edges_of(scope, [alice[0].id], direction="out")
            if e.relation == "LIVES_IN" and e.expired_at is None and e.valid_to is None
        ]
        assert len(current) == 1, current  # one current value of a single-valued relation
    finally:
        mem.close()


def test_cli_db_flag_and_env(url: str) -> None:
    env = {**os.environ, "SAGE_EMBEDDER": "hashing"}
    cli = [sys.executable, "-m", "sage_memory.cli", "--embedder", "hashing"]
    add = subprocess.run(
        [*cli, "--db", url, "--user", "bob", "add", "Bob lives in Oslo", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    mid = json.loads(add.stdout)["memory_id"]
    found = subprocess.run(
        [*cli, "--user", "bob", "search", "Oslo", "--json"],
        capture_output=True,
        text=True,
        env={**env, "SAGE_MEMORY_URL": url},
        check=True,
    )
    assert json.loads(found.stdout)["memories"][0]["id"] == mid


def test_cli_load_into_the_server(url: str, tmp_path: Path) -> None:
    source = SageMemory(None, embedder="hashing")
    source.add("Carol lives in Lima", user_id="carol")
    source.export(tmp_path / "all.jsonl", user_id="carol")
    source.close()
    cli = [sys.executable, "-m", "sage_memory.cli", "--embedder", "hashing"]
    loaded = subprocess.run(
        [*cli, "--db", url, "load", str(tmp_path / "all.jsonl"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(loaded.stdout)["memories"] == 1
    with SageMemory(url=url, embedder="hashing") as mem:
        assert mem.search("Lima", user_id="carol").memories[0].text == "Carol lives in Lima"


MIXED = textwrap.dedent(
    """
    import json, random, sys
    from sage_memory import SageMemory
    from sage_memory.errors import NotFoundError
    url, worker = sys.argv[1], int(sys.argv[2])
    rng = random.Random(worker)
    mem = SageMemory(url=url, embedder="hashing")
    cities = ["Paris", "Rome", "Oslo", "Lima", "Kyoto", "Quito"]
    mine, acks = [], []
    for step in range(14):
        roll = rng.random()
        if roll < 0.5 or not mine:
            text = f"Alice lives in {rng.choice(cities)}"
            mid = mem.add(text, user_id="shared").memory_id
            mine.append(mid)
            acks.append(["add", mid, text])
        elif roll < 0.7:
            mid, text = rng.choice(mine), f"Alice lives in {rng.choice(cities)}"
            mem.update(mid, text, user_id="shared")
            acks.append(["update", mid, text])
        elif roll < 0.85:
            mid = mine.pop(rng.randrange(len(mine)))
            mem.delete(mid, user_id="shared")
            acks.append(["delete", mid, ""])
        else:
            mem.evolve(user_id="shared")
    mem.close()
    print(json.dumps(acks))
    """
)


def test_processes_adding_updating_deleting_and_evolving_stay_consistent(url: str) -> None:
    """The cross-process lock covers update, delete and evolve as well as add: with three
    processes mixing them on one scope, every acknowledged write is there as last written,
    every delete is gone, no node is duplicated, one value is current, and each row's journal
    is an unbroken chain (each change starts from the state the previous one left)."""
    from sage_memory.codec import record_from_dict

    SageMemory(url=url, embedder="hashing").close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MIXED, url, str(worker)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(3)
    ]
    acks: list[list[str]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        acks += json.loads(out)
    mem = SageMemory(url=url, embedder="hashing")
    try:
        scope = Scope(user_id="shared")
        last: dict[str, str | None] = {}
        for op, mid, text in acks:  # one writer per memory id, so its acks are in order
            last[mid] = None if op == "delete" else text
        stored = {m.id: m.text for m in mem.store.list_memories(scope, include_archived=True)}
        assert stored == {mid: t for mid, t in last.items() if t is not None}
        nodes = mem.store.list_nodes(scope)
        names = Counter(name_key(n.name) for n in nodes)
        assert names and max(names.values()) == 1, names
        alice = [n for n in nodes if name_key(n.name) == "alice"]
        current = [
            e
            for e in mem.store.edges_of(scope, [a.id for a in alice], direction="out")
            if e.relation == "LIVES_IN" and e.expired_at is None and e.valid_to is None
        ]
        assert len(current) <= 1, current
        rows = [*mem.store.list_memories(scope, include_archived=True), *nodes]
        rows += mem.store.list_edges(scope)
        for row in rows:
            chain = [c for _, c in mem.store.journal(entity_id=row.id)]
            assert chain, f"no journal for {row.id}"
            for earlier, later in itertools.pairwise(chain):
                assert later.before == earlier.after, f"a lost update on {row.id}"
            assert record_from_dict(chain[-1].entity, chain[-1].after or {}) == row
    finally:
        mem.close()


def test_pg_dump_restores_into_a_working_memory(postgres_url: str, url: str) -> None:
    """The README's backup recipe: pg_dump of the memory's schema, restored with psql into a
    database that has the vector extension, opens as the same memory."""
    import shutil
    from pathlib import Path

    import psycopg

    from sage_memory.postgres import split_schema

    try:
        import pgserver

        bin_dir = Path(pgserver.__file__).parent / "pginstall" / "bin"
    except ImportError:  # pragma: no cover - a server of your own: its tools on PATH
        bin_dir = Path(shutil.which("pg_dump") or "pg_dump").parent
    if not (bin_dir / "pg_dump").exists():
        pytest.skip("pg_dump is not installed here")
    with SageMemory(url=url, embedder="hashing") as mem:
        mem.add("Alice lives in Paris", user_id="alice")
        mem.add("Bob works at Acme", user_id="bob")
        before = {m.id: m.text for u in ("alice", "bob") for m in mem.get_all(user_id=u)}
    plain, schema = split_schema(url)
    target_db = "restore_" + uuid.uuid4().hex[:8]
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {target_db}")
    from urllib.parse import urlsplit, urlunsplit

    target = urlunsplit(urlsplit(plain)._replace(path=f"/{target_db}"))
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    dump = subprocess.run(
        [str(bin_dir / "pg_dump"), "--schema", schema, "--dbname", plain],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    subprocess.run(
        [str(bin_dir / "psql"), "--quiet", "--set", "ON_ERROR_STOP=1", "--dbname", target],
        input=dump,
        capture_output=True,
        text=True,
        check=True,
    )
    sep = "&" if "?" in target else "?"
    with SageMemory(url=f"{target}{sep}schema={schema}", embedder="hashing") as copy:
        after = {m.id: m.text for u in ("alice", "bob") for m in copy.get_all(user_id=u)}
        assert after == before
        hits = copy.search("where does alice live", user_id="alice").memories
        assert hits[0].text == "Alice lives in Paris"
        copy.add("Alice moved to Rome", user_id="alice")  # and it takes writes


def test_cli_path_on_the_command_line_wins_over_the_url_in_the_environment(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's round trip (`--db URL export`, then `--path ./copy load`) with
    $SAGE_MEMORY_URL still set in the shell: the folder named by --path gets the write."""
    from sage_memory.cli import main

    monkeypatch.setenv("SAGE_MEMORY_URL", url)
    folder = tmp_path / "copy"
    cli = ["--embedder", "hashing", "--user", "dora"]
    assert main(["--path", str(folder), *cli, "add", "Dora lives in Quito"]) == 0
    with SageMemory(folder, embedder="hashing") as mem:
        assert [m.text for m in mem.get_all(user_id="dora")] == ["Dora lives in Quito"]
    with SageMemory(url=url, embedder="hashing") as server:
        assert server.get_all(user_id="dora") == []
    # No flag: the environment's server, as before.
    assert main([*cli, "add", "Dora works at Acme"]) == 0
    with SageMemory(url=url, embedder="hashing") as server:
        assert [m.text for m in server.get_all(user_id="dora")] == ["Dora works at Acme"]
    capsys.readouterr()
    assert main(["--path", str(folder), "--db", url, *cli, "stats"]) == 2
    assert "not both" in capsys.readouterr().err


EXTRACTOR = textwrap.dedent(
    """
    import sys
    from sage_memory import SageMemory
    with SageMemory(url=sys.argv[1], embedder="hashing") as mem:
        print(len(mem.extract_pending()))
    """
)


def test_processes_extracting_pending_memories_at_once_build_each_graph_once(
    postgres_url: str, url: str
) -> None:
    texts = [f"{name} lives in {city}" for name, city in zip("ABCDEFGH", "KLMNOPQR", strict=True)]
    reference_url = _url(postgres_url, "t_" + uuid.uuid4().hex[:12])

    def facts(at: str) -> set[tuple[str, str, str]]:
        with SageMemory(url=at, embedder="hashing") as mem:
            sub = mem.graph(user_id="u")
        names = {n.id: n.name for n in sub.nodes}
        return {(names[e.source_id], e.relation, names[e.target_id]) for e in sub.edges}

    with SageMemory(url=reference_url, embedder="hashing") as mem:
        mem.add_many(texts, user_id="u")
    with SageMemory(url=url, embedder="hashing") as mem:
        mem.add_many(texts, user_id="u", defer=True)
        assert mem.stats()["pending"] == len(texts)
    procs = [
        subprocess.Popen([sys.executable, "-c", EXTRACTOR, url], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    counts = [int(p.communicate(timeout=600)[0].strip()) for p in procs]
    assert sum(counts) == len(texts)  # each memory claimed by exactly one process
    with SageMemory(url=url, embedder="hashing") as mem:
        assert mem.stats()["pending"] == 0
    assert facts(url) == facts(reference_url)
