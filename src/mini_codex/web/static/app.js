// mini-codex inspector: plain JS, no build step, no network beyond this server (docs/ui.md).
// Rollouts are untrusted input: no data reaches the DOM as HTML. Every node is built by h()/s()
// below, whose string children become text nodes (textContent); numbers are read through num().
"use strict";
// A self-contained export (rollout inspect --html) embeds its data as a JSON block (never run).
const DATA = (() => {
  const block = document.getElementById("mini-codex-data");
  return block ? JSON.parse(block.textContent) : null;
})();
const $ = (sel, root = document) => root.querySelector(sel);
const state = { sessions: [], session: null, sessionId: null, stepId: null, before: null, source: null };
const SVG_NS = "http://www.w3.org/2000/svg";

// The one way nodes are made: attributes by setAttribute (never on* handlers), children as
// nodes or text. Nothing is ever parsed as HTML.
function build(node, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (/^on/i.test(key)) throw new Error("event handler attributes are not allowed");
    node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
const s = (tag, attrs, ...children) => build(document.createElementNS(SVG_NS, tag), attrs, children);
function put(target, ...children) {
  target.replaceChildren();
  return build(target, {}, children);
}
// A number from the document, or null (a string, an object or NaN in a rollout is not a number).
function num(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
const numText = (value) => (num(value) === null ? "?" : String(num(value)));
const str = (value) => (value === null || value === undefined ? "" : String(value));
const list = (value) => (Array.isArray(value) ? value : []);
function short(value, n = 200) {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  return text.length > n ? text.slice(0, n) + "…" : text;
}

async function api(path) {
  if (DATA) {
    if (!Object.prototype.hasOwnProperty.call(DATA.api, path)) throw new Error("not in this export: " + path);
    return DATA.api[path];
  }
  const response = await fetch(path, { credentials: "same-origin" });
  const body = await response.json();
  if (!response.ok) throw new Error(str(body.error) || response.statusText);
  return body;
}

// A cut text (the server keeps documents bounded): its full text is one click away.
function fullTextButton(cut) {
  if (!cut || DATA || num(cut.offset) === null) return null;
  const label = num(cut.chars) !== null ? `show all ${num(cut.chars)} characters` : `show the whole line (${numText(cut.bytes)} bytes)`;
  const button = h("button", { class: "full-text" }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const url = `/api/sessions/${encodeURIComponent(state.sessionId)}/lines/${num(cut.offset)}`;
      const response = await fetch(url, { credentials: "same-origin" });
      if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
      const text = await response.text();
      const pre = h("pre", { class: "full" }, text);
      button.replaceWith(pre);
    } catch (error) {
      button.replaceWith(h("span", { class: "warn" }, str(error.message)));
    }
  });
  return button;
}

// --- routing ---------------------------------------------------------------------------------
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "s" && parts[1]) return showSession(parts[1], parts[2] || null);
  if (DATA && DATA.session_id) return showSession(String(DATA.session_id), null);
  return showList();
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", () => {
  // The access token is kept in a cookie by the server: take it out of the address bar.
  if (!DATA && new URLSearchParams(location.search).has("token")) {
    history.replaceState(null, "", location.pathname + location.hash);
  }
  route();
});

// --- session list ----------------------------------------------------------------------------
async function showList() {
  stopFollowing();
  state.sessionId = null;
  $("#crumb").textContent = "";
  const main = $("#main");
  const sort = h("select", { id: "sort" },
    h("option", { value: "updated" }, "newest first"), h("option", { value: "started" }, "started"),
    h("option", { value: "turns" }, "most turns"), h("option", { value: "size" }, "largest"));
  put(main,
    h("div", { class: "toolbar" }, h("input", { id: "search", type: "search", placeholder: "search id, cwd, prompt", size: "40" }), " ", sort),
    h("table", { id: "session-list" },
      h("thead", {}, h("tr", {}, ["id", "updated (UTC)", "cwd", "turns", "size", "first prompt"].map((t) => h("th", {}, t)))),
      h("tbody")));
  try {
    state.sessions = list(await api("/api/sessions"));
  } catch (error) {
    put(main, h("p", { class: "warn" }, str(error.message)));
    return;
  }
  $("#search").addEventListener("input", renderList);
  $("#sort").addEventListener("change", renderList);
  renderList();
}

