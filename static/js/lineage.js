// The best kernel's lineage, root to leaf: each ancestor's idea, time and percent of the
// reference, round by round (the study's trajectory view).
import { pathTo, speedupText } from "./state.js";

const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));

function fmtMs(ms) {
  if (ms == null) return "—";
  if (ms < 1) return `${(ms * 1000).toPrecision(3)} µs`;
  return ms < 1000 ? `${ms.toPrecision(3)} ms` : `${(ms / 1000).toPrecision(3)} s`;
}

export function lineageRows(state, bestId) {
  const best = state.nodes.get(bestId);
  if (!best) return [];
  // Reference time: the reference node's, else what the best kernel's speedup implies.
  const ids = pathTo(state, bestId);
  const root = state.nodes.get(ids[0]);
  const refMs = (root && root.cand_ms) || (best.cand_ms && best.speedup ? best.cand_ms * best.speedup : null);
  const rows = [];
  for (const id of ids) {
    const n = state.nodes.get(id);
    if (n.kind === "idea") continue;
    const parent = n.parent_id != null ? state.nodes.get(n.parent_id) : null;
    const idea = n.kind === "reference" ? "Reference (eager PyTorch)" : (parent && parent.kind === "idea" ? parent.idea : n.idea) || "(seed kernel)";
    const pct = n.kind === "reference" ? 100 : n.speedup ? 100 / n.speedup : null;
    rows.push({ id, round: n.round, idea, ms: n.kind === "reference" ? refMs : n.cand_ms, pct, speedup: speedupText(n) });
  }
  return rows;
}

export function drawLineage(list, state, bestId, onSelect) {
  const rows = bestId != null ? lineageRows(state, bestId) : [];
  if (rows.length < 2) { list.innerHTML = '<li class="muted">No correct kernel yet.</li>'; return; }
  const head = '<li class="head"><span>round</span><span>idea</span><span>time</span><span>% of reference</span><span>speedup</span></li>';
  list.innerHTML = head + rows.map((r) =>
    `<li data-id="${r.id}"><span class="num">${r.round}</span><span>${esc(r.idea)}</span><span class="num">${fmtMs(r.ms)}</span>` +
    `<span class="num">${r.pct != null ? r.pct.toFixed(1) + "%" : "—"}<div class="bar"><b style="width:${Math.min(100, r.pct || 0)}%"></b></div></span>` +
    `<span class="num">${esc(r.speedup)}</span></li>`).join("");
  list.onclick = (e) => {
    const li = e.target.closest("li[data-id]");
    if (li) onSelect(Number(li.dataset.id));
  };
}
