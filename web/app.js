// app.js: the dashboard. It asks nvqd for /api/state every 2 s and for
// /api/history every 10 s, with the token of its own address if it has one,
// and draws them; while nvqd does not answer it says so and keeps asking.
"use strict";
const token = new URLSearchParams(location.search).get("token");
const q = token ? "?token=" + encodeURIComponent(token) : "";
const $ = (id) => document.getElementById(id);

function size(b) {
  const u = ["B", "K", "M", "G", "T"];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (b >= 10 || i === 0 ? Math.round(b) : b.toFixed(1)) + u[i];
}
function span(s) {
  s = Math.max(0, Math.floor(s));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m";
  return Math.floor(s / 86400) + "d" + String(Math.floor(s % 86400 / 3600)).padStart(2, "0") + "h";
}
function cell(tr, text, cls) {
  const td = document.createElement("td");
  if (text === undefined) { td.textContent = "hidden"; td.className = "hidden"; }
  else td.textContent = text;
  if (cls) td.className += " " + cls;
  tr.appendChild(td);
}
function mem(j) {
  if (!j.gpus) return "-";
  const asked = j.mem_per_gpu ? size(j.mem_per_gpu) : "whole";
  return j.used !== undefined ? size(j.used) + "/" + asked : asked;
}

// energy as nvq prints it: J under a watt-hour, Wh under a kWh, then kWh
function energy(j) {
  if (j.energy_how === undefined) return "-";
  if (j.energy === undefined) return "unknown";
  const e = j.energy;
  const v = e < 10 ? e.toFixed(1) + " J" : e < 3600 ? Math.round(e) + " J" :
    e < 3.6e6 ? (e / 3600).toFixed(2) + " Wh" : (e / 3.6e6).toFixed(3) + " kWh";
  return v + " (" + j.energy_how + ")";
}

function drawGpus(st) {
  const box = $("gpus");
  box.textContent = "";
  for (const g of st.gpus) {
    const d = document.createElement("div");
    d.className = "gpu";
    const t = document.createElement("div");
    t.className = "title";
    const lock = g.lock_holder !== undefined ? (g.lock_holder ? ", lock: job " + g.lock_holder : ", lock: free") : "";
    t.textContent = "GPU " + g.index + " " + g.name + " (" + g.mode + (g.drained ? ", drained" : "") + ")";
    const r = document.createElement("span");
    r.textContent = size(Math.max(g.used, g.demanded)) + " of " + size(g.total) +
      (g.jobs.length ? ", jobs " + g.jobs.join(", ") : ", no job") + lock;
    t.appendChild(r);
    const bar = document.createElement("div");
    bar.className = "bar";
    const asked = Math.max(g.demanded, g.used);
    for (const [cls, v] of [["used", g.used], ["asked", asked - g.used], ["outside", g.outside]]) {
      const p = document.createElement("div");
      p.className = cls;
      p.style.width = (100 * v / g.total) + "%";
      p.title = cls + " " + size(v);
      bar.appendChild(p);
    }
    d.appendChild(t);
    d.appendChild(bar);
    box.appendChild(d);
  }
}

function drawJobs(st) {
  const run = $("running").tBodies[0], pend = $("pending").tBodies[0];
  run.textContent = "";
  pend.textContent = "";
  for (const j of st.jobs) {
    const tr = document.createElement("tr");
    cell(tr, String(j.id));
    cell(tr, j.user);
    cell(tr, j.name);
    if (j.state === "PENDING") {
      cell(tr, String(j.gpus));
      cell(tr, mem(j));
      cell(tr, span(st.now - j.submitted_at));
      cell(tr, j.reason || "", "wide");
      pend.appendChild(tr);
    } else {
      cell(tr, j.state, j.state);
      cell(tr, String(j.gpus));
      cell(tr, mem(j));
      cell(tr, span(st.now - j.started_at));
      cell(tr, energy(j), "energy");
      cell(tr, j.command, "wide");
      run.appendChild(tr);
    }
  }
  const c = st.counts;
  $("summary").textContent = st.gpus.length + " GPUs, " + c.RUNNING + " running, " +
    c.SUSPENDED + " suspended, " + c.PENDING + " pending";
  $("who").textContent = st.viewer_uid !== undefined ?
    "Signed in as uid " + st.viewer_uid + ": user names, and your jobs' names and commands." :
    "No token: user names and commands hidden (nvq web-token gives you a link).";
}

