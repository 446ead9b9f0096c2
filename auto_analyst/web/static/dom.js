// DOM and HTTP helpers. Every string from the server goes into the page through textContent
// (el's text children); the only HTML ever inserted is the server-sanitised answer (setSafeHtml).
"use strict";

const AA = window.AA || (window.AA = {});

AA.el = function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

// The answer HTML was cleaned by nh3 on the server (allow-list of tags, no attributes but href).
AA.setSafeHtml = function setSafeHtml(node, html) {
  node.innerHTML = html;  // sanitised server-side; see auto_analyst/web/render.py
  for (const a of node.querySelectorAll("a")) { a.target = "_blank"; a.rel = "noopener noreferrer"; }
};

AA.csrf = () => document.querySelector('meta[name="csrf-token"]').content;

AA.ApiError = class extends Error {
  constructor(status, kind, message) { super(message); this.status = status; this.kind = kind; }
};

AA.api = async function api(method, url, body) {
  const opts = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
  if (method !== "GET") opts.headers["X-CSRF-Token"] = AA.csrf();
  if (body instanceof FormData) opts.body = body;
  else if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  let resp;
  try { resp = await fetch(url, opts); } catch (e) { throw new AA.ApiError(0, "network", "The server cannot be reached."); }
  let data = null;
  try { data = await resp.json(); } catch (e) { /* a non-JSON body is reported below */ }
  if (!resp.ok || !data || data.ok === false) {
    const err = (data && data.error) || {};
    throw new AA.ApiError(resp.status, err.kind || "http", err.message || `Request failed (${resp.status}).`);
  }
  return data;
};

AA.fmtNumber = function fmtNumber(v) {
  if (typeof v !== "number") return v === null || v === undefined ? "" : String(v);
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  return Math.abs(v) >= 1000 ? v.toLocaleString("en-US", { maximumFractionDigits: 2 }) : String(+v.toPrecision(6));
};

// Table cells: no digit grouping (a year must read 1950, an id 10042), at most 6 significant digits.
AA.fmtCell = function fmtCell(v) {
  if (v === null || v === undefined) return "";
  if (typeof v !== "number" || Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1e6 ? v.toFixed(0) : String(+v.toPrecision(6));
};

AA.fmtTime = function fmtTime(epochSeconds) {
  const d = new Date(epochSeconds * 1000), now = new Date();
  return d.toDateString() === now.toDateString()
    ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleDateString([], { month: "short", day: "numeric" });
};

AA.copyText = async function copyText(text, button) {
  try { await navigator.clipboard.writeText(text); }
  catch (e) {  // clipboard API needs a secure context; fall back to a hidden textarea
    const ta = AA.el("textarea", { class: "offscreen" }); ta.value = text; document.body.append(ta);
    ta.select(); document.execCommand("copy"); ta.remove();
  }
  if (button) { const old = button.textContent; button.textContent = "Copied"; setTimeout(() => { button.textContent = old; }, 1200); }
};