// Sub-agents right under the session that spawned them (when it is listed too), as `sessions list`.
function tree(rows) {
  const listed = new Set(rows.map((x) => str(x.id)));
  const children = new Map();
  for (const x of rows) {
    const parent = str(x.parent_thread_id);
    if (x.parent_thread_id && listed.has(parent) && parent !== str(x.id)) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(x);
    }
  }
  const out = [];
  const add = (x, depth) => {
    out.push([x, depth]);
    const kids = children.get(str(x.id)) || [];
    children.delete(str(x.id));
    for (const kid of kids) add(kid, depth + 1);
  };
  for (const x of rows) {
    if (!(x.parent_thread_id && listed.has(str(x.parent_thread_id))) || str(x.parent_thread_id) === str(x.id)) add(x, 0);
  }
  return out;
}

function renderList() {
  const query = $("#search").value.trim().toLowerCase();
  const key = $("#sort").value;
  const rows = state.sessions.filter((x) =>
    !query || [x.id, x.cwd, x.first_prompt, x.path].some((v) => str(v).toLowerCase().includes(query)));
  rows.sort((a, b) => {
    if (key === "turns" || key === "size") return (num(b[key]) || 0) - (num(a[key]) || 0);
    return str(b[key]).localeCompare(str(a[key]));
  });
  const body = $("#session-list tbody");
  body.replaceChildren();
  for (const [x, depth] of tree(rows)) {
    const size = num(x.size);
    const label = depth ? `${"  ".repeat(depth - 1)}└ ${str(x.id)}${x.agent_nickname ? ` (${str(x.agent_nickname)})` : ""}` : str(x.id);
    const tr = h("tr", { class: depth ? "session-row child-row" : "session-row", "data-id": str(x.id) },
      h("td", { class: "mono" }, label),
      h("td", {}, str(x.updated).replace("T", " ").slice(0, 19)),
      h("td", { class: "mono" }, str(x.cwd)),
      h("td", {}, numText(x.turns)),
      h("td", {}, size === null ? "?" : `${(size / 1024).toFixed(1)} KiB`),
      h("td", {}, short(str(x.first_prompt || x.error), 90)));
    tr.addEventListener("click", () => { location.hash = `#/s/${encodeURIComponent(str(x.id))}`; });
    body.appendChild(tr);
  }
  if (!rows.length) body.appendChild(h("tr", {}, h("td", { colspan: "6", class: "muted" }, "no sessions")));
}

// --- one session -----------------------------------------------------------------------------
async function showSession(id, stepId) {
  const fresh = id !== state.sessionId;
  state.sessionId = id;
  state.stepId = stepId;
  if (fresh) {
    state.before = null;
    $("#crumb").textContent = id;
    put($("#main"),
      h("div", { id: "family", class: "family" }),
      h("div", { id: "chart", class: "chart" }),
      h("div", { class: "layout" },
        h("nav", { id: "timeline", class: "timeline" }),
        h("section", { id: "step", class: "panel" }, h("p", { class: "muted" }, "select a step"))),
      h("div", { id: "warnings" }));
    await loadSession();
    follow(id);
  } else {
    renderTimeline();
  }
  if (stepId) await showStep(stepId);
}

async function loadSession() {
  const id = state.sessionId;
  const before = state.before;
  const query = before !== null ? `?before=${encodeURIComponent(before)}` : "";
  let session;
  try {
    session = await api(`/api/sessions/${encodeURIComponent(id)}${query}`);
  } catch (error) {
    if (state.sessionId === id) put($("#main"), h("p", { class: "warn" }, str(error.message)));
    return;
  }
  // A reply for a page no longer shown (the person opened another session, or another window
  // of this one, while it loaded: a live update of the previous page, say) is dropped, not drawn
  // over the page shown now.
  if (state.sessionId !== id || state.before !== before) return;
  state.session = session;
  renderTimeline();
  renderChart();
  renderFamily();
  const warnings = list(state.session.warnings);
  const long = list(state.session.long_lines);
  put($("#warnings"),
    warnings.length || long.length ? h("h4", {}, "Replay warnings") : null,
    warnings.map((w) => h("div", { class: "warn" }, str(w))),
    long.map((entry) => h("div", { class: "warn long-line" },
      `${entry.line ? "line " + numText(entry.line) : "offset " + numText(entry.offset)}: ${numText(entry.bytes)} bytes, not shown `,
      fullTextButton(entry))));
}

