// Waits up to 10 s for the book's index.html to forward to the front page; returns where it landed.
const done = arguments[arguments.length - 1];
const started = Date.now();
(function wait() {
  if (location.pathname.endsWith('/docs/index.html') || Date.now() - started > 10000) {
    done(location.pathname);
  } else {
    setTimeout(wait, 50);
  }
})();
