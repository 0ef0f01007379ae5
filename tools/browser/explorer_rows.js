// The attention explorer's weights as the page shows them, row by row: for each layer asked for,
// the layer is chosen in its selector, each row's character is hovered (the explorer unlocked),
// and each head's cells are read. Also the first bar of the next character after each row.
// Returns {layer: {head name: [[weights of row i]]}, top: [character after row i]} for the rows
// asked for (arguments[0]: layers, arguments[1]: rows).
const [layers, rows] = arguments;
const root = document.querySelector('.explorer[data-program]');
const select = root.querySelector('select[id$="-layer"]');
const buttons = root.querySelectorAll('.explorer-character');
const shown = {top: []};
if (root.dataset.locked === 'true') buttons[Number(root.dataset.focus)].click();  // unlock
for (const layer of layers) {
  select.value = String(layer);
  select.dispatchEvent(new Event('change'));
  shown[layer] = {};
  for (const i of rows) {
    buttons[i].dispatchEvent(new MouseEvent('mousemove', {bubbles: true}));
    for (const head of root.querySelectorAll('.explorer-head')) {
      (shown[layer][head.dataset.head] = shown[layer][head.dataset.head] || []).push(
        Array.from(head.querySelectorAll('.explorer-cell[data-weight]')).map(cell => Number(cell.dataset.weight)));
    }
    if (layer === layers[0]) shown.top.push(root.querySelector('.explorer-bar').dataset.character);
  }
}
return shown;
