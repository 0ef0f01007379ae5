// Visible elements that reach past the right edge of the screen, unless they sit in
// a box that scrolls sideways (a code listing, a wide table, long math) or in one
// of the theme's fixed, off-screen drawers.
const width = document.documentElement.clientWidth;
const describe = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
  (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/)[0] : '');
function excused(e) {
  for (let a = e; a && a !== document.documentElement; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (style.position === 'fixed') return true;
    if (a !== e && ['auto', 'scroll'].includes(style.overflowX) && a.getBoundingClientRect().right <= width + 1) return true;
  }
  return false;
}
const found = [];
for (const e of document.body.querySelectorAll('*')) {
  const style = getComputedStyle(e);
  if (style.display === 'none' || style.visibility === 'hidden') continue;
  const box = e.getBoundingClientRect();
  if (box.width === 0 || box.height === 0 || box.right <= width + 1) continue;
  if (excused(e)) continue;
  found.push(describe(e) + ' (' + Math.round(box.right) + ' px)');
  if (found.length === 3) break;
}
return found;
