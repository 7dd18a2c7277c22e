// The trace viewer: records from the page itself, a virtual list (only the
// rows in view are in the DOM, so 100,000 messages scroll and filter at
// once), filters, turns per session, and a message's full JSON on click.
"use strict";

const ROW = 22;
const records = JSON.parse(document.getElementById("trace").textContent);
// The protocol's method names, written in by `acp-engine view` from the
// engine's generated tables.
const METHOD = JSON.parse(document.getElementById("methods").textContent);
const $ = (id) => document.getElementById(id);

// Pair requests with responses, and give each message its session's turn
// (a turn starts with a session/prompt request; 0: before the first).
const turnOf = new Map();
const waiting = new Map();
const turns = new Map(); // session -> [{turn, first, count, updates, permissions, problems, latency}]
for (let i = 0; i < records.length; i++) {
  const r = records[i];
  r.index = i;
  r.problem = r.verdict !== "ok" || r.kind === "error";
  if (r.kind === "request") {
    waiting.set(r.dir + "|" + JSON.stringify(r.id), i);
  } else if (r.kind === "response" || r.kind === "error") {
    const back = r.dir === "client_to_agent" ? "agent_to_client" : "client_to_agent";
    const key = back + "|" + JSON.stringify(r.id);
    if (waiting.has(key)) {
      r.pair = waiting.get(key);
      records[r.pair].pair = i;
      waiting.delete(key);
    }
  }
  if (r.session === undefined) continue;
  let list = turns.get(r.session);
  if (!list) turns.set(r.session, (list = [newTurn(0, i)]));
  if (r.kind === "request" && r.method === METHOD.prompt) {
    list.push(newTurn(list.length, i));
  }
  const turn = r.pair !== undefined && r.pair < i ? records[r.pair].turn : list.length - 1;
  r.turn = turn;
  const t = list[turn];
  t.count++;
  if (r.method === METHOD.update) t.updates++;
  if (r.method === METHOD.requestPermission && r.kind === "request") t.permissions++;
  if (r.problem) t.problems++;
  if (r.method === METHOD.prompt && r.latency_us !== undefined) t.latency = r.latency_us;
}

function newTurn(turn, first) {
  return { turn, first, count: 0, updates: 0, permissions: 0, problems: 0, latency: undefined };
}

// ---- filters ----

const filters = { method: "", session: "", turn: "", dir: "", problems: false, text: "" };
let shown = records.map((r) => r.index);

function options(select, counts) {
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  for (const [value, count] of sorted) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = `${value} (${count})`;
    select.appendChild(option);
  }
}

function count(key) {
  const counts = new Map();
  for (const r of records) {
    if (r[key] !== undefined) counts.set(r[key], (counts.get(r[key]) || 0) + 1);
  }
  return counts;
}

options($("filter-method"), count("method"));
options($("filter-session"), count("session"));

function turnOptions() {
  const select = $("filter-turn");
  select.length = 1;
  const list = turns.get(filters.session);
  if (!list) return;
  for (const t of list) {
    const option = document.createElement("option");
    option.value = String(t.turn);
    option.textContent = t.turn === 0 ? "before the first prompt" : `turn ${t.turn}`;
    select.appendChild(option);
  }
}

let searchText = null; // lower-cased message text, built on the first search
function matches(r) {
  if (filters.method && r.method !== filters.method) return false;
  if (filters.session && r.session !== filters.session) return false;
  if (filters.turn !== "" && String(r.turn) !== filters.turn) return false;
  if (filters.dir && r.dir !== filters.dir) return false;
  if (filters.problems && !r.problem) return false;
  if (filters.text) {
    if (!searchText) searchText = records.map((x) => JSON.stringify(x.message ?? x.raw ?? "").toLowerCase());
    if (!searchText[r.index].includes(filters.text)) return false;
  }
  return true;
}

function applyFilters() {
  shown = [];
  for (const r of records) if (matches(r)) shown.push(r.index);
  $("shown").textContent = `${shown.length.toLocaleString("en")} of ${records.length.toLocaleString("en")} shown`;
  $("spacer").style.height = shown.length * ROW + "px";
  $("viewport").scrollTop = 0;
  draw(true);
}

