// What the browser check reads off an open page: math left raw, images and <object>
// figures that did not load, the links into the book and the SVG figures shown.
const body = document.body.cloneNode(true);
body.querySelectorAll('pre, code, script, style, textarea, .highlight').forEach(e => e.remove());
const text = body.innerText || body.textContent;
const raw = ['\\(', '\\)', '\\[', '\\]', '$$'].filter(d => text.includes(d))
  .map(d => { const i = text.indexOf(d); return d + ' in "' + text.slice(Math.max(0, i - 30), i + 40).replace(/\s+/g, ' ') + '"'; });
const broken = Array.from(document.images)
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.getAttribute('src'));
const objects = Array.from(document.querySelectorAll('object, embed'))
  .filter(o => { try { const d = o.getSVGDocument ? o.getSVGDocument() : o.contentDocument;
                        return !(d && d.documentElement && d.documentElement.localName !== 'parsererror'
                                 && !d.querySelector('parsererror')); }
                 catch (e) { return true; } })
  .map(o => o.getAttribute('data') || o.getAttribute('src'));
const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href)
  .filter(h => h.startsWith(location.origin));
return {raw: raw, broken: broken, objects: objects, links: links,
        svgs: Array.from(document.querySelectorAll('img[src$=".svg"], object[data$=".svg"]'))
                .map(e => e.getAttribute('src') || e.getAttribute('data'))};
