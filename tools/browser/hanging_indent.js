// Wrapped code keeps a hanging indent: where a code line (docs/_static/listings.js makes
// each a span.code-line) takes more than one row, its second row starts to the right of
// the listing's left edge. Program output (which scrolls instead) is left out.
const found = [];
const start = pre => '"' + pre.textContent.trim().split('\n')[0].slice(0, 50) + '"';
for (const pre of document.querySelectorAll('article div.highlight pre')) {
  if (pre.closest('.highlight-text') || pre.closest('details:not([open])')) continue;
  const box = pre.getBoundingClientRect();
  if (box.width === 0 || box.height === 0) continue;
  if (!pre.dataset.hanging) { found.push('the listing ' + start(pre) + ' has no hanging indent (listings.js did not run)'); continue; }
  const row = parseFloat(getComputedStyle(pre).lineHeight) || 20;
  for (const line of pre.querySelectorAll('span.code-line')) {
    if (line.getBoundingClientRect().height < 1.5 * row) continue;
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let first = null, second = null;
    for (let node = walker.nextNode(); node && !second; node = walker.nextNode()) {
      for (let i = 0; i < node.length && !second; ++i) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        if (r.width === 0) continue;
        if (!first) { if (node.data[i].trim()) first = r; }
        else if (r.top > first.top + row / 2) second = r;
      }
    }
    if (first && second && second.left <= line.getBoundingClientRect().left + 1) {
      found.push('a wrapped line of the listing ' + start(pre) + ' goes on at the left edge: "' +
                 line.textContent.trim().slice(0, 50) + '"');
      break;
    }
  }
}
return found;
