// The parts of the page's panel that the keyboard must reach, and whether its status
// line is a live region.
const panel = document.querySelector('.playground[data-program]');
const status = panel.querySelector('.playground-status');
return {fields: Array.from(panel.querySelectorAll('input[name]')).filter(i => !i.disabled).map(i => i.name),
        buttons: Array.from(panel.querySelectorAll('button')).map(b => b.className),
        output: panel.querySelector('pre.playground-output').id,
        live: status ? (status.getAttribute('role') === 'status' || status.getAttribute('aria-live') === 'polite') : false};
