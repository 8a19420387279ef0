// sage_memory explorer: a little plain JavaScript over the server's JSON API.
// The server computes layouts and draws SVG; this file fetches, inserts and wires clicks.
"use strict";

const token = document.querySelector('meta[name="sage-token"]').content;
const state = { asOf: null, query: "", focus: null, offset: 0, stops: [] };
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

async function get(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== "") q.set(k, v);
  if (state.asOf) q.set("as_of", state.asOf);
  const res = await fetch(path + "?" + q.toString());
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

async function post(path, body) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Sage-Token": token },
    body: JSON.stringify(body || {}),
  });
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function status(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.className = isError ? "error" : "muted";
}

function drawGraph(svg) {
  const box = $("graph");
  box.innerHTML = svg; // server-escaped SVG markup
  box.querySelectorAll(".node").forEach((g) => {
    g.addEventListener("click", () => showNode(g.dataset.id));
    if (g.dataset.id === state.focus) g.classList.add("selected");
  });
}

async function redraw() {
  try {
    if (state.query) {
      const r = await get("/api/search", { q: state.query });
      drawGraph(r.svg);
      showResults(r);
      $("pager").hidden = true;
    } else if (state.focus) {
      const r = await get("/api/expand", { id: state.focus, hops: 1 });
      drawGraph(r.svg);
      $("pager").hidden = true;
    } else {
      const r = await get("/api/graph", { offset: state.offset });
      drawGraph(r.svg);
      $("pager").hidden = r.total_nodes <= r.shown && r.offset === 0;
      $("page-info").textContent = r.total_nodes ? `nodes ${r.offset + 1}-${r.offset + r.shown} of ${r.total_nodes}` : "";
      $("prev").disabled = r.offset === 0;
      $("next").disabled = r.offset + r.shown >= r.total_nodes;
    }
    $("graph").dataset.asOf = state.asOf || "now";
    // what is drawn, for people reading the DOM (and the browser tests)
    $("graph").dataset.view = state.query ? "search" : state.focus ? `node:${state.focus}` : `graph:${state.offset}`;
  } catch (e) {
    status(e.message, true);
  }
}

function showResults(r) {
  const list = $("results");
  list.replaceChildren();
  for (const m of r.memories) {
    list.append(el("li", { "data-id": m.id },
      el("div", {}, m.text),
      el("div", { class: "why" }, `${m.score.toFixed(3)} · ${m.channels.join("+")} · ${m.why}`),
      el("div", { class: "muted" }, m.timestamp ? m.timestamp.slice(0, 10) : "")));
  }
  $("context").textContent = r.context;
  status(`${r.memories.length} memories in ${r.took_ms} ms` + (r.path_edge_ids.length ? `; path of ${r.path_edge_ids.length} fact(s) highlighted` : ""));
}

async function showNode(id) {
  state.focus = id;
  document.querySelectorAll("#graph .node").forEach((g) => g.classList.toggle("selected", g.dataset.id === id));
  let n;
  try { n = await get("/api/node", { id }); } catch (e) { status(e.message, true); return; }
  const panel = $("node-panel");
  const facts = el("table", { class: "facts" });
  for (const f of n.facts) {
    const expired = f.valid_to || f.expired_at;
    facts.append(el("tr", { class: expired ? "expired" : "" },
      el("td", {}, `${f.source} ${f.relation} ${f.target}`),
      el("td", {}, (f.valid_from || "").slice(0, 10) + (f.valid_to ? ` → ${f.valid_to.slice(0, 10)}` : ""))));
  }
  const mems = el("ul", { id: "provenance" });
  for (const m of n.memories) mems.append(el("li", {}, `${(m.timestamp || "").slice(0, 10)}: ${m.text}`));
  const journal = el("ul", { id: "node-journal" });
  for (const c of n.journal) journal.append(el("li", { class: "muted" }, `${c.at.slice(0, 19)} ${c.op} by ${c.actor}: ${c.reason}`));
  const attrs = Object.entries(n.attributes).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join("; ");
  panel.replaceChildren(
    el("h2", { id: "node-name", "data-id": n.id }, n.name),
    el("div", { class: "muted" }, `${n.label} · confidence ${n.confidence}`),
    el("p", { id: "aliases" }, n.aliases.length ? `aka ${n.aliases.join(", ")}` : "no aliases"),
    el("p", { id: "attributes", class: "muted" }, attrs || "no attributes"),
    el("h3", {}, "Sources"), mems,
    el("h3", {}, "Facts (expired struck through)"), facts,
    el("h3", {}, "Journal"), journal,
    el("button", { id: "expand", type: "button", onclick: () => { state.query = ""; $("q").value = ""; redraw(); } }, "Expand neighbours"));
}

