/* The stepper: chapter 7's worked example, "Mouse eats cheese", one step at a time.
 *
 * A page holds it as <div class="stepper" data-program="ch07-attention">. playground.js loads this
 * file where a page has one and shares the chapter's program (the WebAssembly module of
 * docs/playground, in a worker) with the "Try it here" panel. The module's attention_steps()
 * (docs/playground/stepper.cpp) runs the library's own steps on the example, as the chapter's
 * main.cpp does, and returns every matrix and every term of every dot product, exponential and
 * weighted sum, each number already printed as the chapter programs print it. This file never
 * computes or formats a number: it only chooses which of those texts each step shows.
 *
 * Back and Next are ordinary buttons (and the step list an ordinary selector), so the keyboard
 * does what the mouse does; a live region says each step's title and its result in words.
 */
(function () {
  'use strict';

  const DOT = '\u00b7';  // the product sign of the chapters' formulas

  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === 'text') node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    return node;
  }

  function vector(items) { return '[' + items.join(', ') + ']'; }

  function column(matrix, j) { return matrix.map(function (row) { return row[j]; }); }

  function transposed(matrix) { return matrix[0].map(function (_, j) { return column(matrix, j); }); }

  // A matrix as a table: `cells(i, j)` gives the text of an entry, or null for one not computed yet;
  // `mark(i, j)` names its highlight: 'current', 'line' (the row or column in use) or ''.
  function table(caption, rowLabels, colLabels, cells, mark) {
    const head = element('tr', {}, [element('td', {class: 'stepper-corner'})].concat(colLabels.map(function (name) {
      return element('th', {scope: 'col', text: name});
    })));
    const rows = rowLabels.map(function (name, i) {
      return element('tr', {}, [element('th', {scope: 'row', text: name})].concat(colLabels.map(function (_, j) {
        const text = cells(i, j);
        const kind = mark ? mark(i, j) : '';
        return element('td', {class: 'stepper-entry' + (kind ? ' stepper-' + kind : '') + (text === null ? ' stepper-empty' : '')},
                       [text === null ? element('span', {class: 'stepper-hidden', text: 'not yet'}) : text]);
      })));
    });
    return element('table', {class: 'stepper-matrix'}, [element('caption', {text: caption}),
                                                         element('thead', {}, [head]), element('tbody', {}, rows)]);
  }

  function whole(matrix) { return function (i, j) { return matrix[i][j]; }; }

  // Entries up to the `count`-th in reading order are shown, the rest are not computed yet.
  function upTo(matrix, count) {
    const width = matrix[0].length;
    return function (i, j) { return i * width + j < count ? matrix[i][j] : null; };
  }

  // The steps of the example, each {title, said (the live region's words), views (tables), lines (the working)}.
  function steps(d) {
    const t = d.tokens;
    const f = d.features;
    const all = [];
    all.push({
      title: 'The example',
      said: 'Three tokens, ' + t.join(', ') + ', each an embedding of ' + f.length + ' features, and the three ' +
            'projections W_Q, W_K and W_V.',
      views: [table('Embeddings E', t, f, whole(d.E)), table('W_Q', f, f, whole(d.WQ)),
              table('W_K', f, f, whole(d.WK)), table('W_V', f, f, whole(d.WV))],
      lines: ['Each row of E is one token; each step below is one of chapters 1 to 6.'],
    });
    for (const [name, weights, matrix] of [['Q', 'W_Q', d.Q], ['K', 'W_K', d.K], ['V', 'W_V', d.V]]) {
      const terms = d.projectionTerms[name];
      const source = d['W' + name];
      all.push({
        title: 'Projection: ' + name + ' = E' + DOT + weights + ' (chapter 1)',
        said: name + ' = E' + DOT + weights + ': ' + t.map(function (token, i) {
          return token + ' ' + vector(matrix[i]);
        }).join(', ') + '.',
        views: [table('Embeddings E', t, f, whole(d.E)), table(weights, f, f, whole(source)),
                table(name + ' = E' + DOT + weights, t, f, whole(matrix), function () { return 'current'; })],
        lines: t.flatMap(function (token, i) {
          return f.map(function (feature, c) {
            return token + ', ' + feature + ': ' + d.E[i].map(function (e, k) { return e + DOT + source[k][c]; })
              .join(' + ') + ' = ' + terms[i][c].join(' + ') + ' = ' + matrix[i][c];
          });
        }),
      });
    }
    const keysT = transposed(d.K);
    t.forEach(function (query, i) {
      t.forEach(function (key, j) {
        const terms = d.scoreTerms[i][j];
        all.push({
          title: 'Score of ' + query + ' against ' + key + ': one dot product (chapter 2)',
          said: 'S(' + query + ', ' + key + ') = q_' + query + DOT + 'k_' + key + ' = ' + terms.join(' + ') + ' = ' +
                d.S[i][j] + '.',
          views: [table('Queries Q', t, f, whole(d.Q), function (r) { return r === i ? 'line' : ''; }),
                  table('Keys transposed K\u1d40', f, t, whole(keysT), function (r, c) { return c === j ? 'line' : ''; }),
                  table('Scores S = Q' + DOT + 'K\u1d40', t, t, upTo(d.S, i * t.length + j + 1),
                        function (r, c) { return r === i && c === j ? 'current' : ''; })],
          lines: ['Row ' + query + ' of Q times column ' + key + ' of K\u1d40: ' + d.Q[i].map(function (q, k) {
            return q + DOT + keysT[k][j];
          }).join(' + ') + ' = ' + terms.join(' + ') + ' = ' + d.S[i][j]],
        });
      });
    });
    all.push({
      title: 'Scaling: S / \u221ad_k (chapter 3)',
      said: 'd_k = ' + d.dk + ', so every score is divided by \u221a' + d.dk + ' = ' + d.rootDk + '.',
      views: [table('Scores S', t, t, whole(d.S)),
              table('Scaled scores S / \u221ad_k', t, t, whole(d.scaled), function () { return 'current'; })],
      lines: ['d_k = ' + d.dk + ', \u221ad_k = ' + d.rootDk].concat(t.map(function (token, i) {
        return token + ': ' + vector(d.S[i]) + ' / ' + d.rootDk + ' = ' + vector(d.scaled[i]);
      })),
    });
    all.push({
      title: 'The mask: S / \u221ad_k + M (chapter 4)',
      said: d.causal ? 'The causal mask adds \u2212\u221e to every key after its query.'
                     : 'This example has no mask: M is all zeros, and the scaled scores pass unchanged.',
      views: [table('Mask M', t, t, whole(d.M), function () { return 'current'; }),
              table('Masked scores S / \u221ad_k + M', t, t, whole(d.masked))],
      lines: (d.causal ? ['The causal mask: 0 takes part, -inf is masked out.']
                       : ['Chapter 7 runs its example without a mask, so M is all zeros. With --causal (chapter 4) ' +
                          'every key after its query would get -inf, and a weight of 0.']).concat(t.map(function (token, i) {
        return token + ': ' + vector(d.scaled[i]) + ' + ' + vector(d.M[i]) + ' = ' + vector(d.masked[i]);
      })),
    });
    t.forEach(function (query, i) {
      const exps = d.exponentials[i].slice(0, t.length);
      const sum = d.exponentials[i][t.length];
      all.push({
        title: 'Softmax of the ' + query + ' row (chapter 5)',
        said: 'The exponentials of the ' + query + ' row sum to ' + sum + '; its weights are ' + vector(d.A[i]) + '.',
        views: [table('Masked scores', t, t, whole(d.masked), function (r) { return r === i ? 'line' : ''; }),
                table('Weights A = softmax of each row', t, t, upTo(d.A, (i + 1) * t.length),
                      function (r) { return r === i ? 'current' : ''; })],
        lines: [
          'Exponentials: ' + d.masked[i].map(function (s, j) { return 'e^' + s + ' = ' + exps[j]; }).join(', '),
          'Their sum: ' + exps.join(' + ') + ' = ' + sum,
          'Each weight, e^s / \u03a3: ' + exps.map(function (e, j) { return e + ' / ' + sum + ' = ' + d.A[i][j]; })
            .join(', '),
          'sa::softmax_rows subtracts the row\u2019s largest score first; the factor cancels and the weights are the same.',
        ],
      });
    });
    t.forEach(function (query, i) {
      const terms = d.outputTerms[i];
      all.push({
        title: 'Output of ' + query + ': the weighted sum of the rows of V (chapter 6)',
        said: 'The output of ' + query + ' is ' + vector(d.O[i]) + '.',
        views: [table('Weights A', t, t, whole(d.A), function (r) { return r === i ? 'line' : ''; }),
                table('Values V', t, f, whole(d.V), function () { return 'line'; }),
                table('Outputs O = A' + DOT + 'V', t, f, upTo(d.O, (i + 1) * f.length),
                      function (r) { return r === i ? 'current' : ''; })],
        lines: [
          'o_' + query + ' = ' + t.map(function (key, j) { return d.A[i][j] + DOT + vector(d.V[j]); }).join(' + '),
          '= ' + terms.map(vector).join(' + '),
          '= ' + vector(d.O[i]),
        ],
      });
    });
    return all;
  }

  function start(root, loadProgram) {
    const id = 'stepper-' + root.dataset.program;
    const back = element('button', {type: 'button', class: 'stepper-back', text: '\u2190 Back'});
    const next = element('button', {type: 'button', class: 'stepper-next', text: 'Next \u2192'});
    const choose = element('select', {id: id + '-step'});
    const title = element('p', {class: 'stepper-title'});
    const views = element('div', {class: 'stepper-views'});
    const lines = element('div', {class: 'stepper-lines'});
    const announce = element('p', {class: 'stepper-announce', 'aria-live': 'polite'});
    const status = element('p', {class: 'stepper-status', role: 'status', text: 'Running the example...'});
    root.dataset.state = 'loading';
    root.replaceChildren(status);

    let all = [];
    let at = 0;
    function show(speak) {
      const step = all[at];
      title.textContent = 'Step ' + (at + 1) + ' of ' + all.length + ': ' + step.title;
      views.replaceChildren.apply(views, step.views.map(function (view) { return view.cloneNode(true); }));
      lines.replaceChildren.apply(lines, step.lines.map(function (line) { return element('p', {text: line}); }));
      choose.value = String(at);
      back.setAttribute('aria-disabled', String(at === 0));
      next.setAttribute('aria-disabled', String(at === all.length - 1));
      if (speak) announce.textContent = 'Step ' + (at + 1) + ' of ' + all.length + ': ' + step.title + '. ' + step.said;
      root.dataset.step = String(at);
    }
    function go(step) {
      if (step < 0 || step >= all.length || step === at) return;
      at = step;
      show(true);
    }
    back.addEventListener('click', function () { go(at - 1); });
    next.addEventListener('click', function () { go(at + 1); });
    choose.addEventListener('change', function () { go(Number(choose.value)); });

    loadProgram(root.dataset.program).then(function (runner) {
      return runner.info.then(function () { return runner.call({kind: 'steps'}); });
    }).then(function (json) {
      all = steps(JSON.parse(json));
      all.forEach(function (step, k) {
        choose.appendChild(element('option', {value: String(k), text: (k + 1) + '. ' + step.title}));
      });
      root.replaceChildren(
        element('div', {class: 'stepper-controls'}, [
          back, next,
          element('div', {class: 'stepper-choose'}, [element('label', {for: choose.id, text: 'Go to step'}), choose]),
        ]),
        title, views, lines, announce);
      root.dataset.steps = String(all.length);
      show(false);
      root.dataset.state = 'done';
    }).catch(function (error) {
      status.textContent = 'The example could not run here (' + error.message + ').';
      root.dataset.state = 'unavailable';
    });
  }

  window.BookStepper = {start: start};
})();
