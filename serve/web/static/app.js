// The approvals page of warden serve: plain DOM, no framework. Every text
// from the service goes in with textContent, never as HTML.
"use strict";

let csrf = "";
let current = null; // the approval the dialog answers

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k === null || k === undefined ? "" : k);
  return e;
}

async function api(path, body) {
  const opt = { headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opt.method = "POST";
    opt.headers["Content-Type"] = "application/json";
    opt.headers["X-Warden-CSRF"] = csrf;
    opt.body = JSON.stringify(body);
  }
  const r = await fetch(path, opt);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
  if (!r.ok) throw new Error((data && data.error) || r.statusText);
  return data;
}

function callText(args) {
  if (!args) return "";
  if (typeof args.command === "string") return args.command;
  for (const k of ["file_path", "path", "filePath", "absolute_path"]) if (typeof args[k] === "string") return args[k];
  return JSON.stringify(args);
}

function when(t) { return t ? new Date(t).toLocaleString() : ""; }

// Approvals.
async function loadApprovals() {
  const list = await api("/v1/approvals");
  const ul = document.getElementById("approvals-list");
  document.getElementById("approvals-empty").hidden = list.length > 0;
  document.getElementById("pending-count").textContent = list.length ? "(" + list.length + ")" : "";
  announce(list);
  const details = await Promise.all(list.map(a => api("/v1/approvals/" + encodeURIComponent(a.id)).catch(() => a)));
  ul.replaceChildren(...details.map(card));
}

// Telling the human: the tab's title counts the waiting approvals, and an
// approval that arrives while the page is open raises a browser
// notification once notifications are allowed ("Notify me"). The
// approvals shown at the first load raise none: the page shows them.
let seen = null; // ids of the approvals already shown

function announce(list) {
  document.title = list.length ? "(" + list.length + ") warden" : "warden";
  const ids = new Set(list.map(a => a.id));
  if (seen !== null && "Notification" in window && Notification.permission === "granted") {
    for (const a of list) {
      if (seen.has(a.id)) continue;
      const n = new Notification("warden: approval " + a.id + " waits", {
        body: (a.tool || "") + ": " + (a.summary || callText(a.args)), tag: a.id });
      n.onclick = () => { window.focus(); location.hash = "#approvals"; };
    }
  }
  seen = ids;
  notifyButton();
}

function notifyButton() {
  const b = document.getElementById("notify");
  b.hidden = !("Notification" in window) || Notification.permission !== "default";
}

function card(a) {
  const hist = el("ol", { class: "history" }, ...(a.history || []).map(h =>
    el("li", {}, el("span", { class: h.decision }, h.decision), " ", h.tool, ": ", callText(h.args))));
  const li = el("li", { class: "card", tabindex: "0", "data-id": a.id },
    el("h3", {}, a.tool, " ", el("span", { class: "ask" }, a.code)),
    el("p", { class: "call" }, a.summary || callText(a.args)),
    el("p", { class: "meta" }, "asked by ", a.agent ? a.agent + " (" + (a.host || "?") + ")" : a.host || "?",
      a.session ? " in session " + a.session : "", a.role ? " (role " + a.role + ")" : "",
      ", ", when(a.created_at), a.expires_at ? "; expires " + when(a.expires_at) : ""),
    el("p", {}, "Rule ", el("code", {}, a.rule || "-"), ": ", a.reason || ""),
    (a.history && a.history.length) ? el("details", {}, el("summary", {}, "Recent calls of the session"), hist) : "",
    el("button", { type: "button", class: "answer" }, "Answer"));
  li.querySelector("button.answer").addEventListener("click", () => openAnswer(a));
  li.addEventListener("keydown", e => { if (e.key === "Enter" && e.target === li) openAnswer(a); });
  return li;
}

function openAnswer(a) {
  current = a;
  document.getElementById("answer-id").textContent = a.id;
  document.getElementById("answer-call").textContent = a.summary || (a.tool + ": " + callText(a.args));
  document.getElementById("answer-parts").replaceChildren(...(a.parts || []).map(p => el("li", {}, p.subject + " ", el("code", {}, p.value))));
  for (const id of ["answer-pattern", "answer-expires", "answer-uses", "reject-msg"]) document.getElementById(id).value = "";
  document.querySelector('input[name=scope][value=once]').checked = true;
  scopeChanged();
  document.getElementById("answer-error").textContent = "";
  document.getElementById("answer").showModal();
}

function scopeChanged() {
  const scope = document.querySelector("input[name=scope]:checked").value;
  for (const id of ["answer-pattern", "answer-expires", "answer-uses"]) document.getElementById(id).disabled = scope === "once";
}

async function approve() {
  const scope = document.querySelector("input[name=scope]:checked").value;
  const body = { scope };
  if (scope !== "once") {
    const p = document.getElementById("answer-pattern").value.trim();
    const x = document.getElementById("answer-expires").value.trim();
    const u = document.getElementById("answer-uses").value.trim();
    if (p) body.pattern = p;
    if (x) body.expires = x;
    if (u) body.uses = parseInt(u, 10);
  }
  await answer("approve", body);
}

