// Waits up to 20 s for the search page's results; returns [how many, the summary line].
const done = arguments[arguments.length - 1];
const started = Date.now();
(function wait() {
  const summary = document.querySelector('#search-results .search-summary, p.search-summary');
  const results = document.querySelectorAll('#search-results ul.search li, ul.search li');
  if (results.length > 0 || (summary && summary.textContent.trim() !== '' &&
      !/preparing|searching/i.test(summary.textContent)) || Date.now() - started > 20000) {
    done([results.length, summary ? summary.textContent.trim() : '']);
  } else {
    setTimeout(wait, 100);
  }
})();
