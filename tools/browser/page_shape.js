// Facts about the reader's way in: headings without raw markup, the answer of each
// exercise folded, and the front page's first paragraph pointing to "How to use this book".
const headings = Array.from(document.querySelectorAll('article h1, article h2, article h3, article h4'))
  .map(h => { const c = h.cloneNode(true);
              c.querySelectorAll('code, .math, script, [class^="MathJax"], a.headerlink').forEach(e => e.remove());
              return [h.textContent.trim(), c.textContent]; })
  .filter(([whole, bare]) => bare.includes('_')).map(([whole]) => whole.replace(/\s+/g, ' ').slice(0, 80));
const visible = e => { const b = e.getBoundingClientRect();  // a closed <details> still lays out its content
  return b.width > 0 && b.height > 0 && !e.closest('details:not([open])') && (!e.checkVisibility || e.checkVisibility()); };
const flat = t => t.replace(/\s+/g, ' ').trim();
const listings = Array.from(document.querySelectorAll('article div.highlight pre'));
const first = document.querySelector('article section > p');
return {
  headings: headings,
  shown: listings.filter(visible).map(p => flat(p.textContent)),
  folded: Array.from(document.querySelectorAll('details.solution')).map(d => ({
    open: d.open, text: flat(Array.from(d.querySelectorAll('pre')).map(p => p.textContent).join(' ')),
    summary: flat(d.querySelector('summary') ? d.querySelector('summary').textContent : '')})),
  first_paragraph_links: first ? Array.from(first.querySelectorAll('a[href]')).map(a => a.getAttribute('href')) : [],
};
