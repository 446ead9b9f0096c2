// The page: conversations, uploads, asking with live progress, cancelling, re-running, exports.
"use strict";
(function () {
  const { el, api } = AA;
  const $ = (id) => document.getElementById(id);
  const state = { conv: null, sessions: [], job: null, source: null, progress: null, showPreview: true };

  function flash(message, kind) {
    const box = $("flash");
    box.replaceChildren(el("span", { text: message }), el("button", { class: "btn link", type: "button", text: "×", onclick: () => { box.hidden = true; } }));
    box.className = "flash " + (kind || "error");
    box.hidden = false;
    clearTimeout(flash.timer);
    flash.timer = setTimeout(() => { box.hidden = true; }, 9000);
  }

  function busy(on) {
    const ready = state.conv && state.conv.tables.length > 0;
    $("question").disabled = on || !ready;
    $("ask-btn").disabled = on || !ready;
    $("ask-btn").hidden = on;
    $("cancel-btn").hidden = !on;
  }

  // ------------------------------------------------------------------ sidebar
  // At phone width the sidebar is a drawer (app.css): ☰ opens it, choosing or the backdrop closes it.
  function setNav(open) {
    document.querySelector(".app").classList.toggle("nav-open", open);
    $("nav-toggle").setAttribute("aria-expanded", String(open));
  }

  function renderSidebar() {
    const list = $("conv-list");
    list.replaceChildren(...state.sessions.map((s) => el("div", {
      class: "conv-item" + (state.conv && s.id === state.conv.id ? " active" : ""), dataset: { id: s.id },
    }, el("button", { class: "conv-open", type: "button", title: s.title, onclick: () => { setNav(false); openConversation(s.id); } },
      el("span", { class: "conv-title", text: s.title }),
      el("span", { class: "conv-meta", text: `${AA.fmtTime(s.updated)} · ${s.n_turns} ${s.n_turns === 1 ? "answer" : "answers"}` })),
    el("button", { class: "conv-del", type: "button", title: "Delete", "aria-label": "Delete conversation", text: "×",
      onclick: () => deleteConversation(s.id) }))));
    if (!state.sessions.length) list.append(el("p", { class: "hint", text: "No conversations yet." }));
  }

  async function refreshSessions() {
    const data = await api("GET", "/api/state");
    state.sessions = data.sessions;
    $("model-btn").textContent = data.model;
    renderSidebar();
    return data;
  }

  // ------------------------------------------------------------- conversation
  function renderConversation() {
    const c = state.conv;
    $("conv-title").textContent = c ? c.title : "New conversation";
    $("conv-model").textContent = c ? `model: ${c.model}` : "";
    const hasTurns = c && c.results.length > 0;
    for (const [id, ext] of [["export-py", "export.py"], ["export-nb", "export.ipynb"]]) {
      const a = $(id);
      a.classList.toggle("disabled", !hasTurns);
      if (hasTurns) a.href = `/api/sessions/${c.id}/${ext}`; else a.removeAttribute("href");
    }
    renderTables();
    const thread = $("thread");
    thread.replaceChildren();
    if (!c || !c.tables.length) thread.append($("empty-template").content.cloneNode(true));
    for (const r of (c ? c.results : [])) {
      thread.append(AA.questionNode(r.question));
      thread.append(AA.renderResult(r, { onRerun }));
    }
    busy(!!(c && c.job));
    if (c && c.job) follow(c.job.id, `/api/sessions/${c.id}/jobs/${c.job.id}/events`);
    // Show the latest question at the top, its answer below it (not the bottom of a long answer).
    const last = thread.querySelectorAll(".msg.user");
    thread.scrollTop = last.length ? last[last.length - 1].offsetTop - thread.offsetTop - 8 : 0;
  }

  function renderTables() {
    const c = state.conv, bar = $("tables-bar");
    bar.hidden = !c || !c.tables.length;
    if (bar.hidden) { $("preview").hidden = true; return; }
    $("table-tabs").replaceChildren(...c.tables.map((t) => el("button", {
      class: "tab" + (t.name === c.active ? " active" : ""), type: "button", role: "tab",
      title: t.sheet ? `${t.file}, sheet ${t.sheet}` : t.file,
      onclick: () => switchTable(t.name),
    }, el("span", { text: t.name }), el("small", { text: ` ${AA.fmtNumber(t.n_rows)}×${t.n_columns}` }))));
    loadPreview(c.active);
  }

  async function loadPreview(name) {
    const box = $("preview");
    box.hidden = !state.showPreview;
    $("toggle-preview").textContent = state.showPreview ? "Hide preview" : "Show preview";
    if (!state.showPreview || !name) return;
    try {
      const data = await api("GET", `/api/sessions/${state.conv.id}/tables/${encodeURIComponent(name)}`);
      AA.renderPreview(box, data.table);
    } catch (e) { flash(e.message); }
  }

  async function openConversation(id) {
    try {
      closeStream();
      const data = await api("GET", `/api/sessions/${id}`);
      if (!state.conv || state.conv.id !== data.session.id) state.showPreview = data.session.results.length === 0;
      state.conv = data.session;
      renderConversation();
      renderSidebar();
    } catch (e) { flash(e.message); if (e.status === 404) { await refreshSessions(); } }
  }

  async function newConversation() {
    closeStream();
    const data = await api("POST", "/api/sessions");
    state.conv = data.session;
    await refreshSessions();
    renderConversation();
    return state.conv;
  }

  async function deleteConversation(id) {
    if (!confirm("Delete this conversation with its uploaded files, tables and charts?")) return;
    try {
      await api("DELETE", `/api/sessions/${id}`);
      if (state.conv && state.conv.id === id) { closeStream(); state.conv = null; renderConversation(); }
      await refreshSessions();
    } catch (e) { flash(e.message); }
  }

  async function switchTable(name) {
    try {
      await api("POST", `/api/sessions/${state.conv.id}/active`, { name });
      state.conv.active = name;
      renderTables();
    } catch (e) { flash(e.message); }
  }

  // ------------------------------------------------------------------ uploads
  async function upload(file) {
    const limit = +document.querySelector('meta[name="max-file-mb"]').content;
    if (file.size > limit * 1024 * 1024) { flash(`${file.name} is over the ${limit} MB limit.`); return; }
    const conv = state.conv || await newConversation();
    const form = new FormData();
    form.append("file", file, file.name);
    flash(`Loading ${file.name}…`, "info");
    try {
      await api("POST", `/api/sessions/${conv.id}/uploads`, form);
      $("flash").hidden = true;
      await openConversation(conv.id);
      await refreshSessions();
      $("question").focus();
    } catch (e) { flash(e.message); }
  }

  // a database (the form exists only when the server allows it: the web_connect setting)
  async function connectDatabase(url) {
    const conv = state.conv || await newConversation();
    flash("Connecting…", "info");
    try {
      await api("POST", `/api/sessions/${conv.id}/sources`, { url });
      $("flash").hidden = true;
      $("connect-form").hidden = true;
      $("connect-url").value = "";
      await openConversation(conv.id);
      await refreshSessions();
      $("question").focus();
    } catch (e) { flash(e.message); }
  }

  if ($("connect-form")) {
    $("connect-btn").addEventListener("click", () => { $("connect-form").hidden = !$("connect-form").hidden; });
    $("connect-cancel").addEventListener("click", () => { $("connect-form").hidden = true; });
    $("connect-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const url = $("connect-url").value.trim();
      if (url) connectDatabase(url);
    });
  }

  // ------------------------------------------------------------ asking, jobs
  function closeStream() {
    if (state.source) { state.source.close(); state.source = null; }
    if (state.progress) { state.progress.node.remove(); state.progress = null; }
    state.job = null;
  }

  function follow(jobId, url) {
    const conv = state.conv;
    state.job = jobId;
    state.progress = AA.progressNode(cancel);
    $("thread").append(state.progress.node);
    const src = new EventSource(url);
    state.source = src;
    src.addEventListener("progress", (e) => { state.progress.add(JSON.parse(e.data)); scrollDown(); });
    const finish = async (err) => {
      src.close();
      if (state.source !== src) return;
      state.source = null;
      if (state.progress) { state.progress.node.remove(); state.progress = null; }
      state.job = null;
      if (err) flash(err.message);
      if (state.conv === conv) await openConversation(conv.id);
      await refreshSessions();
    };
    src.addEventListener("result", () => finish());
    src.addEventListener("error", (e) => {
      // A named "error" event carries {kind, message}; a bare error is a dropped connection, which
      // EventSource retries by itself (Last-Event-ID resumes the stream).
      if (e.data) finish(JSON.parse(e.data));
    });
  }

  function scrollDown() { const t = $("thread"); t.scrollTop = t.scrollHeight; }

  async function ask(question) {
    const conv = state.conv;
    try {
      const data = await api("POST", `/api/sessions/${conv.id}/ask`, { question });
      $("empty") && $("empty").remove();
      if (state.showPreview) { state.showPreview = false; loadPreview(conv.active); }
      $("thread").append(AA.questionNode(question));
      busy(true);
      follow(data.job.id, data.job.events);
      scrollDown();
      return true;
    } catch (e) { flash(e.message); return false; }
  }

  async function onRerun(code, question) {
    const conv = state.conv;
    try {
      const data = await api("POST", `/api/sessions/${conv.id}/run`, { code, question });
      $("thread").append(AA.questionNode(`${question} (edited script)`));
      busy(true);
      follow(data.job.id, data.job.events);
      scrollDown();
    } catch (e) { flash(e.message); }
  }

  async function cancel() {
    if (!state.job || !state.conv) return;
    try { await api("POST", `/api/sessions/${state.conv.id}/jobs/${state.job}/cancel`); }
    catch (e) { flash(e.message); }
  }

  // ------------------------------------------------------------------- wiring
  function wire() {
    $("new-conv").addEventListener("click", () => { setNav(false); newConversation().catch((e) => flash(e.message)); });
    $("nav-toggle").addEventListener("click", () => setNav(!document.querySelector(".app").classList.contains("nav-open")));
    $("nav-backdrop").addEventListener("click", () => setNav(false));
    $("delete-conv").addEventListener("click", () => state.conv && deleteConversation(state.conv.id));
    $("cancel-btn").addEventListener("click", cancel);
    $("toggle-preview").addEventListener("click", () => { state.showPreview = !state.showPreview; loadPreview(state.conv.active); });
    $("file-input").addEventListener("change", (e) => { if (e.target.files[0]) upload(e.target.files[0]); e.target.value = ""; });
    const q = $("question");
    if (window.matchMedia("(max-width: 720px)").matches) q.placeholder = "Ask about your data…";  // one line on a phone
    $("composer").addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = q.value.trim();
      if (text && await ask(text)) { q.value = ""; q.style.height = ""; }
    });
    q.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
    });
    q.addEventListener("input", () => { q.style.height = ""; q.style.height = Math.min(q.scrollHeight, 160) + "px"; });
    // Drag and drop anywhere on the page; a counter, because dragleave also fires between children.
    let depth = 0;
    const overlay = $("drop-overlay");
    const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types).includes("Files");
    window.addEventListener("dragenter", (e) => { if (hasFiles(e)) { depth++; overlay.hidden = false; } });
    window.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; overlay.hidden = true; } });
    window.addEventListener("dragover", (e) => { if (hasFiles(e)) e.preventDefault(); });
    window.addEventListener("drop", (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault(); depth = 0; overlay.hidden = true;
      if (e.dataTransfer.files[0]) upload(e.dataTransfer.files[0]);
    });
    $("model-btn").addEventListener("click", () => { $("model-form").hidden = !$("model-form").hidden; $("model-input").focus(); });
    $("model-cancel").addEventListener("click", () => { $("model-form").hidden = true; });
    $("model-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const data = await api("POST", "/api/model", { model: $("model-input").value, api_key: $("key-input").value });
        $("key-input").value = "";
        $("model-form").hidden = true;
        $("model-btn").textContent = data.model;
        flash(`New conversations use ${data.model}.`, "info");
      } catch (err) { flash(err.message); }
    });
  }

  async function start() {
    // The empty-state card is kept as a template so every conversation without tables shows it.
    const tpl = el("template", { id: "empty-template" });
    tpl.content.append($("empty"));
    document.body.append(tpl);
    wire();
    try {
      const data = await refreshSessions();
      if (data.sessions.length) await openConversation(data.sessions[0].id);
      else renderConversation();
    } catch (e) { flash(e.message); }
  }

  start();
})();
