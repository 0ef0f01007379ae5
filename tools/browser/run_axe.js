// Runs axe-core on the open page in one colour scheme (arguments[0]) for the given tags
// (arguments[1]), or only their colour rules (arguments[3]); returns the violations, each with at most four of its elements.
// text_contrast.js has judged the contrast of every text on the page but the elements
// arguments[2] lists (those it could not judge simply): axe-core's color-contrast rule looks at
// those alone, in the same run, and is left out when there are none (it would lay a grid over
// the whole page for nothing). Every other rule looks at every element.
const done = arguments[arguments.length - 1];
const [scheme, tags, undecided, colourRulesOnly] = arguments;
document.body.dataset.theme = scheme;
// link-in-text-block passes a link when either of its two checks does: the link's style sets it
// apart from the text around it (an underline, a border, a weight...: its check
// link-in-text-block-style, axe-core's own elementIsDistinct()), or its colour does. Both run for
// every link, and the colour's lays the same grid over the whole page, so the rule looks only at
// the links whose style does not already pass, found here with axe-core's own function.
const blockLike = element => {
  const display = getComputedStyle(element).display;
  return ['block', 'list-item', 'table', 'flex', 'grid', 'inline-block'].includes(display) ||
         display.startsWith('table-');
};
const plainLinks = Array.from(document.querySelectorAll('a[href], [role=link]')).filter(link => {
  let block = link.parentElement;
  while (block && !blockLike(block)) block = block.parentElement;
  return blockLike(link) || !block || !axe.commons.color.elementIsDistinct(link, block);
});
const MARK = 'data-contrast-undecided', PLAIN = 'data-link-plain';
undecided.forEach(element => element.setAttribute(MARK, ''));
plainLinks.forEach(link => link.setAttribute(PLAIN, ''));
// The rules' own selectors, narrowed: axe-core filters the page by each once, for that rule only.
axe.configure({noHtml: true, rules: [{id: 'color-contrast', selector: '[' + MARK + ']'},
                                     {id: 'link-in-text-block', selector: '[' + PLAIN + ']'}]});
// With colourRulesOnly (arguments[3]), only the rules of those tags whose result can depend on
// colours (axe-core's tag cat.color), for the second colour scheme (accessibility.py's audit_schemes()).
const colourRules = axe.getRules(tags).filter(rule => rule.tags.includes('cat.color')).map(rule => rule.ruleId)
  .filter(rule => rule !== 'color-contrast' || undecided.length);
const runOnly = colourRulesOnly ? {type: 'rule', values: colourRules} : {type: 'tag', values: tags};
const rules = undecided.length ? {} : {'color-contrast': {enabled: false}};
axe.run(document, {runOnly: runOnly, rules: rules, resultTypes: ['violations']})
  .then(result => done(result.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 4), count: v.nodes.length}))))
  .catch(error => done({error: String(error)}))
  .finally(() => {
    undecided.forEach(element => element.removeAttribute(MARK));
    plainLinks.forEach(link => link.removeAttribute(PLAIN));
  });
