// Runs axe-core on the open page in one colour scheme (arguments[0]) for the given tags
// (arguments[1]); returns the violations, each with at most four of its elements.
const done = arguments[arguments.length - 1];
document.body.dataset.theme = arguments[0];
axe.run(document, {runOnly: {type: 'tag', values: arguments[1]}, resultTypes: ['violations']})
  .then(result => done(result.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 4), count: v.nodes.length}))))
  .catch(error => done({error: String(error)}));
