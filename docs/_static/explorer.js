/* The attention explorer: see inside one of the book's saved models, live.
 *
 * A page holds it as <div class="explorer" data-program="chNN-slug" data-text="..."
 * data-models="build/FILE|its name;build/FILE|its name">, the models the reader chooses from. playground.js loads this file where a page has one, and shares its chapter
 * program (the WebAssembly module of docs/playground, in a worker) with the "Try it here" panel.
 * The module's explore() (docs/playground/explorer.cpp) runs the library's forward pass once per
 * text and returns every layer's and head's attention weights and the next-character
 * probabilities after each position; everything below only shows those numbers.
 *
 * Hover a character to focus it, click (or Enter) to lock the focus, click again or Escape to
 * unlock; the arrow keys, Home and End move the focus. For the focused character, each head of the
 * chosen layer shows its weights over the characters up to it (colour, and the number on demand),
 * and the bars show the model's most likely next characters. A live region says the same in words.
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
    const controls = element('div', {class: 'explorer-controls'}, [
      element('div', {class: 'explorer-field explorer-text'}, [
        element('label', {for: textInput.id, text: 'Text (up to the model\u2019s context)'}), textInput]),
      element('div', {class: 'explorer-field'}, [element('label', {for: modelSelect.id, text: 'Model'}), modelSelect]),
      element('div', {class: 'explorer-field'}, [element('label', {for: layerSelect.id, text: 'Layer'}), layerSelect]),
      element('div', {class: 'explorer-field'}, [
        element('label', {for: ablationSelect.id, text: 'Zero one head\u2019s output'}), ablationSelect]),
      element('div', {class: 'explorer-field explorer-flag'}, [
        numbers, element('label', {for: numbers.id, text: 'Show the weights as numbers'})]),
    ]);
    const characters = element('div', {class: 'explorer-characters', role: 'group',
                                       'aria-label': 'The characters of the text: hover or use the arrow keys to ' +
                                                     'focus one, click or Enter to lock it, Escape to unlock'});
    const heads = element('div', {class: 'explorer-heads'});
    const next = element('div', {class: 'explorer-next'});
    const announce = element('p', {class: 'explorer-announce', 'aria-live': 'polite'});
    root.replaceChildren(controls, status, characters, heads, next, announce);

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
            ' (' + reply.layers + ' layers of ' + reply.heads + ' heads).';
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
        panels.push(element('figure', {class: 'explorer-head', 'data-head': name}, [
          element('figcaption', {}, [element('strong', {text: name}),
                                     document.createTextNode(' most on ' + words.join(', '))]),
          element('div', {class: 'explorer-row' + (numbers.checked ? ' explorer-with-numbers' : '')}, cells),
        ]));
      }
      heads.replaceChildren.apply(heads, panels);
      const probabilities = result.probabilities[focus];
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
                                         text: 'After ' + focused + ' at ' + focus + ', the model\u2019s next character:'}),
                           element('ol', {class: 'explorer-bars'}, bars));
      root.dataset.focus = String(focus);
      root.dataset.locked = String(locked);
      root.dataset.layer = String(layer);
      if (speak) {
        announce.textContent = 'Character ' + focus + ', ' + focused + (locked ? ', locked' : '') + '. ' +
          spoken.join('; ') + '. Next: ' + best.map(function (pair) {
            return label(result.vocabulary[pair[0]]) + ' ' + fixed(pair[1]);
          }).join(', ') + '.';
      }
      root.dataset.renderMs = (performance.now() - started).toFixed(1);
    }

    function moveTo(position, speak) {
      if (result === null || position < 0 || position >= result.text.length) return;
      focus = position;
      render(speak);
    }

    characters.addEventListener('mouseover', function (event) {
      const button = event.target.closest('.explorer-character');
      if (button && !locked) moveTo(Number(button.dataset.position), false);
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
    numbers.addEventListener('change', function () { if (result) render(false); });
    ablationSelect.addEventListener('change', run);
    modelSelect.addEventListener('change', function () {
      ablationSelect.value = '';  // a head of one model is no head of the other
      run();
    });
    let timer = null;
    textInput.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(run, 300);
    });

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
