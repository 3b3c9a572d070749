// The search tree as a hand-written SVG: a tidy top-down layout, zoom with the wheel, pan by
// dragging. Redraws at most once per animation frame, so a few hundred nodes stay smooth.
import { PENDING, pathTo } from "./state.js";

const DX = 40;   // horizontal slot per leaf
const DY = 74;   // vertical distance per depth level

const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));

export function statusClass(node) {
  if (node.kind === "reference") return "reference";
  if (node.kind === "idea") return "idea";
  return PENDING.has(node.status) ? "pending" : node.status || "pending";
}

// Leaves take consecutive slots; a parent sits centred over its first and last child.
// Idea nodes sit a little lower than half-way, so they read as labels on the edge.
export function layout(state) {
  const pos = new Map();
  let slot = 0;
  const place = (id, depth) => {
    const kids = state.children.get(id) || [];
    let x;
    if (kids.length === 0) {
      x = slot++ * DX;
    } else {
      const xs = kids.map((k) => place(k, depth + 1));
      x = (xs[0] + xs[xs.length - 1]) / 2;
    }
    pos.set(id, { x, y: depth * DY });
    return x;
  };
  for (const root of state.roots) { place(root, 0); slot += 1; }
  return pos;
}

function shape(node, p) {
  const cls = `shape fill-${statusClass(node)}`;
  if (node.kind === "reference") return `<rect class="${cls}" x="${p.x - 12}" y="${p.y - 12}" width="24" height="24" rx="5"/>`;
  if (node.kind === "idea") {
    const r = 7;
    return `<polygon class="${cls}" points="${p.x},${p.y - r} ${p.x + r},${p.y} ${p.x},${p.y + r} ${p.x - r},${p.y}"/>`;
  }
  return `<circle class="${cls}" cx="${p.x}" cy="${p.y}" r="9"/>`;
}

function label(node) {
  if (node.kind === "reference") return "ref";
  if (node.kind === "idea") return "";
  if (node.speedup != null) return `${node.speedup.toFixed(2)}×`;
  if (PENDING.has(node.status)) return "…";
  return { compile_error: "build", runtime_error: "crash", incorrect: "wrong", rejected: "reject", timeout: "t/o", failed: "fail" }[node.status] || "";
}

function tooltip(node) {
  const lines = [];
  if (node.kind === "idea") lines.push(`Idea (round ${node.round}): ${node.idea}`);
  else if (node.kind === "reference") lines.push("Reference (eager PyTorch)");
  else {
    lines.push(`Kernel ${node.id} · round ${node.round} · ${node.status}${node.backend ? " · " + node.backend : ""}`);
    if (node.speedup != null) lines.push(`${node.speedup.toFixed(2)}× over eager${node.speedup_vs_compile != null ? `, ${node.speedup_vs_compile.toFixed(2)}× over torch.compile` : ""}`);
    if (node.cand_ms != null) lines.push(`${node.cand_ms.toPrecision(3)} ms`);
    if (node.precision) lines.push(`precision: ${node.precision}`);
    if (node.error) lines.push(node.error);
  }
  return esc(lines.join("\n"));
}

export class TreeView {
  constructor(svg, viewport, { onSelect }) {
    this.svg = svg;
    this.viewport = viewport;
    this.onSelect = onSelect;
    this.t = { x: 40, y: 40, k: 1 };
    this.userMoved = false;   // auto-fit the growing tree until the user zooms or pans
    this.selected = null;
    this.bounds = null;
    this.state = null;
    this.frame = 0;
    this.bind();
  }