function setTime(index) {
  const last = state.stops.length - 1;
  if (index >= last || last < 0) {
    state.asOf = null;
    $("time-label").textContent = "now";
    $("when").value = "";
  } else {
    const stop = state.stops[index];
    state.asOf = stop.at;
    $("time-label").textContent = `after: ${stop.text}`;
    $("when").value = stop.at.slice(0, 19);
  }
  redraw();
  if (state.focus) showNode(state.focus).catch(() => {});
}

// evidence as short "key: value" lines; bare ids say nothing to a reader, so they are left out
function evidenceText(evidence) {
  const lines = [];
  for (const [k, v] of Object.entries(evidence)) {
    if (typeof v === "string" && /^[0-9a-f]{32}$/.test(v)) continue;
    lines.push(`${k.replaceAll("_", " ")}: ${Array.isArray(v) ? v.join(", ") : typeof v === "object" && v ? JSON.stringify(v) : v}`);
  }
  return lines.join("\n");
}

async function loadEvolver() {
  const r = await get("/api/review");
  const list = $("review");
  list.replaceChildren();
  if (!r.suggestions.length) list.append(el("li", { class: "muted" }, "nothing to review"));
  for (const s of r.suggestions) {
    list.append(el("li", { "data-id": s.id },
      el("strong", {}, `[${s.op}] `), s.summary, ` (${s.confidence.toFixed(2)})`,
      el("div", { class: "evidence" }, evidenceText(s.evidence)),
      el("button", { type: "button", class: "write accept", onclick: () => act("/api/accept", s.id) }, "Accept"),
      el("button", { type: "button", class: "write reject", onclick: () => act("/api/reject", s.id) }, "Reject")));
  }
  const runs = $("runs");
  runs.replaceChildren();
  if (!r.runs.length) runs.append(el("li", { class: "muted" }, "no runs yet"));
  for (const run of r.runs) {
    const item = el("li", { "data-batch": run.batch_id },
      `${(run.at || "").slice(0, 19)} ${run.kind}: ${run.summary}` + (run.undone ? " (undone)" : ""));
    if (run.undoable && !run.undone) item.append(" ", el("button", { type: "button", class: "write undo", onclick: () => act("/api/undo", run.batch_id) }, "Undo"));
    runs.append(item);
  }
  markWrites();
}

async function loadStats() {
  const s = await get("/api/stats");
  $("stats").textContent = `${s.memories} memories, ${s.nodes} nodes, ${s.edges} edges; ${s.runs_plotted} run(s) plotted`;
  $("counts").textContent = `${s.memories} memories · ${s.nodes} nodes · ${s.edges} edges`;
  $("plots").innerHTML = s.plots.join("");
}

async function act(path, id) {
  try {
    const r = await post(path, { id });
    status(`${path.split("/").pop()}: ${r.changes ?? ""} change(s)`);
  } catch (e) { status(e.message, true); }
  await Promise.all([loadEvolver(), loadStats(), loadTimes()]);
  await redraw();
}

function markWrites() {
  if (!token) document.querySelectorAll("button.write").forEach((b) => { b.disabled = true; b.title = "read-only: start with --allow-writes"; });
}

async function loadTimes() {
  const info = await get("/api/info");
  state.stops = info.times;
  const slider = $("slider");
  const wasNow = state.asOf === null;
  slider.max = String(Math.max(0, info.times.length - 1));
  if (wasNow) slider.value = slider.max;
}

function wire() {
  if (!token) document.body.classList.add("read-only");
  $("search-form").addEventListener("submit", (ev) => { ev.preventDefault(); state.query = $("q").value.trim(); redraw(); });
  $("clear").addEventListener("click", () => { state.query = ""; state.focus = null; state.offset = 0; $("q").value = ""; $("results").replaceChildren(); redraw(); });
  $("slider").addEventListener("input", () => setTime(Number($("slider").value)));
  $("now").addEventListener("click", () => { $("slider").value = $("slider").max; setTime(state.stops.length); });
  $("when").addEventListener("change", () => { const v = $("when").value; state.asOf = v ? v : null; $("time-label").textContent = v || "now"; redraw(); });
  $("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - 150); redraw(); });
  $("next").addEventListener("click", () => { state.offset += 150; redraw(); });
  $("run-evolver").addEventListener("click", async () => {
    try { const r = await post("/api/evolve", {}); status(`evolver: applied ${r.applied}, suggested ${r.suggested}`); } catch (e) { status(e.message, true); }
    await Promise.all([loadEvolver(), loadStats()]);
    redraw();
  });
}

async function start() {
  wire();
  markWrites();
  try {
    await loadTimes();
    await Promise.all([redraw(), loadEvolver(), loadStats()]);
  } catch (e) { status(e.message, true); }
  document.body.dataset.ready = "1";
}

start();