// chart: series (arrays of values at times ts, seconds) as lines under a
// y axis from 0 to max (labels by fmt) and a time axis (HH:MM). The labels
// drawn are also left in the canvas' data-y and data-x, for tests and
// screen readers (aria-label).
const AXIS_L = 48, AXIS_B = 18, AXIS_T = 9;
function clock(t) {
  const d = new Date(t * 1000);
  return String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0");
}
function chart(canvas, series, colors, max, ts, fmt) {
  const w = canvas.width, h = canvas.height, c = canvas.getContext("2d");
  const pw = w - AXIS_L - 4, ph = h - AXIS_B - AXIS_T;
  c.clearRect(0, 0, w, h);
  c.font = "11px sans-serif";
  c.fillStyle = "#555";
  c.strokeStyle = "#ddd";
  c.lineWidth = 1;
  const ylabels = [0, max / 2, max].map((v) => v ? fmt(v) : "0");
  ylabels.forEach((l, k) => {
    const y = AXIS_T + ph - k / 2 * ph;
    c.beginPath(); c.moveTo(AXIS_L, y); c.lineTo(w - 4, y); c.stroke();
    c.textAlign = "right"; c.textBaseline = "middle";
    c.fillText(l, AXIS_L - 4, y);
  });
  const n = series.length ? series[0].length : 0;
  const xlabels = n ? (n > 1 ? [ts[0], ts[Math.floor((n - 1) / 2)], ts[n - 1]] : [ts[0]]).map(clock) : [];
  c.textBaseline = "top";
  xlabels.forEach((l, k) => {
    c.textAlign = xlabels.length === 1 ? "center" : ["left", "center", "right"][k];
    c.fillText(l, xlabels.length === 1 ? AXIS_L + pw / 2 : AXIS_L + k / 2 * pw, h - AXIS_B + 3);
  });
  canvas.dataset.y = ylabels.join(",");
  canvas.dataset.x = xlabels.join(",");
  canvas.setAttribute("aria-label", (canvas.dataset.what || "") + "; y: " + ylabels.join(", ") +
    "; time: " + (xlabels.join(" to ") || "no samples yet"));
  if (!n) return;
  series.forEach((s, k) => {
    c.strokeStyle = colors[k];
    c.lineWidth = 2;
    c.beginPath();
    s.forEach((v, i) => {
      const x = AXIS_L + (n > 1 ? i / (n - 1) * pw : pw / 2), y = AXIS_T + ph - (max ? v / max : 0) * ph;
      if (i) c.lineTo(x, y); else c.moveTo(x, y);
    });
    c.stroke();
  });
}

function drawHistory(hi, gpus) {
  const box = $("memcharts");
  while (box.children.length < gpus.length) {
    const f = document.createElement("figure");
    f.append(document.createElement("figcaption"), document.createElement("canvas"));
    f.lastChild.width = 800;
    f.lastChild.height = 160;
    box.appendChild(f);
  }
  const ts = hi.samples.map((s) => s.t);
  gpus.forEach((g, i) => {
    const dem = hi.samples.map((s) => (s.gpus[i] || [0])[0]);
    const used = hi.samples.map((s) => (s.gpus[i] || [0, 0])[1]);
    const f = box.children[i], cv = f.lastChild;
    f.firstChild.textContent = "GPU " + g.index + (g.name ? " (" + g.name + ")" : "") + ", " +
      size(g.total) + ": demanded (yellow), used (green)";
    cv.dataset.what = "GPU " + g.index + " memory";
    chart(cv, [dem, used], ["#e8b931", "#2a9d4b"], g.total, ts, size);
  });
  // an even top, so that the middle line is a whole number of jobs
  const qmax = 2 * Math.ceil(Math.max(1, ...hi.samples.map((s) => s.pending + s.running + s.suspended)) / 2);
  $("queue").dataset.what = "jobs";
  chart($("queue"), [hi.samples.map((s) => s.pending), hi.samples.map((s) => s.running)],
    ["#9d7a00", "#2a7d3b"], qmax, ts, (v) => String(Math.round(v)));
  const hb = $("hours");
  hb.textContent = "";
  const top = Math.max(1e-9, ...hi.gpu_hours.map((u) => u.gpu_hours));
  for (const u of hi.gpu_hours) {
    const row = document.createElement("div");
    row.className = "hbar";
    const name = document.createElement("span");
    name.textContent = u.user;
    const bar = document.createElement("div");
    bar.style.width = (300 * u.gpu_hours / top) + "px";
    const v = document.createElement("span");
    v.textContent = u.gpu_hours.toFixed(2) + " GPU-h";
    row.append(name, bar, v);
    hb.appendChild(row);
  }
  const w = hi.wait;
  $("waits").textContent = w.started ? "Queue wait, last 24 h, " + w.started + " jobs: median " +
    span(w.p50) + ", p90 " + span(w.p90) + ", longest " + span(w.max) : "No job started in the last 24 h.";
}

let last = null;
async function tick() {
  try {
    const r = await fetch("/api/state" + q, { cache: "no-store" });
    if (!r.ok) throw new Error(r.status + " " + (await r.text()));
    last = await r.json();
    drawGpus(last);
    drawJobs(last);
    $("status").textContent = "";
    $("status").className = "";
  } catch (e) {
    $("status").textContent = "nvqd does not answer (" + e.message + "); trying again";
    $("status").className = "down";
  }
}
async function tickHistory() {
  if (!last) return;
  try {
    const r = await fetch("/api/history" + q, { cache: "no-store" });
    if (r.ok) drawHistory(await r.json(), last.gpus);
  } catch (e) { /* said by tick */ }
}
tick().then(tickHistory);
setInterval(tick, 2000);
setInterval(tickHistory, 10000);
