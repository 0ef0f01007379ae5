// Fills the panel's fields ({option: text, or true/false for a flag}; the others go back
// to the panel's example, the values its fields start with), clicks Run and returns what
// the page then shows. With null it only reads what the panel shows now.
const values = arguments[0];
const isOn = value => value === true || value === 'true' || value === 'on';
const done = arguments[arguments.length - 1];
const panel = document.querySelector('.playground[data-program]');
const before = Number(panel.dataset.runs || 0);
const fields = {};
for (const input of panel.querySelectorAll('input[name]')) fields[input.name] = input;
const missing = Object.keys(values || {}).filter(name => !(name in fields));
if (values) {
  for (const [name, input] of Object.entries(fields)) {
    const value = name in values ? values[name] : input.dataset.default;
    if (input.type === 'checkbox') input.checked = isOn(value); else input.value = value;
  }
  panel.querySelector('button.playground-run').click();
}
const started = Date.now();
(function wait() {
  const finished = (!values || Number(panel.dataset.runs || 0) > before) && panel.dataset.state !== 'running';
  const images = Array.from(panel.querySelectorAll('.playground-figures img'));
  const drawn = images.every(img => img.complete);
  if ((finished && drawn) || Date.now() - started > 180000) {
    const figures = images.map(img => ({
      name: img.dataset.name, loaded: img.complete && img.naturalWidth > 0,
      svg: decodeURIComponent(img.getAttribute('src').split(',').slice(1).join(','))}));
    done({runs: Number(panel.dataset.runs || 0) - before, state: panel.dataset.state, missing: missing,
          args: JSON.parse(panel.dataset.args || '[]'), status: Number(panel.dataset.status),
          text: panel.querySelector('pre.playground-output').textContent, figures: figures,
          stale: panel.querySelector('.playground-figures').classList.contains('playground-stale'),
          pageFigures: Array.from(document.querySelectorAll('figure.chapter-figure img'))
            .map(img => (img.getAttribute('src') || '').split('/').pop()),
          labels: Array.from(panel.querySelectorAll('.playground-field')).map(field => {
            const label = field.querySelector('label'), code = label && label.querySelector('code');
            const hint = field.querySelector('.playground-hint');
            return {name: (field.querySelector('input[name]') || {}).name, code: code ? code.textContent : '',
                    codeRows: code ? new Set(Array.from(code.getClientRects()).map(r => Math.round(r.top))).size : 0,
                    text: label ? Array.from(label.childNodes).filter(n => n !== code)
                                    .map(n => n.textContent).join('').trim() : '',
                    hint: hint ? hint.textContent.trim() : ''}; }),
          defaults: Object.fromEntries(Object.entries(fields).map(([n, i]) =>
            [n, i.type === 'checkbox' ? isOn(i.dataset.default) : i.dataset.default])),
          programDefaults: Object.fromEntries(Object.entries(fields).map(([n, i]) =>
            [n, i.type === 'checkbox' ? isOn(i.dataset.programDefault) : i.dataset.programDefault]))});
  } else {
    setTimeout(wait, 25);
  }
})();
