// web/lib/dom.js: the one DOM helper the pages share.
//   el(tag, attrs, text)   a new element of tag with attrs set and text
//                          (if given) as its text, never as markup
export function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {})
    e.setAttribute(k, attrs[k]);
  if (text !== undefined)
    e.textContent = text;
  return e;
}
