/* The attention explorer: see inside one of the book's saved models, live.
 *
 * A page holds it as <div class="explorer" data-program="chNN-slug" data-text="..."
 * data-models="build/FILE|its name;build/FILE|its name">, the models the reader chooses from. playground.js loads this file where a page has one, and shares its chapter
 * program (the WebAssembly module of docs/playground, in a worker) with the "Try it here" panel.
 * The module's explore() (docs/playground/explorer.cpp) runs the library's forward pass once per
 * text and returns every layer's and head's attention weights and the next-character
 * probabilities after each position; everything below only shows those numbers.
 *
 * Hover a character to focus it (moving the pointer: one that comes under a pointer at rest does not
 * take the focus), click (or Enter) to lock the focus, click again or Escape to unlock; the arrow
 * keys, Home and End move the focus. For the focused character, each head of the
 * chosen layer shows its weights over the characters up to it (colour, and the number on demand),
 * and the bars show the model's most likely next characters. A live region says the same in words.
 * A head selector enlarges one head; a button saves the view as an SVG file.
 *
 * With data-sampling="SEED" (chapter 16), a sampling view: temperature and top-k sliders and a greedy
 * switch reshape the bars into the probabilities the rule draws from, and a button draws the next
 * character after the text with the seed's next uniform number. Both are the module's sample()
 * (docs/playground/explorer.cpp: the library's rule_probabilities(), greedy_choice() and
 * inverse_cdf_draw()), so the n-th draw after the reader's text is generate_text()'s n-th character.
 */
