#!/usr/bin/env python3
"""Compile hand-written src/*.txt (one near-twin pair per file) into worlds.json,
world_names.json and facts.json. Standard library only, deterministic."""
import json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history"}


def split(line):
    return [p.strip() for p in line.split("|")]


def lst(s):
    return [x.strip() for x in s.split(";") if x.strip()]


def parse_file(path):
    worlds, cur, pair = [], None, None
    with open(path, encoding="utf-8") as fh:
        for ln, raw in enumerate(fh, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            kw, _, rest = line.partition(" ")
            where = "%s:%d" % (os.path.basename(path), ln)
            if kw == "@pair":
                dom, cat = split(rest)
                pair = {"domain": dom, "category": cat, "file": os.path.basename(path)}
            elif kw == "@world":
                parts = split(rest)
                wid, name, tag = parts[0], parts[1], parts[2]
                shuffled = len(parts) > 3 and parts[3] == "shuffled"
                cur = {"world_id": wid, "name": name, "tag": tag, "shuffled": shuffled,
                       "domain": pair["domain"], "category": pair["category"],
                       "file": pair["file"], "mems": [], "qs": [], "facts": []}
                worlds.append(cur)
            elif kw == "m":
                ts, text = rest.split("|", 1)
                ts = ts.strip()
                d, t = ts.split()
                cur["mems"].append({"id": "%s-%02d" % (cur["world_id"], len(cur["mems"]) + 1),
                                    "text": text.strip(), "timestamp": "%sT%s:00Z" % (d, t)})
            elif kw == "fact":
                name, evs, vals = split(rest)
                cur["facts"].append({"fact": name, "evidence": [int(x) for x in evs.split(",")],
                                     "values": lst(vals)})
            elif kw == "q":
                parts = split(rest)
                cur["qs"].append((where, parts))
            else:
                sys.exit("%s: unknown line %r" % (where, line))
    return worlds


def mid(w, n):
    return "%s-%02d" % (w["world_id"], n)


def build_question(w, i, where, parts):
    qtype, text, answers, ev = parts[0], parts[1], lst(parts[2]), parts[3]
    q = {"id": "%s-q%02d" % (w["world_id"], i), "type": qtype, "question": text,
         "answers": answers, "mode": "all" if qtype in ALL_MODE else "any",
         "evidence": [mid(w, int(x)) for x in ev.split(",")],
         "current": None, "former": [], "as_of": None, "focus": None}
    if qtype in ("current_value", "as_of"):
        q["current"] = answers[0]
        q["former"] = lst(parts[4])
        if qtype == "as_of":
            q["as_of"] = parts[5]
    if qtype == "focus":
        q["focus"] = w["tag"]
        if len(parts) > 4 and parts[4] == "all":
            q["mode"] = "all"
    return q


def main():
    files = sorted(f for f in os.listdir(SRC) if f.endswith(".txt"))
    raw = []
    for f in files:
        ws = parse_file(os.path.join(SRC, f))
        if len(ws) != 2:
            sys.exit("%s: expected 2 worlds, got %d" % (f, len(ws)))
        ws[0]["twin"], ws[1]["twin"] = ws[1]["world_id"], ws[0]["world_id"]
        raw.extend(ws)
    out, names, facts = [], {}, {}
    for w in raw:
        qs = [build_question(w, i, where, parts) for i, (where, parts) in enumerate(w["qs"], 1)]
        out.append({"world_id": w["world_id"], "twin_of": w["twin"], "shuffled": w["shuffled"],
                    "memories": w["mems"], "questions": qs})
        names[w["world_id"]] = {"name": w["name"], "domain": w["domain"]}
        facts[w["world_id"]] = {"tag": w["tag"], "category": w["category"], "file": w["file"],
                                "facts": [{"fact": f["fact"], "values": f["values"],
                                           "evidence": [mid(w, n) for n in f["evidence"]]}
                                          for f in w["facts"]]}
    for fn, obj in (("worlds.json", out), ("world_names.json", names), ("facts.json", facts)):
        with open(os.path.join(HERE, fn), "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
    print("built %d worlds, %d memories, %d questions from %d files" % (
        len(out), sum(len(w["memories"]) for w in out),
        sum(len(w["questions"]) for w in out), len(files)))


if __name__ == "__main__":
    main()
