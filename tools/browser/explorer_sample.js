// Chapter 16's sampling view of the attention explorer (docs/_static/explorer.js): sets its rule
// (arguments[0]: {temperature: "0.8", topK: "all" or a number, greedy: true or false}), each change
// as a reader's input event, waits for the bars the rule gives, and returns them as
// [[character, probability]] with the sampling state.
const [rule, done] = arguments;
const root = document.querySelector('.explorer[data-sampling]');
const field = name => root.querySelector(`[id$="-${name}"]`);
const greedy = field('greedy');
if (greedy.checked !== rule.greedy) {
  greedy.checked = rule.greedy;
  greedy.dispatchEvent(new Event('change', {bubbles: true}));
}
if (!rule.greedy) {
  const temperature = field('temperature');
  temperature.value = rule.temperature;
  temperature.dispatchEvent(new Event('input', {bubbles: true}));
  const topK = field('top-k');
  topK.value = rule.topK === 'all' ? topK.max : String(rule.topK);
  topK.dispatchEvent(new Event('input', {bubbles: true}));
}
const started = Date.now();
(function wait() {
  if (root.dataset.samplingState === 'running' && Date.now() - started < 30000) {
    setTimeout(wait, 10);
    return;
  }
  done({state: root.dataset.samplingState, focus: Number(root.dataset.focus),
        title: (root.querySelector('.explorer-next-title') || {}).textContent,
        bars: Array.from(root.querySelectorAll('.explorer-bar')).map(bar =>
          [bar.dataset.character, Number(bar.dataset.probability)])});
})();
