// The search as the browser knows it, rebuilt from the event stream (the server's event log).
// The statuses as the server declares them (search/engine/statuses.py), from the page's data:
// a kernel's stages while its batch runs, in order, then a final status (its verdict).
const STATUSES = JSON.parse(document.getElementById("page-data").textContent).statuses;
export const STAGES = STATUSES.stages;
export const PENDING = new Set(STATUSES.pending);
export const FINAL_SEARCH = new Set(STATUSES.final_search);
export const NODE = STATUSES.node;      // e.g. NODE.CORRECT === "correct"
export const SEARCH = STATUSES.search;  // e.g. SEARCH.RUNNING === "running"

export function createState() {
  return {
    nodes: new Map(),      // id -> NODE payload (docs/architecture.md)
    children: new Map(),   // parent id -> [child ids], in arrival order
    roots: [],
    status: SEARCH.QUEUED,
    reason: "",
    round: 0,
    best: null,            // {node_id, speedup, speedup_vs_compile, speedup_ci, noisy, ...}
    costs: null,
    roundsFinished: new Map(),
    startedAt: null,
    finishedAt: null,
    lastId: 0,
    version: 0,            // bumps on every applied event; views redraw when it changed
  };
}

function addNode(state, node) {
  const known = state.nodes.get(node.id);
  state.nodes.set(node.id, known ? { ...known, ...node } : { ...node });
  if (known) return;
  if (node.parent_id == null) {
    state.roots.push(node.id);
  } else {
    if (!state.children.has(node.parent_id)) state.children.set(node.parent_id, []);
    state.children.get(node.parent_id).push(node.id);
  }
}

// Apply one event; returns false for one already seen (replay after a reconnect overlaps).
export function applyEvent(state, ev) {
  if (typeof ev.id !== "number" || ev.id <= state.lastId) return false;
  state.lastId = ev.id;
  state.version += 1;
  const p = ev.payload || {};
  switch (ev.kind) {
    case "node_added":
    case "node_updated":
      if (p.node && p.node.id != null) addNode(state, p.node);
      break;
    case "best_changed":
      state.best = { ...p };
      break;
    case "round_started":
      state.round = Math.max(state.round, p.round || 0);
      break;
    case "round_finished":
      state.roundsFinished.set(p.round, { best_speedup: p.best_speedup, best_node_id: p.best_node_id });
      break;
    case "search_status":
      state.status = p.status || state.status;
      state.reason = p.reason || "";
      if (p.round != null) state.round = Math.max(state.round, p.round);
      if (p.status === SEARCH.RUNNING && !state.startedAt) state.startedAt = ev.created;
      if (FINAL_SEARCH.has(p.status)) state.finishedAt = ev.created;
      break;
    case "costs":
      state.costs = p;
      break;
    default:
      break;  // kinds added later are ignored, never fatal
  }
  return true;
}

// A node's speedup as every view shows it: "2.31×", "2.31× (CI 2.25–2.37)",
// "≈1.9× (noisy, CI 1.2–2.8)", "—". `which`: "eager" or "compile"; `short` drops the interval.
// The one home on the page; it mirrors Speedup.text in search/engine/speedups.py.
export function speedupText(node, which = "eager", short = false) {
  const value = node ? (which === "eager" ? node.speedup : node.speedup_vs_compile) : null;
  if (value == null) return "—";
  const ci = which === "eager" ? node.speedup_ci : node.speedup_vs_compile_ci;
  const head = node.noisy ? `≈${value.toFixed(1)}×` : `${value.toFixed(2)}×`;
  if (short) return head;
  if (node.noisy) return head + (ci ? ` (noisy, CI ${ci[0].toFixed(1)}–${ci[1].toFixed(1)})` : " (noisy)");
  return head + (ci ? ` (CI ${ci[0].toFixed(2)}–${ci[1].toFixed(2)})` : "");
}

// May be a search's best or a seed: a correct kernel with a measured speedup that is not noisy.
export function rankable(n) {
  return n.kind === "kernel" && n.status === NODE.CORRECT && n.speedup != null && !n.noisy;
}

// Of two rankable kernels, the better: the higher ratio, then the higher interval low end
// (the order of rank_key in search/engine/speedups.py).
export function better(a, b) {
  if (!a) return b;
  if (a.speedup !== b.speedup) return b.speedup > a.speedup ? b : a;
  const low = (n) => (n.speedup_ci ? n.speedup_ci[0] : n.speedup);
  return low(b) > low(a) ? b : a;
}

// The best kernel: the last best_changed event, else the best trusted ratio seen.
export function bestNode(state) {
  if (state.best && state.nodes.has(state.best.node_id)) return state.nodes.get(state.best.node_id);
  let best = null;
  for (const n of state.nodes.values()) if (rankable(n)) best = better(best, n);
  return best;
}

// Kernels by progress: evaluated (a verdict), running (compiling, checking or timing),
// queued (waiting for the runner in this batch); planned = all three, what actually runs.
export function kernelCounts(state) {
  const c = { evaluated: 0, correct: 0, running: 0, queued: 0, planned: 0 };
  for (const n of state.nodes.values()) {
    if (n.kind !== "kernel" || n.status === NODE.FAILED || n.status === NODE.PROPOSED) continue;
    if (n.status === NODE.QUEUED) c.queued += 1;
    else if (PENDING.has(n.status)) c.running += 1;
    else { c.evaluated += 1; if (n.status === NODE.CORRECT) c.correct += 1; }
  }
  c.planned = c.evaluated + c.running + c.queued;
  return c;
}

// Ids from the root down to `id`.
export function pathTo(state, id) {
  const path = [];
  let cur = state.nodes.get(id);
  while (cur) {
    path.unshift(cur.id);
    cur = cur.parent_id == null ? null : state.nodes.get(cur.parent_id);
  }
  return path;
}

// Best trusted speedup so far at the end of each round: [{round, eager, compile}].
export function bestByRound(state, rounds) {
  const perRound = new Map();
  let maxRound = Math.max(state.round, rounds || 0);
  for (const n of state.nodes.values()) {
    if (!rankable(n)) continue;
    maxRound = Math.max(maxRound, n.round);
    perRound.set(n.round, better(perRound.get(n.round), n));
  }
  const out = [];
  let best = null;
  for (let r = 0; r <= maxRound; r++) {
    const n = perRound.get(r);
    if (n) best = better(best, n);
    if (r > state.round && !perRound.has(r) && !state.roundsFinished.has(r)) break;  // not reached yet
    out.push({ round: r, eager: best ? best.speedup : null, compile: best ? best.speedup_vs_compile : null });
  }
  return out;
}
