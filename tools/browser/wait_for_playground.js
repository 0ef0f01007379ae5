// Waits until the page's "Try it here" panel, if it has one, has shown its first result.
const done = arguments[arguments.length - 1];
const panel = document.querySelector('.playground[data-program]');
const started = Date.now();
(function wait() {
  if (!panel) { done(null); return; }
  const state = panel.dataset.state || 'not started';
  if (!['loading', 'not started', 'running'].includes(state) || Date.now() - started > 150000) {
    done({state: state, firstResultMs: Number(panel.dataset.firstResultMs || -1), program: panel.dataset.program});
  } else {
    setTimeout(wait, 25);
  }
})();
