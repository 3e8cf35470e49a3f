"""The app's CSS and the small script behind the lightbox and the keyboard shortcuts.

Both are given to ``launch(css=..., head=...)``. The script uses event delegation on the
document, so it keeps working when Gradio replaces the grid's HTML:

* a click on a grid cell opens it full size in a lightbox; ←/→ move between runs (columns),
  ↑/↓ between prompts (rows), Esc or a click outside closes it; PageUp/PageDown walk the
  saved steps of that run and prompt (the grid's ``data-steps``), and ←/→ keep that step;
* in the steps × prompts stack, PageUp/PageDown switch runs (in the lightbox at the same
  prompt and step; else the focused stack, or without a click the one on screen); a click on an A/B flicker picture
  holds it, another lets it flicker again;
* a reload returns to the tab you were on (its name is kept in ``localStorage``);
* in *pairwise mode* only — its checkbox (``#bk-pair-mode``) ticked and the keyboard focus
  inside the pairwise panel (``#bk-pair-zone``) — 1 / ← picks the left sample, 2 / → the
  right one, 3 / ↓ a tie, by clicking the matching button (which keeps the focus, so the
  mode stays on). Anywhere else the keys do what the browser does (scroll); a click on the
  panel puts the focus in it.
"""

CSS = """
.bk-grid-wrap { overflow-x: auto; }
table.bk-grid { border-collapse: collapse; width: max-content; }
table.bk-grid th, table.bk-grid td { padding: 4px; vertical-align: top; text-align: center; }
table.bk-grid th.bk-prompt { text-align: left; max-width: 14em; font-weight: normal; font-size: 0.85em; }
table.bk-grid thead th { font-size: 0.85em; white-space: normal; max-width: 200px; overflow-wrap: anywhere; }
.bk-cell { cursor: zoom-in; margin: 0; }
.bk-scores { display: none; font-size: 0.75em; max-width: 192px; }
#bk-grid.bk-scores-on .bk-scores { display: block; }
.bk-cell img, .bk-cell video { width: 192px; height: 192px; object-fit: contain; background: #111;
  border-radius: 4px; display: block; }
.bk-cell pre, .bk-text { white-space: pre-wrap; text-align: left; max-width: 22em; max-height: 16em;
  overflow: auto; font-size: 0.85em; margin: 0; }
.bk-missing { width: 192px; height: 192px; display: flex; align-items: center; justify-content: center;
  color: #888; border: 1px dashed #888; border-radius: 4px; font-size: 0.8em; }
.bk-control img { width: 96px; height: 96px; object-fit: contain; }
.bk-bar { height: 14px; background: #ddd3; border-radius: 7px; overflow: hidden; margin: 2px 0 8px; }
.bk-bar > div { height: 100%; background: var(--color-accent, #f97316); transition: width 0.4s; }
.bk-progress-label { font-size: 0.9em; }
/* a preset switch keeps the previous preset's field boxes, notes, pre-flight and prompt help out of
   sight until it has filled them in (ui.setup_tab.BLANK_JS), a page load's answer that lands first too */
body.bk-switching #bk-fields, body.bk-switching #bk-prompts .info-text, body.bk-switching #bk-notes,
body.bk-switching #bk-notes *, body.bk-switching #bk-preflight, body.bk-switching #bk-preflight * {
  visibility: hidden; }
/* the Setup space table is edited in its cells; Gradio's "Drop CSV or TSV files here" hint
   offers an import the table has no use for */
#bk-space-setup .drop-hint { display: none; }
#bk-pair-zone:focus-within { outline: 2px solid var(--color-accent, #f97316); outline-offset: 4px; }
#bk-lightbox { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.88); display: none; z-index: 1000;
  align-items: center; justify-content: center; flex-direction: column; }
#bk-lightbox.open { display: flex; }
#bk-lightbox img, #bk-lightbox video { height: 84vh; width: auto; max-width: 92vw; object-fit: contain; }
#bk-lightbox pre { max-width: 80vw; max-height: 80vh; overflow: auto; color: #eee; white-space: pre-wrap; }
#bk-lightbox .bk-lb-caption { color: #eee; margin-top: 8px; font-size: 0.9em; }
#bk-lightbox .bk-lb-close { position: absolute; top: 12px; right: 18px; font-size: 28px; color: #eee;
  background: none; border: none; cursor: pointer; }
.bk-stack:focus-within, .bk-stack:focus { outline: 2px solid var(--color-accent, #f97316); outline-offset: 4px; }
.bk-layer-title { font-weight: bold; margin: 4px 0; }
.bk-layer-title span { font-weight: normal; font-size: 0.85em; color: #888; }
.bk-flicker { position: relative; width: 384px; height: 384px; cursor: pointer; }
.bk-flicker img { position: absolute; inset: 0; width: 384px; height: 384px; object-fit: contain; background: #111;
  border-radius: 4px; }
.bk-flicker .bk-tag { position: absolute; left: 6px; top: 6px; background: rgba(0,0,0,0.7); color: #fff;
  padding: 1px 6px; border-radius: 4px; font-size: 0.8em; }
.bk-flicker .bk-b { animation: bk-flick-b 1.2s steps(1, end) infinite; }
.bk-flicker span.bk-a { animation: bk-flick-a 1.2s steps(1, end) infinite; }
.bk-flicker.bk-hold .bk-b, .bk-flicker.bk-hold span.bk-a { animation-play-state: paused; }
@keyframes bk-flick-b { 0% { opacity: 0; } 50% { opacity: 1; } }
@keyframes bk-flick-a { 0% { opacity: 1; } 50% { opacity: 0; } }
"""

