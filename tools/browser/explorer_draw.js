// Chapter 16's draw in the attention explorer (docs/_static/explorer.js): with the seed arguments[0],
// clicks "Draw the next character" arguments[1] times, each after the model has read the text the
// last draw made, and returns the text, the uniform number of the first draw and the draw's line.
const [seed, count, done] = arguments;
const root = document.querySelector('.explorer[data-sampling]');
const seedField = root.querySelector('[id$="-seed"]');
seedField.value = String(seed);
seedField.dispatchEvent(new Event('input', {bubbles: true}));
const button = root.querySelector('.explorer-draw');
const uniforms = [];
const started = Date.now();
let drawn = 0;
let runs = Number(root.dataset.runs || 0);
button.click();
(function wait() {
  const ready = root.dataset.state === 'done' && Number(root.dataset.runs || 0) > runs;
  if (!ready && root.dataset.state !== 'error' && Date.now() - started < 60000) {
    setTimeout(wait, 10);
    return;
  }
  if (ready) {
    uniforms.push(Number(root.dataset.uniform));
    drawn += 1;
    runs = Number(root.dataset.runs || 0);
    if (drawn < count) {
      button.click();
      setTimeout(wait, 10);
      return;
    }
  }
  done({drawn: drawn, uniforms: uniforms, ms: Date.now() - started, state: root.dataset.state,
        text: root.querySelector('input[id$="-text"]').value,
        said: (root.querySelector('.explorer-draw-status') || {}).textContent});
})();
