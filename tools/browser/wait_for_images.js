// WAIT_FOR_IMAGES: run in the page by tools/browser/check_core.py (open(), as each page opens).
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
images.forEach(img => { img.loading = 'eager'; });
const pending = images.filter(img => !img.complete);
let left = pending.length;
if (left === 0) { done(); return; }
const finish = () => { if (--left === 0) done(); };
pending.forEach(img => { img.addEventListener('load', finish); img.addEventListener('error', finish); });
setTimeout(done, 15000);
