// The colour contrast of every text on the page, checked here in place of axe-core's
// color-contrast rule, which composes each element's stack of backgrounds over a grid of the
// whole page and is the slowest part of the audit (tools/browser/accessibility.py says more).
//
// Each element that holds text of its own and is shown, and each form field that shows a
// value, is looked at in the colour scheme the page is in: its text colour over the colour
// behind it (its own background colour or the nearest ancestor's that is not transparent,
// semi-transparent ones laid over those below). WCAG 2.1's contrast ratio must be at least
// 4.5, or 3 for large text (24 px, or 18.66 px bold, the size rounded as axe-core rounds it).
// Each combination of colours, font size and weight is judged once. An element that is not
// shown (display: none, hidden, transparent, in a closed <details>, of no size, clipped away)
// is skipped, as axe-core skips it. An element it cannot judge this simply (see `mixed`,
// `painted`, `covered` and below) is returned, for axe-core to audit.
// Returns {failures: [{fg, bg, ratio, required, fontSize, bold, count, where, text}],
//          undecided: [elements], checked: how many elements it looked at, kinds: combinations}.
const memo = (f, cache = new Map()) => element => {
  if (!cache.has(element)) cache.set(element, f(element));
  return cache.get(element);
};
const style = memo(element => getComputedStyle(element));