// The parent/child tree of sub-agents: "spawned by" the parent, links to the children.
function renderFamily() {
  const doc = state.session;
  const link = (id, text) => h("a", { href: `#/s/${encodeURIComponent(str(id))}`, class: "mono" }, text);
  const parts = [];
  if (doc.parent_thread_id) {
    parts.push(h("div", { class: "parent" }, `sub-agent${doc.agent_nickname ? " " + str(doc.agent_nickname) : ""}, spawned by `,
      link(doc.parent_thread_id, str(doc.parent_thread_id))));
  }
  const kids = list(doc.children);
  if (kids.length) {
    parts.push(h("div", { class: "children" }, `sub-agents (${kids.length}): `,
      kids.map((kid) => h("span", { class: "child" }, link(kid.id, `${str(kid.agent_nickname || "")} ${str(kid.id)}`.trim()), " "))));
  }
  put($("#family"), parts);
}

function where(x) {
  return num(x.line) !== null ? "L" + num(x.line) : "@" + numText(x.offset);
}

function stepLabel(step) {
  const usage = step.token_usage ? `${numText(step.token_usage.total_tokens)} tok` : "";
  const duration = num(step.duration_ms) !== null ? `${num(step.duration_ms)} ms` : "";
  const calls = list(step.tool_calls).map((c) => str(c.name)).join(", ");
  const changes = list(step.world_state_change);
  return [
    h("div", {}, `step ${numText(step.sequence)}`,
      changes.length ? h("span", { class: "badge ws" }, changeSummary(changes)) : null,
      calls ? h("span", { class: "badge" }, calls) : null),
    h("div", { class: "meta" }, `${where(step)} · ${str(step.model)} ${usage ? "· " + usage : ""} ${duration ? "· " + duration : ""}`),
  ];
}

function changeSummary(changes) {
  return "ws: " + changes.map((c) => {
    const sections = list(c.sections).map(str);
    if (c.cause === "full") return `full (${sections.length} sections)`;
    if (c.cause === "compacted") return "reset";
    const names = sections.slice(0, 3).join(", ") + (sections.length > 3 ? ", …" : "");
    return c.cause === "ignored_patch" ? `ignored patch: ${names}` : names;
  }).join("; ");
}

function markersOf(x) {
  const out = [];
  const at = (m) => (num(m.line) !== null ? " L" + num(m.line) : "");
  for (const c of list(x.compactions)) out.push([num(c.offset) ?? 0, "compaction", `compacted${at(c)} · history ${num(c.history_items) ?? "legacy"} items${c.summary ? " · " + short(str(c.summary), 80) : ""}`]);
  for (const c of list(x.checkpoints)) out.push([num(c.offset) ?? 0, "checkpoint", `checkpoint${at(c)} · history ${numText(c.history_items)} items`]);
  for (const r of list(x.rollbacks)) out.push([num(r.offset) ?? 0, "rollback", `rollback${at(r)} · ${numText(r.num_turns)} user turn(s) dropped: ${list(r.turns).map(numText).join(", ")}`]);
  return out.sort((a, b) => a[0] - b[0]);
}

function renderTimeline() {
  const nav = $("#timeline");
  if (!nav || !state.session) return;
  const x = state.session;
  nav.replaceChildren();
  const page = x.page || {};
  if (num(page.previous) !== null) {
    const button = h("button", { id: "earlier" }, "◂ earlier steps");
    button.addEventListener("click", async () => { state.before = num(page.start); await loadSession(); });
    nav.appendChild(h("div", { class: "pager" }, button));
  }
  if (state.before !== null) {
    const button = h("button", { id: "newest" }, "newest steps ▸");
    button.addEventListener("click", async () => { state.before = null; await loadSession(); });
    nav.appendChild(h("div", { class: "pager" }, button));
  }
  const markers = markersOf(x);
  const flush = (limit, container = nav) => {
    while (markers.length && markers[0][0] < limit) {
      const [, kind, text] = markers.shift();
      container.appendChild(h("div", { class: `marker ${kind}` }, text));
    }
  };
  const turns = list(x.turns);
  for (const turn of turns) {
    flush(num(turn.offset) ?? 0);
    const box = h("div", { class: "turn" + (turn.rolled_back ? " rolled-back" : ""), "data-turn": numText(turn.number) });
    const rolled = turn.rolled_back ? ` · rolled back${num(turn.rolled_back_at) !== null ? " at L" + num(turn.rolled_back_at) : ""}` : "";
    box.appendChild(h("h3", {}, `turn ${numText(turn.number)} `, h("span", { class: "muted" }, `${str(turn.turn_id)} · ${str(turn.status)}${rolled}`)));
    const prompt = list(turn.items).find((i) => i.role === "user" && !str(i.text).startsWith("<"));
    if (prompt) box.appendChild(h("div", { class: "muted" }, short(str(prompt.text), 120)));
    for (const step of list(turn.steps)) {
      flush(num(step.offset) ?? 0, box);
      const stepId = str(step.step_id);
      const node = h("div", { class: "step" + (stepId === state.stepId ? " selected" : ""), "data-step-id": stepId }, stepLabel(step));
      node.addEventListener("click", () => { location.hash = `#/s/${encodeURIComponent(str(x.id))}/${encodeURIComponent(stepId)}`; });
      box.appendChild(node);
    }
    nav.appendChild(box);
  }
  flush(Infinity);
  if (!turns.length) nav.appendChild(h("p", { class: "muted pager" }, "no turns in this part of the file"));
}

