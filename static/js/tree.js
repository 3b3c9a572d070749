// The search tree as a hand-written SVG: a tidy top-down layout, zoom with the wheel, pan by
// dragging. Redraws at most once per animation frame, so a few hundred nodes stay smooth.
import { NODE, PENDING, STAGES, pathTo, speedupText } from "./state.js";

const DX = 44;   // horizontal slot per leaf
const DX_SIBLING = 32;   // implementations of one idea sit closer together
const MIN_AUTO_SCALE = 0.4;   // auto-fit never shrinks labels below readable; "Fit" shows all
const DY = 74;   // vertical distance per depth level
const SVGNS = "http://www.w3.org/2000/svg";

const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));

// A running kernel is coloured by its stage (queued, compiling, checking, timing).
export function statusClass(node) {
  if (node.kind === "reference") return "reference";
  if (node.kind === "idea") return node.status === NODE.FAILED ? "failed" : "idea";
  if (STAGES.includes(node.status)) return node.status;
  return PENDING.has(node.status) ? "pending" : node.status || "pending";
}

const STAGE_LABELS = { queued: "queue", compiling: "build", checking: "check", timing: "time" };
// Idea labels: the category, short enough to sit beside the diamond.
const CATEGORY_LABELS = { memory: "memory", async: "async", precision: "precision", compute: "compute",
  parallelism: "parallel", control_flow: "control" };
const LABEL_GAP = 46;   // two labels on one line closer than this would overlap
const IDEA_GAP = 66;   // room an idea's label needs beside its diamond

// Leaves take consecutive slots; a parent sits centred over its first and last child.
// Idea nodes sit a little lower than half-way, so they read as labels on the edge.
export function layout(state) {
  const pos = new Map();
  let nextX = 0, lastParent = undefined;
  const place = (id, depth) => {
    const kids = state.children.get(id) || [];
    let x;
    if (kids.length === 0) {
      const parent = state.nodes.get(id).parent_id;
      if (lastParent !== undefined) nextX += parent === lastParent ? DX_SIBLING : DX;
      x = nextX;
      lastParent = parent;
    } else {
      const xs = kids.map((k) => place(k, depth + 1));
      x = (xs[0] + xs[xs.length - 1]) / 2;
    }
    pos.set(id, { x, y: depth * DY });
    return x;
  };
  for (const root of state.roots) { place(root, 0); nextX += DX; }
  return pos;
}

// Kernel labels sit under their node; a label closer than LABEL_GAP to its left neighbour's on
// the same line drops to a second line, so neighbours' speedups never run into each other.
// Idea labels sit beside their diamond: on the right when the next idea leaves room, else on
// the left when the previous one does, else only in the tooltip (value "none").
export function labelLines(state, pos) {
  const rows = new Map(), ideaRows = new Map();
  for (const [id, p] of pos) {
    const kind = state.nodes.get(id).kind;
    if (kind === "idea") {
      if (!ideaRows.has(p.y)) ideaRows.set(p.y, []);
      ideaRows.get(p.y).push([p.x, id]);
    }
    if (kind !== "kernel") continue;
    if (!rows.has(p.y)) rows.set(p.y, []);
    rows.get(p.y).push([p.x, id]);
  }
  const line = new Map();
  for (const row of rows.values()) {
    row.sort((a, b) => a[0] - b[0]);
    const lastX = [-Infinity, -Infinity];
    for (const [x, id] of row) {
      const l = x - lastX[0] >= LABEL_GAP ? 0 : 1;
      lastX[l] = x;
      line.set(id, l);
    }
  }
  for (const row of ideaRows.values()) {
    row.sort((a, b) => a[0] - b[0]);
    row.forEach(([x, id], i) => {
      const next = i + 1 < row.length ? row[i + 1][0] - x : Infinity;
      const prev = i > 0 ? x - row[i - 1][0] : Infinity;
      line.set(id, next >= IDEA_GAP ? "right" : prev >= IDEA_GAP ? "left" : "none");
    });
  }
  return line;
}

// Shapes are drawn around (0, 0); the node's group is translated to its place.
function shape(node) {
  const cls = `shape fill-${statusClass(node)}`;
  if (node.kind === "reference") return `<rect class="${cls}" x="-12" y="-12" width="24" height="24" rx="5"/>`;
  if (node.kind === "idea") return `<polygon class="${cls}" points="0,-7 7,0 0,7 -7,0"/>`;
  return `<circle class="${cls}" r="9"/>`;
}

function label(node) {
  if (node.kind === "reference") return "ref";
  if (node.kind === "idea") return node.status === NODE.FAILED ? "failed" : CATEGORY_LABELS[node.category] || "idea";
  if (node.speedup != null) return speedupText(node, "eager", true);
  if (STAGE_LABELS[node.status]) return STAGE_LABELS[node.status];
  if (PENDING.has(node.status)) return "…";
  return { compile_error: "build", runtime_error: "crash", incorrect: "wrong", rejected: "reject", timeout: "t/o", failed: "fail" }[node.status] || "";
}

