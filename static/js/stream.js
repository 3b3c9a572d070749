// Websocket client: replays from the last event id seen, reconnects with backoff, never
// delivers an event twice (ids are the event log's autoincrement ids).

export function connectStream({ path, after = 0, onEvent, onStatus = () => {}, keepOpen = () => true }) {
  let lastId = after;
  let delay = 500;
  let socket = null;
  let stopped = false;
  let timer = null;

  function deliver(ev) {
    if (!ev || typeof ev.id !== "number" || ev.id <= lastId) return;
    lastId = ev.id;
    onEvent(ev);
  }

  function open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}${path}?after=${lastId}`);
    socket.onopen = () => { delay = 500; onStatus("live"); };
    socket.onmessage = (msg) => {
      let data;
      try { data = JSON.parse(msg.data); } catch { return; }
      // One event per message, or a batch {events: [...]} / [...] during replay.
      const events = Array.isArray(data) ? data : Array.isArray(data.events) ? data.events : [data];
      events.forEach(deliver);
    };
    socket.onclose = (event) => {
      socket = null;
      if (stopped) return;
      // 4403: not (or no longer) allowed, e.g. a revoked share link; retrying cannot help.
      if (event.code === 4403) { onStatus("refused"); return; }
      if (!keepOpen()) { onStatus("done"); return; }
      onStatus("lost");
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 10000);
    };
    socket.onerror = () => { /* onclose follows and reconnects */ };
  }

  open();
  return {
    get lastId() { return lastId; },
    close() { stopped = true; clearTimeout(timer); if (socket) socket.close(); },
    // For tests and for a page that wants to force a reconnect (e.g. after sleep).
    drop() { if (socket) socket.close(); },
  };
}
