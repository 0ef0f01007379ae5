// Display math on a narrow screen: a formula wider than the column must scroll (a box
// with overflow auto or scroll around it), never be clipped by a box that hides it.
const found = [];
for (const math of document.querySelectorAll('article div.math, article .MathJax_SVG_Display')) {
  const svg = math.querySelector('svg');
  if (!svg) continue;
  const r = svg.getBoundingClientRect();
  if (r.width === 0) continue;
  for (let a = svg.parentElement; a && a !== document.body; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (['auto', 'scroll'].includes(style.overflowX)) break;
    const b = a.getBoundingClientRect();
    if (['hidden', 'clip'].includes(style.overflowX) && (r.right > b.right + 1 || r.left < b.left - 1)) {
      found.push('the formula "' + (math.textContent || '').trim().slice(0, 40) + '" (' + Math.round(r.width) +
                 ' px) is clipped to ' + Math.round(b.width) + ' px instead of scrolling');
      break;
    }
  }
}
return found;
