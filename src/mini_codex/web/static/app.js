// mini-codex inspector: plain JS, no build step, no network beyond this server (docs/ui.md).
"use strict";
const DATA = window.MINI_CODEX_DATA || null; // set in a self-contained export (rollout inspect --html)
const $ = (sel, root = document) => root.querySelector(sel);
const state = { sessions: [], session: null, sessionId: null, stepId: null, before: null, source: null };

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
function el(tag, attrs = {}, html = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.innerHTML = html;
  return node;
}
function short(value, n = 200) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > n ? text.slice(0, n) + "…" : text;
}

async function api(path) {
  if (DATA) {
    if (!(path in DATA.api)) throw new Error("not in this export: " + path);
    return DATA.api[path];
  }
  const response = await fetch(path, { credentials: "same-origin" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// --- routing ---------------------------------------------------------------------------------
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "s" && parts[1]) return showSession(parts[1], parts[2] || null);
  if (DATA && DATA.session_id) return showSession(DATA.session_id, null);
  return showList();
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);

// --- session list ----------------------------------------------------------------------------
async function showList() {
  stopFollowing();
  state.sessionId = null;
  $("#crumb").textContent = "";
  const main = $("#main");
  main.innerHTML = `<div class="toolbar"><input id="search" type="search" placeholder="search id, cwd, prompt" size="40">
    <select id="sort"><option value="updated">newest first</option><option value="started">started</option>
    <option value="turns">most turns</option><option value="size">largest</option></select></div>
    <table id="session-list"><thead><tr><th>id</th><th>updated (UTC)</th><th>cwd</th><th>turns</th><th>size</th><th>first prompt</th></tr></thead><tbody></tbody></table>`;
  try {
    state.sessions = await api("/api/sessions");
  } catch (error) {
    main.innerHTML = `<p class="warn">${esc(error.message)}</p>`;
    return;
  }
  $("#search").addEventListener("input", renderList);
  $("#sort").addEventListener("change", renderList);
  renderList();
}

function renderList() {
  const query = $("#search").value.trim().toLowerCase();
  const key = $("#sort").value;
  const rows = state.sessions.filter((s) =>
    !query || [s.id, s.cwd, s.first_prompt, s.path].some((v) => (v || "").toLowerCase().includes(query)));
  rows.sort((a, b) => {
    if (key === "turns" || key === "size") return (b[key] || 0) - (a[key] || 0);
    return String(b[key] || "").localeCompare(String(a[key] || ""));
  });
  const body = $("#session-list tbody");
  body.innerHTML = "";
  for (const s of rows) {
    const tr = el("tr", { class: "session-row", "data-id": s.id },
      `<td class="mono">${esc(s.id)}</td><td>${esc((s.updated || "").replace("T", " ").slice(0, 19))}</td>
       <td class="mono">${esc(s.cwd)}</td><td>${s.turns}</td><td>${(s.size / 1024).toFixed(1)} KiB</td>
       <td>${esc(short(s.first_prompt || s.error || "", 90))}</td>`);
    tr.addEventListener("click", () => { location.hash = `#/s/${encodeURIComponent(s.id)}`; });
    body.appendChild(tr);
  }
  if (!rows.length) body.innerHTML = `<tr><td colspan="6" class="muted">no sessions</td></tr>`;
}

// --- one session -----------------------------------------------------------------------------
async function showSession(id, stepId) {
  const fresh = id !== state.sessionId;
  state.sessionId = id;
  state.stepId = stepId;
  if (fresh) {
    state.before = null;
    $("#crumb").textContent = id;
    $("#main").innerHTML = `<div id="chart" class="chart"></div><div class="layout">
      <nav id="timeline" class="timeline"></nav><section id="step" class="panel"><p class="muted">select a step</p></section></div>
      <div id="warnings"></div>`;
    await loadSession();
    follow(id);
  } else {
    renderTimeline();
  }
  if (stepId) await showStep(stepId);
}

async function loadSession() {
  const query = state.before !== null ? `?before=${state.before}` : "";
  try {
    state.session = await api(`/api/sessions/${encodeURIComponent(state.sessionId)}${query}`);
  } catch (error) {
    $("#main").innerHTML = `<p class="warn">${esc(error.message)}</p>`;
    return;
  }
  renderTimeline();
  renderChart();
  const warnings = state.session.warnings || [];
  $("#warnings").innerHTML = warnings.length
    ? `<h4>Replay warnings</h4>` + warnings.map((w) => `<div class="warn">${esc(w)}</div>`).join("") : "";
}

function stepLabel(step) {
  const usage = step.token_usage ? `${step.token_usage.total_tokens ?? "?"} tok` : "";
  const duration = step.duration_ms != null ? `${step.duration_ms} ms` : "";
  const calls = step.tool_calls.map((c) => c.name).join(", ");
  const ws = step.world_state_change.length ? `<span class="badge ws">${esc(changeSummary(step.world_state_change))}</span>` : "";
  return `<div>step ${step.sequence}${ws}${calls ? `<span class="badge">${esc(calls)}</span>` : ""}</div>
    <div class="meta">${step.line ? "L" + step.line : "@" + step.offset} · ${esc(step.model || "")} ${usage ? "· " + usage : ""} ${duration ? "· " + duration : ""}</div>`;
}

function changeSummary(changes) {
  return "ws: " + changes.map((c) => {
    if (c.cause === "full") return `full (${c.sections.length} sections)`;
    if (c.cause === "compacted") return "reset";
    const names = c.sections.slice(0, 3).join(", ") + (c.sections.length > 3 ? ", …" : "");
    return c.cause === "ignored_patch" ? `ignored patch: ${names}` : names;
  }).join("; ");
}

function markersOf(s) {
  const out = [];
  for (const c of s.compactions) out.push([c.offset, "compaction", `compacted${c.line ? " L" + c.line : ""} · history ${c.history_items ?? "legacy"} items${c.summary ? " · " + short(c.summary, 80) : ""}`]);
  for (const c of s.checkpoints) out.push([c.offset, "checkpoint", `checkpoint${c.line ? " L" + c.line : ""} · history ${c.history_items} items`]);
  for (const r of s.rollbacks) out.push([r.offset, "rollback", `rollback${r.line ? " L" + r.line : ""} · ${r.num_turns} user turn(s) dropped: ${r.turns.join(", ")}`]);
  return out.sort((a, b) => a[0] - b[0]);
}

function renderTimeline() {
  const nav = $("#timeline");
  if (!nav || !state.session) return;
  const s = state.session;
  nav.innerHTML = "";
  if (s.page && s.page.previous !== null && s.page.previous !== undefined) {
    const button = el("button", { id: "earlier" }, "◂ earlier steps");
    button.addEventListener("click", async () => { state.before = s.page.start; await loadSession(); });
    nav.appendChild(el("div", { class: "pager" })).appendChild(button);
  }
  if (state.before !== null) {
    const button = el("button", { id: "newest" }, "newest steps ▸");
    button.addEventListener("click", async () => { state.before = null; await loadSession(); });
    nav.appendChild(el("div", { class: "pager" })).appendChild(button);
  }
  const markers = markersOf(s);
  const flush = (limit, container = nav) => {
    while (markers.length && markers[0][0] < limit) {
      const [, kind, text] = markers.shift();
      container.appendChild(el("div", { class: `marker ${kind}` }, esc(text)));
    }
  };
  for (const turn of s.turns) {
    flush(turn.offset);
    const box = el("div", { class: "turn" + (turn.rolled_back ? " rolled-back" : ""), "data-turn": turn.number });
    const rolled = turn.rolled_back ? ` · rolled back${turn.rolled_back_at ? " at L" + turn.rolled_back_at : ""}` : "";
    box.appendChild(el("h3", {}, `turn ${turn.number} <span class="muted">${esc(turn.turn_id || "")} · ${turn.status}${rolled}</span>`));
    const prompt = turn.items.find((i) => i.role === "user" && !String(i.text).startsWith("<"));
    if (prompt) box.appendChild(el("div", { class: "muted" }, esc(short(prompt.text, 120))));
    for (const step of turn.steps) {
      flush(step.offset, box);
      const node = el("div", { class: "step" + (step.step_id === state.stepId ? " selected" : ""), "data-step-id": step.step_id }, stepLabel(step));
      node.addEventListener("click", () => { location.hash = `#/s/${encodeURIComponent(s.id)}/${step.step_id}`; });
      box.appendChild(node);
    }
    nav.appendChild(box);
  }
  flush(Infinity);
  if (!s.turns.length) nav.innerHTML += `<p class="muted pager">no turns in this part of the file</p>`;
}

function renderChart() {
  const points = state.session.tokens || [];
  const box = $("#chart");
  if (!points.some((p) => p.total_tokens)) { box.innerHTML = `<span class="muted">no token usage recorded in this part of the session</span>`; return; }
  const width = Math.max(box.clientWidth - 10, 300), height = 70;
  const max = Math.max(1, ...points.map((p) => p.total_tokens || 0));
  const w = width / points.length;
  const index = new Map(points.map((p, i) => [p.step_id, i]));
  let svg = `<svg id="token-chart" width="${width}" height="${height + 14}" role="img" aria-label="tokens per step">`;
  points.forEach((p, i) => {
    const h = ((p.total_tokens || 0) / max) * height;
    svg += `<rect class="bar${p.step_id === state.stepId ? " sel" : ""}" data-step-id="${p.step_id}" x="${i * w + 1}" y="${height - h}" width="${Math.max(w - 2, 1)}" height="${h}"><title>step ${i + 1}: ${p.total_tokens ?? "?"} tokens</title></rect>`;
  });
  for (const c of state.session.compactions) {
    const x = (c.step_index ?? 0) * w;
    svg += `<line class="compaction" x1="${x}" x2="${x}" y1="0" y2="${height}"><title>compaction</title></line>`;
  }
  svg += `<text x="2" y="${height + 12}" font-size="10" fill="#6b7075">tokens per step (max ${max})</text></svg>`;
  box.innerHTML = svg;
  box.querySelectorAll("rect.bar").forEach((rect) => rect.addEventListener("click", () => {
    location.hash = `#/s/${encodeURIComponent(state.sessionId)}/${rect.dataset.stepId}`;
  }));
  void index;
}

function findStep(stepId) {
  for (const turn of state.session.turns) for (const step of turn.steps) if (step.step_id === stepId) return [turn, step];
  return [null, null];
}

async function showStep(stepId) {
  const panel = $("#step");
  const [turn, step] = findStep(stepId);
  document.querySelectorAll(".step.selected").forEach((n) => n.classList.remove("selected"));
  const node = document.querySelector(`.step[data-step-id="${stepId}"]`);
  if (node) node.classList.add("selected");
  document.querySelectorAll("rect.bar").forEach((r) => r.classList.toggle("sel", r.dataset.stepId === stepId));
  if (!step) { panel.innerHTML = `<p class="muted">step ${esc(stepId)} is not on this page</p>`; return; }
  const base = `/api/sessions/${encodeURIComponent(state.sessionId)}/steps/${stepId}`;
  let ws, request;
  try {
    [ws, request] = await Promise.all([api(base + "/world_state"), api(base + "/request")]);
  } catch (error) {
    panel.innerHTML = `<p class="warn">${esc(error.message)}</p>`;
    return;
  }
  panel.innerHTML = `<h2>turn ${turn.number} · step ${step.sequence} <span class="muted mono">${esc(step.step_id)}</span></h2>
    <div class="muted">model ${esc(step.model || "?")} · ${esc(usageText(step.token_usage))} · ${step.duration_ms ?? "?"} ms · ${step.line ? "line " + step.line : "offset " + step.offset}</div>
    <h4>World-state diff vs the previous step</h4><div id="ws-diff">${renderDiff(ws.diff)}</div>
    <h4>Tool calls</h4><div id="tool-calls">${step.tool_calls.map(renderCall).join("") || '<span class="muted">none</span>'}</div>
    <h4>Items and events</h4><div id="items">${step.items.filter((i) => !["function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output"].includes(i.kind)).map(renderRow).join("")}</div>
    <h4>Request (${request.input.length} input items · tools ${request.tools ? request.tools.length : esc(request.tools_source)})</h4>
    <details id="request"><summary>input the model saw</summary>${request.input.map(renderInput).join("")}</details>
    <details><summary>tools</summary><pre>${esc(request.tools ? JSON.stringify(request.tools, null, 2) : "not recorded in this rollout")}</pre></details>
    <h4>World state at this step</h4><div id="ws-browser">${renderSections(ws.world_state)}</div>`;
}

function usageText(usage) {
  if (!usage) return "no token usage recorded";
  const cached = usage.cached_input_tokens ? ` (${usage.cached_input_tokens} cached)` : "";
  return `tokens: in ${usage.input_tokens ?? "?"}${cached} · out ${usage.output_tokens ?? "?"} · total ${usage.total_tokens ?? "?"}`;
}

function renderDiff(rows) {
  if (!rows.length) return `<span class="muted">unchanged</span>`;
  const sign = { add: "+", remove: "−", change: "~" };
  return rows.map((r) => {
    const path = r.path.join(".");
    const text = r.op === "change" ? `${path}: ${short(r.before)} → ${short(r.after)}`
      : `${path}: ${short(r.op === "add" ? r.after : r.before, 400)}`;
    return `<div class="diff-row ${r.op}">${sign[r.op]} ${esc(text)}</div>`;
  }).join("");
}

function renderPatch(text) {
  return `<pre class="patch">${String(text).split("\n").map((line) => {
    const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "remove" : line.startsWith("@@") || line.startsWith("***") ? "hunk" : "";
    return cls ? `<span class="${cls}">${esc(line)}</span>` : esc(line) + "\n";
  }).join("")}</pre>`;
}

function renderCall(call) {
  let args = call.arguments;
  let patch = null;
  if (call.name === "apply_patch") {
    try { patch = typeof args === "string" && args.trim().startsWith("{") ? JSON.parse(args).input : args; } catch { patch = args; }
  }
  const body = patch ? renderPatch(patch) : `<pre>${esc(args)}</pre>`;
  return `<div class="tool-call" data-call-id="${esc(call.call_id)}"><b>${esc(call.name)}</b> <span class="muted mono">${esc(call.call_id)}</span>
    ${body}<div class="muted">output</div><pre class="tool-output">${esc(call.output ?? "(no output recorded)")}</pre></div>`;
}

function renderRow(row) {
  const role = row.role || (row.kind === "event" ? row.type : row.kind);
  let text = row.text || "";
  if (row.kind === "world_state") text = `${row.cause}: ${row.sections.join(", ")}`;
  if (row.kind === "turn_context") text = `model ${row.model || "?"}`;
  return `<div class="item ${esc(role)}"><span class="muted">${row.line ? "L" + row.line : ""} ${esc(role)}</span> ${esc(short(text, 600))}</div>`;
}

function renderInput(item) {
  let role = item.role || item.type;
  let text;
  if (item.type === "message") text = (item.content || []).map((p) => p.text ?? `[${p.type}]`).join("\n");
  else if (item.type === "function_call" || item.type === "custom_tool_call") { role = "call"; text = `${item.name}(${item.arguments ?? item.input})`; }
  else if (item.output !== undefined) text = typeof item.output === "string" ? item.output : JSON.stringify(item.output);
  else text = JSON.stringify(item);
  return `<div class="item ${esc(role)}"><span class="muted">${esc(role)}</span><pre>${esc(text)}</pre></div>`;
}

function renderSections(ws) {
  if (!ws) return `<span class="muted">no world state (none recorded yet, or reset by a compaction)</span>`;
  return Object.entries(ws).map(([id, value]) =>
    `<details class="ws-section" data-section="${esc(id)}"><summary>${esc(id)}</summary><pre>${esc(JSON.stringify(value, null, 2))}</pre></details>`).join("");
}

// --- live updating ---------------------------------------------------------------------------
function stopFollowing() {
  if (state.source) { state.source.close(); state.source = null; }
  $("#live-status").textContent = "";
}

function follow(id) {
  stopFollowing();
  if (DATA || typeof EventSource === "undefined") return;
  const source = new EventSource(`/api/sessions/${encodeURIComponent(id)}/events`);
  let lastSize = null;
  source.addEventListener("size", async (event) => {
    const size = JSON.parse(event.data).size;
    if (lastSize !== null && size !== lastSize && state.sessionId === id && state.before === null) {
      await loadSession();
      $("#live-status").textContent = `live · updated ${new Date().toLocaleTimeString()} · ${countSteps()} steps`;
    } else if (lastSize === null) {
      $("#live-status").textContent = "live";
    }
    lastSize = size;
  });
  state.source = source;
}

function countSteps() {
  return state.session ? state.session.turns.reduce((n, t) => n + t.steps.length, 0) : 0;
}