  bind() {
    this.svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = this.svg.getBoundingClientRect();
      this.zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
    }, { passive: false });
    let drag = null;
    this.svg.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, tx: this.t.x, ty: this.t.y, moved: false };
    });
    window.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;   // a click, not a drag
      if (!drag.moved) { drag.moved = true; this.svg.classList.add("dragging"); }
      this.t.x = drag.tx + dx; this.t.y = drag.ty + dy; this.userMoved = true;
      this.applyTransform();
    });
    window.addEventListener("pointerup", (e) => {
      if (!drag) return;
      const wasDrag = drag.moved;
      drag = null;
      this.svg.classList.remove("dragging");
      if (wasDrag) return;
      const g = e.target.closest && e.target.closest(".node");
      if (g && this.svg.contains(g)) this.onSelect(Number(g.dataset.id));
    });
  }

  zoomAt(px, py, factor) {
    const k = Math.min(4, Math.max(0.05, this.t.k * factor));
    const f = k / this.t.k;
    this.t.x = px - (px - this.t.x) * f;
    this.t.y = py - (py - this.t.y) * f;
    this.t.k = k;
    this.userMoved = true;
    this.applyTransform();
  }

  zoomBy(factor) {
    const r = this.svg.getBoundingClientRect();
    this.zoomAt(r.width / 2, r.height / 2, factor);
  }

  fit() {
    if (!this.bounds) return;
    const r = this.svg.getBoundingClientRect();
    const pad = 48, bottom = 44;   // room for the toolbar and the legend
    const w = Math.max(1, this.bounds.maxX - this.bounds.minX), h = Math.max(1, this.bounds.maxY - this.bounds.minY);
    const k = Math.min(1.6, (r.width - 2 * pad) / w, (r.height - 2 * pad - bottom) / h);
    this.t.k = Math.max(0.05, k);
    this.t.x = (r.width - w * this.t.k) / 2 - this.bounds.minX * this.t.k;
    this.t.y = pad + 6 - this.bounds.minY * this.t.k;
    this.userMoved = false;
    this.applyTransform();
  }

  applyTransform() {
    this.viewport.setAttribute("transform", `translate(${this.t.x.toFixed(1)},${this.t.y.toFixed(1)}) scale(${this.t.k.toFixed(4)})`);
  }

  select(id) { this.selected = id; this.schedule(); }

  // Ask for a redraw; several events in one frame cost one layout.
  update(state) { this.state = state; this.schedule(); }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  draw() {
    const state = this.state;
    if (!state) return;
    const pos = layout(state);
    const bestId = state.best ? state.best.node_id : null;
    const bestPath = new Set(bestId != null ? pathTo(state, bestId) : []);
    const edges = [], nodes = [];
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const [id, p] of pos) {
      const node = state.nodes.get(id);
      minX = Math.min(minX, p.x); maxX = Math.max(maxX, p.x); minY = Math.min(minY, p.y); maxY = Math.max(maxY, p.y);
      if (node.parent_id != null && pos.has(node.parent_id)) {
        const q = pos.get(node.parent_id), my = (q.y + p.y) / 2;
        const best = bestPath.has(id) && bestPath.has(node.parent_id) ? " best" : "";
        edges.push(`<path class="edge${best}" d="M${q.x},${q.y}C${q.x},${my} ${p.x},${my} ${p.x},${p.y}"/>`);
      }
      const cls = ["node", `kind-${node.kind}`, `st-${statusClass(node)}`];
      if (statusClass(node) === "pending") cls.push("pending");
      if (bestPath.has(id) && node.kind !== "idea") cls.push("best");
      if (id === this.selected) cls.push("selected");
      const text = label(node);
      nodes.push(`<g class="${cls.join(" ")}" data-id="${id}" data-status="${esc(node.status)}"><title>${tooltip(node)}</title>${shape(node, p)}` +
        (text ? `<text class="${node.speedup != null ? "sp" : ""}" x="${p.x}" y="${p.y + (node.kind === "reference" ? 26 : 22)}" text-anchor="middle">${esc(text)}</text>` : "") + "</g>");
    }
    this.viewport.innerHTML = edges.join("") + nodes.join("");
    this.bounds = pos.size ? { minX: minX - 20, maxX: maxX + 20, minY: minY - 16, maxY: maxY + 30 } : null;
    if (!this.userMoved) this.fit();
  }
}

