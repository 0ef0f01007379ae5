// What the stepper (docs/_static/stepper.js) shows now, once it has its numbers: its state, the
// step shown, the number of steps and the text of the step (its title, tables, working and live
// region). null where the page has no stepper.
const done = arguments[arguments.length - 1];
const root = document.querySelector('.stepper[data-program]');
const started = Date.now();
(function wait() {
  if (!root) { done(null); return; }
  const state = root.dataset.state || 'not started';
  if (['loading', 'not started'].includes(state) && Date.now() - started < 60000) {
    setTimeout(wait, 20);
    return;
  }
  const text = selector => (root.querySelector(selector) || {}).textContent || '';
  done({state: state, step: Number(root.dataset.step), steps: Number(root.dataset.steps || 0),
        text: ['.stepper-title', '.stepper-views', '.stepper-lines', '.stepper-announce'].map(text).join('\n'),
        status: text('.stepper-status')});
})();
