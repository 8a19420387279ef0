"""A writer process for the crash tests: it writes to a memory folder until it is killed.

    python tests/reliability/crash_writer.py FOLDER --seed 3 [--ops 500] [--small-hnsw]

It opens ``SageMemory(FOLDER)`` and loops over ``add_many``, ``add`` (text and message lists)
and the occasional ``delete``, ``search`` and ``evolve``. Only after a call returns does it
print what the call acknowledged, one flushed line each:

    A <user> <token> <memory id>     an acknowledged memory (``token`` is unique to its text)
    T <user> <memory id>             a delete about to start (it may or may not land)
    D <user> <memory id>             an acknowledged delete

so whatever the parent reads is a lower bound of what must survive a SIGKILL. ``--small-hnsw``
makes Chroma persist its HNSW files every few dozen writes instead of every 1,000, so kills
also land inside Chroma's own flushes.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reliability_kit import open_memory

USERS = ("alice", "bob", "carol")


def text_for(token: str, rng: random.Random) -> str:
    return (
        f"{token} Person{rng.randrange(12)} met Person{rng.randrange(12)} "
        f"in City{rng.randrange(6)} about Project{rng.randrange(9)}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ops", type=int, default=1_000_000)
    ap.add_argument("--small-hnsw", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    kwargs = {}
    if args.small_hnsw:
        from sage_memory.index.chroma import ChromaVectorIndex

        folder = Path(args.folder)
        folder.mkdir(parents=True, exist_ok=True)
        kwargs["index"] = ChromaVectorIndex(
            folder / "chroma", hnsw={"sync_threshold": 40, "batch_size": 10}
        )
    mem = open_memory(args.folder, **kwargs)
    out = sys.stdout
    print("READY", flush=True)
    counter = 0
    acked: dict[str, list[str]] = {u: [] for u in USERS}

    def token() -> str:
        nonlocal counter
        counter += 1
        return f"tok{args.seed}q{counter}z"

    for _ in range(args.ops):
        user = rng.choice(USERS)
        roll = rng.random()
        if roll < 0.55:
            tokens = [token() for _ in range(rng.randint(1, 8))]
            results = mem.add_many([text_for(t, rng) for t in tokens], user_id=user)
            lines = [f"A {user} {t} {r.memory_id}" for t, r in zip(tokens, results, strict=True)]
        elif roll < 0.75:
            t = token()
            r = mem.add(text_for(t, rng), user_id=user)
            lines = [f"A {user} {t} {r.memory_id}"]
        elif roll < 0.9:
            t1, t2 = token(), token()
            r = mem.add(
                [
                    {"role": "user", "content": text_for(t1, rng)},
                    {"role": "assistant", "content": text_for(t2, rng)},
                ],
                user_id=user,
            )
            lines = [f"A {user} {t} {m}" for t, m in zip((t1, t2), r.memory_ids, strict=True)]
        elif roll < 0.93 and acked[user]:
            victim = acked[user].pop(rng.randrange(len(acked[user])))
            # Announced first: a kill during the delete leaves the memory either way.
            out.write(f"T {user} {victim}\n")
            out.flush()
            mem.delete(victim, user_id=user)
            lines = [f"D {user} {victim}"]
        elif roll < 0.97:
            mem.search(f"Person{rng.randrange(12)} City{rng.randrange(6)}", user_id=user)
            continue
        else:  # an evolution pass: one more journaled batch a kill may interrupt
            if hasattr(mem, "evolve"):
                mem.evolve(user_id=user)
            continue
        for line in lines:
            if line.startswith("A "):
                acked[user].append(line.rsplit(" ", 1)[1])
        out.write("\n".join(lines) + "\n")
        out.flush()
    mem.close()
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