// "rgb(1, 2, 3)" or "rgba(1, 2, 3, 0.5)" as [r, g, b, alpha]; null for any other form.
const parse = text => {
  const match = /^rgba?\(\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\s*\)$/.exec(text);
  return match ? [+match[1], +match[2], +match[3], match[4] === undefined ? 1 : +match[4]] : null;
};
// The colour `top` (with its alpha) laid over the opaque colour `below`.
const over = (top, below) => [0, 1, 2].map(i => top[i] * top[3] + below[i] * (1 - top[3])).concat([1]);
const luminance = colour => {
  const [r, g, b] = colour.slice(0, 3).map(c => {
    c /= 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a, b) => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
};
const hex = colour => '#' + colour.slice(0, 3).map(c => Math.round(c).toString(16).padStart(2, '0')).join('');

// Clipped away to nothing (clip: rect(...) of no width or no height on a positioned element or
// above it), as the "visually hidden" text for screen readers is, and MathJax's copy of each
// formula in MathML: axe-core skips such text too.
const clippedAway = memo(element => {
  if (!element) return false;
  const s = style(element);
  const clip = /^rect\((-?[\d.]+)px,? (-?[\d.]+)px,? (-?[\d.]+)px,? (-?[\d.]+)px\)$/.exec(s.clip);
  if (clip && (s.position === 'absolute' || s.position === 'fixed') &&
      (+clip[3] <= +clip[1] || +clip[2] <= +clip[4])) return true;
  return clippedAway(element.parentElement);
});
const shown = element => {
  if (element.closest('details:not([open])') && !element.closest('details:not([open]) > summary')) return false;
  if (clippedAway(element)) return false;
  const visible = {visibilityProperty: true, opacityProperty: true};
  if (element.checkVisibility && !element.checkVisibility(visible)) return false;
  return Array.from(element.getClientRects()).some(r => r.width > 0 && r.height > 0);
};
const ownText = element => Array.from(element.childNodes).some(n => n.nodeType === Node.TEXT_NODE && n.data.trim());

// Opacity, a filter or a blend mode on the element or above it: what shows is a mix of
// layers, which axe-core (which composes the whole stack) must judge.
const mixed = memo(element => {
  if (!element) return false;
  const s = style(element);
  return parseFloat(s.opacity) < 1 || s.filter !== 'none' || s.backdropFilter !== 'none' ||
         s.mixBlendMode !== 'normal' || mixed(element.parentElement);
});

// A background that is more than a colour: an image or a gradient. (A pseudo-element's
// background, ::before or ::after, is not behind the text: axe-core leaves it out of the
// colours it composes too, and a large one only makes it give up on the element.)
const painted = element => style(element).backgroundImage !== 'none';

// Boxes laid out of the flow (position absolute, fixed or sticky) that are shown: one may lie
// over text, or under it, that is not its own, which axe-core, composing the stack of elements
// at the text, would see and an ancestor's background would not.
const floating = Array.from(document.body.querySelectorAll('*')).filter(element =>
  ['absolute', 'fixed', 'sticky'].includes(style(element).position) && shown(element));
const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
// Whether such a box meets a line of the element's own text (its text nodes' boxes, not the
// element's, which a listing's copy button meets in its corner).
const covered = element => {
  const frame = element.getBoundingClientRect();
  const near = floating.filter(other => !other.contains(element) && !element.contains(other) &&
    Array.from(other.getClientRects()).some(r => meets(r, frame)));
  if (!near.length) return false;
  const lines = [];
  for (const node of element.childNodes) {
    if (node.nodeType !== Node.TEXT_NODE || !node.data.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    lines.push(...range.getClientRects());
  }
  if (element.matches('input, select, textarea')) lines.push(frame);
  return near.some(other => Array.from(other.getClientRects()).some(r => lines.some(line => meets(r, line))));
};

// The opaque colour behind the element's content: its own background colour, laid over
// those of its ancestors while it is not opaque; null when it cannot be told simply.
const behind = memo(element => {
  if (!element) return null;  // nothing opaque up to the top of the page
  const colour = parse(style(element).backgroundColor);
  if (!colour || painted(element)) return null;
  if (colour[3] === 1) return colour;
  const below = behind(element.parentElement);
  return below && (colour[3] === 0 ? below : over(colour, below));
});

// A short selector for a sample element: the nearest id above it, then the tags and classes below.
const where = element => {
  const path = [];
  for (let e = element; e && e !== document.body; e = e.parentElement) {
    if (e.id) { path.unshift('#' + CSS.escape(e.id)); break; }
    path.unshift(e.localName + Array.from(e.classList).slice(0, 2).map(c => '.' + CSS.escape(c)).join(''));
  }
  return path.slice(0, 1).concat(path.length > 5 ? ['...'] : [], path.slice(Math.max(1, path.length - 4))).join(' ');
};

// The text a form field shows: its value, or the chosen option of a <select>; "" for none.
const fieldText = element => {
  if (element.matches('select')) return element.selectedOptions.length ? element.selectedOptions[0].text : '';
  if (element.matches('input[type=hidden], input[type=checkbox], input[type=radio], input[type=range], ' +
                      'input[type=color], input[type=file], input[type=image]')) return '';
  return element.value || '';
};

const kinds = new Map();  // "text colour, background, size, bold": {fg, bg, ratio, ..., count, sample}
const undecided = [];
let checked = 0;
for (const element of document.body.querySelectorAll('*')) {
  const field = element.matches('input, select, textarea');
  if (field ? !fieldText(element).trim() : !ownText(element)) continue;
  if (!shown(element)) continue;
  checked++;
  // SVG text is painted with `fill`: axe-core knows it.
  if (!(element instanceof HTMLElement)) {
    undecided.push(element);
    continue;
  }
  const s = style(element);
  const bg = behind(element);
  const text = parse(s.webkitTextFillColor || s.color);
  const outlined = s.textShadow !== 'none' || parseFloat(s.webkitTextStrokeWidth) > 0;
  if (!bg || !text || outlined || mixed(element) || covered(element)) {
    undecided.push(element);
    continue;
  }
  const fg = over(text, bg);
  const fontSize = parseFloat(s.fontSize);
  const bold = parseFloat(s.fontWeight) >= 700;
  const key = [...fg, ...bg, fontSize, bold].join(' ');
  if (!kinds.has(key)) {
    const points = Math.ceil(fontSize * 72) / 96;  // as axe-core rounds it
    const large = bold ? points >= 14 : points >= 18;
    kinds.set(key, {fg: hex(fg), bg: hex(bg), ratio: ratio(fg, bg), required: large ? 3 : 4.5,
                    fontSize: fontSize, bold: bold, count: 0, sample: element});
  }
  kinds.get(key).count++;
}
const failures = Array.from(kinds.values()).filter(k => k.ratio < k.required).map(k => ({
  fg: k.fg, bg: k.bg, ratio: Math.floor(k.ratio * 100) / 100, required: k.required, fontSize: k.fontSize,
  bold: k.bold, count: k.count, where: where(k.sample),
  text: (k.sample.matches('input, select, textarea') ? fieldText(k.sample) : k.sample.textContent).trim().slice(0, 40)}));
return {failures: failures, undecided: undecided, checked: checked, kinds: kinds.size};