async function reject() {
  await answer("reject", { message: document.getElementById("reject-msg").value });
}

async function answer(what, body) {
  try {
    await api("/v1/approvals/" + encodeURIComponent(current.id) + "/" + what, body);
    document.getElementById("answer").close();
    await loadApprovals();
  } catch (e) {
    document.getElementById("answer-error").textContent = e.message;
  }
}

// Audit.
async function loadAudit() {
  const form = document.getElementById("audit-filter");
  const q = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
  document.getElementById("audit-export").href = "/v1/audit/export?" + q;
  q.set("limit", "200");
  try {
    let list = await api("/v1/audit?" + q);
    document.getElementById("audit-error").textContent = "";
    // warden doctor's synthetic denies (session warden-doctor) prove the
    // hook records; they are left out unless that session is asked for.
    const all = list.length;
    if (!q.get("session")) list = list.filter(r => !(r.session === "warden-doctor" && r.decision === "deny"));
    document.getElementById("audit-hidden").textContent = all > list.length ?
      (all - list.length) + " records of warden doctor's probes are not shown (filter on session warden-doctor to see them)." : "";
    list.reverse();
    document.getElementById("audit-rows").replaceChildren(...list.map(r => el("tr", {},
      el("td", {}, when(r.time)), el("td", {}, r.session || ""), el("td", {}, r.agent || ""), el("td", {}, r.host || ""), el("td", {}, r.tool),
      el("td", { class: "call" }, callText(r.args)), el("td", { class: r.decision }, r.decision), el("td", {}, r.code || ""), el("td", {}, r.rule || ""))));
  } catch (e) {
    document.getElementById("audit-error").textContent = e.message;
  }
}

// Sessions.
async function loadSessions() {
  const list = await api("/v1/sessions");
  document.getElementById("sessions-rows").replaceChildren(...list.map(s => {
    const a = el("a", { href: "#sessions" }, s.id);
    a.addEventListener("click", e => { e.preventDefault(); showSession(s.id); });
    return el("tr", {}, el("td", {}, a), el("td", {}, s.role || ""), el("td", {}, s.host || ""), el("td", {}, s.status || ""),
      el("td", {}, String(s.calls || 0)), el("td", {}, String(s.violations || 0)), el("td", {}, when(s.last_seen)));
  }));
}

async function showSession(id) {
  const d = await api("/v1/sessions/" + encodeURIComponent(id));
  document.getElementById("session-detail").replaceChildren(el("h3", {}, "Session " + id),
    d.halt ? el("p", { class: "deny" }, "Halted: " + (d.halt.message || "")) : "",
    el("ol", { class: "history" }, ...(d.recent || []).map(h => el("li", {}, when(h.time), " ", el("span", { class: h.decision }, h.decision), " ", h.tool, ": ", callText(h.args)))));
}

// Grants.
async function loadGrants() {
  const list = await api("/v1/grants");
  document.getElementById("grants-rows").replaceChildren(...list.map(g => {
    const b = el("button", { type: "button" }, "Revoke");
    b.addEventListener("click", async () => { await api("/v1/grants/" + encodeURIComponent(g.id) + "/revoke", {}); loadGrants(); });
    return el("tr", {}, el("td", {}, g.id), el("td", {}, g.tool), el("td", {}, g.role || ""), el("td", {}, g.session || ""),
      el("td", {}, el("code", {}, g.subject + (g.pattern ? " matching " + g.pattern : " " + g.value))),
      el("td", {}, g.expires && !g.expires.startsWith("0001") ? when(g.expires) : "never"),
      el("td", {}, g.uses_left < 0 ? "unlimited" : String(g.uses_left)), el("td", {}, g.created_by || ""), el("td", {}, b));
  }));
}

// What if.
async function whatIf(e) {
  e.preventDefault();
  const out = document.getElementById("whatif-out");
  let call;
  try { call = JSON.parse(document.getElementById("whatif-call").value); } catch (err) { out.textContent = "The call is not JSON: " + err.message; return; }
  const body = { call };
  const pol = document.getElementById("whatif-policy").value;
  const sess = document.getElementById("whatif-session").value.trim();
  if (pol.trim()) body.policy = pol;
  if (sess) body.session = sess;
  try {
    const r = await api("/v1/policy/explain", body);
    const d = r.decision;
    const lines = [d.decision.toUpperCase() + " (" + d.code + ") by the " + r.policy + " policy", "rule: " + (d.rule || "-"), "reason: " + (d.reason || "-")];
    if (d.suggestion) lines.push("suggestion: " + d.suggestion);
    for (const p of r.parts || []) lines.push("  " + p.Subject + " " + p.Value + ": " + p.Effect + (p.Rule ? " (rule " + p.Rule + ")" : ""));
    for (const c of r.checks || []) lines.push("  check " + c.Name + ": " + c.Effect + (c.Detail ? " - " + c.Detail : ""));
    out.textContent = lines.join("\n");
  } catch (err) {
    out.textContent = err.message;
  }
}

