#!/usr/bin/env python3
"""Assemble worlds.json, world_names.json, facts.json and world_tags.json from src/*.txt (standard library only).

Source format (one item per line, '#' starts a comment line):
  @world ID | display name | domain | twin=ID or - | shuffled=0/1 | tags=Tag1;Tag2
  NN YYYY-MM-DD HH:MM | memory text                      (memory ID-NN)
  q TYPE | question | answer1; answer2 | 03,07 | key=value | ...
       keys: mode=any/all, cur=value, former=a;b, asof=YYYY-MM-DD, focus=Name
  f fact name | value @ NN ; value @ NN ; ...              (a changing fact, values in order)
"""
import json, os, glob

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODE = {"prerequisites", "indirect_blockers", "taxonomy_levels", "history", "requirements"}


def split(s, sep):
    return [x.strip() for x in s.split(sep) if x.strip()]


def parse(path):
    worlds = []
    w = None
    for ln, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            if line.startswith("@world"):
                parts = split(line[len("@world"):], "|")
                wid, name, domain = parts[0], parts[1], parts[2]
                opts = dict(p.split("=", 1) for p in parts[3:])
                twin = opts.get("twin", "-")
                w = {"world_id": wid, "name": name, "domain": domain,
                     "twin_of": None if twin == "-" else twin,
                     "shuffled": opts.get("shuffled", "0") == "1",
                     "tags": split(opts.get("tags", name), ";"),
                     "memories": [], "questions": [], "facts": []}
                worlds.append(w)
            elif line.startswith("q "):
                parts = [p.strip() for p in line[2:].split("|")]
                qtype, text, answers, ev = parts[0], parts[1], split(parts[2], ";"), split(parts[3], ",")
                opts = dict(p.split("=", 1) for p in parts[4:] if p)
                n = len(w["questions"]) + 1
                q = {"id": "%s-q%02d" % (w["world_id"], n), "type": qtype, "question": text,
                     "answers": answers,
                     "mode": opts.get("mode", "all" if qtype in ALL_MODE else "any"),
                     "evidence": ["%s-%s" % (w["world_id"], e.zfill(2)) for e in ev],
                     "current": opts.get("cur") or None,
                     "former": split(opts.get("former", ""), ";"),
                     "as_of": (opts["asof"] + "T12:00:00Z") if opts.get("asof") else None,
                     "focus": opts.get("focus") or None}
                w["questions"].append(q)
            elif line.startswith("f "):
                name, vals = [p.strip() for p in line[2:].split("|", 1)]
                values = []
                for v in split(vals, ";"):
                    val, num = [x.strip() for x in v.rsplit("@", 1)]
                    values.append({"value": val, "evidence": "%s-%s" % (w["world_id"], num.zfill(2))})
                w["facts"].append({"fact": name, "values": values})
            else:
                head, text = line.split("|", 1)
                num, date, clock = head.split()
                w["memories"].append({"id": "%s-%s" % (w["world_id"], num.zfill(2)),
                                      "text": text.strip(),
                                      "timestamp": "%sT%s:00Z" % (date, clock)})
        except Exception as e:  # pragma: no cover
            raise SystemExit("%s:%d: cannot parse (%s): %s" % (path, ln, e, line))
    return worlds


def main():
    worlds = []
    for path in sorted(glob.glob(os.path.join(HERE, "src", "*.txt"))):
        worlds.extend(parse(path))
    out, names, facts, tags = [], {}, {}, {}
    for w in worlds:
        ts = {m["id"]: m["timestamp"] for m in w["memories"]}
        out.append({"world_id": w["world_id"], "twin_of": w["twin_of"], "shuffled": w["shuffled"],
                    "memories": w["memories"], "questions": w["questions"]})
        names[w["world_id"]] = {"name": w["name"], "domain": w["domain"]}
        tags[w["world_id"]] = w["tags"]
        for f in w["facts"]:
            for v in f["values"]:
                v["timestamp"] = ts.get(v["evidence"])
        facts[w["world_id"]] = w["facts"]
    for fn, obj in (("worlds.json", out), ("world_names.json", names), ("facts.json", facts), ("world_tags.json", tags)):
        with open(os.path.join(HERE, fn), "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
    print("built %d worlds, %d memories, %d questions" % (
        len(out), sum(len(w["memories"]) for w in out), sum(len(w["questions"]) for w in out)))


if __name__ == "__main__":
    main()