$("filter-method").onchange = (e) => { filters.method = e.target.value; applyFilters(); };
$("filter-session").onchange = (e) => {
  filters.session = e.target.value;
  filters.turn = "";
  turnOptions();
  applyFilters();
};
$("filter-turn").onchange = (e) => { filters.turn = e.target.value; applyFilters(); };
$("filter-dir").onchange = (e) => { filters.dir = e.target.value; applyFilters(); };
$("filter-problems").onchange = (e) => { filters.problems = e.target.checked; applyFilters(); };
let typing;
$("filter-text").oninput = (e) => {
  clearTimeout(typing);
  typing = setTimeout(() => { filters.text = e.target.value.toLowerCase(); applyFilters(); }, 150);
};

// ---- the virtual list ----

let selected = -1;
let drawn = "";
function escape(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// What a row is about, beyond its method: a session/update's kind and its
// text, and the rules a message broke (so a problem row says which).
function whatOf(r) {
  const parts = [];
  if (r.problems?.length) parts.push("⚠ " + r.problems.map((p) => p.rule).join(", "));
  const update = r.method === METHOD.update ? r.message?.params?.update : undefined;
  if (update && typeof update === "object") {
    const text = update.content?.text ?? update.title ?? update.content?.type ?? "";
    parts.push(`${update.sessionUpdate ?? "?"}${text ? ": " + String(text).replace(/\s+/g, " ") : ""}`);
  }
  return parts.join(" · ");
}

// A long session id, cut in its middle so the turn after it stays in view.
function shortSession(session) {
  return session.length > 14 ? session.slice(0, 6) + "…" + session.slice(-5) : session;
}

function rowHtml(r) {
  const classes = ["row"];
  if (r.verdict !== "ok") classes.push("violation");
  if (r.kind === "error") classes.push("error");
  if (r.method === METHOD.requestPermission) classes.push("permission");
  if (r.index === selected) classes.push("selected");
  else if (selected >= 0 && r.pair === selected) classes.push("paired");
  const toAgent = r.dir === "client_to_agent";
  const session = r.session === undefined ? "" : shortSession(r.session) + (r.turn ? ` · ${r.turn}` : "");
  const what = whatOf(r);
  return `<div class="${classes.join(" ")}" data-index="${r.index}">` +
    `<span class="seq">${r.seq}</span>` +
    `<span class="time">${(r.elapsed_us / 1000).toFixed(3)}</span>` +
    `<span class="dir ${toAgent ? "c2a" : "a2c"}" title="${toAgent ? "client → agent" : "agent → client"}">${toAgent ? "→" : "←"}</span>` +
    `<span class="kind">${escape(r.kind)}${r.verdict !== "ok" ? " ⚠" : ""}</span>` +
    `<span class="method" title="${escape(r.method ?? "")}">${escape(r.method ?? "")}</span>` +
    `<span class="what" title="${escape(what)}">${escape(what)}</span>` +
    `<span class="id">${r.id === undefined ? "" : escape(JSON.stringify(r.id))}</span>` +
    `<span class="session" title="${escape(r.session ?? "")}">${escape(session)}</span>` +
    `<span class="latency">${r.latency_us === undefined ? "" : (r.latency_us / 1000).toFixed(2) + " ms"}</span>` +
    `<span class="bytes">${r.bytes}</span></div>`;
}

function draw(force) {
  const viewport = $("viewport");
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - 10);
  const last = Math.min(shown.length, first + Math.ceil(viewport.clientHeight / ROW) + 20);
  const key = `${first}:${last}:${selected}`;
  if (!force && key === drawn) return;
  drawn = key;
  let html = "";
  for (let k = first; k < last; k++) html += rowHtml(records[shown[k]]);
  const rows = $("rows");
  rows.style.transform = `translateY(${first * ROW}px)`;
  rows.innerHTML = html;
}

let frame = 0;
$("viewport").addEventListener("scroll", () => {
  if (!frame) frame = requestAnimationFrame(() => { frame = 0; draw(false); });
});
window.addEventListener("resize", () => draw(true));
$("rows").addEventListener("click", (e) => {
  const row = e.target.closest(".row");
  if (row) select(Number(row.dataset.index), false);
});

