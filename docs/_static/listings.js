/* Listings: a code line longer than the column wraps with a hanging indent.
 *
 * The theme wraps long code lines (book.css), and the wrapped part would start at the
 * left edge, where it reads as a new line. Each line of a code listing becomes a box of
 * its own whose wrapped part starts four characters deeper than the line's own
 * indentation (at most half the column, so that a deep line still has room). The text
 * is unchanged (the copy button copies the same characters); program output keeps its
 * columns and scrolls instead, so it is left as it is.
 */
(function () {
  'use strict';

  const HANG = 4;  // characters

  // The nodes of a <pre>, cut into lines: a list of lines, each a list of nodes.
  function lines(pre) {
    const result = [[]];
    for (const node of Array.from(pre.childNodes)) {
      const text = node.textContent;
      if (!text.includes('\n')) {
        result[result.length - 1].push(node);
        continue;
      }
      const parts = text.split('\n');
      parts.forEach(function (part, index) {
        if (index > 0) result.push([]);
        if (part === '') return;
        let piece;
        if (node.nodeType === Node.TEXT_NODE) {
          piece = document.createTextNode(part);
        } else {
          piece = node.cloneNode(false);  // a highlighted token that spans lines (a comment)
          piece.textContent = part;
        }
        result[result.length - 1].push(piece);
      });
    }
    return result;
  }

  function hang(pre) {
    if (pre.dataset.hanging) return;
    pre.dataset.hanging = 'yes';
    const split = lines(pre);
    pre.replaceChildren();
    split.forEach(function (nodes, index) {
      if (index > 0) pre.appendChild(document.createTextNode('\n'));
      if (nodes.length === 0) return;
      const text = nodes.map(function (node) { return node.textContent; }).join('');
      const indent = HANG + text.length - text.trimStart().length;
      const line = document.createElement('span');
      line.className = 'code-line';
      line.style.setProperty('--hang', indent + 'ch');  // book.css: at most half the column
      nodes.forEach(function (node) { line.appendChild(node); });
      pre.appendChild(line);
    });
  }

  function all() {
    document.querySelectorAll('div.highlight pre').forEach(function (pre) {
      if (!pre.closest('.highlight-text')) hang(pre);
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', all);
  else all();
})();