HEAD = """
<script>
(() => {
  const state = { grid: null, row: 0, col: 0 };
  const find = (grid, row, col) => grid.querySelector(`.bk-cell[data-row="${row}"][data-col="${col}"]`);
  function box() {
    let b = document.getElementById('bk-lightbox');
    if (!b) {
      b = document.createElement('div');
      b.id = 'bk-lightbox';
      b.innerHTML = '<div class="bk-lb-media"></div><div class="bk-lb-caption"></div>' +
        '<button class="bk-lb-close" aria-label="Close">&times;</button>';
      document.body.appendChild(b);
      b.addEventListener('click', (e) => {
        if (e.target === b || e.target.classList.contains('bk-lb-close')) close();
      });
    }
    return b;
  }
  function show(grid, row, col) {
    const cell = find(grid, row, col);
    if (!cell) return false;
    Object.assign(state, { grid, row, col });
    const b = box();
    const media = b.querySelector('.bk-lb-media');
    media.innerHTML = '';
    let el;
    if (cell.dataset.kind === 'video') {
      el = document.createElement('video');
      Object.assign(el, { src: cell.dataset.full, controls: true, autoplay: true, loop: true });
    } else if (cell.dataset.kind === 'text') {
      el = document.createElement('pre');
      el.textContent = cell.innerText;
    } else {
      el = document.createElement('img');
      el.src = cell.dataset.full;
    }
    media.appendChild(el);
    b.querySelector('.bk-lb-caption').textContent = cell.dataset.caption || '';
    b.classList.add('open');
    if (window.bracketLightbox && window.bracketLightbox.afterShow) window.bracketLightbox.afterShow(cell);
    return true;
  }
  function close() {
    const b = document.getElementById('bk-lightbox');
    if (b) { b.classList.remove('open'); b.querySelector('.bk-lb-media').innerHTML = ''; }
    state.grid = null;
  }
  window.bracketLightbox = { show, close, state };
  // a reload returns to the tab you were on (remembered per browser, by the tab's name)
  document.addEventListener('click', (e) => {
    const tab = e.target.closest && e.target.closest('#bk-tabs [role=tab]');
    if (tab) localStorage.setItem('bk-tab', tab.textContent.trim());
  });
  const wanted = localStorage.getItem('bk-tab');
  if (wanted && wanted !== 'Setup') {
    let tries = 0;
    const timer = setInterval(() => {
      const tab = [...document.querySelectorAll('#bk-tabs [role=tab]')].find((t) => t.textContent.trim() === wanted);
      if (tab || ++tries > 100) { clearInterval(timer); if (tab) tab.click(); }
    }, 100);
  }
  document.addEventListener('mousedown', (e) => {  // a click on the pairwise panel gives it the focus
    const zone = e.target.closest && e.target.closest('#bk-pair-zone');
    if (zone && !e.target.closest('button, input, label, .bk-cell')) {
      zone.tabIndex = -1;
      setTimeout(() => { if (!zone.contains(document.activeElement)) zone.focus(); }, 0);
    }
  });
  document.addEventListener('click', (e) => {
    const cell = e.target.closest && e.target.closest('.bk-grid .bk-cell[data-full]');
    if (!cell) return;
    e.preventDefault();
    show(cell.closest('.bk-grid'), +cell.dataset.row, +cell.dataset.col);
  });
  document.addEventListener('keydown', (e) => {
    const b = document.getElementById('bk-lightbox');
    if (b && b.classList.contains('open') && state.grid) {
      if (e.key === 'Escape') { e.preventDefault(); close(); return; }
      const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
      const m = moves[e.key];
      if (m) { e.preventDefault(); show(state.grid, state.row + m[0], state.col + m[1]); }
      return;
    }
    const t = e.target;
    if (t && ((t.tagName === 'INPUT' && t.type !== 'checkbox') || t.tagName === 'TEXTAREA' ||
              t.isContentEditable)) return;
    const zone = document.getElementById('bk-pair-zone');
    const mode = document.querySelector('#bk-pair-mode input[type=checkbox]');
    if (!zone || !mode || !mode.checked || !zone.contains(document.activeElement)) return;
    const panel = document.getElementById('bk-pair');
    if (!panel || panel.offsetParent === null) return;
    const ids = { '1': 'bk-pair-left', ArrowLeft: 'bk-pair-left', '2': 'bk-pair-right',
                  ArrowRight: 'bk-pair-right', '3': 'bk-pair-tie', ArrowDown: 'bk-pair-tie' };
    const button = ids[e.key] && document.getElementById(ids[e.key]);
    if (button && !button.disabled) { e.preventDefault(); button.click(); button.focus(); }
  });
})();
(() => {
  // the runs x prompts grid: PageUp/PageDown in the lightbox walk the steps of the cell's run and
  // prompt (from the grid's data-steps); arrow keys to another cell keep the step chosen so
  const lb = window.bracketLightbox;
  function stepsOf(grid, row, col) {
    const wrap = grid && grid.closest('.bk-steps-wrap');
    if (!wrap) return null;
    try { return JSON.parse(wrap.dataset.steps)[`${row},${col}`] || []; } catch (err) { return []; }
  }
  function showStep(cell, entry) {
    const box = document.getElementById('bk-lightbox');
    const media = box.querySelector('.bk-lb-media img, .bk-lb-media video');
    if (!media || !entry) return;
    media.src = entry[1];
    box.querySelector('.bk-lb-caption').textContent = (cell.dataset.caption || '') + ` · step ${entry[0]}`;
  }
  lb.afterShow = (cell) => {
    const list = stepsOf(lb.state.grid, lb.state.row, lb.state.col);
    if (!list || lb.state.step === undefined) return;
    const entry = list.find((s) => s[0] === lb.state.step);
    if (entry) showStep(cell, entry);
  };
  document.addEventListener('click', (e) => {  // a click opens a cell at the grid's own step
    if (e.target.closest && e.target.closest('.bk-grid .bk-cell[data-full]')) lb.state.step = undefined;
  }, true);
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'PageUp' && e.key !== 'PageDown') return;
    const box = document.getElementById('bk-lightbox');
    if (!box || !box.classList.contains('open') || !lb.state.grid || lb.state.grid.closest('.bk-layer')) return;
    const list = stepsOf(lb.state.grid, lb.state.row, lb.state.col);
    if (!list || !list.length) return;
    e.preventDefault();
    const current = lb.state.step !== undefined ? lb.state.step : +lb.state.grid.dataset.step;
    let index = list.findIndex((s) => s[0] === current);
    if (index < 0) index = list.findIndex((s) => s[0] > current) - 1;
    const next = list[Math.max(0, Math.min(list.length - 1, index + (e.key === 'PageDown' ? 1 : -1)))];
    lb.state.step = next[0];
    const cell = lb.state.grid.querySelector(`.bk-cell[data-row="${lb.state.row}"][data-col="${lb.state.col}"]`);
    showStep(cell || { dataset: {} }, next);
  });
})();
(() => {
  // the steps x prompts stack: PageUp/PageDown switch runs (in the lightbox: same prompt and step)
  function layerOf(el) { return el && el.closest && el.closest('.bk-layer'); }
  function turn(stack, layer, delta) {
    const layers = [...stack.querySelectorAll(':scope > .bk-layer')];
    const next = layers[(layers.indexOf(layer) + delta + layers.length) % layers.length];
    layers.forEach((l) => { l.style.display = l === next ? '' : 'none'; });
    return next;
  }
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'PageUp' && e.key !== 'PageDown') return;
    const delta = e.key === 'PageDown' ? 1 : -1;
    const lb = window.bracketLightbox;
    const box = document.getElementById('bk-lightbox');
    if (lb && box && box.classList.contains('open') && lb.state.grid && layerOf(lb.state.grid)) {
      const layer = layerOf(lb.state.grid);
      const next = turn(layer.parentElement, layer, delta);
      const grid = next.querySelector('table.bk-grid');
      if (grid) lb.show(grid, lb.state.row, lb.state.col);
      e.preventDefault();
      return;
    }
    const t = e.target;
    if (t && ((t.tagName === 'INPUT' && t.type !== 'checkbox') || t.tagName === 'TEXTAREA' ||
              t.isContentEditable)) return;
    const focused = document.activeElement && document.activeElement.closest &&
      document.activeElement.closest('.bk-stack');
    // no click needed: else the stack that is on screen (the page scrolls with the keys elsewhere)
    const stack = focused || [...document.querySelectorAll('.bk-stack')].find((s) => {
      const r = s.getBoundingClientRect();
      return s.offsetParent !== null && r.bottom > 0 && r.top < window.innerHeight && r.height > 0;
    });
    if (!stack) return;
    const layer = [...stack.querySelectorAll(':scope > .bk-layer')].find((l) => l.style.display !== 'none');
    if (layer) { turn(stack, layer, delta); e.preventDefault(); }
  });
  document.addEventListener('mousedown', (e) => {  // a click on the stack gives it the focus (for the keys)
    const stack = e.target.closest && e.target.closest('.bk-stack');
    if (stack) setTimeout(() => { if (!stack.contains(document.activeElement)) stack.focus(); }, 0);
  });
  document.addEventListener('click', (e) => {  // A/B flicker: a click holds the picture, another lets it go
    const cell = e.target.closest && e.target.closest('.bk-flicker');
    if (cell) cell.classList.toggle('bk-hold');
  });
})();
</script>
"""
