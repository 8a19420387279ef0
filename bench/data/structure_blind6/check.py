#!/usr/bin/env python3
"""Validator for a structure-benchmark file (format of bench/data/structure/SPEC.md).
Standard library only.  Usage: python3 check.py [path]   (default: worlds.json next to this file)
Prints counts, every error, and 'OK' when there are 0 errors (exit 0), else 'FAILED' (exit 1)."""
import json, os, sys
from collections import Counter
from datetime import datetime

TYPES = ['next_step', 'prerequisites', 'blockers', 'indirect_blockers', 'requirements',
         'taxonomy_levels', 'deepest_cause', 'causes', 'current_value', 'history', 'as_of', 'focus']
ALL_MODE_TYPES = {'prerequisites', 'indirect_blockers', 'taxonomy_levels', 'history'}
WORLD_KEYS = {'world_id', 'twin_of', 'shuffled', 'memories', 'questions'}
MEM_KEYS = {'id', 'text', 'timestamp'}
Q_KEYS = {'id', 'type', 'question', 'answers', 'mode', 'evidence', 'current', 'former', 'as_of', 'focus'}
MIN_MEM, MAX_MEM = 16, 20          # brief: 16-20 (SPEC allows 10-20)
MIN_Q, MAX_Q = 10, 12              # SPEC: 10-12

def parse_ts(s):
    if not isinstance(s, str) or not s.endswith('Z'):
        raise ValueError('not ISO 8601 UTC with Z')
    return datetime.strptime(s, '%Y-%m-%dT%H:%M:%SZ')

def parse_date(s):
    for fmt in ('%Y-%m-%d', '%B %d, %Y', '%b %d, %Y', '%d %B %Y', '%d %b %Y', '%Y-%m', '%B %Y'):
        try:
            return datetime.strptime(s.strip(), fmt)
        except ValueError:
            pass
    raise ValueError(f'unparseable as_of date {s!r}')

