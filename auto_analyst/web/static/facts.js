// The "what I remember" panel: the facts of the user's earlier analyses (GET /api/facts), each with a
// forget button (DELETE /api/facts/<id>). Facts whose table is gone are marked stale.
"use strict";

(function () {
  const { el, api } = window.AA;
  const $ = (id) => document.getElementById(id);

  function row(fact) {
    const forget = el("button", { class: "btn link danger", type: "button", title: "Forget this fact", text: "Forget" });
    const item = el("li", { class: "fact" + (fact.stale ? " stale" : ""), dataset: { id: fact.id } },
      el("div", { class: "fact-text", text: fact.text }),
      el("div", { class: "fact-meta", text: `${fact.table || "table"} · ${fact.at.slice(0, 10)}` +
        (fact.stale ? " · stale: that table is gone" : "") }),
      forget);
    forget.addEventListener("click", async () => {
      forget.disabled = true;
      try { await api("DELETE", `/api/facts/${encodeURIComponent(fact.id)}`); item.remove(); }
      catch (e) { forget.disabled = false; item.append(el("div", { class: "hint", text: e.message })); }
    });
    return item;
  }

  async function refresh() {
    const list = $("facts-list");
    list.replaceChildren(el("li", { class: "hint", text: "Loading…" }));
    try {
      const data = await api("GET", "/api/facts");
      list.replaceChildren(...(data.facts.length ? data.facts.map(row)
        : [el("li", { class: "hint", text: "Nothing yet: answers that compute numbers are remembered here." })]));
    } catch (e) { list.replaceChildren(el("li", { class: "hint", text: e.message })); }
  }

  function wire() {
    const toggle = $("facts-btn");
    if (!toggle) return;
    toggle.addEventListener("click", () => {
      const panel = $("facts-panel");
      panel.hidden = !panel.hidden;
      toggle.setAttribute("aria-expanded", String(!panel.hidden));
      if (!panel.hidden) refresh();
    });
    $("facts-refresh").addEventListener("click", refresh);
  }

  window.AA.refreshFacts = refresh;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire); else wire();
})();