function labelText(node, text, line) {
  if (node.kind === "idea") {
    if (line === "none") return "";
    const left = line === "left";
    return `<text class="idea-label" x="${left ? -10 : 10}" y="3.5" text-anchor="${left ? "end" : "start"}">${esc(text)}</text>`;
  }
  const y = node.kind === "reference" ? 26 : 22 + 11 * line;
  const cls = node.speedup != null ? (node.noisy ? "sp noisy" : "sp") : "";
  return `<text class="${cls}" y="${y}" text-anchor="middle">${esc(text)}</text>`;
}

function tooltip(node) {
  const lines = [];
  if (node.kind === "idea") lines.push(`Idea (round ${node.round}): ${node.idea || node.error || ""}`);
  else if (node.kind === "reference") lines.push("Reference (eager PyTorch)");
  else {
    lines.push(`Kernel ${node.id} · round ${node.round} · ${node.status}${node.backend ? " · " + node.backend : ""}`);
    if (node.speedup != null) lines.push(`${speedupText(node)} over eager${node.speedup_vs_compile != null ? `, ${speedupText(node, "compile")} over torch.compile` : ""}`);
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
    this.fitAll = false;
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

  // Fit the whole tree (the Fit button), or, for the automatic fit of a growing tree, keep
  // labels readable and follow the best kernel (else the root) when the tree is too wide.
  fit(all = true) {
    this.fitAll = all;
    if (!this.bounds) return;
    const r = this.svg.getBoundingClientRect();
    const pad = 48, bottom = 44;   // room for the toolbar and the legend
    const w = Math.max(1, this.bounds.maxX - this.bounds.minX), h = Math.max(1, this.bounds.maxY - this.bounds.minY);
    let k = Math.max(0.02, Math.min(1.25, (r.width - 2 * pad) / w, (r.height - 2 * pad - bottom) / h));
    let centreX = (this.bounds.minX + this.bounds.maxX) / 2;
    if (!all && k < MIN_AUTO_SCALE) {
      k = Math.min(MIN_AUTO_SCALE, (r.height - 2 * pad - bottom) / h);
      centreX = this.focusX ?? centreX;
    }
    this.t.k = k;
    this.t.x = r.width / 2 - centreX * k;
    this.t.y = pad + 6 - this.bounds.minY * k;
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

  // Incremental: one <g> per node and one <path> per edge, created once; a redraw only
  // moves what moved and rewrites what changed (a full innerHTML rebuild costs ~25 ms at 400 nodes).
  draw() {
    const state = this.state;
    if (!state) return;
    if (!this.layers) {
      this.viewport.innerHTML = '<g class="edges"></g><g class="nodes"></g>';
      this.layers = { edges: this.viewport.firstChild, nodes: this.viewport.lastChild };
      this.els = new Map();   // id -> {g, edge, key, at, path}
    }
    const pos = layout(state);
    const lines = labelLines(state, pos);
    const bestId = state.best ? state.best.node_id : null;
    const bestPath = new Set(bestId != null ? pathTo(state, bestId) : []);
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const [id, p] of pos) {
      const node = state.nodes.get(id);
      minX = Math.min(minX, p.x); maxX = Math.max(maxX, p.x); minY = Math.min(minY, p.y); maxY = Math.max(maxY, p.y);
      let el = this.els.get(id);
      if (!el) {
        el = { g: document.createElementNS(SVGNS, "g"), edge: null, key: "", at: "", path: "" };
        el.g.dataset.id = id;
        this.layers.nodes.appendChild(el.g);
        this.els.set(id, el);
      }
      const cls = ["node", `kind-${node.kind}`, `st-${statusClass(node)}`];
      if (node.kind === "kernel" && PENDING.has(node.status) && node.status !== NODE.QUEUED) cls.push("pending");
      if (bestPath.has(id) && node.kind !== "idea") cls.push("best");
      if (id === this.selected) cls.push("selected");
      const text = label(node);
      const line = lines.get(id) || 0;
      const key = `${cls.join(" ")}|${text}|${line}|${node.status}|${speedupText(node)}|${node.error}|${node.idea}`;
      if (key !== el.key) {
        el.key = key;
        el.g.setAttribute("class", cls.join(" "));
        el.g.dataset.status = node.status;
        el.g.innerHTML = `<title>${tooltip(node)}</title>${shape(node)}` + (text ? labelText(node, text, line) : "");
      }
      const at = `translate(${p.x},${p.y})`;
      if (at !== el.at) { el.at = at; el.g.setAttribute("transform", at); }
      if (node.parent_id != null && pos.has(node.parent_id)) {
        const q = pos.get(node.parent_id), my = (q.y + p.y) / 2;
        const path = `M${q.x},${q.y}C${q.x},${my} ${p.x},${my} ${p.x},${p.y}`;
        if (!el.edge) { el.edge = document.createElementNS(SVGNS, "path"); this.layers.edges.appendChild(el.edge); }
        if (path !== el.path) { el.path = path; el.edge.setAttribute("d", path); }
        const edgeCls = bestPath.has(id) && bestPath.has(node.parent_id) ? "edge best" : "edge";
        if (el.edge.getAttribute("class") !== edgeCls) el.edge.setAttribute("class", edgeCls);
      }
    }
    this.bounds = pos.size ? { minX: minX - 20, maxX: maxX + 20, minY: minY - 16, maxY: maxY + 30 } : null;
    const focus = pos.get(bestId) || pos.get(state.roots[0]);
    this.focusX = focus ? focus.x : null;
    if (!this.userMoved) this.fit(this.fitAll);
  }
}

