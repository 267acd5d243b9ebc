"use strict";
// kubesched simulate --report: renders the JSON in #data. No network, no library.
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const PAGE = 100;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const cpu = (m) => (m % 1000 === 0 ? String(m / 1000) : m + "m");
  const bytes = (b) => {
    for (const [u, s] of [["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]]) if (b >= s) return (b / s).toFixed(1) + u;
    return String(b);
  };
  const pct = (u, t) => (t ? Math.round((100 * u) / t) + "%" : "-");
  const usage = (u, t, f) => `${f(u)}/${f(t)} <span class="bar" style="width:${t ? Math.round((40 * u) / t) : 0}px"></span> ${pct(u, t)}`;

  $("line").textContent = D.line;
  const c = D.counts;
  const cards = [["pending pods", c.pending], ["scheduled", c.scheduled], ["unschedulable", c.unschedulable], ["gated", c.gated],
    ["preempted", c.preempted], ["other schedulers", c.otherSchedulers], ["nodes", c.nodes], ["attempts", c.attempts]];
  $("cards").innerHTML = cards.map(([k, v]) => `<div class="card"><b>${v}</b><span>${esc(k)}</span></div>`).join("");
  const notes = D.notes.slice();
  for (const [plural, count] of Object.entries(D.listed)) notes.push(`listed ${count} ${plural} from the cluster`);
  $("notes").innerHTML = notes.map((n) => `<div class="note">${esc(n)}</div>`).join("");

  const usageHead = '<th class="num">CPU</th><th class="num">memory</th><th class="num">pods</th><th class="num">new</th>';
  const usageCells = (r, i) => `<td class="num">${usage(r[i], r[i + 1], cpu)}</td><td class="num">${usage(r[i + 2], r[i + 3], bytes)}</td>` +
    `<td class="num">${r[i + 4]}/${r[i + 5]}</td><td class="num">${r[i + 6] || ""}</td>`;
  $("groups").innerHTML = `<table><thead><tr><th>pool</th><th>zone</th><th class="num">nodes</th>${usageHead}</tr></thead><tbody>` +
    D.groups.map((g) => `<tr><td>${esc(g[0])}</td><td>${esc(g[1])}</td><td class="num">${g[2]}</td>${usageCells(g, 3)}</tr>`).join("") + "</tbody></table>";
  $("top").innerHTML = `<table><thead><tr><th>node</th><th>pool</th><th>zone</th>${usageHead}</tr></thead><tbody>` +
    D.top.map((n) => `<tr><td>${esc(n[0])}</td><td>${esc(n[1])}</td><td>${esc(n[2])}</td>${usageCells(n, 3)}</tr>`).join("") + "</tbody></table>";

  if (D.reasons.length) {
    $("reasons").innerHTML = "<table><thead><tr><th class=\"num\">pods</th><th>reason</th></tr></thead><tbody>" +
      D.reasons.map(([m, n], i) => `<tr><td class="num">${n}</td><td><a href="#" data-reason="${i}">${esc(m)}</a></td></tr>`).join("") + "</tbody></table>";
    $("reasons").addEventListener("click", (e) => {
      const a = e.target.closest("a[data-reason]");
      if (!a) return;
      e.preventDefault();
      reason = D.messages.indexOf(D.reasons[+a.dataset.reason][0]);
      $("search").value = "";
      $("status").value = "";
      $("reason-chip").hidden = false;
      $("reason-text").textContent = D.reasons[+a.dataset.reason][0];
      filter();
      $("search").scrollIntoView();
    });
  } else $("reasons-section").hidden = true;

  if (D.preemptions.length) {
    $("preemptions-section").hidden = false;
    $("preemptions").innerHTML = "<table><thead><tr><th>victim</th><th>node</th><th>for</th></tr></thead><tbody>" +
      D.preemptions.map(([v, p, n]) => `<tr><td>${esc(v)}</td><td>${esc(n)}</td><td>${esc(p)}</td></tr>`).join("") + "</tbody></table>";
  }

  const W = D.whatIf;
  if (W) {
    $("whatif-section").hidden = false;
    let h = "<ul class=\"plain\">" + W.edits.map((e) => `<li>${esc(e)}</li>`).join("") + "</ul>";
    if (W.drainedNodes.length) {
      const left = Object.entries(W.leftInPlace).map(([k, v]) => `${v} ${k}`).join(", ");
      h += `<p>${W.drainedNodes.length} node(s) drained, ${W.evicted.length} pod(s) evicted` + (left ? ` (left in place: ${esc(left)})` : "") + "</p>";
      if (W.refused.length) h += "<p class=\"warn\">kubectl drain would refuse this drain (these pods stay; the rest is simulated past them):</p><ul class=\"plain\">" +
        W.refused.map((r) => `<li>${esc(r.message)}: ${esc(r.pods.join(", "))}</li>`).join("") + "</ul>";
      W.deleted.forEach((d) => { h += `<p>${d.pods.length} deleted, not placed: ${esc(d.why)}: ${esc(d.pods.join(", "))}</p>`; });
      if (W.keptOff.length) h += `<p>${W.keptOff.length} pod(s) tolerate the cordon: kept off the drained nodes by node affinity: ${esc(W.keptOff.join(", "))}</p>`;
      h += `<p>${W.placedElsewhere.length} fit elsewhere, <b>${W.notPlaced.length} fit nowhere</b>.</p>`;
      if (W.placedElsewhere.length) h += `<details><summary>where the ${W.placedElsewhere.length} went</summary><div class="scroll"><table><thead><tr><th>pod</th><th>node</th></tr></thead><tbody>` +
        W.placedElsewhere.map((p) => `<tr><td>${esc(p.pod)}</td><td>${esc(p.node)}</td></tr>`).join("") + "</tbody></table></div></details>";
      if (W.notPlaced.length) h += "<table><thead><tr><th>pod</th><th>why not</th></tr></thead><tbody>" +
        W.notPlaced.map((p) => `<tr><td>${esc(p.pod)}</td><td>${esc(p.message)}${p.flags.length ? "<br><span class=\"warn\">" + esc(p.flags.join("; ")) + "</span>" : ""}</td></tr>`).join("") + "</tbody></table>";
      if (W.budgets.length) h += "<h3>PodDisruptionBudgets covering evicted pods</h3><table><thead><tr><th>budget</th><th class=\"num\">allowed</th><th class=\"num\">evicted</th><th>verdict</th></tr></thead><tbody>" +
        W.budgets.map((b) => `<tr><td>${esc(b.budget)}</td><td class="num">${b.disruptionsAllowed}</td><td class="num">${b.evicted.length}</td><td class="${b.violated ? "status-1" : "status-0"}">${b.violated ? "violated" : "ok"}</td></tr>`).join("") + "</tbody></table>";
    }
    $("whatif").innerHTML = h;
  }

  const U = D.scaleUp;  // simulate --scale-up
  if (U) {
    $("scaleup-section").hidden = false;
    const list = (pods) => `<ul class="plain">${pods.map((p) => `<li>${esc(p)}</li>`).join("")}</ul>`;
    const np = (e) => (e ? `+${e.nodes} node(s), ${e.pods.length} pod(s)${e.capped ? " (capped)" : ""}` : "");
    const seen = (x) => (x ? Object.entries(x).map(([k, v]) => `${esc(k)} ${esc(v === null ? "-" : v)}`).join(", ") : "");
    let h = `<p>${U.pending.length} pod(s) left unschedulable; pools by <code>${esc(U.poolLabel)}</code>, expander ${esc(U.expanders.join(","))}</p>`;
    h += "<table><thead><tr><th>pool</th><th class=\"num\">nodes</th><th class=\"num\">max new</th><th>template</th><th class=\"num\">pods fit</th><th>estimate</th><th>checked</th><th>expander</th></tr></thead><tbody>" +
      U.pools.map((p) => `<tr${U.answer && U.answer.pool === p.pool ? ' class="chosen"' : ""}><td>${esc(p.pool)}${U.answer && U.answer.pool === p.pool ? " (chosen)" : ""}</td>` +
        `<td class="num">${p.nodes}</td><td class="num">${p.maxNewNodes}</td><td>${esc(p.example)}${p.goodExample ? "" : ' <span class="warn">(cordoned or not ready)</span>'}</td>` +
        `<td class="num">${p.podsFit.length}</td><td>${p.skipped ? `<span class="note">${esc(p.skipped)}</span>` : np(p.estimate)}</td>` +
        `<td>${np(p.checked)}</td><td>${seen(p.expander)}</td></tr>`).join("") + "</tbody></table>";
    const A = U.answer;
    if (!A) h += "<p><b>No pool's new nodes would take a pending pod: no scale-up.</b></p>";
    else {
      h += `<p><b>Add ${A.nodes} node(s) of ${esc(A.pool)}</b> (${U.choice.decidedBy === "pool name" ? "the expanders left a tie, broken by pool name" : "chosen by " + esc(U.choice.decidedBy)}): they place ${A.pods.length} pending pod(s). ` +
        `cluster-autoscaler's estimate: ${A.estimate.nodes} node(s) for ${A.estimate.pods.length} pod(s); simulated: ` +
        A.simulations.map((s) => `${s.nodes} node(s) place ${s.placed}`).join(", ") + "</p>";
      h += `<details><summary>the ${A.pods.length} pod(s) helped and the new nodes</summary><div class="scroll">${list(A.pods)}<p class="note">${esc(A.newNodes.join(", "))}</p></div></details>`;
      if (A.missed.length) h += "<table><thead><tr><th>estimated pod still pending</th><th>why</th></tr></thead><tbody>" +
        A.missed.map((m) => `<tr><td>${esc(m.pod)}</td><td>${esc(m.message)}</td></tr>`).join("") + "</tbody></table>";
    }
    if (U.otherPools.length) h += `<details><summary>${U.otherPools.length} pod(s) only other pools would help</summary><div class="scroll"><table><tbody>` +
      U.otherPools.map((o) => `<tr><td>${esc(o.pod)}</td><td>${esc(o.pools.join(", "))}</td></tr>`).join("") + "</tbody></table></div></details>";
    if (U.noPool.length) h += "<h3>Pods no pool helps</h3><div class=\"scroll\"><table><thead><tr><th>pod</th><th>the scheduler's message on the template nodes</th></tr></thead><tbody>" +
      U.noPool.map((o) => `<tr><td>${esc(o.pod)}</td><td>${esc(o.message)}</td></tr>`).join("") + "</tbody></table></div>";
    $("scaleup").innerHTML = h;
  }

  const S = D.scaleDown;  // simulate --scale-down
  if (S) {
    $("scaledown-section").hidden = false;
    const util = (u) => (u ? `${esc(u.resource)} ${u.value.toFixed(2)}` : "");
    let h = `<p>${S.removable.length} of ${S.removable.length + S.kept.length} node(s) removable (utilization threshold ${S.utilizationThreshold}); pods placed by the scheduler, in the order the nodes go.</p>`;
    if (S.removable.length) h += "<table><thead><tr><th>remove</th><th>utilization</th><th>its pods go to</th></tr></thead><tbody>" +
      S.removable.map((r) => `<tr><td>${esc(r.node)}${r.risky ? ' <span class="warn">(risky: budgets)</span>' : ""}</td><td>${util(r.utilization)}</td><td>` +
        (r.moves.length ? r.moves.map((m) => `${esc(m.pod)} &rarr; ${esc(m.node)}`).join("<br>") : '<span class="note">nothing to move</span>') +
        (r.daemonSetPods.length ? `<br><span class="note">${r.daemonSetPods.length} DaemonSet pod(s) go with it</span>` : "") + "</td></tr>").join("") + "</tbody></table>";
    if (S.kept.length) h += `<details><summary>${S.kept.length} node(s) kept, and why</summary><div class="scroll"><table><thead><tr><th>node</th><th>utilization</th><th>why</th></tr></thead><tbody>` +
      S.kept.map((k) => `<tr><td>${esc(k.node)}</td><td>${util(k.utilization)}</td><td>${esc(k.message)}</td></tr>`).join("") + "</tbody></table></div></details>";
    $("scaledown").innerHTML = h;
  }

  // --- pod groups (GenericWorkload): each group, its members and its PodGroupScheduled condition ---
  const G = D.podGroups || [];
  let groupPods = null;  // a group clicked in its table: only its pods are listed
  if (G.length || D.podGroupsIgnored) {
    $("podgroups-section").hidden = false;
    let h = "";
    if (D.podGroupsIgnored) h += `<p class="warn">${D.podGroupsIgnored} PodGroup(s) in the snapshot were not read: GenericWorkload is off, so their pods were scheduled one by one, as upstream does with the gate off (<code>--feature-gates GenericWorkload=true,GangScheduling=true</code> schedules them as groups).</p>`;
    const unbound = G.filter((g) => g.unbound);
    if (unbound.length) h += `<p class="warn" id="unbound-gangs"><b>${unbound.length} gang(s) left wholly unbound</b> (all or nothing: not one of their pods is bound): ${unbound.map((g) => esc(g.name)).join(", ")}</p>`;
    const retried = D.groupRetries || [];
    if (retried.length) h += `<p class="note">${retried.length} failed pod group(s) were retried from backoffQ while activeQ was empty (${retried.reduce((n, r) => n + r[1], 0)} cycle(s); SchedulerPopFromBackoffQ): upstream retries such a group back to back for as long as nothing else is ready; simulate retried each only after the cluster changed.</p>`;
    if (G.length) {
      const before = G.some((g) => g.boundBefore);
      h += '<div class="scroll"><table id="podgroups-table"><thead><tr><th>group</th><th>policy</th><th>topology</th><th class="num">placed</th>' +
        (before ? '<th class="num">bound before</th>' : "") + '<th class="num">pending</th><th class="num">nodes</th><th>domain</th><th>PodGroupScheduled</th><th class="num">cycles</th><th>why</th></tr></thead><tbody>' +
        G.map((g, i) => {
          const c = g.condition;
          const cond = c ? `<span class="${c[0] === "True" ? "status-0" : "status-1"}">${esc(c[0])}</span> (${esc(c[1])})` : '<span class="note">-</span>';
          const why = [c && c[2] ? esc(c[2]) : "", g.podMessage ? `<span class="note">its pods: ${esc(g.podMessage)}</span>` : ""].filter(Boolean).join("<br>");
          return `<tr${g.unbound ? ' class="unbound"' : ""}><td><a href="#" data-group="${i}" title="list its pods">${esc(g.name)}</a></td><td>${esc(g.policy)}</td>` +
            `<td>${esc(g.topology || "-")}</td><td class="num">${g.placed}/${g.members}</td>` + (before ? `<td class="num">${g.boundBefore}</td>` : "") +
            `<td class="num">${g.pending}</td><td class="num">${g.nodes}</td><td>${esc(g.domains.join(", ") || (g.placement || "-"))}</td><td>${cond}</td>` +
            `<td class="num">${g.cycles}${g.retries ? ` <span class="note">(${g.retries} from backoffQ)</span>` : ""}</td><td class="msg-wrap">${why}</td></tr>`;
        }).join("") + "</tbody></table></div>";
    }
    $("podgroups").innerHTML = h;
    $("podgroups").addEventListener("click", (e) => {
      const a = e.target.closest("a[data-group]");
      if (!a) return;
      e.preventDefault();
      const g = G[+a.dataset.group];
      groupPods = new Set(g.pods);
      $("group-chip").hidden = false;
      $("group-text").textContent = g.name;
      $("search").value = "";
      filter();
      $("search").scrollIntoView();
    });
  }

  // A pod's pod-group cycle (the podGroup of its --explain record), in its details.
  function groupCycle(v) {
    const shape = [v.policy === "gang" ? `gang, minCount ${esc(v.minCount)}` : esc(v.policy || "")]
      .concat((v.topologyKeys || []).map((k) => `within one ${esc(k)}`)).filter(Boolean).join(", ");
    let h = `<h4>Pod group ${esc(v.group)}: cycle ${esc(v.cycle)}</h4><p>${shape ? shape + "; " : ""}${v.order.length} pod(s) tried in order: ${esc(v.order.join(", "))}</p>`;
    if (v.fromBackoff) h += '<p class="note">begun by a member popped from backoffQ while activeQ was empty (SchedulerPopFromBackoffQ)</p>';
    const P = v.placements || [];
    if (P.length && !(P.length === 1 && !P[0].name)) {
      const plugins = [...new Set(P.flatMap((p) => Object.keys(p.scores || {})))];
      h += `<table class="placements"><thead><tr><th>placement</th><th class="num">nodes</th><th>feasible</th><th class="num">score</th>${plugins.map((n) => `<th class="num">${esc(n)}</th>`).join("")}<th>why not</th></tr></thead><tbody>` +
        P.map((p) => `<tr${p.name === v.placement ? ' class="chosen"' : ""}><td>${esc(p.name || "(all nodes)")}${p.name === v.placement ? " (chosen)" : ""}</td><td class="num">${p.nodes}</td>` +
          `<td class="${p.feasible ? "status-0" : "status-1"}">${p.feasible ? "yes" : "no"}</td><td class="num">${p.score === undefined ? "" : p.score}</td>` +
          plugins.map((n) => `<td class="num">${p.scores && p.scores[n] !== undefined ? p.scores[n] : ""}</td>`).join("") + `<td>${esc(p.reason || "")}</td></tr>`).join("") + "</tbody></table>";
      const tied = v.tiedPlacements || [];
      if (tied.length > 1) h += `<p class="note">${esc(tied.join(", "))} tied for the best score: ${v.tieBreak === "random" ? "one picked at random (--tie-break random, seeded)" : "the first in generation order taken (upstream picks at random; --tie-break random does too)"}</p>`;
    } else if (P.length && !P[0].feasible) h += `<p>on all ${P[0].nodes} node(s): infeasible${P[0].reason ? ": " + esc(P[0].reason) : ""}</p>`;
    const c = v.condition;
    h += `<p>${v.status ? `<b class="status-1">not scheduled</b>: ${esc(v.status)}${v.reason ? " (" + esc(v.reason) + ")" : ""}` : `<b class="status-0">${v.placement ? "bound to placement " + esc(v.placement) : "scheduled"}</b>`}` +
      (c ? `; PodGroupScheduled ${esc(c.status)} (${esc(c.reason)})${c.message && c.message !== v.status ? ": " + esc(c.message) : ""}` : "") + "</p>";
    return h;
  }

  // --- the pod list: filtered and paginated; details drawn when a row is opened ---
  const statusSel = $("status");
  D.statuses.forEach((s, i) => { const o = document.createElement("option"); o.value = String(i); o.textContent = s; statusSel.appendChild(o); });
  const node = (i) => (i >= 0 ? D.nodes[i] : "");
  const haystack = D.pods.map((p) => (p[0] + "/" + p[1] + "\n" + D.messages[p[5]] + "\n" + node(p[3])).toLowerCase());
  let shown = D.pods.map((_, i) => i);
  let page = 0;
  let reason = -1;  // a reason clicked in the table above: only its pods
  let open = -1;  // the pod whose details are drawn under its row
  let openHtml = "";

  function filter() {
    const words = $("search").value.toLowerCase().split(/\s+/).filter(Boolean);
    const st = statusSel.value;
    shown = [];
    for (let i = 0; i < D.pods.length; i++) {
      if (st !== "" && D.pods[i][2] !== +st) continue;
      if (reason >= 0 && D.pods[i][5] !== reason) continue;
      if (groupPods && !groupPods.has(i)) continue;
      const h = haystack[i];
      if (words.every((w) => h.includes(w))) shown.push(i);
    }
    page = 0;
    draw();
  }

  function draw() {
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    const rows = shown.slice(page * PAGE, page * PAGE + PAGE).map((i) => {
      const p = D.pods[i];
      const row = `<tr data-i="${i}"${i === open ? ' class="open"' : ""}><td>${esc(p[0])}</td><td>${esc(p[1])}</td>` +
        `<td class="status-${p[2]}">${esc(D.statuses[p[2]])}</td><td>${esc(node(p[3]))}</td><td class="num">${p[4]}</td>` +
        `<td class="msg" title="${esc(D.messages[p[5]])}">${esc(D.messages[p[5]])}</td></tr>`;
      return i === open ? row + `<tr class="detail-row"><td colspan="6"><div id="detail">${openHtml}</div></td></tr>` : row;
    });
    document.querySelector("#pods tbody").innerHTML = rows.join("") ||
      '<tr><td colspan="6" class="note">no pod matches</td></tr>';
    $("page").textContent = `${shown.length} pod(s), page ${page + 1} of ${pages}`;
    $("prev").disabled = page === 0;
    $("next").disabled = page >= pages - 1;
  }

  function scoresTable(d) {
    const head = D.scorePlugins[d.sp].map((p) => `<th class="num">${esc(p)}</th>`).join("");
    const body = d.s.map(([n, total, by]) => `<tr${n === d.c ? ' class="chosen"' : ""}><td>${esc(node(n))}${n === d.c ? " (chosen)" : ""}</td>` +
      `<td class="num">${total}</td>${by.map((v) => `<td class="num">${v}</td>`).join("")}</tr>`).join("");
    return `<h4>Weighted scores: best nodes and the chosen one</h4><table><thead><tr><th>node</th><th class="num">total</th>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }

  const text = (v) => (typeof v === "string" ? v : JSON.stringify(v));
  function extra(name, v) {
    if (name === "devices") {
      const list = Array.isArray(v) ? v : [v];
      return `<h4>Allocated devices</h4><ul class="plain">${list.map((d) => `<li><code>${esc(text(d))}</code></li>`).join("")}</ul>`;
    }
    if (name === "permit") {
      let h = `<h4>Permit</h4><p>${esc(v.code)}${v.plugin ? " (" + esc(v.plugin) + ")" : ""}${v.message ? ": " + esc(v.message) : ""}</p>`;
      if (v.waits) h += `<ul class="plain">${v.waits.map((w) => `<li>${esc(w.plugin)}: wait up to ${esc(w.timeout)}${w.reason ? ", " + esc(w.reason) : ""}</li>`).join("")}</ul>`;
      if (v.outcome) h += `<p>${esc(v.outcome)} after ${esc(v.waited)} s</p>`;
      return h;
    }
    if (name === "binding") {
      return `<h4>Binding cycle</h4><p>${esc(v.result)}${v.stage ? " at " + esc(v.stage) : ""}${v.plugin ? " (" + esc(v.plugin) + ")" : ""}${v.message ? ": " + esc(v.message) : ""}</p>`;
    }
    if (name === "walk") {
      return `<p class="note">node walk: from index ${esc(v.start)}, ${esc(v.evaluated)} node(s) visited, ${esc(v.feasibleFound)} feasible found` +
        `${v.hint && v.hint !== "none" ? ", hint " + esc(v.hint) + (v.hintNode ? " (" + esc(v.hintNode) + ")" : "") : ""}</p>`;
    }
    return `<h4>${esc(name)}</h4><code>${esc(text(v))}</code>`;
  }

  function detail(i) {
    const p = D.pods[i];
    const d = D.details[p[6]];
    let h = `<h3>${esc(p[0] + "/" + p[1])}: <span class="status-${p[2]}">${esc(D.statuses[p[2]])}</span>${p[3] >= 0 ? " on " + esc(node(p[3])) : ""}</h3>`;
    if (D.messages[p[5]]) h += `<p>${esc(D.messages[p[5]])}</p>`;
    if (d.a !== undefined) h += `<p class="note">attempt ${d.a} (profile ${esc(d.p)}): ${d.ev} node(s) evaluated${d.fe ? ", " + d.fe + " feasible" : ""}</p>`;
    if (d.g !== undefined) h += groupCycle(D.groupCycles[d.g]);  // the group cycle first: it decided the rest
    if (d.pf) h += `<h4>PreFilter</h4><p>${esc(d.pf[0])}: ${esc(d.pf[2].join("; ") || d.pf[1])} (${d.pf[3]} node(s))</p>`;
    if (d.f) h += "<h4>Filter verdicts, grouped by reason</h4><table><thead><tr><th class=\"num\">nodes</th><th>plugin</th><th>reason</th><th>code</th><th>for example</th></tr></thead><tbody>" +
      d.f.map(([plugin, code, reasons, n, nodes]) => `<tr><td class="num">${n}</td><td>${esc(plugin || "extender")}</td><td>${esc(reasons.join("; ") || code)}</td>` +
        `<td title="${code === "UnschedulableAndUnresolvable" ? "preemption cannot help on these nodes" : "preemption may help on these nodes"}">${esc(code)}</td><td>${esc(nodes.join(", "))}</td></tr>`).join("") + "</tbody></table>";
    if (d.s) h += scoresTable(d);
    if (d.pre) {
      const pre = d.pre;
      h += "<h4>Preemption</h4>" + (pre.nominatedNode
        ? `<p>would help: nominated to <b>${esc(pre.nominatedNode)}</b>, evicting ${pre.victims.length} pod(s)</p><ul class="plain">${pre.victims.map((v) => `<li>${esc(v)}</li>`).join("")}</ul>`
        : `<p>would not help: ${esc(pre.message)}</p>`);
    }
    if (d.v) h += `<h4>Pods this pod's preemption evicted</h4><ul class="plain">${d.v.map(([v, n]) => `<li>${esc(v)} on ${esc(n)}</li>`).join("")}</ul>`;
    if (d.vo) h += `<p class="warn">evicted by the preemption of ${esc(d.vo)}</p>`;
    if (d.x) for (const [k, v] of Object.entries(d.x)) h += extra(k, v);
    if (open === i) { open = -1; draw(); return; }  // a second click closes it
    openHtml = h;
    open = i;
    const at = shown.indexOf(i);
    if (at >= 0) page = Math.floor(at / PAGE);
    draw();
  }

  document.querySelector("#pods tbody").addEventListener("click", (e) => {
    if (e.target.closest("#detail")) return;
    const tr = e.target.closest("tr[data-i]");
    if (tr) { detail(+tr.dataset.i); history.replaceState(null, "", "#pod=" + encodeURIComponent(D.pods[+tr.dataset.i][0] + "/" + D.pods[+tr.dataset.i][1])); }
  });
  let timer = 0;
  $("search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(filter, 120); });
  statusSel.addEventListener("change", filter);
  $("reason-clear").addEventListener("click", () => { reason = -1; $("reason-chip").hidden = true; filter(); });
  $("group-clear").addEventListener("click", () => { groupPods = null; $("group-chip").hidden = true; filter(); });
  $("prev").addEventListener("click", () => { page--; draw(); });
  $("next").addEventListener("click", () => { page++; draw(); });
  draw();
  const m = /#pod=(.+)$/.exec(location.hash);
  if (m) {
    const key = decodeURIComponent(m[1]);
    const i = D.pods.findIndex((p) => p[0] + "/" + p[1] === key);
    if (i >= 0) detail(i);
  }
})();
