// Which kinds of idea paid off: per optimization category (the study's six, labelled as the
// server names them), how many ideas were tried, how many of their finished kernels were
// correct, and the best speedup they reached.
import { NODE, PENDING, better, rankable, speedupText } from "./state.js";

export function categoryRows(state, labels) {
  const rows = new Map();
  for (const n of state.nodes.values()) {
    if (n.kind !== "idea") continue;
    const key = n.category || "other";
    if (!rows.has(key)) rows.set(key, { key, label: labels[key] || "Uncategorised", ideas: 0, kernels: 0, correct: 0, best: null });
    const row = rows.get(key);
    row.ideas += 1;
    for (const id of state.children.get(n.id) || []) {
      const k = state.nodes.get(id);
      if (!k || k.kind !== "kernel" || !k.status || PENDING.has(k.status)) continue;
      row.kernels += 1;
      if (k.status === NODE.CORRECT) {
        row.correct += 1;
        if (rankable(k)) row.best = better(row.best, k);
      }
    }
  }
  return [...rows.values()].sort((a, b) => (b.best?.speedup ?? 0) - (a.best?.speedup ?? 0) || b.ideas - a.ideas);
}

export function drawCategories(list, state, labels) {
  const rows = categoryRows(state, labels);
  if (!rows.length) { list.innerHTML = '<li class="muted">No ideas yet.</li>'; return; }
  const head = '<li class="head"><span>category</span><span>ideas</span><span>correct</span><span>best</span></li>';
  list.innerHTML = head + rows.map((r) =>
    `<li data-category="${r.key}"><span>${r.label}</span><span class="num">${r.ideas}</span>` +
    `<span class="num">${r.correct}/${r.kernels}</span>` +
    `<span class="num">${speedupText(r.best)}</span></li>`).join("");
}
