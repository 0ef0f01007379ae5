// What the panel shows after a run: its runs, its status line, and how the Tokens field is marked.
const panel = document.querySelector('.playground');
const input = panel.querySelector("input[name='--tokens']");
return {runs: Number(panel.dataset.runs || 0), status: panel.querySelector('.playground-status').textContent,
        invalid: input.getAttribute('aria-invalid'), describedby: input.getAttribute('aria-describedby'),
        output: panel.querySelector('pre.playground-output').id};
