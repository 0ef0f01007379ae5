// What has the keyboard focus, as a short description, and whether it is in the panel.
const e = document.activeElement;
const panel = document.querySelector('.playground[data-program]');
return {inPanel: !!(panel && e && panel.contains(e)), tag: e ? e.tagName.toLowerCase() : '',
        name: e ? (e.getAttribute('name') || e.className || e.id || '') : '', id: e ? e.id : ''};
