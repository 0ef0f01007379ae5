// Runs axe-core on the open page in one colour scheme (arguments[0]) for the given tags
// (arguments[1]), or only their colour rules (arguments[4]); returns the violations, each with at most four of its elements.
// The text inside the blocks arguments[2] names (code tokens) is left out of axe's
// color-contrast rule, which code_contrast.js has checked; every other rule still looks
// at them. The elements arguments[3] lists (those code_contrast.js could not judge) are
// then audited by color-contrast on their own.
const done = arguments[arguments.length - 1];
const [scheme, tags, codeBlocks, undecided, colourRulesOnly] = arguments;
document.body.dataset.theme = scheme;
// The rule's own selector, narrowed: axe-core filters the page by it once, for this rule
// only. (A context "exclude" would leave the code out of every rule, and costs time for
// each excluded block on each element of the page.)
const contrastOn = selector => axe.configure({rules: [{id: 'color-contrast', selector: selector}]});
contrastOn('*:not(' + codeBlocks.flatMap(block => [block, block + ' *']).join(', ') + ')');
// With colourRulesOnly (arguments[4]), only the rules of those tags whose result can depend on
// colours (axe-core's tag cat.color), for the second colour scheme (accessibility.py's audit_schemes()).
const colourRules = axe.getRules(tags).filter(rule => rule.tags.includes('cat.color')).map(rule => rule.ruleId);
const runOnly = colourRulesOnly ? {type: 'rule', values: colourRules} : {type: 'tag', values: tags};
axe.run(document, {runOnly: runOnly, resultTypes: ['violations']})
  .then(result => {
    if (!undecided.length) return result.violations;
    contrastOn('*');
    return axe.run({include: undecided}, {runOnly: ['color-contrast'], resultTypes: ['violations']})
      .then(more => result.violations.concat(more.violations));
  })
  .then(violations => done(violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 4), count: v.nodes.length}))))
  .catch(error => done({error: String(error)}));
