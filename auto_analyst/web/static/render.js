// Rendering of server JSON into DOM nodes: tables, previews, answers, charts, progress.
"use strict";
(function () {
  const { el } = AA;

  AA.dataTable = function dataTable(columns, rows, dtypes, compact) {
    const numeric = columns.map((_, i) => rows.some((r) => typeof r[i] === "number"));
    const head = el("tr", {}, columns.map((c, i) => el("th", { class: numeric[i] ? "num" : "", title: dtypes ? dtypes[i] : null },
      el("span", { text: c }), dtypes ? el("small", { class: "dtype", text: dtypes[i] }) : null)));
    const body = rows.map((r) => el("tr", {}, r.map((v, i) => el("td", {
      class: (numeric[i] ? "num" : "") + (v === null ? " na" : ""), text: v === null ? "—" : AA.fmtCell(v),
    }))));
    return el("div", { class: "table-scroll" }, el("table", { class: compact ? "data compact" : "data" }, el("thead", {}, head), el("tbody", {}, body)));
  };

  AA.renderPreview = function renderPreview(box, t) {
    const rep = t.report || {};
    const facts = [rep.format, rep.encoding, rep.delimiter ? `delimiter ${JSON.stringify(rep.delimiter)}` : "",
      rep.sheet ? `sheet ${rep.sheet}` : "", rep.thousands ? `thousands ${JSON.stringify(rep.thousands)}` : ""].filter(Boolean);
    const notes = (rep.columns || []).filter((c) => c.conversion || c.note || c.n_unparsed || c.n_placeholders)
      .map((c) => el("li", {}, el("code", { text: c.name }), " ",
        [c.conversion, c.note, c.n_placeholders ? `${c.n_placeholders} placeholders → missing` : "",
          c.n_unparsed ? `${c.n_unparsed} unparsed (e.g. ${(c.unparsed_examples || []).join(", ")})` : ""].filter(Boolean).join("; ")));
    const warnings = (rep.warnings || []).map((w) => el("li", { class: "warn", text: w }));
    const skipped = (rep.skipped_rows || []).length;
    // replaceChildren would print a null as the text "null": drop absent parts first.
    box.replaceChildren(...[
      el("div", { class: "preview-head" },
        el("strong", { text: t.name }), el("span", { class: "muted", text: t.file ? ` from ${t.file}` : "" }),
        el("span", { class: "pill", text: `${AA.fmtNumber(t.n_rows)} rows × ${t.n_columns} columns` }),
        facts.length ? el("span", { class: "muted small", text: facts.join(" · ") }) : null,
        skipped ? el("span", { class: "muted small", text: ` · ${skipped} rows skipped` }) : null),
      AA.dataTable(t.columns, t.rows, t.dtypes),
      notes.length || warnings.length ? el("details", { class: "report" }, el("summary", { text: `Load report (${notes.length + warnings.length} notes)` }),
        el("ul", {}, warnings, notes)) : null].filter(Boolean));
  };

  function details(title, cls, ...content) {
    return el("details", { class: "fold " + (cls || "") }, el("summary", { text: title }), ...content);
  }

  function codeBlock(code, result, ctx) {
    const pre = el("pre", { class: "code" }, el("code", { text: code }));
    const editor = el("textarea", { class: "code-edit", spellcheck: "false", hidden: true });
    const runBtn = el("button", { class: "btn primary small", type: "button", hidden: true, text: "Run again" });
    const editBtn = el("button", { class: "btn ghost small", type: "button", text: "Edit" });
    editBtn.addEventListener("click", () => {
      const editing = editor.hidden;
      editor.hidden = !editing; pre.hidden = editing; runBtn.hidden = !editing;
      editBtn.textContent = editing ? "Done" : "Edit";
      if (editing) { editor.value = code; editor.style.height = Math.min(520, 20 + 18 * code.split("\n").length) + "px"; editor.focus(); }
    });
    runBtn.addEventListener("click", () => ctx.onRerun(editor.value, result.question));
    const bar = el("div", { class: "code-bar" },
      el("button", { class: "btn ghost small", type: "button", text: "Copy", onclick: (e) => AA.copyText(code, e.target) }),
      editBtn, runBtn);
    return details("Script", "script", bar, pre, editor);
  }

  function figureNode(fig) {
    if (fig.kind === "png") return el("figure", { class: "chart" }, el("img", { src: fig.url, alt: fig.title || "chart" }),
      fig.title ? el("figcaption", { text: fig.title }) : null);
    const box = el("div", { class: "plotly-box" }, el("div", { class: "muted small", text: "Loading chart…" }));
    fetch(fig.url, { credentials: "same-origin" }).then((r) => {
      if (!r.ok) throw new Error(`chart ${r.status}`);
      return r.json();
    }).then((spec) => {
      box.replaceChildren();
      const layout = Object.assign({}, spec.layout || {}, { autosize: true, height: 380, margin: { t: 48, r: 16, b: 56, l: 64 } });
      layout.template = undefined;  // plotly's default template is ~20 kB and the dark/light choice is ours
      layout.font = { family: "Inter, system-ui, sans-serif", size: 12, color: "#1f2937" };
      layout.colorway = ["#4f46e5", "#0ea5e9", "#10b981", "#f59e0b", "#ef4444", "#8b5cf6", "#14b8a6", "#f97316"];
      layout.paper_bgcolor = "#ffffff"; layout.plot_bgcolor = "#f8fafc";
      window.Plotly.newPlot(box, spec.data || [], layout, { responsive: true, displaylogo: false });
    }).catch((e) => box.replaceChildren(el("div", { class: "error-text", text: `The chart could not be shown (${e.message}).` })));
    return el("figure", { class: "chart" }, box);
  }

  function resultTable(t) {
    const more = t.n_rows > t.rows.length ? ` (first ${t.rows.length} of ${AA.fmtNumber(t.n_rows)} rows)` : ` (${AA.fmtNumber(t.n_rows)} rows)`;
    return el("div", { class: "result-table" },
      el("div", { class: "result-table-head" }, el("strong", { text: t.name }), el("span", { class: "muted small", text: more }),
        el("a", { class: "btn ghost small", href: t.csv_url, download: "", text: "CSV" })),
      AA.dataTable(t.columns, t.rows, null, true));
  }

  function kv(rows) {
    return el("dl", { class: "kv" }, rows.filter((r) => r[1] !== "" && r[1] !== undefined && r[1] !== null)
      .map(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  }

  function tracePanel(r) {
    const t = r.trace || {}, u = r.usage || {};
    const timings = Object.entries(r.timings || {}).map(([k, v]) => `${k} ${(+v).toFixed(2)} s`).join(" · ");
    return details("Trace", "trace", kv([
      ["Intent", t.intent], ["Source", t.source], ["Understood as", t.standalone_question],
      ["Assumptions", (t.assumptions || []).join("; ")],
      ["Memory used", (t.memory_hits || []).map((h) => `${h.kind}:${h.id}${h.detail ? " (" + h.detail + ")" : ""}`).join(", ") || "none"],
      ["Context", (t.context || []).map((c) => `${c.part} ${c.tokens} tokens`).join(" · ")],
      ["LM calls", `${u.lm_calls || 0} calls · ${u.prompt_tokens || 0} prompt + ${u.completion_tokens || 0} completion tokens`],
      ["Cost", u.cost_usd === null ? "unknown (no price for this model; set cost_model)" : `$${(+(u.cost_usd || 0)).toFixed(4)}`],
      ["Warnings", (r.warnings || []).join("\n")],
      ["Time", timings],
      ["Plan", (r.plan || []).map((s) => `${s.agent}: ${s.instruction}`).join("\n")],
      ["Unchecked numbers", (t.unsupported_numbers || []).join(", ")],
    ]), (t.raw_lm_output || []).length ? details("Raw model output", "", el("pre", { class: "code", text: t.raw_lm_output.join("\n---\n") })) : null);
  }

  function attemptsPanel(r) {
    const tries = r.attempts || [];
    if (tries.length < 2 && !(tries[0] && tries[0].error)) return null;
    return details(`Fix attempts (${tries.length} runs)`, "attempts", el("ol", {}, tries.map((a, i) => el("li", {},
      el("span", { class: a.error ? "bad" : "good", text: a.error ? AA.errorText(a.error) : "ran cleanly" }),
      details(`Code of run ${i + 1}`, "", el("pre", { class: "code" }, el("code", { text: a.code })))))));
  }

  // "KeyError: 'x'" already names its kind: say the kind once, not "KeyError KeyError: 'x'".
  AA.errorText = (err) => (err.message.startsWith(err.kind) ? err.message : `${err.kind}: ${err.message}`);

  // A result's error.kind is one of the kinds of the API (internal, sandbox, ...); a failed run's own kind (the
  // script's exception, a limit) is in its last attempt and says more: "KeyError: 'x'" rather than "internal: ...".
  function runError(r) {
    const last = (r.attempts || [])[r.attempts ? r.attempts.length - 1 : 0];
    return last && last.error && last.error.message === r.error.message ? last.error : r.error;
  }

  function errorBox(err) {
    const text = AA.errorText(err);
    return el("div", { class: "error-box" }, el("strong", { text: err.kind }), text.slice(err.kind.length));
  }

  // What the user waited, from the request to the answer (the worker's start included); older results
  // without it show the analysis's own time.
  function waitedBadge(r) {
    const t = r.timings || {}, waited = t.waited !== undefined ? +t.waited : +(t.total || 0);
    if (!waited) return null;
    return el("span", { class: "muted small waited", text: `${waited.toFixed(2)} s`,
      title: t.waited !== undefined ? `You waited ${waited.toFixed(2)} s for this answer` : "Time of the analysis" });
  }

  AA.questionNode = (text) => el("div", { class: "msg user" }, el("div", { class: "bubble", text }));

  // A number the answer states that no output of the run contains: said beside the answer, not only in the trace.
  function uncheckedNote(r) {
    const nums = (r.trace && r.trace.unsupported_numbers) || [];
    return nums.length ? el("p", { class: "unchecked warn", text: `Check this answer: ${nums.join(", ")} ${nums.length > 1 ? "are" : "is"} not in anything the run printed or showed.` }) : null;
  }

  AA.renderResult = function renderResult(r, ctx) {
    const status = { ok: "Answer", declined: "Cannot answer", error: "Error" }[r.status] || r.status;
    const answer = el("div", { class: "answer-text" });
    AA.setSafeHtml(answer, r.answer_html || "");
    const card = el("article", { class: `msg bot status-${r.status}`, dataset: { index: r.index } },
      el("div", { class: "card-head" }, el("span", { class: `badge ${r.status}`, text: status }), waitedBadge(r)),
      r.error ? errorBox(runError(r)) : null,
      answer,
      uncheckedNote(r),
      // Charts and tables side by side when both exist: the chart is read first, the numbers beside it.
      el("div", { class: (r.figures || []).length && (r.tables || []).length ? "outputs split" : "outputs" },
        (r.figures || []).length ? el("div", { class: "figures" }, r.figures.map(figureNode)) : null,
        (r.tables || []).length ? el("div", { class: "result-tables" }, r.tables.map(resultTable)) : null),
      r.stdout ? details("Printed output", "stdout", el("pre", { class: "code out", text: r.stdout })) : null,
      r.code ? codeBlock(r.code, r, ctx) : null,
      attemptsPanel(r), tracePanel(r));
    return card;
  };

  AA.progressNode = function progressNode(onCancel) {
    const list = el("ol", { class: "steps" });
    const node = el("div", { class: "msg bot progress" }, el("div", { class: "card-head" },
      el("span", { class: "spinner" }), el("strong", { text: "Working…" }),
      el("button", { class: "btn ghost small danger", type: "button", text: "Cancel", onclick: onCancel })), list);
    return {
      node,
      add(ev) {
        if (ev.stage === "done") return;
        for (const li of list.children) li.classList.add("done");
        let text = ev.message;
        // "fixing" messages already say "attempt k of N"
        if (ev.total && ev.stage === "agent") text = `${ev.message} (${ev.step} of ${ev.total})`;
        list.append(el("li", { class: `stage-${ev.stage}`, text }));
      },
    };
  };
})();