// ---- the detail panel ----

function select(index, scroll) {
  selected = index;
  const r = records[index];
  const body = $("detail-body");
  const lines = [
    `<div><b>#${r.seq}</b> ${r.dir === "client_to_agent" ? "client → agent" : "agent → client"} · ${escape(r.kind)}` +
      `${r.method ? " · " + escape(r.method) : ""}${r.id === undefined ? "" : " · id " + escape(JSON.stringify(r.id))}</div>`,
    `<div>${(r.elapsed_us / 1000).toFixed(3)} ms after the start · ${r.bytes} bytes` +
      `${r.session === undefined ? "" : " · session " + escape(r.session) + (r.turn ? ", turn " + r.turn : "")}` +
      `${r.unstable ? " · unstable protocol" : ""}${r.legacy ? " · legacy method (outside the schema)" : ""}</div>`,
  ];
  for (const p of r.problems ?? []) lines.push(`<div class="problem">${escape(p.rule)}: ${escape(p.detail)}</div>`);
  lines.push(`<pre id="detail-json">${escape(r.message !== undefined ? JSON.stringify(r.message, null, 2) : r.raw ?? "")}</pre>`);
  if (r.pair !== undefined) {
    const p = records[r.pair];
    const what = p.kind === "request" ? "its request" : "its response";
    const latency = (r.latency_us ?? p.latency_us) / 1000;
    lines.push(`<div><span class="link" data-jump="${p.index}">${what}: #${p.seq}</span> (${latency.toFixed(2)} ms)</div>`);
    lines.push(`<pre id="detail-pair">${escape(JSON.stringify(p.message ?? p.raw, null, 2))}</pre>`);
  } else if (r.kind === "request") {
    lines.push("<div class=\"problem\">no response in this trace</div>");
  }
  body.innerHTML = lines.join("");
  if (scroll) {
    const k = shown.indexOf(index);
    if (k >= 0) $("viewport").scrollTop = Math.max(0, k * ROW - $("viewport").clientHeight / 2);
  }
  draw(true);
}

$("detail-body").addEventListener("click", (e) => {
  const jump = e.target.dataset && e.target.dataset.jump;
  if (jump !== undefined) select(Number(jump), true);
});

// ---- sessions and turns ----

function sessionsPanel() {
  let html = "";
  for (const [session, list] of turns) {
    html += `<div><b>${escape(session)}</b></div>`;
    for (const t of list) {
      if (t.count === 0) continue;
      const name = t.turn === 0 ? "before the first prompt" : `turn ${t.turn}`;
      const parts = [`${t.count} messages`, `${t.updates} updates`];
      if (t.permissions) parts.push(`${t.permissions} permission requests`);
      if (t.problems) parts.push(`${t.problems} problems`);
      if (t.latency !== undefined) parts.push(`${(t.latency / 1000).toFixed(1)} ms`);
      html += `<span class="turn${t.problems ? " has-problems" : ""}" data-session="${escape(session)}" data-turn="${t.turn}">` +
        `${name}: ${parts.join(", ")}</span>`;
    }
  }
  $("turns").innerHTML = html || "No session in this trace.";
}

$("turns").addEventListener("click", (e) => {
  const turn = e.target.closest(".turn");
  if (!turn) return;
  filters.session = turn.dataset.session;
  $("filter-session").value = filters.session;
  turnOptions();
  filters.turn = turn.dataset.turn;
  $("filter-turn").value = filters.turn;
  applyFilters();
});

function summary() {
  const problems = records.filter((r) => r.verdict !== "ok").length;
  const errors = records.filter((r) => r.kind === "error").length;
  const span = records.length ? records[records.length - 1].elapsed_us / 1e6 : 0;
  $("summary").textContent = `${records.length.toLocaleString("en")} messages · ${problems} violations · ` +
    `${errors} error responses · ${turns.size} sessions · ${span.toFixed(2)} s`;
}

summary();
sessionsPanel();
applyFilters();
document.body.dataset.ready = "true";