(function () {
  'use strict';

  const TOP_WEIGHTS = 3;       // the weights each head's caption and the announcement name
  const TOP_CHARACTERS = 5;    // the bars of the next character
  const LIGHT = [255, 255, 255];  // weight 0
  const DARK = [23, 63, 128];     // weight 1

  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === 'text') node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }

  // A character as the book's tables label it: a space as "␣", a newline as "\n".
  function label(character) {
    return character === ' ' ? '\u2423' : character === '\n' ? '\\n' : character === '\t' ? '\\t' : character;
  }

  function relativeLuminance(rgb) {
    const linear = rgb.map(function (c) {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
  }

  // A weight's colour, from white (0) to dark blue (1), with the text colour that keeps a contrast
  // of at least 4.5 on it (black above the luminance where both reach the same contrast, white below).
  function weightColours(weight) {
    const rgb = LIGHT.map(function (light, k) { return Math.round(light + (DARK[k] - light) * weight); });
    return {background: 'rgb(' + rgb.join(',') + ')', text: relativeLuminance(rgb) > 0.179 ? '#000' : '#fff'};
  }

  function fixed(value) { return value.toFixed(3); }

  // The largest entries of a list, as [index, value], the largest first (the first index on a tie).
  function largest(values, count) {
    return values.map(function (value, index) { return [index, value]; })
      .sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; }).slice(0, count);
  }

  function start(root, loadProgram) {
    const program = root.dataset.program;
    // Each model as [path, name]; the path is where playground.js wrote the build's file.
    const models = (root.dataset.models || '').split(';').map(function (entry) { return entry.split('|'); });
    const id = 'explorer-' + program;
    const status = element('p', {class: 'explorer-status', role: 'status', text: 'Loading the model...'});
    root.dataset.state = 'loading';
    const textInput = element('input', {type: 'text', id: id + '-text', spellcheck: 'false', autocomplete: 'off',
                                        autocapitalize: 'off'});
    textInput.value = root.dataset.text || '';
    const modelSelect = element('select', {id: id + '-model'});
    for (const [path, name] of models) modelSelect.appendChild(element('option', {value: path, text: name}));
    const layerSelect = element('select', {id: id + '-layer'});
    const ablationSelect = element('select', {id: id + '-ablation'});
    ablationSelect.appendChild(element('option', {value: '', text: 'none'}));
    const numbers = element('input', {type: 'checkbox', id: id + '-numbers'});
    const enlargeSelect = element('select', {id: id + '-enlarge'});
    enlargeSelect.appendChild(element('option', {value: '', text: 'none'}));
    const save = element('button', {type: 'button', class: 'explorer-save', text: 'Save this view as SVG'});
    const controls = element('div', {class: 'explorer-controls'}, [
      element('div', {class: 'explorer-field explorer-text'}, [
        element('label', {for: textInput.id, text: 'Text (up to the model\u2019s context)'}), textInput]),
      element('div', {class: 'explorer-field'}, [element('label', {for: modelSelect.id, text: 'Model'}), modelSelect]),
      element('div', {class: 'explorer-field'}, [element('label', {for: layerSelect.id, text: 'Layer'}), layerSelect]),
      element('div', {class: 'explorer-field'}, [
        element('label', {for: ablationSelect.id, text: 'Zero one head\u2019s output'}), ablationSelect]),
      element('div', {class: 'explorer-field explorer-flag'}, [
        numbers, element('label', {for: numbers.id, text: 'Show the weights as numbers'})]),
      element('div', {class: 'explorer-field'}, [
        element('label', {for: enlargeSelect.id, text: 'Enlarge one head'}), enlargeSelect]),
      element('div', {class: 'explorer-field'}, [save]),
    ]);
    const characters = element('div', {class: 'explorer-characters', role: 'group',
                                       'aria-label': 'The characters of the text: hover or use the arrow keys to ' +
                                                     'focus one, click or Enter to lock it, Escape to unlock'});
    const heads = element('div', {class: 'explorer-heads'});
    const next = element('div', {class: 'explorer-next'});
    const announce = element('p', {class: 'explorer-announce', 'aria-live': 'polite'});
    const sampling = 'sampling' in root.dataset ? samplingView(id, root.dataset.sampling) : null;
    root.replaceChildren.apply(root, [controls, status, characters, heads, next].concat(
      sampling ? [sampling.view] : [], [announce]));

    let result = null;      // the last explore() result that worked
    let focus = -1;         // the focused position, or -1
    let locked = false;
    let runner = null;

    // One run at a time; a run asked for meanwhile waits, and only the latest one runs.
    let running = false;
    let again = false;
    function run() {
      if (running) { again = true; return; }
      running = true;
      again = false;
      const ablation = ablationSelect.value ? ablationSelect.value.split(',').map(Number) : [-1, -1];
      const request = {kind: 'explore', path: '/' + modelSelect.value, text: textInput.value, layer: ablation[0],
                       head: ablation[1]};
      const started = performance.now();
      root.dataset.state = 'running';
      runner.info.then(function () { return runner.call(request); }).then(function (json) {
        const reply = JSON.parse(json);
        if (reply.error) {
          status.textContent = 'The model cannot read this text: ' + reply.error;
          textInput.setAttribute('aria-invalid', 'true');
          root.dataset.state = 'error';
        } else {
          textInput.removeAttribute('aria-invalid');
          showResult(reply);
          const ms = Math.round(performance.now() - started);
          root.dataset.runMs = String(ms);
          status.textContent = 'The model read ' + reply.text.length + ' characters' +
            (reply.ablated ? ', with L' + reply.ablated[0] + 'H' + reply.ablated[1] + '\u2019s output zeroed' : '') +
            ' (' + reply.layers + (reply.layers === 1 ? ' layer' : ' layers') + ' of ' + reply.heads + ' heads).';
          root.dataset.state = 'done';
        }
      }, function (error) {
        status.textContent = 'The model could not run here (' + error.message + ').';
        root.dataset.state = 'unavailable';
      }).then(function () {
        root.dataset.runs = String(Number(root.dataset.runs || 0) + 1);
        running = false;
        if (again) run();
      });
    }

    // The layer and ablation choices, made again when the model's shape changes.
    function shapeChoices(reply) {
      if (result !== null && result.layers === reply.layers && result.heads === reply.heads) return;
      layerSelect.replaceChildren();
      ablationSelect.replaceChildren(element('option', {value: '', text: 'none'}));
      for (let l = 0; l < reply.layers; ++l) {
        layerSelect.appendChild(element('option', {value: String(l), text: 'Layer ' + l}));
        for (let h = 0; h < reply.heads; ++h) {
          ablationSelect.appendChild(element('option', {value: l + ',' + h, text: 'L' + l + 'H' + h}));
        }
      }
      layerSelect.value = String(reply.layers - 1);
      enlargeSelect.replaceChildren(element('option', {value: '', text: 'none'}));
      for (let h = 0; h < reply.heads; ++h) {
        enlargeSelect.appendChild(element('option', {value: String(h), text: 'head ' + h}));
      }
    }

    function showResult(reply) {
      shapeChoices(reply);
      result = reply;
      textInput.setAttribute('maxlength', String(reply.context));
      const buttons = Array.from(reply.text).map(function (character, i) {
        return element('button', {type: 'button', class: 'explorer-character', 'data-position': String(i),
                                  tabindex: '-1', 'aria-label': 'character ' + i + ', ' + label(character)},
                       [document.createTextNode(label(character))]);
      });
      characters.replaceChildren.apply(characters, buttons);
      if (sampling) sampling.shape(reply);
      if (focus >= reply.text.length) { focus = reply.text.length - 1; }
      if (focus < 0) { focus = reply.text.length - 1; locked = false; }
      render(false);
    }

    // What the focused character shows: each head of the layer, the next character, the announcement.
    function render(speak) {
      const started = performance.now();
      const buttons = characters.children;
      for (let i = 0; i < buttons.length; ++i) {
        buttons[i].setAttribute('tabindex', i === focus ? '0' : '-1');
        buttons[i].classList.toggle('explorer-focused', i === focus);
        buttons[i].setAttribute('aria-pressed', i === focus && locked ? 'true' : 'false');
      }
      const layer = Number(layerSelect.value);
      const panels = [];
      const spoken = [];
      for (let h = 0; h < result.heads; ++h) {
        const row = result.weights[layer][h][focus];
        const name = 'L' + layer + 'H' + h;
        const top = largest(row, TOP_WEIGHTS);
        const words = top.map(function (pair) {
          return label(result.text[pair[0]]) + ' at ' + pair[0] + ' ' + fixed(pair[1]);
        });
        spoken.push(name + ': ' + words.join(', '));
        const cells = Array.from(result.text).map(function (character, j) {
          if (j > focus) {
            return element('span', {class: 'explorer-cell explorer-masked', title: 'masked: after the focused character'},
                           [document.createTextNode(label(character))]);
          }
          const colours = weightColours(row[j]);
          const cell = element('span', {class: 'explorer-cell' + (j === focus ? ' explorer-self' : ''),
                                        'data-weight': String(row[j]),
                                        title: name + ': from ' + focus + ' to ' + label(character) + ' at ' + j +
                                               ', weight ' + fixed(row[j]),
                                        style: 'background:' + colours.background + ';color:' + colours.text},
                               [document.createTextNode(label(character))]);
          if (numbers.checked) cell.appendChild(element('span', {class: 'explorer-number', text: fixed(row[j])}));
          return cell;
        });
        const enlarged = enlargeSelect.value === String(h);
        panels.push(element('figure', {class: 'explorer-head' + (enlarged ? ' explorer-enlarged' : ''), 'data-head': name}, [
          element('figcaption', {}, [element('strong', {text: name}),
                                     document.createTextNode(' most on ' + words.join(', '))]),
          element('div', {class: 'explorer-row' + (numbers.checked ? ' explorer-with-numbers' : '')}, cells),
        ]));
      }
      heads.replaceChildren.apply(heads, panels);
      const best = showBars(result.probabilities[focus], null);
      root.dataset.focus = String(focus);
      root.dataset.locked = String(locked);
      root.dataset.layer = String(layer);
      root.dataset.enlarged = enlargeSelect.value;
      if (speak) {
        announce.textContent = 'Character ' + focus + ', ' + label(result.text[focus]) + (locked ? ', locked' : '') +
          '. ' + spoken.join('; ') + '. Next: ' + best.map(function (pair) {
            return label(result.vocabulary[pair[0]]) + ' ' + fixed(pair[1]);
          }).join(', ') + '.';
      }
      root.dataset.renderMs = (performance.now() - started).toFixed(1);
      if (sampling) sampling.update();
    }

    // The bars of the next character after the focused one: the model's probabilities, or (with a
    // rule's name) those the sampling rule draws from. Returns the bars' [index, probability].
    function showBars(probabilities, rule) {
      const best = largest(probabilities, TOP_CHARACTERS);
      const bars = best.map(function (pair) {
        const character = result.vocabulary[pair[0]];
        return element('li', {class: 'explorer-bar', 'data-character': character, 'data-probability': String(pair[1])}, [
          element('span', {class: 'explorer-bar-label', text: label(character)}),
          element('span', {class: 'explorer-bar-track'}, [
            element('span', {class: 'explorer-bar-fill', style: 'width:' + (100 * pair[1]).toFixed(1) + '%'})]),
          element('span', {class: 'explorer-bar-value', text: fixed(pair[1])}),
        ]);
      });
      const focused = label(result.text[focus]);
      next.replaceChildren(element('p', {class: 'explorer-next-title',
                                         text: 'After ' + focused + ' at ' + focus + ', the model\u2019s next character' +
                                               (rule ? ', as ' + rule + ' draws it:' : ':')}),
                           element('ol', {class: 'explorer-bars'}, bars));
      return best;
    }

    function moveTo(position, speak) {
      if (result === null || position < 0 || position >= result.text.length) return;
      focus = position;
      render(speak);
    }

    // A hover is the pointer moving over a character: 'mousemove', not 'mouseover', which the browser also
    // sends when a character comes under a pointer at rest (the page scrolled to the focus the arrow keys
    // moved, or a rerun drew the characters anew), and that must not take the focus from the keyboard.
    characters.addEventListener('mousemove', function (event) {
      const button = event.target.closest('.explorer-character');
      const position = button ? Number(button.dataset.position) : focus;
      if (!locked && position !== focus) moveTo(position, false);
    });
    characters.addEventListener('click', function (event) {
      const button = event.target.closest('.explorer-character');
      if (!button) return;
      const position = Number(button.dataset.position);
      locked = !(locked && position === focus);
      focus = position;
      button.focus();
      render(true);
    });
    characters.addEventListener('focusin', function (event) {
      const button = event.target.closest('.explorer-character');
      if (button && Number(button.dataset.position) !== focus && !locked) moveTo(Number(button.dataset.position), true);
    });
    characters.addEventListener('keydown', function (event) {
      if (result === null) return;
      const moves = {ArrowLeft: focus - 1, ArrowRight: focus + 1, Home: 0, End: result.text.length - 1};
      if (event.key in moves) {
        event.preventDefault();
        const position = Math.max(0, Math.min(result.text.length - 1, moves[event.key]));
        moveTo(position, true);
        characters.children[focus].focus();
      } else if (event.key === 'Escape' && locked) {
        event.preventDefault();
        locked = false;
        render(true);
      }
    });
    layerSelect.addEventListener('change', function () { if (result) render(true); });
    enlargeSelect.addEventListener('change', function () { if (result) render(false); });
    save.addEventListener('click', function () { if (result) saveView(); });
    numbers.addEventListener('change', function () { if (result) render(false); });
    ablationSelect.addEventListener('change', run);
    modelSelect.addEventListener('change', function () {
      ablationSelect.value = '';  // a head of one model is no head of the other
      run();
    });
    let timer = null;
    textInput.addEventListener('input', function () {
      if (sampling) sampling.restart();
      clearTimeout(timer);
      timer = setTimeout(run, 300);
    });

    // Chapter 16's sampler on the bars, and the draw of the next character (with data-sampling).
    function samplingView(id, seedText) {
      const temperature = element('input', {type: 'range', id: id + '-temperature', min: '0.1', max: '2', step: '0.1',
                                            value: '0.8'});
      const temperatureShown = element('output', {for: temperature.id, text: '0.8'});
      const topK = element('input', {type: 'range', id: id + '-top-k', min: '1', max: '1', step: '1', value: '1'});
      const topKShown = element('output', {for: topK.id});
      const greedy = element('input', {type: 'checkbox', id: id + '-greedy'});
      const seed = element('input', {type: 'text', id: id + '-seed', inputmode: 'numeric', spellcheck: 'false',
                                     autocomplete: 'off'});
      seed.value = seedText || '2017';
      const draw = element('button', {type: 'button', class: 'explorer-draw', text: 'Draw the next character'});
      const said = element('p', {class: 'explorer-draw-status', role: 'status'});
      const view = element('fieldset', {class: 'explorer-sampling'}, [
        element('legend', {text: 'Sampling: the bars as chapter 16\u2019s sampler draws from them'}),
        element('div', {class: 'explorer-controls'}, [
          element('div', {class: 'explorer-field'}, [
            element('label', {for: temperature.id, text: 'Temperature \u03c4'}), temperature, temperatureShown]),
          element('div', {class: 'explorer-field'}, [element('label', {for: topK.id, text: 'Top-k'}), topK, topKShown]),
          element('div', {class: 'explorer-field explorer-flag'}, [
            greedy, element('label', {for: greedy.id, text: 'Greedy (the largest logit)'})]),
          element('div', {class: 'explorer-field'}, [element('label', {for: seed.id, text: 'Seed'}), seed]),
          element('div', {class: 'explorer-field'}, [draw]),
        ]),
        said,
      ]);
      let draws = 0;    // uniform numbers used since the reader last wrote the text or the seed
      let asked = 0;    // sample requests; only the latest one's bars are shown
      let drawing = false;
      function ruleName() {
        if (greedy.checked) return 'the greedy choice';
        return '\u03c4 = ' + temperature.value + ', ' +
          (topK.value === topK.max ? 'every character' : 'top-' + topK.value);
      }
      function request(row, n) {
        return {kind: 'sample', logits: row, temperature: Number(temperature.value), topK: Number(topK.value),
                greedy: greedy.checked, seed: Number(seed.value), draw: n};
      }
      function showControls() {
        temperatureShown.textContent = temperature.value;
        topKShown.textContent = topK.value === topK.max ? 'all' : topK.value;
        temperature.disabled = greedy.checked;
        topK.disabled = greedy.checked;
      }
      // The bars of the focused position under the rule.
      function update() {
        if (result === null) return;
        const mine = ++asked;
        root.dataset.samplingState = 'running';
        runner.call(request(result.logits[focus], draws)).then(function (json) {
          if (mine !== asked) return;
          const reply = JSON.parse(json);
          if (reply.error) said.textContent = 'The sampler refused these settings: ' + reply.error;
          else showBars(reply.probabilities, ruleName());
          root.dataset.samples = String(Number(root.dataset.samples || 0) + 1);
          root.dataset.samplingState = reply.error ? 'error' : 'done';
        });
      }
      draw.addEventListener('click', function () {
        if (result === null || drawing || textInput.value !== result.text) return;
        if (result.text.length >= result.context) {
          said.textContent = 'The text fills the model\u2019s context of ' + result.context + ' characters: shorten it ' +
            'to draw more.';
          return;
        }
        drawing = true;
        const text = result.text;
        runner.call(request(result.logits[text.length - 1], draws)).then(function (json) {
          const reply = JSON.parse(json);
          if (reply.error) {
            said.textContent = 'The sampler refused these settings: ' + reply.error;
            drawing = false;
            return;
          }
          const character = result.vocabulary[reply.drawn];
          const count = Number(root.dataset.draws || 0) + 1;
          said.textContent = 'Drawn: ' + label(character) + (greedy.checked ? ', the largest logit' :
            ', the first character whose cumulative probability is above u = ' + fixed(reply.uniform) +
            ' (uniform number ' + (draws + 1) + ' of seed ' + seed.value + ')') + ', under ' + ruleName() + '.';
          if (!greedy.checked) draws += 1;  // as generate_text() takes one uniform number per draw
          root.dataset.draws = String(count);
          root.dataset.uniform = String(reply.uniform);
          textInput.value = text + character;
          focus = -1;  // the bars after the new last character
          locked = false;
          run();
        });
      });
      temperature.addEventListener('input', function () { showControls(); update(); });
      topK.addEventListener('input', function () { showControls(); update(); });
      greedy.addEventListener('change', function () { showControls(); update(); });
      seed.addEventListener('input', function () { draws = 0; });
      return {
        view: view,
        update: update,
        restart: function () { draws = 0; },
        shape: function (reply) {  // a model's vocabulary: the top-k slider's range, all at first
          drawing = false;
          const v = String(reply.vocabulary.length);
          if (topK.max !== v) {
            topK.max = v;
            topK.value = v;
          }
          showControls();
        },
      };
    }

    function xml(text) {
      return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    }

    // The view as an SVG file: each head's weights of the focused row as coloured cells (each with its
    // weight in data-weight and its title), then the bars of the next character as they are shown.
    function viewSvg() {
      const cell = 22;
      const layer = Number(layerSelect.value);
      const n = result.text.length;
      const width = 70 + n * cell + 10;  // at least the bars' title line (640 below)
      const parts = [];
      let y = 24;
      parts.push('<text x="4" y="16" font-size="13">' + xml('Layer ' + layer + ', focused on ' +
                 label(result.text[focus]) + ' at ' + focus + ': where each head looks') + '</text>');
      for (let h = 0; h < result.heads; ++h) {
        const row = result.weights[layer][h][focus];
        parts.push('<g class="head" data-head="L' + layer + 'H' + h + '"><text x="4" y="' + (y + 15) +
                   '" font-size="12">L' + layer + 'H' + h + '</text>');
        for (let j = 0; j < n; ++j) {
          const x = 70 + j * cell;
          const character = xml(label(result.text[j]));
          if (j > focus) {
            parts.push('<rect x="' + x + '" y="' + y + '" width="' + (cell - 2) + '" height="' + (cell - 2) +
                       '" fill="none" stroke="#999" stroke-dasharray="2,2"/>');
            continue;
          }
          const colours = weightColours(row[j]);
          parts.push('<rect class="cell" x="' + x + '" y="' + y + '" width="' + (cell - 2) + '" height="' + (cell - 2) +
                     '" fill="' + colours.background + '" stroke="#999" data-weight="' + row[j] + '"><title>' +
                     xml('weight ' + fixed(row[j]) + ' on ' + label(result.text[j]) + ' at ' + j) + '</title></rect>' +
                     '<text x="' + (x + cell / 2 - 1) + '" y="' + (y + 15) + '" font-size="12" text-anchor="middle" ' +
                     'fill="' + colours.text + '">' + character + '</text>');
        }
        parts.push('</g>');
        y += cell + 4;
      }
      y += 14;
      parts.push('<text x="4" y="' + y + '" font-size="12">' + xml(next.querySelector('.explorer-next-title').textContent) +
                 '</text>');
      for (const bar of next.querySelectorAll('.explorer-bar')) {
        y += 18;
        const p = Number(bar.dataset.probability);
        parts.push('<text x="4" y="' + y + '" font-size="12">' + xml(label(bar.dataset.character)) + '</text>' +
                   '<rect class="bar" x="30" y="' + (y - 11) + '" width="' + (200 * p).toFixed(1) +
                   '" height="12" fill="rgb(' + DARK.join(',') + ')" data-probability="' + p + '"/>' +
                   '<text x="240" y="' + y + '" font-size="12">' + fixed(p) + '</text>');
      }
      return '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="' +
        Math.max(width, 640) + '" height="' + (y + 10) + '" font-family="monospace"><title>' +
        xml('Attention of ' + program + ', layer ' + layer + ', character ' + focus) + '</title>' +
        '<rect width="100%" height="100%" fill="#fff"/>' + parts.join('') + '</svg>\n';
    }

    function saveView() {
      const name = 'attention-' + program + '-layer' + layerSelect.value + '-character' + focus + '.svg';
      const address = URL.createObjectURL(new Blob([viewSvg()], {type: 'image/svg+xml'}));
      const link = element('a', {href: address, download: name});
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(address); }, 10000);
      root.dataset.saved = name;
    }

    loadProgram(program).then(function (loaded) {
      runner = loaded;
      run();
    }, function (error) {
      status.textContent = 'The model could not be loaded here (' + error.message + ').';
      root.dataset.state = 'unavailable';
    });
  }

  window.BookExplorer = {start: start};
})();
