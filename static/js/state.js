// The search as the browser knows it, rebuilt from the event stream (the server's event log).
export const PENDING = new Set(["proposed", "compiling", "checking", "timing"]);
export const FINAL_SEARCH = new Set(["finished", "failed", "cancelled"]);

export function createState() {
  return {
    nodes: new Map(),      // id -> NODE payload (docs/architecture.md)
    children: new Map(),   // parent id -> [child ids], in arrival order
    roots: [],
    status: "queued",
    reason: "",
    round: 0,
    best: null,            // {node_id, speedup, speedup_vs_compile}
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
      state.best = { node_id: p.node_id, speedup: p.speedup, speedup_vs_compile: p.speedup_vs_compile };
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
      if (p.status === "running" && !state.startedAt) state.startedAt = ev.created;
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

// The best kernel: the last best_changed event, else the fastest correct kernel seen.
export function bestNode(state) {
  if (state.best && state.nodes.has(state.best.node_id)) return state.nodes.get(state.best.node_id);
  let best = null;
  for (const n of state.nodes.values()) {
    if (n.kind === "kernel" && n.status === "correct" && n.speedup != null && (!best || n.speedup > best.speedup)) best = n;
  }
  return best;
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

// Best correct speedup so far at the end of each round: [{round, eager, compile}].
export function bestByRound(state, rounds) {
  const perRound = new Map();
  let maxRound = Math.max(state.round, rounds || 0);
  for (const n of state.nodes.values()) {
    if (n.kind !== "kernel" || n.status !== "correct" || n.speedup == null) continue;
    maxRound = Math.max(maxRound, n.round);
    const cur = perRound.get(n.round);
    if (!cur || n.speedup > cur.speedup) perRound.set(n.round, n);
  }
  const out = [];
  let best = null;
  for (let r = 0; r <= maxRound; r++) {
    const n = perRound.get(r);
    if (n && (!best || n.speedup > best.speedup)) best = n;
    if (r > state.round && !perRound.has(r) && !state.roundsFinished.has(r)) break;  // not reached yet
    out.push({ round: r, eager: best ? best.speedup : null, compile: best ? best.speedup_vs_compile : null });
  }
  return out;
}
