// SPDX-License-Identifier: Apache-2.0
// ddmon's web dashboard. It draws every view from its metadata (the JSON
// API of doc/web-api.md): a table from its columns (type, unit), a record
// from its fields, a blob from its media type. It knows no plugin by name;
// the few presentational choices key on generic properties:
//   - a string column named "state" is a state: its cell flashes when it
//     changes;
//   - a numeric column with unit "%" gets a sparkline of its recent values
//     per row (the CPU% of a thread);
//   - a record's numeric fields ending in "_bytes" are charted over the
//     last minutes (the headline's heap used and size), starting from the
//     server's history of the record (GET .../history) when a page opens;
//   - a blob with an image media type is shown as the image, with a legend
//     from a table of the same owner that has a "color" column (#rrggbb):
//     each distinct pair of its first text column and its colour;
//   - a "color" cell shows a swatch of its colour.
// Live: one EventSource on /api/stream; the history behind sparklines
// and charts is kept here, bounded. A VM that leaves the VM list keeps
// its page: its last views and charts, marked gone, its commands
// disabled, while it is one of the last GONE_KEPT VMs to leave; what the
// page holds of older ones is dropped (a dashboard left open for days
// holds a bounded amount).
'use strict';
(function () {
  const HISTORY = 300;      // chart samples kept per field (a few minutes)
  const SPARK = 40;         // sparkline samples per row
  const MAX_ROWS = 500;     // rows drawn per table
  const FOLDED_ROWS = 30;   // rows drawn until "all rows" is clicked
  const COLORS = ['#1a6fb5', '#e65100', '#2e7d32', '#6a1b9a', '#c62828', '#00838f'];
  const GONE_KEPT = 16;     // gone VMs whose last views, row and charts are kept

  const views = new Map();  // "vm\nname" -> view
  const left = new Map();   // "vm\nname" -> a VM's view as it was when removed
  const history = new Map(); // "vm\nname" -> {t: [], fields: {key: []}}
  const spark = new Map();   // "vm\nname\nrow\ncol" -> [values]
  const lastState = new Map(); // "vm\nname\nrow\ncol" -> state
  const seeded = new Set();    // records whose server-side history was asked for
  const unfolded = new Set();  // views whose rows are all shown
  const lastRow = new Map(); // VM key -> its last row of the VM list
  const goneOrder = [];      // VMs held here that left the VM list, oldest first
  let commands = null;
  let source = null, sourceVm;
  let dirty = new Set(), drawPending = false;

  function el(tag, attrs, ...kids) {
    const e = tag === 'svg' || tag === 'polyline' || tag === 'text' || tag === 'line'
      ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'onclick') e.addEventListener('click', v);
      else e.setAttribute(k, v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
    return e;
  }
  const id = (vm, name) => (vm || '') + '\n' + name;
  const route = () => {
    const m = /^#\/vm\/(.+)$/.exec(location.hash);
    return m ? decodeURIComponent(m[1]) : null;
  };

  // ------------------------------------------------------------ values
  function bytes(n) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0, v = Math.abs(n);
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (n < 0 ? '-' : '') + (i ? v.toFixed(1) : v) + ' ' + u[i];
  }
  function fmt(v, type, unit) {
    if (v === null || v === undefined) return '—';
    if (Array.isArray(v)) return v.length ? v.join(', ') : '—'; // a "list" column (plugins' chunks)
    if (type === 'bool' || typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v !== 'number') return String(v);
    if (unit === 'B') return bytes(v);
    if (unit === '%') return v.toFixed(1) + ' %';
    if (unit === 'addr') return '0x' + v.toString(16);
    if (unit === 'epoch_ms') { // a point in time: the browser's local date and time
      const d = new Date(v);
      return isNaN(d.getTime()) ? String(v) : d.toLocaleString();
    }
    if (unit === 'ms') return v >= 10000 ? (v / 1000).toFixed(1) + ' s' : v + ' ms';
    if (unit === 's') return v + ' s';
    return Number.isInteger(v) ? String(v) : v.toFixed(2);
  }
  const fieldFmt = (key, v) => fmt(v, null, key.endsWith('_bytes') ? 'B'
    : key.endsWith('_percent') ? '%' : key.endsWith('_ms') ? 'ms' : null);
  const numeric = (c) => c.type === 'int' || c.type === 'double';

  // ------------------------------------------------------------ stream
  function connect(vm) {
    if (source && sourceVm === vm) return;
    if (source) source.close();
    for (const k of [...views.keys()]) if (!k.startsWith('\n')) views.delete(k);
    sourceVm = vm;
    source = new EventSource('/api/stream' + (vm ? '?vm=' + encodeURIComponent(vm) : ''));
    source.onopen = () => live(true);
    source.onerror = () => {
      // A refused stream (a new server, a new token) is not retried.
      if (source.readyState === EventSource.CLOSED) live(false, 'disconnected: open the URL `ddmon web-url` prints');
      else live(false);
    };
    source.onmessage = (e) => onEvent(JSON.parse(e.data));
  }
  function live(on, why) {
    const l = document.getElementById('live');
    l.textContent = on ? 'live' : why || 'reconnecting…';
    l.className = on ? '' : 'off';
  }
  function onEvent(ev) {
    const key = id(ev.vm, ev.name);
    if (ev.event === 'removed') {
      if (ev.vm && views.has(key)) left.set(key, views.get(key));
      views.delete(key);
    } else if (ev.view) { views.set(key, ev.view); left.delete(key); remember(key, ev.view); }
    if (ev.view && !ev.vm && ev.name === 'vms') noteGone(ev.view);
    if (ev.view && ev.view.kind === 'record' && ev.vm && !seeded.has(key)) {
      seeded.add(key);
      fetch(ev.url + '/history').then((r) => r.ok ? r.json() : null).then((d) => { if (d) seed(key, d); });
    }
    else if (ev.too_big) fetch(ev.url).then((r) => r.ok ? r.json() : null)
      .then((v) => {
        if (!v) return;
        views.set(key, v);
        if (!ev.vm && ev.name === 'vms') noteGone(v);
        dirty.add(key);
        schedule();
      });
    dirty.add(key);
    schedule();
  }
  function schedule() {
    // A timer, not requestAnimationFrame: a tab in the background still
    // follows (at most ten draws a second).
    if (!drawPending) { drawPending = true; setTimeout(draw, 100); }
  }

  // The history behind charts and sparklines, bounded.
  function remember(key, v) {
    const now = Date.now() / 1000;
    if (v.kind === 'record' && v.fields) {
      let h = history.get(key);
      if (!h) history.set(key, h = { t: [], fields: {} });
      h.t.push(now);
      for (const [k, x] of Object.entries(v.fields))
        if (typeof x === 'number' && k.endsWith('_bytes')) (h.fields[k] = h.fields[k] || []).push(x);
      if (h.t.length > HISTORY) { h.t.shift(); for (const a of Object.values(h.fields)) if (a.length > HISTORY) a.shift(); }
    }
    if (v.kind === 'table' && v.columns && v.rows && v.rows.length <= MAX_ROWS) {
      const pct = Object.entries(v.columns).filter(([, c]) => numeric(c) && c.unit === '%').map(([k]) => k);
      for (const row of v.rows) for (const k of pct) {
        const sk = key + '\n' + rowId(v, row) + '\n' + k;
        const a = spark.get(sk) || [];
        a.push(typeof row[k] === 'number' ? row[k] : 0);
        if (a.length > SPARK) a.shift();
        spark.set(sk, a);
      }
    }
  }
  // The server's samples from before this page, in front of ours.
  function seed(key, d) {
    let h = history.get(key);
    if (!h) history.set(key, h = { t: [], fields: {} });
    const before = d.t.filter((t) => !h.t.length || t < h.t[0]);
    const n = before.length;
    if (!n) return;
    const names = new Set([...Object.keys(h.fields), ...Object.keys(d.fields).filter((k) => k.endsWith('_bytes'))]);
    for (const k of names) {
      const old = d.fields[k] ? d.fields[k].slice(0, n).map((x) => (x === null ? NaN : x)) : new Array(n).fill(NaN);
      const mine = h.fields[k] || [];
      h.fields[k] = old.concat(new Array(h.t.length - mine.length).fill(NaN), mine);
    }
    h.t = before.concat(h.t);
    while (h.t.length > HISTORY) { h.t.shift(); for (const a of Object.values(h.fields)) if (a.length > h.t.length) a.shift(); }
    dirty.add(key);
    schedule();
  }

  // The VMs this page holds anything of: views kept, a row, history.
  function heldVms() {
    const held = new Set(lastRow.keys());
    for (const keys of [left.keys(), history.keys(), spark.keys(), lastState.keys(), seeded, unfolded])
      for (const k of keys) held.add(k.slice(0, k.indexOf('\n')));
    held.delete(''); // the server's own views
    return held;
  }
  // A new VM list: the VMs held here that are not in it join goneOrder
  // (one that is back leaves it); past the last GONE_KEPT to leave, the
  // oldest are forgotten, except the one on screen.
  function noteGone(list) {
    const present = new Set((list.rows || []).map((r) => r.key));
    for (let i = goneOrder.length - 1; i >= 0; i--) if (present.has(goneOrder[i])) goneOrder.splice(i, 1);
    for (const vm of heldVms()) if (!present.has(vm) && !goneOrder.includes(vm)) goneOrder.push(vm);
    const here = route();
    for (let i = 0; goneOrder.length > GONE_KEPT && i < goneOrder.length;) {
      if (goneOrder[i] === here) { i++; continue; }
      forget(goneOrder[i]);
      goneOrder.splice(i, 1);
    }
  }
  function forget(vm) {
    const mine = (k) => k.startsWith(vm + '\n');
    for (const m of [left, history, spark, lastState]) for (const k of [...m.keys()]) if (mine(k)) m.delete(k);
    for (const set of [seeded, unfolded]) for (const k of [...set]) if (mine(k)) set.delete(k);
    lastRow.delete(vm);
  }

  function rowId(v, row) {
    const cols = Object.keys(v.columns || {});
    return cols.includes('id') ? row.id : cols.includes('key') ? row.key : row[cols[0]];
  }

  // ------------------------------------------------------------- pages
  function draw() {
    drawPending = false;
    const vm = route();
    const main = document.getElementById('main');
    if (main.dataset.page !== (vm || '')) {
      main.dataset.page = vm || '';
      main.replaceChildren();
      dirty = new Set(views.keys());
    }
    if (vm === null) drawList(main); else drawVm(main, vm);
    dirty.clear();
  }

  function drawList(main) {
    document.getElementById('crumb').textContent = 'virtual machines';
    const v = views.get(id(null, 'vms'));
    if (!dirty.has(id(null, 'vms')) && main.firstChild) return;
    const sec = el('section', { class: 'view', 'data-view': 'vms' },
      el('h2', { text: v ? v.title : 'Virtual machines' }));
    if (!v || !v.rows || v.rows.length === 0) sec.append(el('p', { class: 'muted', text: 'No VMs found yet.' }));
    else sec.append(table(v, id(null, 'vms'), (row) => {
      location.hash = '#/vm/' + encodeURIComponent(row.key);
    }));
    main.replaceChildren(sec);
  }

  // The VM left the VM list (it exited, or was disconnected).
  function vmGone(vm) {
    const list = views.get(id(null, 'vms'));
    return !!(list && list.rows && !list.rows.some((r) => r.key === vm));
  }
  function drawVm(main, vm) {
    const list = views.get(id(null, 'vms'));
    const row = list && list.rows ? list.rows.find((r) => r.key === vm) : null;
    const gone = vmGone(vm);
    if (row) lastRow.set(vm, row);
    const was = row || lastRow.get(vm);
    document.getElementById('crumb').textContent = (was
      ? (was.app || vm) + (was.pid ? ' (pid ' + was.pid + ')' : '') : vm) +
      ' · ' + (gone ? 'gone' : row ? row.state : '…');
    if (!main.querySelector('#commands')) {
      main.append(el('p', { class: 'gone', id: 'gone', hidden: 'hidden' }),
        el('section', { class: 'panel', id: 'commands' }, el('h2', { text: 'Commands' })),
        el('section', { class: 'panel', id: 'charts' }), el('div', { class: 'grid', id: 'views' }));
      drawCommands(vm);
    }
    const note = main.querySelector('#gone');
    note.hidden = !gone;
    note.textContent = gone ? 'This VM has left (it exited, or was disconnected): what it showed last stays below; its commands are off.' : '';
    for (const c of main.querySelectorAll('#commands button, #commands input')) c.disabled = gone || c.dataset.running === '1';
    // Live tables with a state first, then pictures, records, the rest.
    const rank = (v) => v.kind === 'table' && v.columns && v.columns.state ? 0
      : v.kind === 'blob' ? 1 : v.kind === 'record' ? 2 : 3;
    const shown = gone ? new Map([...left, ...views]) : views;
    const mine = [...shown.entries()].filter(([k]) => k.startsWith(vm + '\n'))
      .sort(([a, va], [b, vb]) => rank(va) - rank(vb) || a.localeCompare(b));
    const owners = new Set([...dirty].map((k) => (views.get(k) || {}).owner));
    const box = main.querySelector('#views');
    let prev = null;
    for (const [key, v] of mine) {
      const old = box.querySelector('[data-key="' + CSS.escape(key) + '"]');
      // An image's legend comes from another view of its owner.
      const stale = dirty.has(key) || (v.kind === 'blob' && owners.has(v.owner));
      if (old && !stale) { prev = old; continue; }
      const sec = drawView(key, v);
      if (old) old.replaceWith(sec);
      else if (prev) prev.after(sec);
      else box.prepend(sec);
      prev = sec;
    }
    for (const sec of [...box.children]) if (!shown.has(sec.dataset.key)) sec.remove();
    drawCharts(main.querySelector('#charts'), vm, shown);
  }

  function drawView(key, v) {
    const count = v.kind === 'table' && v.rows ? v.rows.length + ' rows · ' : '';
    // A table of many columns gets the page's width.
    const wide = v.kind === 'table' && Object.keys(v.columns || {}).length >= 6;
    const sec = el('section', { class: wide ? 'view wide' : 'view', 'data-key': key, 'data-view': v.name },
      el('h2', { text: v.title || v.name }, el('span', { class: 'meta', text: count + v.name + ' · v' + v.version })));
    if (v.kind === 'table') sec.append(v.rows && v.rows.length ? table(v, key) : el('p', { class: 'muted', text: 'empty' }));
    else if (v.kind === 'record') sec.append(record(v));
    else if (v.kind === 'blob') sec.append(blob(v));
    return sec;
  }

  function table(v, key, onRow) {
    const cols = Object.entries(v.columns || {});
    const pct = cols.filter(([, c]) => numeric(c) && c.unit === '%').map(([k]) => k);
    const head = el('tr', {});
    for (const [k, c] of cols) {
      head.append(el('th', { class: numeric(c) ? 'num' : null, text: c.name + (c.unit && c.unit !== 'addr' && c.unit !== 'list' && c.unit !== 'epoch_ms' ? ' (' + c.unit + ')' : '') }));
      if (pct.includes(k)) head.append(el('th', { text: 'trend' }));
    }
    const body = el('tbody', {});
    const shown = onRow || unfolded.has(key) ? MAX_ROWS : FOLDED_ROWS;
    for (const row of v.rows.slice(0, shown)) {
      const rid = rowId(v, row);
      const tr = el('tr', { 'data-row': rid, class: onRow ? 'vm-row' : null, 'data-key': onRow ? row.key : null });
      if (onRow) tr.addEventListener('click', () => onRow(row));
      for (const [k, c] of cols) {
        const td = el('td', { class: numeric(c) ? 'num' : null, 'data-col': k, text: fmt(row[k], c.type, c.unit) });
        if (k === 'color' && isColor(row[k])) td.prepend(swatch(row[k]));
        if (k === 'state' && c.type === 'str') {
          const sk = key + '\n' + rid + '\n' + k;
          td.classList.add('state', 'state-' + String(row[k]).replace(/[^a-z0-9-]/gi, ''));
          const before = lastState.get(sk);
          if (before !== undefined && before !== row[k]) td.classList.add('flash');
          lastState.set(sk, row[k]);
        }
        tr.append(td);
        if (pct.includes(k)) tr.append(el('td', {}, sparkline(spark.get(key + '\n' + rid + '\n' + k) || [])));
      }
      body.append(tr);
    }
    const t = el('table', {}, el('thead', {}, head), body);
    if (v.rows.length <= shown) return t;
    const more = el('p', { class: 'muted' }, (v.rows.length - shown) + ' more rows ');
    if (shown < MAX_ROWS) {
      const b = el('button', { text: 'show all' });
      b.addEventListener('click', () => { unfolded.add(key); dirty.add(key); schedule(); });
      more.append(b);
    } else {
      more.append('(the API has them all: ' + v.name + ')');
    }
    return el('div', {}, t, more);
  }

  function sparkline(values) {
    const w = 80, hgt = 18, max = Math.max(1, ...values);
    const pts = values.map((x, i) => (i * w / (SPARK - 1)).toFixed(1) + ',' + (hgt - 1 - (x / max) * (hgt - 2)).toFixed(1)).join(' ');
    return el('svg', { class: 'spark', width: w, height: hgt, viewBox: '0 0 ' + w + ' ' + hgt }, el('polyline', { points: pts }));
  }

  function record(v) {
    const dl = el('dl', { class: 'record' });
    for (const [k, x] of Object.entries(v.fields || {})) dl.append(el('dt', { text: k }), el('dd', { 'data-field': k, text: fieldFmt(k, x) }));
    if (!dl.firstChild) dl.append(el('dd', { class: 'muted', text: 'empty' }));
    return dl;
  }

  const isColor = (x) => typeof x === 'string' && /^#[0-9a-f]{6}$/i.test(x);
  function swatch(color) {
    const i = el('i', { class: 'swatch' });
    i.style.background = color;
    return i;
  }
  // The legend of an image: a table of the same VM and owner with colours.
  function legendFor(v) {
    for (const t of views.values()) {
      if (t.kind !== 'table' || t.vm !== v.vm || t.owner !== v.owner || !t.columns || !t.columns.color || !t.rows) continue;
      const label = Object.keys(t.columns).find((k) => k !== 'color' && t.columns[k].type === 'str');
      if (!label) continue;
      const seen = new Map();
      for (const r of t.rows) if (isColor(r.color) && !seen.has(r[label])) seen.set(r[label], r.color);
      if (!seen.size) continue;
      const box = el('div', { class: 'legend', 'data-legend': t.name });
      for (const [name, color] of [...seen].sort()) box.append(el('span', {}, swatch(color), String(name)));
      return box;
    }
    return null;
  }
  function blob(v) {
    if (!v.size_bytes) return el('p', { class: 'muted', text: 'no data yet' });
    if (/^image\//.test(v.media_type || '')) return el('div', {}, legendFor(v), el('img', { class: 'blob', src: v.data_url, alt: v.title || v.name }));
    return el('p', {}, el('a', { href: v.data_url, download: v.name, text: 'download ' + v.name + ' (' + bytes(v.size_bytes) + ', ' + v.media_type + ')' }));
  }

  // Charts: each record whose fields end in "_bytes", over time.
  function drawCharts(box, vm, shown) {
    const parts = [];
    for (const [key, h] of history) {
      if (!key.startsWith(vm + '\n') || h.t.length < 1 || !shown.has(key)) continue;
      const names = Object.keys(h.fields);
      if (!names.length) continue;
      parts.push(chart(shown.get(key), h, names));
    }
    box.replaceChildren(el('h2', { text: 'Over time' }));
    if (!parts.length) box.append(el('p', { class: 'muted', text: 'no figures yet' }));
    for (const p of parts) box.append(p);
  }
  function chart(v, h, names) {
    const W = 800, H = 180, L = 70, B = 20;
    const t0 = h.t[0], t1 = Math.max(h.t[h.t.length - 1], t0 + 1);
    let max = 1;
    for (const n of names) for (const x of h.fields[n]) if (Number.isFinite(x)) max = Math.max(max, x);
    const svg = el('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', 'data-chart': v.name });
    for (let i = 0; i <= 4; i++) {
      const y = (H - B) - i * (H - B - 10) / 4;
      svg.append(el('line', { x1: L, x2: W, y1: y, y2: y, stroke: '#e3e7eb' }), el('text', { x: 4, y: y + 4, text: bytes(max * i / 4) }));
    }
    const legend = el('div', { class: 'legend' });
    names.forEach((n, i) => {
      const a = h.fields[n], off = h.t.length - a.length;
      const pts = a.map((x, j) => Number.isFinite(x) ? (L + (h.t[j + off] - t0) / (t1 - t0) * (W - L)).toFixed(1) + ',' + ((H - B) - x / max * (H - B - 10)).toFixed(1) : null)
        .filter((p) => p !== null).join(' ');
      svg.append(el('polyline', { points: pts, stroke: COLORS[i % COLORS.length] }));
      const sw = el('i', {});
      sw.style.background = COLORS[i % COLORS.length];
      const last = a.filter(Number.isFinite).pop();
      legend.append(el('span', {}, sw, n + ': ' + (last === undefined ? '—' : bytes(last))));
    });
    svg.append(el('text', { x: L, y: H - 4, text: Math.round(t1 - t0) + ' s shown' }));
    return el('div', {}, el('div', { class: 'muted', text: (v.title || v.name) }), svg, legend);
  }

  // ---------------------------------------------------------- commands
  async function drawCommands(vm) {
    const box = document.getElementById('commands');
    if (!commands) {
      const r = await fetch('/api/commands');
      commands = r.ok ? (await r.json()).commands : {};
    }
    const out = el('div', { class: 'result' });
    for (const [name, c] of Object.entries(commands).sort()) {
      if (c.takes_vm === false) continue; // e.g. trace-summary FILE: not a VM's command
      const needs = needsArgs(name, c.usage || '');
      const input = needs ? el('input', { class: 'args', placeholder: 'arguments after the VM', 'data-command': name }) : null;
      const b = el('button', { title: (c.usage || '') + ' — ' + (c.summary || ''), 'data-command': name, text: name });
      b.addEventListener('click', () => run(vm, name, input, b, out));
      b.disabled = vmGone(vm);
      if (input) input.disabled = b.disabled;
      box.append(el('span', {}, b, input));
    }
    box.append(out);
  }
  // A usage like "gc PID" or "hprof VM [FILE] [...]" runs with the VM
  // alone; anything required after the VM asks for arguments.
  function needsArgs(name, usage) {
    let words = usage.split('|')[0].trim().split(/\s+/);
    if (words[0] === name) words.shift();
    words.shift(); // the VM
    return words.some((w) => w && !w.startsWith('['));
  }
  // Commands that end or change the VM for good ask first.
  const CONFIRM = { exit: 'Stop the VM {vm}? Its app ends.' };
  async function run(vm, name, input, button, out) {
    if (CONFIRM[name] && !window.confirm(CONFIRM[name].replace('{vm}', vm))) return;
    const args = input && input.value.trim() ? input.value.trim().split(/\s+/) : [];
    button.disabled = true;
    button.dataset.running = '1';
    out.className = 'result';
    out.replaceChildren(name + ': running…');
    try {
      const r = await fetch('/api/vms/' + encodeURIComponent(vm) + '/commands/' + encodeURIComponent(name), {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ args }) });
      const d = await r.json();
      out.className = 'result' + (d.ok ? '' : ' fail');
      out.replaceChildren(name + ': ' + (d.ok ? (d.message || 'done') : (d.error || 'failed (' + r.status + ')')));
      for (const [n, f] of Object.entries(d.files || {})) out.append(el('div', {}, el('a', { href: f.url, download: n, text: 'download ' + n + ' (' + bytes(f.size_bytes) + ')' })));
      if (d.result) out.append(drawView('result\n' + name, d.result));
    } catch (e) {
      out.className = 'result fail';
      out.replaceChildren(name + ': ' + e);
    } finally {
      button.dataset.running = '';
      button.disabled = vmGone(vm);
    }
  }

  window.addEventListener('hashchange', () => { connect(route()); schedule(); });
  connect(route());
  schedule();
})();
