// WAIT_FOR_MATH: run in the page by tools/browser/check_core.py (open(), as each page opens) and accessibility.py.
const done = arguments[arguments.length - 1];
const hasMath = document.querySelector('.math, script[type^="math/tex"]') !== null;
const started = Date.now();
(function wait() {
  if (window.MathJax && MathJax.Hub && MathJax.Hub.Register) {
    MathJax.Hub.Register.StartupHook('End', function () {
      MathJax.Hub.Queue(function () {
        // TeX errors become merror nodes (the noErrors extension shows the source instead).
        const bad = n => !!n && (n.type === 'merror' || n.texError === true ||
                                 String(n['class'] || '').includes('noError') || (n.data || []).some(bad));
        const errors = MathJax.Hub.getAllJax().filter(j => bad(j.root)).map(j => j.originalText);
        done({mathjax: true, errors: errors});
      });
    });
  } else if (!hasMath || Date.now() - started > 20000) {
    done({mathjax: false, errors: []});
  } else {
    setTimeout(wait, 50);
  }
})();
