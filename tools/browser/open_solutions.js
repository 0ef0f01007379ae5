// Opens every folded answer as a reader would, by clicking its summary.
const details = Array.from(document.querySelectorAll('details.solution'));
details.forEach(d => d.querySelector('summary').click());
return details.map(d => d.open && Array.from(d.querySelectorAll('pre'))
  .every(p => p.getBoundingClientRect().height > 0 && (!p.checkVisibility || p.checkVisibility())));
