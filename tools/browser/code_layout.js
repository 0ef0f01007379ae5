// Listings: no code line cut off (at desktop width none at all; on a phone, program
// output may scroll sideways, code and commands wrap), and no copy button over code text.
const phone = arguments[0];
const found = [];
const visible = e => { const b = e.getBoundingClientRect();  // a closed <details> still lays out its content
  return b.width > 0 && b.height > 0 && !e.closest('details:not([open])') && (!e.checkVisibility || e.checkVisibility()); };
const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
const name = block => (Array.from(block.closest('div[class*="highlight-"]')?.classList || [])
  .find(c => c.startsWith('highlight-')) || 'highlight').replace('highlight-', '') + ' listing';
const start = pre => '"' + pre.textContent.trim().split('\n')[0].slice(0, 50) + '"';
for (const block of document.querySelectorAll('article div.highlight')) {
  const pre = block.querySelector('pre');
  if (!pre || !visible(pre)) continue;
  const output = block.closest('.highlight-text') !== null;
  if (pre.scrollWidth > pre.clientWidth + 1 && !(phone && output)) {
    found.push(name(block) + ' ' + start(pre) + ' is cut off: its lines need ' + pre.scrollWidth +
               ' px, the column has ' + pre.clientWidth + ' px');
  }
  const button = block.querySelector('button.copybtn');
  if (!button) continue;
  const area = button.getBoundingClientRect();
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let covered = null;
  for (let node = walker.nextNode(); node && !covered; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    range.selectNodeContents(node);
    if (!Array.from(range.getClientRects()).some(r => meet(r, area))) continue;
    for (let i = 0; i < node.length && !covered; ++i) {
      if (!node.data[i].trim()) continue;
      range.setStart(node, i); range.setEnd(node, i + 1);
      if (Array.from(range.getClientRects()).some(r => meet(r, area))) {
        covered = node.data.slice(Math.max(0, i - 12), i + 12).trim();
      }
    }
  }
  if (covered) found.push('the copy button covers the text "' + covered + '" of the ' + name(block) + ' ' + start(pre));
}
return found;
