// What the attention explorer (docs/_static/explorer.js) shows now: its state, the focused
// character, the lock, the layer, each head's caption and the weights of its focused row, the
// bars of the next character and the live region's text. With a number of runs as the first
// argument, it first waits until the explorer has finished more runs than that.
const after = arguments.length > 1 ? arguments[0] : null;
const done = arguments[arguments.length - 1];
const root = document.querySelector('.explorer[data-program]');
const started = Date.now();
(function wait() {
  const state = root ? root.dataset.state || 'not started' : 'absent';
  const waiting = ['loading', 'not started', 'running'].includes(state) ||
    (after !== null && Number(root.dataset.runs || 0) <= after);
  if (waiting && Date.now() - started < 60000) {
    setTimeout(wait, 20);
    return;
  }
  if (!root) { done({state: state}); return; }
  done({
    state: state, runs: Number(root.dataset.runs || 0), runMs: Number(root.dataset.runMs || -1),
    renderMs: Number(root.dataset.renderMs || -1), focus: Number(root.dataset.focus), locked: root.dataset.locked,
    layer: root.dataset.layer, status: (root.querySelector('.explorer-status') || {}).textContent,
    heads: Array.from(root.querySelectorAll('.explorer-head')).map(head => ({
      name: head.dataset.head, caption: head.querySelector('figcaption').textContent,
      weights: Array.from(head.querySelectorAll('.explorer-cell[data-weight]')).map(cell => cell.dataset.weight)})),
    bars: Array.from(root.querySelectorAll('.explorer-bar')).map(bar =>
      [bar.dataset.character, bar.dataset.probability]),
    announce: (root.querySelector('.explorer-announce') || {}).textContent,
    pressed: Array.from(root.querySelectorAll('.explorer-character[aria-pressed="true"]'))
      .map(button => Number(button.dataset.position)),
    active: document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.position : null,
  });
})();
