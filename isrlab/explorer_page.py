"""The single page of ``isrlab explore``: HTML, CSS and plain JavaScript (no build step).

The script asks ``/api/view`` for the session, draws the path, the enabled actions, the state
table (changed rows as old -> new, values in Kafka's words beneath) and the violated
invariants, and inlines ``/api/chart.svg``.

Every state has an address: the URL's hash ``#i=INIT;at=N;p=LABEL|LABEL|...`` (labels
URI-encoded) names the initial state, the path by its labels and the state under the cursor.
Each move pushes a history entry, so the browser's Back and Forward step through the moves
and a copied link opens the same path and state (``/api/restore``).  Keys: Left/Right (or
k/j) back and forward, Home/End the first and last state, 1-9 take the n-th action shown,
``/`` the filter, Escape clears it, ``?`` lists the keys.  The filter narrows the enabled
actions and the path to those whose label contains its text.

Layout: three columns (controls, state, chart) from 1,400 px if the chart's column gives
each lifeline 125 px (5 lifelines, 3 brokers, at 1,600 px; 8 lifelines, 6 brokers, from
1,942 px); otherwise the chart goes under the other two; under 760 px the three panels are
one column (controls, state, chart).  Each panel scrolls on its own (the page scrolls only
in the one-column layout).  The chart is laid out by the server for its panel's width / 0.85
(``/api/chart.svg?width=N``, again after a resize): the lifelines share that width, the
widest cut to a common width and their notes wrapped (``checker.chart.fit_chart``); it is
drawn at the panel's width (its 12 px text >= 10 px), and scrolls sideways only when even
its narrowest lifelines (92 px each) do not fit.  Once its row of lifeline names is
scrolled out of the panel, a copy of that row on an opaque band (``#lanes``) stays at the
panel's top, the rows passing beneath.  After a bounded check its result is scrolled into
view in the controls panel.
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>isrlab explore</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
 header{background:#3d5a80;color:#fff;padding:8px 14px;font-size:16px;display:flex;
        gap:14px;align-items:baseline;flex-wrap:wrap}
 header b{font-family:monospace}
 header .keys{font-size:12px;opacity:.85;margin-left:auto}
 header #settings{font:12px monospace;opacity:.9;flex:1 1 0;min-width:0;white-space:nowrap;
                  overflow:hidden;text-overflow:ellipsis}
 main{display:grid;grid-template-columns:290px minmax(0,1fr);gap:10px;padding:10px}
 section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 10px;
         overflow:auto;box-sizing:border-box;min-width:0}
 #controls,#state-section{height:calc(56vh - 30px)}
 #controls{overflow-x:hidden}
 input[type=file]{max-width:100%}
 #chart-section{grid-column:1 / -1;height:calc(44vh - 40px)}
 @media (max-width:759px){
  main{grid-template-columns:minmax(0,1fr)}
  #controls{height:auto;max-height:calc(56vh - 30px)}
 }
 @media (min-width:1400px){
  body:not(.stack) main{grid-template-columns:290px minmax(390px,460px) minmax(0,1fr)}
  body:not(.stack) #controls,body:not(.stack) #state-section,
  body:not(.stack) #chart-section{height:calc(100vh - 66px)}
  body:not(.stack) #chart-section{grid-column:auto}
 }
 h3{font:bold 13px monospace;margin:6px 0;word-break:break-word}
 h2{font-size:13px;text-transform:uppercase;color:#3d5a80;margin:10px 0 6px}
 button{font:12px monospace;margin:2px 0;padding:3px 6px;cursor:pointer;text-align:left}
 .action{display:block;width:100%;white-space:normal;word-break:break-word}
 .action kbd{display:inline-block;min-width:1.2em;color:#3d5a80;font-weight:bold}
 input#filter{width:100%;box-sizing:border-box;font:12px monospace;padding:4px;margin:4px 0}
 ol{padding-left:30px;margin:4px 0;font:12px monospace}
 ol li{cursor:pointer;padding:1px 2px;word-break:break-word}
 ol li.current{background:#dbeafe;font-weight:bold}
 .hidden{display:none !important}
 table{border-collapse:collapse;font:12px monospace;width:100%}
 td{border-bottom:1px solid #eee;padding:2px 4px;vertical-align:top;word-break:break-word}
 td:first-child{color:#555;white-space:nowrap;width:1%}
 tr.changed td{background:#fff3b0}
 tr.changed .new{font-weight:bold}
 .old{color:#8a6d00;text-decoration:line-through}
 .arrow{color:#8a6d00;padding:0 4px}
 .words{display:block;color:#3d5a80;font-family:system-ui,sans-serif;font-size:11px}
 #violated div{background:#fdecea;border:1px solid #c0392b;color:#8e1b10;padding:6px;
               margin-bottom:6px;font-size:13px}
 #error{color:#c0392b;font-size:13px}
 #check-result{font:12px monospace;white-space:pre-wrap;word-break:break-word}
 #chart svg{max-width:none;height:auto;display:block}
 #lanes{position:sticky;top:-8px;z-index:2;height:0;pointer-events:none}
 #lanes svg{position:absolute;left:0;top:0;display:block;box-shadow:0 2px 3px #0002}
 #lanes.away{visibility:hidden}
 .muted{color:#777;font-size:12px}
 #help{position:fixed;right:16px;top:48px;background:#fff;border:1px solid #3d5a80;
       border-radius:6px;padding:10px 14px;font-size:13px;box-shadow:0 2px 8px #0003}
 #help table{font:13px system-ui,sans-serif;width:auto}
</style></head>
<body>
<header>isrlab explore &mdash; <b id="title"></b>
 <span id="settings"></span>
 <span class="keys">keys: &larr;/&rarr; back/forward &middot; 1&ndash;9 take &middot;
 / filter &middot; ? help</span></header>
<main>
 <section id="controls">
  <div id="inits"></div>
  <button id="back" title="Left arrow or k">&larr; back</button>
  <button id="forward" title="Right arrow or j">forward &rarr;</button>
  <span class="muted" id="position"></span>
  <div id="error"></div>
  <input id="filter" type="search" placeholder="filter actions and path  ( / )"
   autocomplete="off">
  <h2>Enabled actions <span class="muted" id="enabled-count"></span></h2><div id="enabled"></div>
  <h2>Path <span class="muted" id="path-count"></span></h2><ol id="path" start="1"></ol>
  <a id="download" href="/api/path.itf.json" download="path.itf.json">save the path as ITF</a>
  <h2>Load a counterexample (ITF)</h2>
  <input type="file" id="trace-file" accept=".json,application/json">
  <h2>Bounded check from this state</h2>
  <label>levels <input id="depth" type="number" value="8" min="1" max="100"
   style="width:4em"></label> <button id="run-check">check</button>
  <div id="check-result"></div>
  <button id="append" style="display:none">append its counterexample to the path</button>
 </section>
 <section id="state-section">
  <div id="violated"></div>
  <h2>State</h2><h3 id="state-number"></h3>
  <table><tbody id="table"></tbody></table>
  <p class="muted">Highlighted: changed by the step into this state (old &rarr; new).
  Blue: the value in Kafka's words.</p>
 </section>
 <section id="chart-section"><h2>Sequence chart</h2><div id="lanes" class="away"></div>
  <div id="chart"></div></section>
</main>
<div id="help" class="hidden"><b>Keys</b><table>
 <tr><td>&larr; or k</td><td>back one state</td></tr>
 <tr><td>&rarr; or j</td><td>forward one state</td></tr>
 <tr><td>Home / End</td><td>first / last state of the path</td></tr>
 <tr><td>1 &hellip; 9</td><td>take the n-th enabled action shown</td></tr>
 <tr><td>/</td><td>filter actions and path</td></tr>
 <tr><td>Esc</td><td>clear the filter, close this</td></tr>
 <tr><td>?</td><td>this list</td></tr></table>
 <p class="muted">Back and Forward of the browser step through your moves; the address
 names this path and state, so a copied link opens it.</p></div>
<script>
const $ = (id) => document.getElementById(id);
let shown = 0, current = null, checked = false;
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function address(v) {
  return '#i=' + v.init + ';at=' + v.cursor + ';p=' +
    v.path.slice(1).map(encodeURIComponent).join('|');
}
function parseAddress(hash) {
  const out = {};
  for (const part of hash.replace(/^#/, '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) out[part.slice(0, at)] = part.slice(at + 1);
  }
  if (!('i' in out) || !('at' in out)) return null;
  const labels = out.p ? out.p.split('|').map(decodeURIComponent) : [];
  return {init: Number(out.i), cursor: Number(out.at), path: labels};
}
async function call(method, url, body, fromHistory) {
  const options = {method: method, headers: {'X-Isrlab': '1'}};
  if (body !== undefined) {
    options.body = body; options.headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(url, options);
  const data = await response.json();
  if (!response.ok) { $('error').textContent = data.error; bump(); return; }
  $('error').textContent = '';
  await show(data, fromHistory);
}
function bump() { shown += 1; document.body.dataset.shown = String(shown); }
function applyFilter() {
  const text = $('filter').value.trim().toLowerCase();
  let visible = 0;
  for (const b of document.querySelectorAll('#enabled button.action')) {
    const hit = !text || b.dataset.label.toLowerCase().includes(text);
    b.classList.toggle('hidden', !hit);
    if (hit) { visible += 1; b.querySelector('kbd').textContent = visible <= 9 ? visible : ''; }
  }
  let onPath = 0;
  for (const li of document.querySelectorAll('#path li')) {
    const hit = !text || li.dataset.label.toLowerCase().includes(text);
    li.classList.toggle('hidden', !hit);
    if (hit) onPath += 1;
  }
  const n = document.querySelectorAll('#enabled button.action').length;
  const m = document.querySelectorAll('#path li').length;
  $('enabled-count').textContent = text ? visible + ' of ' + n : String(n);
  $('path-count').textContent = text ? onPath + ' of ' + m : String(m);
}
function nameCell(name) {
  // a long name (con_partition_metadata['last_known_elr']) may break before its keys only
  const td = el('td');
  name.split(/(?=\\[)/).forEach((part, i) => {
    if (i) td.appendChild(document.createElement('wbr'));
    td.appendChild(document.createTextNode(part));
  });
  return td;
}
function valueCell(row) {
  const td = el('td');
  if (row.changed && row.before !== null) {
    td.appendChild(el('span', row.before, 'old'));
    td.appendChild(el('span', '\\u2192', 'arrow'));
  }
  td.appendChild(el('span', row.value, 'new'));
  if (row.words) td.appendChild(el('span', row.words, 'words'));
  return td;
}
async function show(v, fromHistory) {
  current = v;
  $('title').textContent = v.title;
  $('settings').textContent = v.settings;  // one line; the whole of it on hover
  $('settings').title = 'parameters that differ from the defaults: ' + v.settings;
  const inits = $('inits'); inits.replaceChildren();
  for (let k = 0; k < v.inits; k++) {
    const b = el('button', v.inits > 1 ? 'initial state ' + (k + 1) : 'restart from Init');
    b.onclick = () => call('POST', '/api/init/' + k); inits.appendChild(b);
  }
  $('position').textContent = 'state ' + (v.cursor + 1) + ' of ' + v.path.length;
  $('back').disabled = v.cursor === 0;
  $('forward').disabled = v.cursor === v.path.length - 1;
  const enabled = $('enabled'); enabled.replaceChildren();
  v.enabled.forEach((label, i) => {
    const b = el('button', undefined, 'action');
    b.appendChild(el('kbd')); b.appendChild(document.createTextNode(' ' + label));
    b.dataset.label = label; b.dataset.index = i;
    b.onclick = () => call('POST', '/api/step/' + i); enabled.appendChild(b);
  });
  if (v.evaluation_error) enabled.appendChild(
    el('span', 'none: the spec cannot evaluate the next step: ' + v.evaluation_error, 'muted'));
  else if (!v.enabled.length) enabled.appendChild(el('span', 'none (deadlock)', 'muted'));
  const path = $('path'); path.replaceChildren();
  v.path.forEach((label, n) => {
    const li = el('li', label, n === v.cursor ? 'current' : '');
    li.value = n + 1; li.dataset.label = label;
    li.onclick = () => call('POST', '/api/goto/' + n); path.appendChild(li);
  });
  applyFilter();
  $('state-number').textContent = (v.cursor + 1) + ': ' + v.path[v.cursor];
  const table = $('table'); table.replaceChildren();
  for (const row of v.table) {
    const tr = el('tr', undefined, row.changed ? 'changed' : '');
    tr.appendChild(nameCell(row.name)); tr.appendChild(valueCell(row));
    table.appendChild(tr);
  }
  const bad = $('violated'); bad.replaceChildren();
  if (v.evaluation_error) {  // the model's own error, as TLC's: no step can be taken here
    const d = el('div'); d.appendChild(el('b', 'Evaluation error'));
    d.appendChild(el('div', 'the model cannot evaluate the next step of this state: ' +
                            v.evaluation_error));
    bad.appendChild(d);
  }
  for (const p of v.violated) {
    const d = el('div'); d.appendChild(el('b', 'Violated: ' + p.name));
    d.appendChild(el('div', p.words));
    if (p.why) d.appendChild(el('div', 'Why: ' + p.why));
    bad.appendChild(d);
  }
  const c = v.check;
  $('check-result').textContent = c.summary ? c.summary +
      (c.violation ? '\\ncounterexample: ' + c.steps.join(' -> ') : '') +
      (c.explanation ? '\\nwhy: ' + c.explanation : '') : '';
  $('append').style.display = c.violation ? 'inline-block' : 'none';
  const hash = address(v);
  if (location.hash !== hash) {
    if (fromHistory || !location.hash) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
  }
  await loadChart();
  within($('chart-section'), document.getElementById('current-row'));
  showLanes();
  // after a check its result (below the path) comes into view, else the current state
  within($('controls'), checked && c.summary ? $('check-result')
                                             : document.querySelector('#path li.current'));
  checked = false;
  document.body.dataset.ready = String(v.cursor) + '/' + v.path.length;
  bump();
}
const SMALLEST = 0.8;  // the chart shrinks to fit, but its 12 px text never below 9.6 px
const ASK = 0.85;  // the server lays the chart out for the panel's width / ASK
const WIDE = 1400, BESIDE = 812, LANE = 125, GUTTER = 130;
let lifelines = 0;
function stack() {
  // from 1,400 px the chart is a third column (the window less 812 px: the controls,
  // the state, gaps) if its lifelines get 125 px each there, else it goes under the others
  const beside = window.innerWidth - BESIDE;
  const under = window.innerWidth >= WIDE && beside < lifelines * LANE + GUTTER;
  if (document.body.classList.contains('stack') === under) return false;
  document.body.classList.toggle('stack', under);
  return true;
}
async function loadChart() {
  // the lifelines share the panel's width (their notes wrapped), drawn at >= 85 %
  const room = Math.max(200, Math.floor($('chart').clientWidth / ASK));
  const svg = await fetch('/api/chart.svg?width=' + room);
  $('chart').innerHTML = await svg.text();
  lifelines = document.querySelectorAll('#chart svg rect.lane').length;
  if (stack()) return loadChart();  // the panel's width changed: lay it out again
  fitChart();
}
function fitChart() {
  const svg = document.querySelector('#chart svg');
  if (!svg) return;
  const natural = Number(svg.getAttribute('width'));
  const room = $('chart').clientWidth;
  svg.style.width = (natural <= room ? natural : Math.max(room, natural * SMALLEST)) + 'px';
  placeLanes();
}
function heads() {
  // the chart's lifeline names (centred bold texts on its first line of boxes)
  const all = [...document.querySelectorAll('#chart svg text.head[text-anchor="middle"]')];
  if (!all.length) return [];
  const y = Math.min(...all.map((t) => Number(t.getAttribute('y'))));
  return all.filter((t) => Number(t.getAttribute('y')) === y);
}
const SVGNS = 'http://www.w3.org/2000/svg';
function placeLanes() {
  // once the chart's own row of lifeline names is scrolled out of the panel, a copy of it
  // stays at the panel's top on an opaque band: the rows pass beneath it, no note ever
  // shows through a name (the panel scrolls both ways; the band follows sideways)
  const lanes = $('lanes'); lanes.replaceChildren();
  const svg = document.querySelector('#chart svg');
  const parts = svg ? [...svg.querySelectorAll('.lane')] : [];
  const boxes = parts.filter((e) => e.tagName === 'rect');
  if (!boxes.length) return;
  const top = Math.min(...boxes.map((r) => Number(r.getAttribute('y')))) - 4;
  const tall = Math.max(...boxes.map((r) => Number(r.getAttribute('height')))) + 8;
  const natural = Number(svg.getAttribute('width'));
  const scale = svg.getBoundingClientRect().width / natural;
  const band = document.createElementNS(SVGNS, 'svg');
  band.setAttribute('viewBox', '0 ' + top + ' ' + natural + ' ' + tall);
  band.setAttribute('width', String(natural * scale));
  band.setAttribute('height', String(tall * scale));
  const back = document.createElementNS(SVGNS, 'rect');
  for (const [k, v] of [['x', 0], ['y', top], ['width', natural], ['height', tall],
                        ['fill', '#fafafa']]) back.setAttribute(k, String(v));
  band.appendChild(back);
  for (const e of parts) band.appendChild(e.cloneNode(true));
  lanes.appendChild(band);
  showLanes();
}
function showLanes() {
  const first = heads()[0];
  const top = $('chart-section').getBoundingClientRect().top;
  $('lanes').classList.toggle('away', !first || first.getBoundingClientRect().top >= top);
}
$('chart-section').addEventListener('scroll', showLanes);
function within(box, target) {
  // scroll one panel (never the window) so that target is in view
  if (!target) return;
  const b = box.getBoundingClientRect(), t = target.getBoundingClientRect();
  if (t.top < b.top || t.bottom > b.bottom) {
    box.scrollTop += t.top - b.top - (box.clientHeight - Math.min(t.height, box.clientHeight)) / 2;
  }
}
let resizing = 0;
window.addEventListener('resize', () => {
  stack(); fitChart(); clearTimeout(resizing); resizing = setTimeout(loadChart, 250);
});
function go(n) {
  if (!current) return;
  const target = Math.max(0, Math.min(n, current.path.length - 1));
  if (target !== current.cursor) call('POST', '/api/goto/' + target);
}
async function follow(hash, fromHistory) {
  const wanted = parseAddress(hash);
  if (!wanted) return call('GET', '/api/view', undefined, fromHistory);
  if (current && hash === address(current)) return;
  if (current && wanted.init === current.init &&
      wanted.path.join('\\n') === current.path.slice(1).join('\\n')) {
    return call('POST', '/api/goto/' + wanted.cursor, undefined, fromHistory);
  }
  return call('POST', '/api/restore', JSON.stringify(wanted), fromHistory);
}
window.addEventListener('popstate', () => follow(location.hash, true));
document.addEventListener('keydown', (e) => {
  const typing = e.target.tagName === 'INPUT';
  if (e.key === 'Escape') {
    $('filter').value = ''; applyFilter(); $('filter').blur();
    $('help').classList.add('hidden'); return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === 'ArrowLeft' || e.key === 'k') { go(current.cursor - 1); e.preventDefault(); }
  else if (e.key === 'ArrowRight' || e.key === 'j') { go(current.cursor + 1); e.preventDefault(); }
  else if (e.key === 'Home') { go(0); e.preventDefault(); }
  else if (e.key === 'End') { go(current.path.length - 1); e.preventDefault(); }
  else if (e.key === '/') { $('filter').focus(); e.preventDefault(); }
  else if (e.key === '?') { $('help').classList.toggle('hidden'); }
  else if (/^[1-9]$/.test(e.key)) {
    const visible = [...document.querySelectorAll('#enabled button.action:not(.hidden)')];
    const b = visible[Number(e.key) - 1];
    if (b) { b.click(); e.preventDefault(); }
  }
});
$('filter').addEventListener('input', applyFilter);
$('filter').addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    const first = document.querySelector('#enabled button.action:not(.hidden)');
    if (first) first.click();
  }
});
$('back').onclick = () => go(current.cursor - 1);
$('forward').onclick = () => go(current.cursor + 1);
$('run-check').onclick = () => {
  checked = true; call('POST', '/api/check/' + $('depth').value);
};
$('append').onclick = () => call('POST', '/api/append');
$('trace-file').onchange = async (e) => {
  const file = e.target.files[0];
  if (file) await call('POST', '/api/trace', await file.text());
};
follow(location.hash, true);
</script>
</body></html>
"""