function renderChart() {
  const points = list(state.session.tokens);
  const box = $("#chart");
  if (!points.some((p) => num(p.total_tokens))) {
    put(box, h("span", { class: "muted" }, "no token usage recorded in this part of the session"));
    return;
  }
  const width = Math.max(box.clientWidth - 10, 300), height = 70;
  const max = Math.max(1, ...points.map((p) => num(p.total_tokens) || 0));
  const w = width / points.length;
  const svg = s("svg", { id: "token-chart", width, height: height + 14, role: "img", "aria-label": "tokens per step" });
  points.forEach((p, i) => {
    const total = num(p.total_tokens);
    const barHeight = ((total || 0) / max) * height;
    const stepId = str(p.step_id);
    const rect = s("rect", { class: "bar" + (stepId === state.stepId ? " sel" : ""), "data-step-id": stepId, x: i * w + 1, y: height - barHeight, width: Math.max(w - 2, 1), height: barHeight },
      s("title", {}, `step ${i + 1}: ${total ?? "?"} tokens`));
    rect.addEventListener("click", () => {
      location.hash = `#/s/${encodeURIComponent(state.sessionId)}/${encodeURIComponent(stepId)}`;
    });
    svg.appendChild(rect);
  });
  for (const c of list(state.session.compactions)) {
    const x = (num(c.step_index) ?? 0) * w;
    svg.appendChild(s("line", { class: "compaction", x1: x, x2: x, y1: 0, y2: height }, s("title", {}, "compaction")));
  }
  svg.appendChild(s("text", { x: 2, y: height + 12, "font-size": 10, fill: "#6b7075" }, `tokens per step (max ${max})`));
  put(box, svg);
}

function findStep(stepId) {
  for (const turn of list(state.session.turns)) for (const step of list(turn.steps)) if (step.step_id === stepId) return [turn, step];
  return [null, null];
}

async function showStep(stepId) {
  const panel = $("#step");
  const [turn, step] = findStep(stepId);
  document.querySelectorAll(".step.selected").forEach((n) => n.classList.remove("selected"));
  document.querySelectorAll(".step").forEach((n) => { if (n.dataset.stepId === stepId) n.classList.add("selected"); });
  document.querySelectorAll("rect.bar").forEach((r) => r.classList.toggle("sel", r.dataset.stepId === stepId));
  if (!step) { put(panel, h("p", { class: "muted" }, `step ${stepId} is not on this page`)); return; }
  const base = `/api/sessions/${encodeURIComponent(state.sessionId)}/steps/${encodeURIComponent(stepId)}`;
  let ws, request;
  try {
    [ws, request] = await Promise.all([api(base + "/world_state"), api(base + "/request")]);
  } catch (error) {
    put(panel, h("p", { class: "warn" }, str(error.message)));
    return;
  }
  const calls = list(step.tool_calls);
  const hidden = ["function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output"];
  const input = list(request.input);
  const tools = Array.isArray(request.tools) ? request.tools : null;
  put(panel,
    h("h2", {}, `turn ${numText(turn.number)} · step ${numText(step.sequence)} `, h("span", { class: "muted mono" }, str(step.step_id))),
    h("div", { class: "muted" }, `model ${str(step.model) || "?"} · ${usageText(step.token_usage)} · ${numText(step.duration_ms)} ms · ${num(step.line) !== null ? "line " + num(step.line) : "offset " + numText(step.offset)}`),
    h("h4", {}, "World-state diff vs the previous step"), h("div", { id: "ws-diff" }, renderDiff(list(ws.diff))),
    h("h4", {}, "Tool calls"), h("div", { id: "tool-calls" }, calls.length ? calls.map(renderCall) : h("span", { class: "muted" }, "none")),
    h("h4", {}, "Items and events"), h("div", { id: "items" }, list(step.items).filter((i) => !hidden.includes(i.kind)).map(renderRow)),
    h("h4", {}, `Request (${input.length} input items · tools ${tools ? tools.length : str(request.tools_source)})`),
    h("details", { id: "request" }, h("summary", {}, "input the model saw"), input.map(renderInput)),
    h("details", {}, h("summary", {}, "tools"), h("pre", {}, tools ? JSON.stringify(tools, null, 2) : "not recorded in this rollout")),
    h("h4", {}, "World state at this step"), h("div", { id: "ws-browser" }, renderSections(ws.world_state)));
}

