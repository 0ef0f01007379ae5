// Walks the stepper (docs/_static/stepper.js) from its first step to its last with its Next button,
// then once Back: for each step, the step the stepper says it shows and its text (title, tables,
// working and live region). The stepper answers a click at once (its numbers came with the page).
const root = document.querySelector('.stepper[data-program]');
const text = () => ['.stepper-title', '.stepper-views', '.stepper-lines', '.stepper-announce']
  .map(selector => (root.querySelector(selector) || {}).textContent || '').join('\n');
const next = root.querySelector('.stepper-next');
const back = root.querySelector('.stepper-back');
const steps = Number(root.dataset.steps || 0);
const shown = [{step: Number(root.dataset.step), text: text()}];
for (let k = 1; k < steps; ++k) {
  next.click();
  shown.push({step: Number(root.dataset.step), text: text()});
}
next.click();  // at the last step: stays there
const afterLast = Number(root.dataset.step);
back.click();
return {steps: steps, shown: shown, afterLast: afterLast, afterBack: Number(root.dataset.step), backText: text(),
        announce: (root.querySelector('.stepper-announce') || {}).textContent || ''};
