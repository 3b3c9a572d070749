// The node panel: fetches the server-rendered fragment (highlighted code and diff) for a node.
export class NodePanel {
  constructor(el, urlTemplate, { onOpenNode }) {
    this.el = el;
    this.urlTemplate = urlTemplate;
    this.nodeId = null;
    this.shownStatus = null;
    this.request = 0;
    el.addEventListener("click", (e) => {
      const a = e.target.closest("[data-open-node]");
      if (a) { e.preventDefault(); onOpenNode(Number(a.dataset.openNode)); }
    });
  }

  async open(id) {
    this.nodeId = id;
    const ticket = ++this.request;   // a slower earlier answer must not replace a newer one
    try {
      const res = await fetch(this.urlTemplate.replace("{id}", String(id)), { headers: { Accept: "text/html" } });
      if (ticket !== this.request) return;
      this.el.innerHTML = res.ok ? await res.text() : `<div class="panel-empty">Could not load node ${id} (${res.status}).</div>`;
      const panel = this.el.querySelector(".panel");
      this.shownStatus = panel ? panel.dataset.status : null;
      this.el.scrollTop = 0;
    } catch {
      if (ticket === this.request) this.el.innerHTML = '<div class="panel-empty">Connection lost; retrying when the stream is back.</div>';
    }
  }

  // Reload the open node when its status changed (e.g. timing -> correct) so checks appear.
  nodeChanged(node) {
    if (node.id === this.nodeId && node.status !== this.shownStatus) this.open(node.id);
  }
}
