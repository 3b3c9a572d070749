// The search page (and the share page): state from the embedded events, then the live stream.
import { bestByRound, bestNode, createState, applyEvent, kernelCounts, FINAL_SEARCH, SEARCH, speedupText } from "./state.js";
import { connectStream } from "./stream.js";
import { TreeView } from "./tree.js";
import { NodePanel } from "./panel.js";
import { drawChart } from "./chart.js";
import { drawLineage } from "./lineage.js";
import { drawCategories } from "./categories.js";

const page = JSON.parse(document.getElementById("page-data").textContent);
const state = createState();
const $ = (id) => document.getElementById(id);

const conn = $("conn");
const tree = new TreeView($("tree"), $("tree-viewport"), { onSelect: select });
const panel = new NodePanel($("panel"), page.panel_url, { onOpenNode: select });

function select(id) {
  if (!state.nodes.has(id)) return;
  tree.select(id);
  panel.open(id);
  history.replaceState(null, "", `#node-${id}`);
}

function fmtElapsed(seconds) {
  if (seconds == null || !isFinite(seconds) || seconds < 0) return "—";
  const s = Math.floor(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s}s`;
}

function elapsed() {
  const start = page.started || state.startedAt;
  if (!start) return null;
  const end = FINAL_SEARCH.has(state.status) ? (page.finished || state.finishedAt) : null;
  return ((end ? Date.parse(end) : Date.now()) - Date.parse(start)) / 1000;
}

// Evaluated / planned, with what runs now: counted from the kernels' own stages, so the
// numbers move as each candidate moves, not once per batch.
function drawCounts() {
  const c = kernelCounts(state);
  if (!c.planned && !state.costs) return;
  const parts = [];
  if (c.running) parts.push(`${c.running} running`);
  if (c.queued) parts.push(`${c.queued} queued`);
  parts.push(`${c.correct} correct`);
  $("stat-candidates").innerHTML = `${c.evaluated}<small> / ${c.planned}</small> <small>${parts.join(" · ")}</small>`;
  $("stat-candidates").title = `${c.evaluated} evaluated, ${c.running} running, ${c.queued} queued, ${c.planned} planned in the rounds so far`;
}

// The header's number, with its interval on a line of its own so it fits the cell.
function drawSpeedup(el, node, which) {
  const head = speedupText(node, which, true);
  const note = speedupText(node, which).slice(head.length).trim().replace(/^\((.*)\)$/, "$1");
  el.textContent = head;
  if (note) {
    const small = document.createElement("small");
    small.className = "note";
    small.textContent = note;
    el.append(small);
  }
}

function drawHeader() {
  const status = $("stat-status");
  status.textContent = state.reason === "cancelling" && state.status === SEARCH.RUNNING ? "cancelling" : state.status;
  status.className = `badge st-${state.status}`;
  if (state.reason) { $("stat-reason").textContent = state.reason.length > 60 ? state.reason.slice(0, 59) + "…" : state.reason; $("stat-reason").title = state.reason; }
  $("stat-round").innerHTML = `${state.round} <small>/ ${page.rounds ?? "?"}</small>`;
  const best = bestNode(state);
  drawSpeedup($("stat-speedup"), best, "eager");
  drawSpeedup($("stat-compile"), best, "compile");
  drawCounts();
  if (state.costs) {
    const c = state.costs;
    $("stat-cost").innerHTML = `$${(c.cost_usd || 0).toFixed(3)} <small>${Math.round(c.gpu_seconds || 0)} s ${page.device === "cpu" ? "CPU" : "GPU"}</small>`;
  }
  $("stat-elapsed").textContent = fmtElapsed(elapsed());
  const kernels = [...state.nodes.values()].filter((n) => n.kind === "kernel").length;
  $("tree-count").textContent = state.nodes.size ? `${kernels} kernels · ${state.nodes.size} nodes`
    : state.status === SEARCH.QUEUED ? "queued: waiting for a worker…" : "";
  const cancel = $("cancel-form");
  if (cancel && FINAL_SEARCH.has(state.status)) cancel.remove();
  if (FINAL_SEARCH.has(state.status) && conn.classList.contains("live")) {
    conn.textContent = state.status;
    conn.className = "conn done";
  }
  const download = $("download-best");
  if (download) {
    const ready = !!bestNode(state);
    download.classList.toggle("disabled", !ready);
    download.setAttribute("aria-disabled", String(!ready));
    download.title = ready ? "The best kernel as a KernelBench ModelNew file" : "No correct kernel yet";
  }
}

let frame = 0;
let drawnVersion = -1;
function schedule() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    if (drawnVersion === state.version) return;
    drawnVersion = state.version;
    tree.update(state);
    drawHeader();
    drawChart($("chart"), bestByRound(state, page.rounds));
    const best = bestNode(state);
    drawLineage($("lineage"), state, best ? best.id : null, select);
    drawCategories($("categories"), state, page.categories || {});
  });
}

function onEvent(ev) {
  if (!applyEvent(state, ev)) return;
  if (ev.kind === "node_updated" && ev.payload.node) panel.nodeChanged(ev.payload.node);
  schedule();
}

for (const ev of page.events) applyEvent(state, ev);
schedule();

const stream = connectStream({
  path: page.ws_path,
  after: state.lastId,
  onEvent,
  onStatus: (s) => {
    // A finished search's stream has nothing more to say: the pill says how the search ended.
    if (s === "live" && FINAL_SEARCH.has(state.status)) s = "done";
    conn.textContent = { live: "live", lost: "reconnecting…", done: state.status, refused: "no access" }[s] || s;
    conn.className = `conn ${s === "live" ? "live" : s === "lost" || s === "refused" ? "lost" : "done"}`;
  },
  keepOpen: () => !FINAL_SEARCH.has(state.status),
});
window.kernelweb = { state, stream, select, tree };   // for the browser tests and for debugging

setInterval(() => { if (!FINAL_SEARCH.has(state.status)) $("stat-elapsed").textContent = fmtElapsed(elapsed()); }, 1000);

$("tree-fit").onclick = () => tree.fit();
$("tree-zoom-in").onclick = () => tree.zoomBy(1.25);
$("tree-zoom-out").onclick = () => tree.zoomBy(0.8);
$("tree-best").onclick = () => { const b = bestNode(state); if (b) select(b.id); };
// The share URL box selects itself on click (no inline handler: the CSP allows none).
document.getElementById("share-url")?.addEventListener("click", (e) => e.target.select());

const m = location.hash.match(/^#node-(\d+)$/);
if (m && state.nodes.has(Number(m[1]))) select(Number(m[1]));
