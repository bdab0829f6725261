// DOM building without HTML parsing: every string from the API becomes a text node or an
// attribute value, so a workload called "<img onerror=...>" shows as text and runs nothing.
// Nothing in the dashboard assigns innerHTML (the assets test fails if anything does).

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(node, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'testid') node.setAttribute('data-testid', value);
    else if (key === 'class') node.setAttribute('class', value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// el('td', {class: 'num', testid: 'x'}, 'text', otherNode): an HTML element.
export function el(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// svg('rect', {x: 1, y: 2}): an SVG element.
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// Replaces a node's children in one step.
export function replaceChildren(node, ...children) {
  clear(node);
  build(node, {}, children);
  return node;
}

// A table with a header row; `body` is the tbody the caller fills.
export function table(testid, headers) {
  const body = el('tbody');
  const head = el('thead', {}, el('tr', {}, headers.map(h => el('th', { scope: 'col', class: h.cls }, h.label ?? h))));
  return { element: el('table', { testid, class: 'data' }, head, body), body };
}
