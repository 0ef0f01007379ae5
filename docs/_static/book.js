// The book's own corrections to what the furo theme writes, for readers who use a
// screen reader or a keyboard. Each one names the upstream behaviour it corrects;
// tools/browser/accessibility.py checks every page with axe-core after they have run.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // furo's page.html has two <aside> landmarks (the navigation drawer and the table of
  // contents) without names, so a screen reader lists "complementary" twice.
  const names = [
    ["aside.sidebar-drawer", "Chapters of the book"],
    ["aside.toc-drawer", "On this page"],
  ];
  for (const [selector, name] of names) {
    const aside = document.querySelector(selector);
    if (aside && !aside.hasAttribute("aria-label")) aside.setAttribute("aria-label", name);
  }
  // furo puts the colour-scheme button and the table-of-contents toggle above the
  // article, outside every landmark; they become a named region of their own.
  const controls = document.querySelector(".content-icon-container");
  if (controls) {
    controls.setAttribute("role", "region");
    controls.setAttribute("aria-label", "Page display");
  }
  // furo's full-screen overlays (label.overlay) close a drawer with a mouse click
  // beside it; they sit outside every landmark and repeat what the header's own
  // toggle buttons say. A keyboard or screen reader uses those buttons instead.
  for (const overlay of document.querySelectorAll("label.overlay")) {
    overlay.setAttribute("aria-hidden", "true");
  }
});