def main(path):
    errors, warnings = [], []
    err = errors.append
    try:
        data = json.load(open(path, encoding='utf-8'))
    except Exception as e:
        print(f'cannot read {path}: {e}'); print('FAILED'); return 1
    if not isinstance(data, list):
        print('top level must be a list of worlds'); print('FAILED'); return 1
    wids, mids, qids = Counter(), Counter(), Counter()
    by_id = {}
    tcount, mcount = Counter(), Counter()
    nmem = nq = nshuf = 0
    for w in data:
        if not isinstance(w, dict):
            err('world is not an object'); continue
        wid = w.get('world_id')
        if set(w) != WORLD_KEYS:
            err(f'{wid}: keys {sorted(set(w) ^ WORLD_KEYS)} missing/extra')
        if not isinstance(wid, str) or not wid:
            err(f'bad world_id {wid!r}'); continue
        wids[wid] += 1; by_id[wid] = w
        if not isinstance(w.get('shuffled'), bool):
            err(f'{wid}: shuffled must be true/false')
        nshuf += bool(w.get('shuffled'))
        mems = w.get('memories') or []
        if not (MIN_MEM <= len(mems) <= MAX_MEM):
            err(f'{wid}: {len(mems)} memories (want {MIN_MEM}-{MAX_MEM})')
        mem_text = {}
        stamps = []
        for m in mems:
            if set(m) != MEM_KEYS:
                err(f'{wid}: memory keys {sorted(m)}')
            mid = m.get('id'); mids[mid] += 1
            if not isinstance(mid, str) or not mid.startswith(wid + '-'):
                err(f'{wid}: memory id {mid!r} not prefixed with world id')
            if not isinstance(m.get('text'), str) or len(m['text'].strip()) < 10:
                err(f'{mid}: empty/short text')
            try:
                t = parse_ts(m.get('timestamp'))
                if not (2025 <= t.year <= 2026):
                    err(f'{mid}: timestamp year {t.year} outside 2025-2026')
                stamps.append((mid, t))
            except Exception as e:
                err(f'{mid}: timestamp {m.get("timestamp")!r}: {e}')
            mem_text[mid] = m.get('text', '')
        # true story order = id order; timestamps must increase along it
        stamps.sort(key=lambda x: x[0])
        for (a, ta), (b, tb) in zip(stamps, stamps[1:]):
            if tb <= ta:
                err(f'{wid}: timestamp of {b} not after {a}')
        if w.get('shuffled') and [m.get('id') for m in mems] == sorted(m.get('id') for m in mems):
            warnings.append(f'{wid}: shuffled but listed in time order (ingest shuffles anyway)')
        qs = w.get('questions') or []
        if not (MIN_Q <= len(qs) <= MAX_Q):
            err(f'{wid}: {len(qs)} questions (want {MIN_Q}-{MAX_Q})')
        first_ts = min((t for _, t in stamps), default=None)
        for q in qs:
            qid = q.get('id'); qids[qid] += 1
            if set(q) != Q_KEYS:
                err(f'{qid}: keys {sorted(set(q) ^ Q_KEYS)} missing/extra')
            if not isinstance(qid, str) or not qid.startswith(wid + '-q'):
                err(f'{wid}: question id {qid!r} not prefixed')
            ty = q.get('type')
            if ty not in TYPES:
                err(f'{qid}: unknown type {ty!r}'); continue
            tcount[ty] += 1; nq += 1
            mode = q.get('mode'); mcount[mode] += 1
            if mode not in ('all', 'any'):
                err(f'{qid}: mode {mode!r}')
            ans = q.get('answers')
            if not isinstance(ans, list) or not ans or not all(isinstance(a, str) and a.strip() for a in ans):
                err(f'{qid}: answers must be a non-empty list of strings'); ans = []
            if len(set(a.lower() for a in ans)) != len(ans):
                err(f'{qid}: duplicate answers')
            if ty in ALL_MODE_TYPES and mode != 'all':
                err(f'{qid}: {ty} must use mode all')
            if ty in ALL_MODE_TYPES and len(ans) < 2:
                err(f'{qid}: {ty} should list at least 2 answers')
            if not isinstance(q.get('question'), str) or len(q['question'].strip()) < 8:
                err(f'{qid}: question text missing or too short')
            ev = q.get('evidence')
            if not isinstance(ev, list) or not ev:
                err(f'{qid}: evidence must be a non-empty list'); ev = []
            for e in ev:
                if e not in mem_text:
                    err(f'{qid}: evidence {e!r} not a memory of world {wid}')
            evtext = ' '.join(mem_text.get(e, '') for e in ev).lower()
            for a in ans:
                if a.lower() not in evtext:
                    err(f'{qid}: answer {a!r} not found in its evidence memories')
            cur, former = q.get('current'), q.get('former')
            if not isinstance(former, list):
                err(f'{qid}: former must be a list'); former = []
            if ty in ('current_value', 'as_of'):
                if not isinstance(cur, str) or not cur:
                    err(f'{qid}: {ty} needs current')
                elif cur.lower() not in [a.lower() for a in ans]:
                    err(f'{qid}: current {cur!r} not among answers')
                if not former:
                    err(f'{qid}: {ty} needs former values')
                for f_ in former:
                    if f_.lower() in [a.lower() for a in ans]:
                        err(f'{qid}: former value {f_!r} is also an answer')
                    if f_.lower() not in ' '.join(mem_text.values()).lower():
                        err(f'{qid}: former value {f_!r} not in any memory')
            else:
                if cur is not None or former:
                    err(f'{qid}: current/former only for current_value/as_of')
            if ty == 'as_of':
                try:
                    d = parse_date(q.get('as_of') or '')
                    if first_ts and d < first_ts.replace(hour=0, minute=0, second=0):
                        err(f'{qid}: as_of before the world starts')
                except Exception as e:
                    err(f'{qid}: {e}')
            elif q.get('as_of') is not None:
                err(f'{qid}: as_of only for as_of questions')
            if ty == 'focus':
                fo = q.get('focus')
                if not isinstance(fo, str) or not fo:
                    err(f'{qid}: focus question needs focus')
                else:
                    if fo.lower() in q.get('question', '').lower():
                        err(f'{qid}: focus question must not name {fo!r}')
                    named = sum(fo.lower() in t.lower() for t in mem_text.values())
                    if named < len(mem_text) / 2:
                        err(f'{qid}: focus {fo!r} named in only {named} memories')
                    if not w.get('twin_of'):
                        err(f'{qid}: focus question in a world without twin')
            elif q.get('focus') is not None:
                err(f'{qid}: focus only for focus questions')
        nmem += len(mems)
    for k, n in wids.items():
        if n > 1: err(f'duplicate world_id {k}')
    for k, n in mids.items():
        if n > 1: err(f'duplicate memory id {k}')
    for k, n in qids.items():
        if n > 1: err(f'duplicate question id {k}')
    for wid, w in by_id.items():
        t = w.get('twin_of')
        if t is None:
            continue
        if t not in by_id:
            err(f'{wid}: twin_of {t!r} does not exist')
        elif by_id[t].get('twin_of') != wid:
            err(f'{wid}: twin {t} does not point back')
    if tcount and len(set(tcount[t] for t in TYPES)) != 1:
        err(f'question types not in equal numbers: {dict(tcount)}')
    if data and not (0.25 <= nshuf / len(data) <= 0.42):
        err(f'shuffled worlds {nshuf}/{len(data)} is not about a third')
    if mcount['all'] == 0 or mcount['any'] == 0:
        err('modes should mix all and any')
    # twin-level checks: the distinguishing name (the focus of the world's focus questions)
    fname = {}
    for wid, w in by_id.items():
        fs = {q.get('focus') for q in w.get('questions') or [] if q.get('type') == 'focus' and q.get('focus')}
        if len(fs) == 1:
            fname[wid] = fs.pop()
    for wid, w in by_id.items():
        t = w.get('twin_of')
        mine, theirs = fname.get(wid), fname.get(t)
        if t in by_id and mine and theirs and mine.lower() == theirs.lower():
            err(f'{wid}: twins share the same distinguishing name {mine!r}')
        if theirs:
            for m in w.get('memories') or []:
                if theirs.lower() in m.get('text', '').lower():
                    err(f'{m.get("id")}: mentions the twin world\'s name {theirs!r}')
        if mine:
            for q in w.get('questions') or []:
                if q.get('type') != 'focus' and mine.lower() not in q.get('question', '').lower():
                    warnings.append(f'{q.get("id")}: question does not name {mine!r}')
        # focus answers should differ from the twin's focus answers when the question is the same
        if t in by_id:
            for q in w.get('questions') or []:
                if q.get('type') != 'focus':
                    continue
                for q2 in by_id[t].get('questions') or []:
                    if q2.get('type') == 'focus' and q2.get('question') == q.get('question') \
                            and sorted(map(str.lower, q2.get('answers', []))) == sorted(map(str.lower, q.get('answers', []))):
                        warnings.append(f'{q.get("id")}: same focus question and answers as twin {q2.get("id")}')
        # time-consistency of changing facts, from the evidence memories
        ts_of = {m.get('id'): m.get('timestamp', '') for m in w.get('memories') or []}
        tx_of = {m.get('id'): m.get('text', '').lower() for m in w.get('memories') or []}
        for q in w.get('questions') or []:
            ev = sorted((ts_of.get(e, ''), e) for e in q.get('evidence') or [] if e in ts_of)
            if not ev:
                continue
            ty = q.get('type')
            if ty == 'current_value' and q.get('current'):
                if q['current'].lower() not in tx_of[ev[-1][1]]:
                    err(f'{q.get("id")}: latest evidence memory does not state the current value {q["current"]!r}')
            if ty == 'as_of' and q.get('current'):
                try:
                    d = parse_date(q.get('as_of') or '').strftime('%Y-%m-%d')
                except Exception:
                    continue
                before = [e for ts, e in ev if ts[:10] <= d]
                if not before or q['current'].lower() not in tx_of[before[-1]]:
                    err(f'{q.get("id")}: the last evidence memory on/before {d} does not state {q["current"]!r}')
            if ty == 'history':
                firsts = []
                for a in q.get('answers') or []:
                    pos = [i for i, (ts, e) in enumerate(ev) if a.lower() in tx_of[e]]
                    firsts.append(pos[0] if pos else -1)
                if firsts != sorted(firsts):
                    err(f'{q.get("id")}: history answers not in time order of their evidence')
    twinned = sum(1 for w in by_id.values() if w.get('twin_of'))
    print(f'file: {path}')
    print(f'worlds: {len(data)} (twinned {twinned}, shuffled {nshuf})  memories: {nmem}  questions: {nq}')
    print('per type: ' + ', '.join(f'{t}={tcount[t]}' for t in TYPES))
    print(f'modes: all={mcount["all"]} any={mcount["any"]}')
    for wmsg in warnings:
        print('warning:', wmsg)
    for e in errors:
        print('ERROR:', e)
    print(f'{len(errors)} errors')
    print('OK' if not errors else 'FAILED')
    return 0 if not errors else 1

if __name__ == '__main__':
    p = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'worlds.json')
    sys.exit(main(p))
