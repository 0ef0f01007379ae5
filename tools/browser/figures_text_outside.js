// Every figure (arguments[0], addresses on this page's origin) opened on its own, each in a
// frame of this page the size of the browser's window, all at once, and checked by the
// program arguments[1] (text_outside.js) run inside the figure's own document.
// Returns {address: what the program found}.
const [addresses, check] = arguments;
const done = arguments[arguments.length - 1];
const found = {};
let left = addresses.length;
if (left === 0) { done(found); return; }
for (const address of addresses) {
  const frame = document.createElement('iframe');
  frame.style.cssText = 'position: absolute; left: -3000px; top: 0; width: ' + window.innerWidth + 'px; height: ' +
    window.innerHeight + 'px; border: 0';
  frame.onload = () => {
    try {
      found[address] = new frame.contentWindow.Function(check)();
    } catch (error) {
      found[address] = ['the figure could not be checked: ' + error];
    }
    frame.remove();
    if (--left === 0) done(found);
  };
  frame.src = address;
  document.body.appendChild(frame);
}
