// Every text of a figure inside the figure's own box: nothing cut off at an edge.
const svg = document.documentElement;
if (svg.localName !== 'svg') return ['the file is not an SVG document'];
const box = {x: 0, y: 0, width: svg.width.baseVal.value, height: svg.height.baseVal.value};
const found = [];
for (const text of document.querySelectorAll('text')) {
  const b = text.getBBox();
  const m = text.getCTM();
  const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
    .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  const xs = corners.map(c => c[0]), ys = corners.map(c => c[1]);
  if (Math.min(...xs) < box.x - 0.5 || Math.max(...xs) > box.x + box.width + 0.5 ||
      Math.min(...ys) < box.y - 0.5 || Math.max(...ys) > box.y + box.height + 0.5) {
    found.push('"' + text.textContent.trim() + '"');
  }
}
return found;
