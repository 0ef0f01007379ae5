// Waits up to 20 s until the panel has finished a run after the arguments[0] runs it had.
const done = arguments[arguments.length - 1];
const before = arguments[0];
const panel = document.querySelector('.playground');
const started = Date.now();
(function wait() {
  if ((Number(panel.dataset.runs || 0) > before && panel.dataset.state !== 'running') || Date.now() - started > 20000) done();
  else setTimeout(wait, 25);
})();
