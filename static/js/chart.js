// Best speedup by round, as a small SVG line chart (over eager and over torch.compile).
const W = 400, H = 220, L = 38, R = 12, T = 12, B = 28;

export function drawChart(svg, points) {
  const rounds = Math.max(1, points.length - 1);
  const values = points.flatMap((p) => [p.eager, p.compile]).filter((v) => v != null);
  const top = Math.max(1.2, ...values) * 1.1;
  const x = (r) => L + (r / rounds) * (W - L - R);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const parts = [];
  const step = top > 8 ? Math.ceil(top / 5) : top > 3 ? 1 : 0.5;
  for (let v = 0; v <= top; v += step) {
    parts.push(`<line class="grid" x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}"/><text x="${L - 5}" y="${y(v) + 3}" text-anchor="end">${v}×</text>`);
  }
  const every = Math.ceil((rounds + 1) / 10);
  for (let r = 0; r <= rounds; r += every) parts.push(`<text x="${x(r)}" y="${H - B + 14}" text-anchor="middle">${r}</text>`);
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 2}" text-anchor="middle">round</text>`);
  parts.push(`<line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/><line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>`);
  parts.push(`<line class="one" x1="${L}" x2="${W - R}" y1="${y(1)}" y2="${y(1)}"/>`);
  for (const [key, cls] of [["compile", "compile"], ["eager", ""]]) {
    const pts = points.filter((p) => p[key] != null);
    if (!pts.length) continue;
    parts.push(`<polyline class="line ${cls}" points="${pts.map((p) => `${x(p.round)},${y(p[key])}`).join(" ")}"/>`);
    for (const p of pts) parts.push(`<circle class="dot ${cls}" cx="${x(p.round)}" cy="${y(p[key])}" r="3"><title>round ${p.round}: ${p[key].toFixed(2)}×</title></circle>`);
  }
  if (!values.length) parts.push(`<text x="${(L + W - R) / 2}" y="${H / 2}" text-anchor="middle">no trusted speedup yet</text>`);
  svg.innerHTML = parts.join("");
}
