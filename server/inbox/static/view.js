// Small DOM helpers and readable renderings of JSON values.

/**
 * h builds an element: h('a', {href: '#/', class: 'x', onclick: fn}, 'text', child).
 * Attributes that are null, undefined or false are left out; true sets an empty
 * attribute; value and checked are set as properties. Children may be nested
 * arrays; null and false children are skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' || k === 'checked' || k === 'selected' || k === 'indeterminate') el[k] = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  add(el, children);
  return el;
}

export function add(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

let ids = 0;
/** uid returns a document-unique id with the prefix. */
export function uid(prefix = 'id') {
  ids += 1;
  return `${prefix}-${ids}`;
}

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const dtf = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

/** ago says how long ago an RFC 3339 time was: "5 minutes ago". */
export function ago(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.round((t - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return s <= 0 ? 'just now' : 'in a moment';
  if (abs < 45 * 60) return rtf.format(Math.round(s / 60) || Math.sign(s), 'minute');
  if (abs < 22 * 3600) return rtf.format(Math.round(s / 3600), 'hour');
  if (abs < 26 * 86400) return rtf.format(Math.round(s / 86400), 'day');
  return dtf.format(new Date(t));
}

/** when renders a <time> saying how long ago, with the full date as its title. */
export function when(iso) {
  if (!iso) return null;
  const d = new Date(iso);
  return h('time', { datetime: iso, title: Number.isNaN(d.getTime()) ? iso : dtf.format(d), class: 'ago' }, ago(iso));
}

/** refreshTimes updates every <time class="ago"> under root. */
export function refreshTimes(root) {
  const now = Date.now();
  for (const t of root.querySelectorAll('time.ago')) t.textContent = ago(t.dateTime, now);
}

export function pretty(v) {
  return JSON.stringify(v, null, 2);
}

function isScalar(v) {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

function shape(v) {
  if (Array.isArray(v)) return v.length === 1 ? 'list, 1 item' : `list, ${v.length} items`;
  const n = Object.keys(v).length;
  return n === 1 ? 'object, 1 field' : `object, ${n} fields`;
}

/** folded is JSON in a <details>, closed unless open. */
export function folded(v, summary, open = false) {
  return h('details', { class: 'json', open },
    h('summary', null, summary ?? shape(v)),
    h('pre', { tabindex: '0' }, h('code', null, pretty(v))));
}

const moneyWords = /^(amount|price|total|subtotal|cost|fee|fees|balance|refund|payment|tax|charge|deposit|paid|due)$/i;

/** isMoney reports whether a field's name says it holds money: "amount", "unit_price", "refundTotal". */
export function isMoney(key) {
  if (typeof key !== 'string') return false;
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[\s_\-.]+/).filter(Boolean);
  return words.length > 0 && moneyWords.test(words[words.length - 1]);
}

/**
 * numberText writes a number as people write it: an amount of money with
 * cents keeps both digits (89.5 as "89.50"). Only the writing changes: the
 * text reads back as the same number, and a number with more digits than
 * cents, or a whole one, is written as it is.
 */
export function numberText(n, key) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return String(n);
  if (isMoney(key) && !Number.isInteger(n) && Number(n.toFixed(2)) === n) return n.toFixed(2);
  return String(n);
}

/** scalar renders a JSON scalar as text; key, the field's name, says how to write a number. */
export function scalar(v, key) {
  if (v === null || v === undefined) return h('span', { class: 'none' }, 'null');
  if (typeof v === 'string') {
    return v === '' ? h('span', { class: 'none' }, 'empty text') : h('span', { class: 'str' }, v);
  }
  return h('code', { class: typeof v }, typeof v === 'number' ? numberText(v, key) : String(v));
}

/**
 * renderValue shows a JSON value readably: scalars as text, a short list of
 * scalars inline, an object as a list of its fields, and anything nested deeper
 * folded as JSON. key is the value's field name, if it has one.
 */
export function renderValue(v, depth = 0, key = undefined) {
  if (isScalar(v) || v === undefined) return scalar(v, key);
  if (Array.isArray(v)) {
    if (v.length === 0) return h('span', { class: 'none' }, 'empty list');
    if (v.length <= 8 && v.every(isScalar)) return h('ul', { class: 'inline' }, v.map((x) => h('li', null, scalar(x))));
    return folded(v);
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return h('span', { class: 'none' }, 'empty object');
  if (depth >= 2 || keys.length > 16) return folded(v);
  return h('dl', { class: 'fields' }, keys.map((k) => [
    h('dt', null, k),
    h('dd', null, renderValue(v[k], depth + 1, k)),
  ]));
}

/** humanize turns a property name into a label: "order_id" → "Order ID". */
export function humanize(key) {
  const words = String(key)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_\-.]+/)
    .filter(Boolean)
    .map((w) => (/^(id|url|uri|api|ip)$/i.test(w) ? w.toUpperCase() : w.toLowerCase()));
  if (words.length === 0) return String(key);
  words[0] = words[0][0].toUpperCase() + words[0].slice(1);
  return words.join(' ');
}

/** plural: plural(3, 'question') → "3 questions". */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
