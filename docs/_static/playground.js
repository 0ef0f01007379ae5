/* The "Try it here" panel of a chapter page.
 *
 * It loads the chapter's own program, compiled to WebAssembly (_static/playground/
 * chNN-slug.js, built from chapters/NN-slug/main.cpp and the library by
 * docs/playground), asks it for its options and defaults, turns the reader's fields
 * into the program's command-line arguments, runs it, and shows what it printed
 * (stdout, or its one-line error) and the figures it wrote with --figures. All the
 * computing, parsing and formatting is the program's; this file only collects
 * fields and shows text and SVG. Everything comes from the book's own folder: no
 * network, from file:// as from a server.
 *
 * A chapter that reads files the build made (the King James text, a saved model) names
 * them in its module's setup (docs/playground/playground.cmake), with the values its
 * fields start with and the options it shows: each file comes as a script,
 * _static/playground/NAME.data.js, and is written into the program's own file system
 * before its first run.
 */
(function () {
  'use strict';

  const script = document.currentScript;
  const staticFolder = script ? script.src.replace(/playground\.js([?#].*)?$/, '') : '_static/';
  const modules = staticFolder + 'playground/';

  // The common options, in the order of the command line's --help.
  const COMMON = [
    {name: '--tokens', label: 'Tokens', hint: 'names separated by ","'},
    {name: '--embeddings', label: 'Embeddings E', hint: 'one row per token; rows ";", entries ","'},
    {name: '--wq', label: 'W_Q', hint: 'one row per embedding feature'},
    {name: '--wk', label: 'W_K', hint: 'one row per embedding feature'},
    {name: '--wv', label: 'W_V', hint: 'one row per embedding feature'},
    {name: '--causal', label: 'Causal mask', flag: true},
    {name: '--precision', label: 'Decimals', hint: '0 to 10'},
    {name: '--seed', label: 'Seed', hint: 'of the random experiment'},
  ];

  // A chapter's own options: a short name for each field (its --help line becomes the hint
  // under it). An option not listed here is named by the first part of its --help line.
  const OWN_LABELS = {
    '--heads': 'Heads h',
    '--wo': 'Output projection W_O',
    '--source': 'Source sequence',
    '--positions': 'Positions',
    '--upstream': 'Gradient dO',
    '--steps': 'Training steps',
    '--key-block': 'Keys per block',
    '--parts': 'Workers',
    '--load': 'Saved model',
    '--sequence': 'Sequence',
    '--prompt': 'Prompt',
    '--length': 'Characters to generate',
    '--temperature': 'Temperature T',
    '--top-k': 'Top-k',
    '--greedy': 'Greedy choice',
  };

  function ownLabel(option) {
    if (OWN_LABELS[option.name]) return OWN_LABELS[option.name];
    const first = option.help.split(/[;,:(]/)[0].trim();
    return first ? first.charAt(0).toUpperCase() + first.slice(1) : option.name.replace(/^--/, '').replace(/-/g, ' ');
  }

  // The figures in the order the chapter shows them (the page's own figures), then any others.
  function chapterOrder(names) {
    const shown = Array.from(document.querySelectorAll('figure.chapter-figure img'))
      .map(function (img) { return (img.getAttribute('src') || '').split('/').pop(); });
    const rank = function (name) { const at = shown.indexOf(name); return at < 0 ? shown.length : at; };
    return names.map(function (name, index) { return [name, index]; })
      .sort(function (a, b) { return rank(a[0]) - rank(b[0]) || a[1] - b[1]; })
      .map(function (pair) { return pair[0]; });
  }

  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === 'text') node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }

  // As a reader types it in a shell: quoted when it holds anything but plain characters.
  function shellWord(word) {
    return /^[A-Za-z0-9_\/.,=:+-]+$/.test(word) ? word : '"' + word.replace(/(["\\$`])/g, '\\$1') + '"';
  }

  // One request to the program: describe it (with its panel's setup), put files into its
  // file system, or run it. The same function runs in the worker and on the page.
  function serve(program, request) {
    if (request.kind === 'describe') {
      const info = program.describe();
      info.setup = program.bookSetup || {files: [], start: []};
      return info;
    }
    if (request.kind === 'explore') {  // the attention explorer (explorer.js): a JSON text
      return program.explore(request.path, request.text, request.layer, request.head);
    }
    if (request.kind === 'sample') {  // chapter 16's sampler on one row of logits (explorer.js)
      return program.sample(request.logits, request.temperature, request.topK, request.greedy, request.seed,
                            request.draw);
    }
    if (request.kind === 'steps') {  // chapter 7's worked example, step by step (stepper.js): a JSON text
      return program.attention_steps();
    }
    if (request.kind === 'put') {
      for (const path of Object.keys(request.files)) program.put_file(path, request.files[path]);
      return null;
    }
    return program.run(request.args);
  }

  // The program runs in a worker, so that the page stays usable while it computes (the
  // experiment of chapter 3 takes seconds). The worker is made from the module's own
  // source: a page opened from file:// may not start a worker from a file, but it may
  // from a blob. Where no worker can start, the program runs on the page itself.
  const WORKER_MAIN = [
    'var ready = BookProgram();',
    'onmessage = function (event) {',
    '  var request = event.data;',
    '  ready.then(function (program) {',
    '    var reply;',
    '    try {',
    '      reply = {id: request.id, result: serve(program, request)};',
    '    } catch (error) {',
    '      reply = {id: request.id, error: String(error)};',
    '    }',
    '    postMessage(reply);',
    '  }, function (error) { postMessage({id: request.id, error: "the program could not start: " + error}); });',
    '};',
  ].join('\n');

  function onPage(factory) {
    const ready = factory();
    return {
      call: function (request) {
        return ready.then(function (program) { return serve(program, request); });
      },
    };
  }

  function inWorker(factory) {
    const source = 'var _scriptDir = undefined;\nvar BookProgram = ' + factory.toString() + ';\nvar serve = ' +
      serve.toString() + ';\n' + WORKER_MAIN;
    const worker = new Worker(URL.createObjectURL(new Blob([source], {type: 'text/javascript'})));
    const waiting = new Map();
    let next = 0;
    worker.onmessage = function (event) {
      const reply = event.data;
      const pending = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (!pending) return;
      if ('error' in reply) pending.reject(new Error(reply.error));
      else pending.resolve(reply.result);
    };
    worker.onerror = function (event) {
      event.preventDefault();
      for (const pending of waiting.values()) pending.reject(new Error(event.message || 'the worker stopped'));
      waiting.clear();
    };
    return {
      call: function (request) {
        return new Promise(function (resolve, reject) {
          const id = ++next;
          waiting.set(id, {resolve: resolve, reject: reject});
          const files = Object.values(request.files || {}).map(function (bytes) { return bytes.buffer; });
          worker.postMessage(Object.assign({id: id}, request), files);
        });
      },
    };
  }

  // A script of the page's own folder, loaded once.
  const scripts = new Map();
  function loadScript(name) {
    if (!scripts.has(name)) {
      scripts.set(name, new Promise(function (resolve, reject) {
        const tag = element('script', {src: modules + name + '.js', async: 'async'});
        tag.onload = resolve;
        tag.onerror = function () { reject(new Error('_static/playground/' + name + '.js could not be read')); };
        document.head.appendChild(tag);
      }));
    }
    return scripts.get(name);
  }

  // The files a program reads, from their scripts (NAME.data.js): {path: Uint8Array}.
  function loadFiles(names) {
    return Promise.all(names.map(function (name) { return loadScript(name + '.data'); })).then(function () {
      const files = {};
      for (const [path, entry] of Object.entries(self.BookPlaygroundFiles || {})) {
        if ('text' in entry) {
          files[path] = new TextEncoder().encode(entry.text);
        } else {
          const binary = atob(entry.base64);
          const bytes = new Uint8Array(binary.length);
          for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
          files[path] = bytes;
        }
      }
      return files;
    });
  }

  // One script per page; every panel of the page shares its program.
  let loading = null;
  function loadProgram(program) {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        loadScript(program).then(function () {
          if (typeof window.BookProgram !== 'function') {
            reject(new Error('the module defines no program'));
            return;
          }
          let runner;
          try {
            runner = inWorker(window.BookProgram);
          } catch (error) {
            runner = onPage(window.BookProgram);
          }
          // The program's description, and the files it reads written into its file system.
          runner.info = runner.call({kind: 'describe'}).then(function (info) {
            return loadFiles(info.setup.files).then(function (files) {
              return runner.call({kind: 'put', files: files});
            }).then(function () { return info; });
          });
          resolve(runner);
        }, reject);
      });
    }
    return loading;
  }

  function start(panel) {
    const program = panel.dataset.program;
    const started = performance.now();
    const status = panel.querySelector('.playground-status') || element('p', {class: 'playground-status', role: 'status'});
    status.textContent = 'Loading the chapter program...';
    panel.dataset.state = 'loading';
    loadProgram(program).then(function (runner) {
      return runner.info.then(function (info) { build(panel, runner, info, status, started); });
    }).catch(function (error) {
      panel.dataset.state = 'unavailable';
      status.textContent = 'The chapter program could not be loaded here (' + error.message +
        '); the command line above runs the same program.';
    });
  }

  // A flag's value, as the program or the setup writes it: true, 'true' or 'on' is set.
  function isOn(value) { return value === true || value === 'true' || value === 'on'; }

  // The panel's fields: the common options the program reads, then its own (those its setup
  // shows, or all), each with the program's default and the value the panel starts with.
  function panelOptions(info) {
    const start = {};
    for (let i = 0; i + 1 < info.setup.start.length; i += 2) start[info.setup.start[i]] = info.setup.start[i + 1];
    const options = COMMON.filter(function (option) {
      return !info.unused.includes(option.name) && (option.name !== '--seed' || info.usesSeed);
    }).map(function (option) { return Object.assign({}, option, {defaultValue: info.defaults[option.name]}); });
    for (const own of info.options) {
      if (info.setup.fields && !info.setup.fields.includes(own.name)) continue;
      options.push({name: own.name, label: ownLabel(own), hint: own.help, defaultValue: own.defaultValue,
                    flag: own.value === ''});
    }
    for (const option of options) {
      option.startValue = option.name in start ? start[option.name] : option.defaultValue;
    }
    return options;
  }

  function build(panel, runner, info, status, started) {
    const fields = [];
    const grid = element('div', {class: 'playground-fields'});
    for (const option of panelOptions(info)) {
      const id = 'playground-' + option.name.replace(/^--/, '');
      const input = option.flag
        ? element('input', {type: 'checkbox', id: id, name: option.name})
        : element('input', {type: 'text', id: id, name: option.name, spellcheck: 'false', autocomplete: 'off',
                            autocapitalize: 'off', inputmode: 'text'});
      if (option.flag) {
        input.checked = isOn(option.startValue);
        input.disabled = isOn(option.defaultValue);  // no option turns a default on again off
      } else {
        input.value = String(option.startValue);
      }
      input.dataset.default = String(option.startValue);  // the panel's example
      input.dataset.programDefault = String(option.defaultValue);
      const label = element('label', {for: id}, [
        element('span', {class: 'playground-label', text: option.label + ' '}),
        element('code', {text: option.name}),
      ]);
      const hint = option.hint ? [element('span', {class: 'playground-hint', text: option.hint})] : [];
      grid.appendChild(element('div', {class: 'playground-field' + (option.flag ? ' playground-flag' : '')},
                               option.flag ? [input, label] : [label, input].concat(hint)));
      fields.push({option: option, input: input});
    }

    const run = element('button', {type: 'submit', class: 'playground-run', text: 'Run'});
    const reset = element('button', {type: 'button', class: 'playground-reset', text: "The book's example"});
    const form = element('form', {class: 'playground-form', novalidate: 'novalidate'},
                         [grid, element('div', {class: 'playground-actions'}, [run, reset, status])]);
    const command = element('code', {class: 'playground-command'});
    // The output scrolls sideways on a narrow screen, so it is focusable (a keyboard
    // reader can scroll it) and named; the status line above announces each result.
    const outputId = 'playground-output-' + panel.dataset.program;
    const output = element('pre', {class: 'playground-output', id: outputId, tabindex: '0', role: 'region',
                                   'aria-label': 'What the program printed'});
    const figures = element('div', {class: 'playground-figures'});
    panel.replaceChildren(form, element('p', {class: 'playground-command-line'},
                                        [document.createTextNode('The same on the command line: '), command]),
                          element('div', {class: 'highlight-text notranslate'},
                                  [element('div', {class: 'highlight'}, [output])]),
                          figures);

    // A refusal names its option first ("ch07-attention: --wq: expected ..."): that field is marked
    // invalid and described by the error text, so a screen reader reads both together.
    function markRefusedField(error) {
      const message = error.replace(/^[\w-]+: /, '');  // after the program's name
      for (const {option, input} of fields) {
        const refused = message.startsWith(option.name + ':') || message.startsWith(option.name + ' ');
        if (refused) {
          input.setAttribute('aria-invalid', 'true');
          input.setAttribute('aria-describedby', outputId);
        } else {
          input.removeAttribute('aria-invalid');
          input.removeAttribute('aria-describedby');
        }
      }
    }

    // Only what differs from the program's defaults, as a reader would type it.
    function argumentsOf() {
      const args = [];
      for (const {option, input} of fields) {
        if (option.flag) {
          if (input.checked && !isOn(option.defaultValue)) args.push(option.name);
        } else if (input.value !== String(option.defaultValue)) {
          args.push(option.name, input.value);
        }
      }
      return args;
    }

    // One run at a time; a run asked for meanwhile waits, and only the latest one runs.
    let running = false;
    let again = false;
    function show() {
      if (running) {
        again = true;
        return;
      }
      running = true;
      again = false;
      const args = argumentsOf();
      panel.dataset.state = 'running';
      status.textContent = 'Running...';
      runner.info.then(function () { return runner.call({kind: 'run', args: args}); }).then(function (result) {
        command.textContent = ['build/bin/' + info.name].concat(args.map(shellWord)).join(' ');
        // The whole text at once: never half a table.
        output.textContent = result.status === 0 ? result.stdout : result.stderr;
        output.classList.toggle('playground-error', result.status !== 0);
        markRefusedField(result.status === 0 ? '' : result.stderr);
        if (result.status === 0) {
          const images = chapterOrder(Object.keys(result.figures)).map(function (name) {
            const svg = result.figures[name];
            const title = (/<title>([^<]*)<\/title>/.exec(svg) || [null, name])[1];
            return element('figure', {class: 'playground-figure'}, [
              element('img', {src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg),
                              alt: 'Figure ' + name + ' from the numbers above: ' + title, 'data-name': name}),
              element('figcaption', {text: name}),
            ]);
          });
          figures.replaceChildren.apply(figures, images);
          figures.classList.remove('playground-stale');
          const lines = result.stdout.split('\n').filter(Boolean).length;
          status.textContent = 'Exit status 0: ' + lines + ' lines of output and ' + images.length +
            (images.length === 1 ? ' figure' : ' figures') + ' below.';
        } else {
          figures.classList.add('playground-stale');
          status.textContent = 'Exit status ' + result.status + ': the program refused these numbers: ' +
            result.stderr.trim() +
            (figures.childElementCount ? ' The figures still show the last run that worked.' : '');
        }
        panel.dataset.args = JSON.stringify(args);
        panel.dataset.status = String(result.status);
        panel.dataset.state = 'done';
      }, function (error) {
        // The program itself stopped (it never should): say so, keep the page, and load it afresh.
        panel.dataset.state = 'crashed';
        output.textContent = 'The program stopped unexpectedly: ' + error.message;
        figures.classList.add('playground-stale');
        loading = null;
        loadProgram(panel.dataset.program).then(function (fresh) { runner = fresh; });
      }).then(function () {
        panel.dataset.runs = String(Number(panel.dataset.runs || 0) + 1);
        if (!panel.dataset.firstResultMs) panel.dataset.firstResultMs = String(Math.round(performance.now() - started));
        running = false;
        if (again) show();
      });
    }

    let timer = null;
    form.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(show, 300);
    });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      clearTimeout(timer);
      show();
    });
    reset.addEventListener('click', function () {
      for (const {option, input} of fields) {
        if (option.flag) input.checked = isOn(option.startValue);
        else input.value = String(option.startValue);
      }
      clearTimeout(timer);
      show();
    });
    show();
  }

  // The attention explorer (explorer.js) and the stepper (stepper.js) of a page, each loaded where a page
  // has one, share the page's program with its panel.
  function startViews(selector, file, global, what) {
    const roots = document.querySelectorAll(selector);
    if (!roots.length) return;
    const tag = element('script', {src: staticFolder + file, async: 'async'});
    tag.onload = function () {
      roots.forEach(function (root) { window[global].start(root, loadProgram); });
    };
    tag.onerror = function () {
      roots.forEach(function (root) {
        root.dataset.state = 'unavailable';
        root.replaceChildren(element('p', {text: 'The ' + what + ' could not be loaded here (_static/' + file + ').'}));
      });
    };
    document.head.appendChild(tag);
  }

  function startAll() {
    document.querySelectorAll('.playground[data-program]').forEach(start);
    startViews('.explorer[data-program]', 'explorer.js', 'BookExplorer', 'explorer');
    startViews('.stepper[data-program]', 'stepper.js', 'BookStepper', 'stepper');
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', startAll);
  else startAll();
})();