function usageText(usage) {
  if (!usage || typeof usage !== "object") return "no token usage recorded";
  const cached = num(usage.cached_input_tokens) ? ` (${num(usage.cached_input_tokens)} cached)` : "";
  return `tokens: in ${numText(usage.input_tokens)}${cached} · out ${numText(usage.output_tokens)} · total ${numText(usage.total_tokens)}`;
}

function renderDiff(rows) {
  if (!rows.length) return h("span", { class: "muted" }, "unchanged");
  const sign = { add: "+", remove: "−", change: "~" };
  return rows.map((r) => {
    const op = ["add", "remove", "change"].includes(r.op) ? r.op : "change";
    const path = list(r.path).map(str).join(".");
    const text = op === "change" ? `${path}: ${short(r.before)} → ${short(r.after)}`
      : `${path}: ${short(op === "add" ? r.after : r.before, 400)}`;
    return h("div", { class: `diff-row ${op}` }, `${sign[op]} ${text}`);
  });
}

function renderPatch(text) {
  return h("pre", { class: "patch" }, str(text).split("\n").map((line) => {
    const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "remove" : line.startsWith("@@") || line.startsWith("***") ? "hunk" : "";
    return cls ? h("span", { class: cls }, line) : line + "\n";
  }));
}

function renderCall(call) {
  const args = call.arguments;
  let patch = null;
  if (call.name === "apply_patch") {
    try { patch = typeof args === "string" && args.trim().startsWith("{") ? JSON.parse(args).input : args; } catch { patch = args; }
  }
  const body = patch ? renderPatch(patch) : h("pre", {}, typeof args === "string" ? args : JSON.stringify(args) ?? "");
  const output = call.output ?? "(no output recorded)";
  return h("div", { class: "tool-call", "data-call-id": str(call.call_id) },
    h("b", {}, str(call.name)), " ", h("span", { class: "muted mono" }, str(call.call_id)),
    body, fullTextButton(call.arguments_cut),
    h("div", { class: "muted" }, "output"),
    h("pre", { class: "tool-output" }, typeof output === "string" ? output : JSON.stringify(output)),
    fullTextButton(call.output_cut));
}

function renderRow(row) {
  const role = str(row.role || (row.kind === "event" ? row.type : row.kind));
  let text = str(row.text);
  if (row.kind === "world_state") text = `${str(row.cause)}: ${list(row.sections).map(str).join(", ")}`;
  if (row.kind === "turn_context") text = `model ${str(row.model) || "?"}`;
  return h("div", { class: "item " + role.replace(/[^\w-]/g, "_") },
    h("span", { class: "muted" }, `${num(row.line) !== null ? "L" + num(row.line) : ""} ${role}`), " ", short(text, 600),
    fullTextButton(row.text_cut));
}

function renderInput(item) {
  let role = str(item.role || item.type);
  let text;
  if (item.type === "message") text = list(item.content).map((p) => (p && typeof p.text === "string" ? p.text : `[${str(p && p.type)}]`)).join("\n");
  else if (item.type === "function_call" || item.type === "custom_tool_call") { role = "call"; text = `${str(item.name)}(${str(item.arguments ?? item.input)})`; }
  else if (item.output !== undefined) text = typeof item.output === "string" ? item.output : JSON.stringify(item.output);
  else text = JSON.stringify(item);
  return h("div", { class: "item " + role.replace(/[^\w-]/g, "_") }, h("span", { class: "muted" }, role), h("pre", {}, text));
}

function renderSections(ws) {
  if (!ws || typeof ws !== "object") return h("span", { class: "muted" }, "no world state (none recorded yet, or reset by a compaction)");
  return Object.entries(ws).map(([id, value]) =>
    h("details", { class: "ws-section", "data-section": id }, h("summary", {}, id), h("pre", {}, JSON.stringify(value, null, 2))));
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
    const size = num(JSON.parse(event.data).size);
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
  return state.session ? list(state.session.turns).reduce((n, t) => n + list(t.steps).length, 0) : 0;
}