// Replay.
async function replayRun(e) {
  e.preventDefault();
  const msg = document.getElementById("replay-msg");
  const box = document.getElementById("replay-out");
  msg.textContent = "Replaying...";
  const body = { limit: parseInt(document.getElementById("replay-limit").value, 10) || 5000 };
  const pol = document.getElementById("replay-policy").value;
  if (pol.trim()) body.policy = pol;
  let r;
  try {
    r = await api("/v1/policy/replay", body);
  } catch (err) {
    msg.textContent = err.message;
    box.hidden = true;
    return;
  }
  msg.textContent = r.calls + " recorded calls decided again under the " + r.policy + (r.against ? ", beside the " + r.against : "") + ".";
  document.getElementById("replay-col-policy").textContent = r.policy;
  document.getElementById("replay-col-against").textContent = r.against || "";
  document.getElementById("replay-outcomes").replaceChildren(...["allow", "ask", "deny"].map(o =>
    el("tr", {}, el("td", {}, o), el("td", {}, String((r.outcomes || {})[o] || 0)),
      el("td", {}, r.against ? String((r.against_outcomes || {})[o] || 0) : ""))));
  const changed = r.changed || [];
  document.getElementById("replay-changed-count").textContent = String(changed.length);
  document.getElementById("replay-changed").replaceChildren(...changed.slice(0, 200).map(c =>
    el("tr", { class: "changed" }, el("td", {}, c.before), el("td", {}, c.after), el("td", {}, c.call),
      el("td", {}, c.before_rule + " -> " + c.after_rule))));
  document.getElementById("replay-asks").replaceChildren(...(r.asks || []).filter(a => a.rule || a.why).map(a =>
    el("li", { class: "ask-group" }, el("p", {}, a.pattern + ": " + a.count + " calls, for example " + (a.examples || []).join("; ")),
      a.rule ? el("pre", { class: "out" }, a.rule) : el("p", {}, a.why),
      a.rule ? el("p", {}, "Allows " + a.covers + " of them" + ((a.also_allows || []).length ? "; would also allow: " + a.also_allows.slice(0, 5).join("; ") : "; allows no other recorded call.")) : "")));
  box.hidden = false;
}

// Pages and live updates.
const loaders = { approvals: loadApprovals, audit: loadAudit, sessions: loadSessions, grants: loadGrants, whatif: async () => {}, replay: async () => {} };

function page() { const p = location.hash.slice(1); return loaders[p] ? p : "approvals"; }

async function show() {
  const p = page();
  for (const s of document.querySelectorAll(".page")) s.hidden = s.id !== "page-" + p;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === p);
  await loaders[p]().catch(e => console.warn("load " + p + ": " + e.message));
}

function live() {
  const badge = document.getElementById("live");
  const es = new EventSource("/v1/events");
  es.addEventListener("hello", () => { badge.textContent = "live"; badge.classList.add("on"); });
  es.onerror = () => { badge.textContent = "reconnecting"; badge.classList.remove("on"); };
  es.addEventListener("approvals", () => { loadApprovals().catch(() => {}); });
  es.addEventListener("audit", () => { if (page() === "audit") loadAudit(); if (page() === "sessions") loadSessions(); });
  es.addEventListener("grants", () => { if (page() === "grants") loadGrants(); });
}

async function start() {
  const q = new URLSearchParams(location.search);
  let me;
  try {
    me = await api("/v1/whoami");
  } catch (e) {
    document.getElementById("login").hidden = false;
    document.getElementById("login-msg").textContent = "Your session ended: log in again.";
    return;
  }
  if (me.kind !== "person") {
    document.getElementById("login").hidden = false;
    const why = q.get("login");
    document.getElementById("login-msg").textContent = why === "refused" ? "That token was refused." : why === "agent" ? "That is an agent token: log in with a person token." : "";
    return;
  }
  csrf = me.csrf || "";
  document.getElementById("nav").hidden = false;
  document.getElementById("logout").hidden = false;
  document.getElementById("who").textContent = me.name;
  document.getElementById("logout").addEventListener("click", async () => {
    await fetch("/logout", { method: "POST", headers: { "X-Warden-CSRF": csrf }, credentials: "same-origin" });
    location.href = "/";
  });
  document.getElementById("audit-filter").addEventListener("submit", e => { e.preventDefault(); loadAudit(); });
  document.getElementById("whatif-form").addEventListener("submit", whatIf);
  document.getElementById("replay-form").addEventListener("submit", replayRun);
  document.getElementById("approve-btn").addEventListener("click", approve);
  document.getElementById("reject-btn").addEventListener("click", reject);
  document.getElementById("answer-cancel").addEventListener("click", () => document.getElementById("answer").close());
  for (const r of document.querySelectorAll("input[name=scope]")) r.addEventListener("change", scopeChanged);
  window.addEventListener("hashchange", show);
  await show();
  if (page() !== "approvals") loadApprovals().catch(() => {});
  document.getElementById("notify").addEventListener("click", () => {
    Notification.requestPermission().then(notifyButton, notifyButton);
  });
  live();
}

document.addEventListener("DOMContentLoaded", start);
