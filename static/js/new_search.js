// The new-search page: line numbers, example loader, file upload, the runner's error line.
const area = document.getElementById("id_reference");
const gutter = document.getElementById("gutter");
const examples = JSON.parse(document.getElementById("examples-data").textContent);
const errorLine = Number(area.dataset.errorLine || 0);

function drawGutter() {
  const count = area.value.split("\n").length;
  if (gutter.childElementCount !== count) {
    const parts = [];
    for (let i = 1; i <= count; i++) parts.push(`<div${i === errorLine ? ' class="err"' : ""}>${i}</div>`);
    gutter.innerHTML = parts.join("");
  }
  gutter.scrollTop = area.scrollTop;
}

area.addEventListener("input", drawGutter);
area.addEventListener("scroll", () => { gutter.scrollTop = area.scrollTop; });
// Tab inserts four spaces instead of leaving the editor.
area.addEventListener("keydown", (e) => {
  if (e.key !== "Tab" || e.shiftKey) return;
  e.preventDefault();
  area.setRangeText("    ", area.selectionStart, area.selectionEnd, "end");
  drawGutter();
});

function load(text) {
  area.value = text;
  area.scrollTop = 0;
  drawGutter();
  area.focus();
}

document.querySelectorAll("[data-example]").forEach((button) => {
  button.addEventListener("click", () => {
    const ex = examples.find((e) => e.name === button.dataset.example);
    if (ex) load(ex.source);
  });
});

const upload = document.getElementById("id_reference_file");
upload.addEventListener("change", () => {
  const file = upload.files[0];
  if (!file) return;
  file.text().then((text) => { load(text); upload.value = ""; });
});

drawGutter();
// A refused reference: the message sits right above the editor; bring both into view.
const refError = document.getElementById("reference-error");
if (refError) refError.scrollIntoView({ block: "start" });
if (errorLine) {
  // Put the cursor on the line the runner pointed at and bring it into view.
  const lines = area.value.split("\n");
  const start = lines.slice(0, errorLine - 1).reduce((n, l) => n + l.length + 1, 0);
  area.focus({ preventScroll: true });
  area.setSelectionRange(start, start + (lines[errorLine - 1] || "").length);
  area.scrollTop = Math.max(0, (errorLine - 5) * 18.75);
  gutter.scrollTop = area.scrollTop;
}
