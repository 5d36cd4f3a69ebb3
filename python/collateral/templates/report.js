// The report's own few lines: inflate the gzipped SVG figures and collapsed tables
// (DecompressionStream: Chromium 80, Firefox 113, Safari 16.4), sort tables, switch a
// figure's tabs, zoom a figure. When every figure has settled, <body> gets
// data-figures (loaded, a slash, total) and data-scroll-width: the tests read them.
(() => {
  const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const inflate = (s) =>
    new Response(new Blob([bytes(s)]).stream().pipeThrough(new DecompressionStream("gzip")));
  const settle = (img) =>
    new Promise((done) => {
      if (img.complete && img.getAttribute("src")) return done(img.naturalWidth > 0);
      img.addEventListener("load", () => done(true), { once: true });
      img.addEventListener("error", () => done(false), { once: true });
    });

  async function figure(img) {
    try {
      if (img.dataset.svgGz) {
        const svg = await (await inflate(img.dataset.svgGz)).blob();
        img.src = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
        delete img.dataset.svgGz;
      }
      return await settle(img);
    } catch (e) {
      console.error("figure " + img.alt + ": " + e);
      return false;
    }
  }

  function sortKey(td) {
    const v = td.dataset.v ?? td.textContent.trim();
    if (v === "—" || v === "") return null;
    const n = parseFloat(String(v).replace(/,/g, ""));
    return isNaN(n) ? String(v) : n;
  }
  function sortBy(th) {
    const table = th.closest("table");
    const i = Array.from(th.parentNode.children).indexOf(th);
    const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    table.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).map((r) => [sortKey(r.cells[i]), r]);
    rows.sort(([a], [b]) => {
      if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1; // — last
      if (typeof a !== typeof b) return typeof a === "number" ? -dir : dir;
      return (a < b ? -1 : a > b ? 1 : 0) * dir;
    });
    body.append(...rows.map(([, r]) => r));
  }

  async function fullTable(details) {
    const data = JSON.parse(await (await inflate(details.dataset.gz)).text());
    const preview = details.previousElementSibling.querySelector("table");
    const table = preview.cloneNode(false);
    table.append(preview.tHead.cloneNode(true));
    table.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
    const numeric = Array.from(preview.tHead.rows[0].cells).map((h) =>
      h.classList.contains("num"));
    const body = document.createElement("tbody");
    for (const row of data.rows) {
      const tr = body.insertRow();
      row.forEach((c, j) => {
        const td = tr.insertCell();
        td.textContent = Array.isArray(c) ? c[0] : c;
        if (Array.isArray(c)) td.dataset.v = c[1];
        if (numeric[j]) td.className = "num";
      });
    }
    table.append(body);
    const wrap = document.createElement("div");
    wrap.className = "tablewrap";
    wrap.append(table);
    details.append(wrap);
  }

  document.addEventListener("click", (e) => {
    const th = e.target.closest("table.sortable th");
    if (th) return sortBy(th);
    const row = e.target.closest("table.clamped tbody tr");
    if (row && !e.target.closest("a")) return row.classList.toggle("open");
    const tab = e.target.closest(".tabs button");
    if (tab) {
      const fig = tab.closest("figure");
      const i = Number(tab.dataset.i);
      fig.querySelectorAll(".tabs button").forEach((b, j) =>
        b.setAttribute("aria-selected", String(i === j)));
      fig.querySelectorAll("[data-panel]").forEach((p) => (p.hidden = Number(p.dataset.panel) !== i));
      return;
    }
    const zoom = document.getElementById("zoom");
    const img = e.target.closest("figure .panel img");
    if (img && img.src) {
      const big = zoom.querySelector("img");
      big.src = img.src;
      big.width = Math.round(img.getAttribute("width") * 5 / 3); // the drawing's 150 dpi
      zoom.showModal();
    } else if (e.target.closest("dialog#zoom")) zoom.close();
  });

  document.addEventListener("DOMContentLoaded", async () => {
    if (typeof DecompressionStream === "undefined") {
      document.getElementById("nojs").hidden = false;
      document.getElementById("nojs").textContent =
        "This browser cannot inflate the figures (no DecompressionStream): use a current" +
        " Chromium, Firefox or Safari.";
    }
    document.querySelectorAll("details.full").forEach((d) =>
      d.addEventListener("toggle", () => {
        if (d.open && !d.dataset.done) {
          d.dataset.done = "1";
          fullTable(d).catch((e) => console.error("table: " + e));
        }
      }));
    const imgs = Array.from(document.querySelectorAll("main img"));
    const ok = (await Promise.all(imgs.map(figure))).filter(Boolean).length;
    document.body.dataset.figures = ok + "/" + imgs.length;
    // How large the figures are shown: CSS px per inch they were drawn at (visible ones).
    const perInch = Number(document.querySelector("main").dataset.pxPerInch);
    const ppi = imgs.filter((i) => i.offsetParent !== null && i.getAttribute("width"))
      .map((i) => (i.clientWidth * perInch) / Number(i.getAttribute("width")));
    document.body.dataset.minPxPerInch = ppi.length ? Math.min(...ppi).toFixed(1) : "";
    document.body.dataset.scrollWidth = document.documentElement.scrollWidth;
  });
})();
