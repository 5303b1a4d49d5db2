"""The single page of ``isrlab explore``: HTML, CSS and plain JavaScript (no build step).

The script asks ``/api/view`` for the session, draws the path, the enabled actions, the state
table (changed rows highlighted) and the violated invariants, and inlines ``/api/chart.svg``.
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>isrlab explore</title>
<style>
 body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
 header{background:#3d5a80;color:#fff;padding:8px 14px;font-size:16px}
 header b{font-family:monospace}
 main{display:grid;grid-template-columns:300px 430px minmax(0,1fr);gap:12px;padding:12px}
 section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 10px;
         overflow:auto;max-height:calc(100vh - 70px);box-sizing:border-box}
 h3{font:bold 13px monospace;margin:6px 0;word-break:break-all}
 h2{font-size:13px;text-transform:uppercase;color:#3d5a80;margin:10px 0 6px}
 button{font:12px monospace;margin:2px 0;padding:3px 6px;cursor:pointer;text-align:left}
 .action{display:block;width:100%;white-space:normal;word-break:break-all}
 ol{padding-left:26px;margin:4px 0;font:12px monospace}
 ol li{cursor:pointer;padding:1px 2px;word-break:break-all}
 ol li.current{background:#dbeafe;font-weight:bold}
 table{border-collapse:collapse;font:12px monospace;width:100%}
 td{border-bottom:1px solid #eee;padding:2px 4px;vertical-align:top;word-break:break-all}
 td:first-child{color:#555;white-space:nowrap}
 tr.changed td{background:#fff3b0;font-weight:bold}
 #violated div{background:#fdecea;border:1px solid #c0392b;color:#8e1b10;padding:6px;
               margin-bottom:6px;font-size:13px}
 #error{color:#c0392b;font-size:13px}
 #check-result{font:12px monospace;white-space:pre-wrap}
 #chart svg{width:100%;min-width:760px;height:auto}
 .muted{color:#777;font-size:12px}
</style></head>
<body>
<header>isrlab explore &mdash; <b id="title"></b></header>
<main>
 <section id="controls">
  <div id="inits"></div>
  <button id="back">&larr; back</button> <button id="forward">forward &rarr;</button>
  <span class="muted" id="position"></span>
  <div id="error"></div>
  <h2>Enabled actions</h2><div id="enabled"></div>
  <h2>Path</h2><ol id="path" start="1"></ol>
  <a id="download" href="/api/path.itf.json" download="path.itf.json">save the path as ITF</a>
  <h2>Load a counterexample (ITF)</h2>
  <input type="file" id="trace-file" accept=".json,application/json">
  <h2>Bounded check from this state</h2>
  <label>levels <input id="depth" type="number" value="8" min="1" max="100"
   style="width:4em"></label> <button id="run-check">check</button>
  <div id="check-result"></div>
  <button id="append" style="display:none">append its counterexample to the path</button>
 </section>
 <section>
  <div id="violated"></div>
  <h2>State</h2><h3 id="state-number"></h3>
  <table><tbody id="table"></tbody></table>
  <p class="muted">Highlighted: changed by the step into this state.</p>
 </section>
 <section><h2>Sequence chart</h2><div id="chart"></div></section>
</main>
<script>
const $ = (id) => document.getElementById(id);
let shown = 0;
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
async function call(method, url, body) {
  const options = {method: method, headers: {'X-Isrlab': '1'}};
  if (body !== undefined) {
    options.body = body; options.headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(url, options);
  const data = await response.json();
  if (!response.ok) { $('error').textContent = data.error; return; }
  $('error').textContent = '';
  await show(data);
}
async function show(v) {
  $('title').textContent = v.title;
  const inits = $('inits'); inits.replaceChildren();
  for (let k = 0; k < v.inits; k++) {
    const b = el('button', v.inits > 1 ? 'initial state ' + (k + 1) : 'restart from Init');
    b.onclick = () => call('POST', '/api/init/' + k); inits.appendChild(b);
  }
  $('position').textContent = 'state ' + (v.cursor + 1) + ' of ' + v.path.length;
  $('back').disabled = v.cursor === 0;
  $('forward').disabled = v.cursor === v.path.length - 1;
  $('back').dataset.target = v.cursor - 1; $('forward').dataset.target = v.cursor + 1;
  const enabled = $('enabled'); enabled.replaceChildren();
  v.enabled.forEach((label, i) => {
    const b = el('button', label, 'action');
    b.onclick = () => call('POST', '/api/step/' + i); enabled.appendChild(b);
  });
  if (!v.enabled.length) enabled.appendChild(el('span', 'none (deadlock)', 'muted'));
  const path = $('path'); path.replaceChildren();
  v.path.forEach((label, n) => {
    const li = el('li', label, n === v.cursor ? 'current' : '');
    li.onclick = () => call('POST', '/api/goto/' + n); path.appendChild(li);
  });
  $('state-number').textContent = (v.cursor + 1) + ': ' + v.path[v.cursor];
  const table = $('table'); table.replaceChildren();
  for (const row of v.table) {
    const tr = el('tr', undefined, row.changed ? 'changed' : '');
    tr.appendChild(el('td', row.name)); tr.appendChild(el('td', row.value));
    table.appendChild(tr);
  }
  const bad = $('violated'); bad.replaceChildren();
  for (const p of v.violated) {
    const d = el('div'); d.appendChild(el('b', 'Violated: ' + p.name));
    d.appendChild(el('div', p.words)); bad.appendChild(d);
  }
  const c = v.check;
  $('check-result').textContent = c.summary ? c.summary +
      (c.violation ? '\\ncounterexample: ' + c.steps.join(' -> ') : '') : '';
  $('append').style.display = c.violation ? 'inline-block' : 'none';
  const svg = await fetch('/api/chart.svg');
  $('chart').innerHTML = await svg.text();
  const row = document.getElementById('current-row');
  if (row) row.scrollIntoView({block: 'center'});
  document.body.dataset.ready = String(v.cursor) + '/' + v.path.length;
  shown += 1; document.body.dataset.shown = String(shown);
}
$('back').onclick = () => call('POST', '/api/goto/' + $('back').dataset.target);
$('forward').onclick = () => call('POST', '/api/goto/' + $('forward').dataset.target);
$('run-check').onclick = () => call('POST', '/api/check/' + $('depth').value);
$('append').onclick = () => call('POST', '/api/append');
$('trace-file').onchange = async (e) => {
  const file = e.target.files[0];
  if (file) await call('POST', '/api/trace', await file.text());
};
call('GET', '/api/view');
</script>
</body></html>
"""
