// Forms built from JSON Schemas (2020-12). Each field is a controller:
//
//   {el, path, get(), focus(), setError(message), clearError(), children()}
//
// get returns the field's JSON value, or undefined to leave it out; path is the
// field's JSON Pointer in the answer, which the server's violations name.

import { h, uid, humanize, pretty, numberText } from './view.js';

/** pointer appends an escaped JSON Pointer token to path. */
export function pointer(path, key) {
  return `${path}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** typesOf lists a schema's types, inferring object and array from their keywords. */
export function typesOf(s) {
  if (!isObject(s)) return [];
  if (Array.isArray(s.type)) return s.type;
  if (typeof s.type === 'string') return [s.type];
  if (isObject(s.properties)) return ['object'];
  if (s.items !== undefined) return ['array'];
  return [];
}

function label(v) {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** choicesOf returns the values an enum, a const or a oneOf of consts allows. */
export function choicesOf(s) {
  if (!isObject(s)) return null;
  if (Array.isArray(s.enum)) return s.enum.map((v) => ({ value: v, label: label(v) }));
  if ('const' in s) return [{ value: s.const, label: label(s.const) }];
  const alts = s.oneOf ?? s.anyOf;
  if (Array.isArray(alts) && alts.length > 0 && alts.every((a) => isObject(a) && 'const' in a)) {
    return alts.map((a) => ({ value: a.const, label: a.title ?? label(a.const), help: a.description }));
  }
  return null;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** kindOf says which control a schema gets. */
function kindOf(s) {
  if (!isObject(s)) return 'json';
  if (choicesOf(s)) return 'choice';
  if (s.$ref !== undefined || s.oneOf || s.anyOf || s.not) return 'json';
  const types = typesOf(s).filter((t) => t !== 'null');
  if (types.length !== 1) return 'json';
  const [t] = types;
  if (t === 'object') return isObject(s.properties) && Object.keys(s.properties).length > 0 ? 'object' : 'json';
  if (t === 'array') {
    if (s.prefixItems) return 'json';
    const k = kindOf(s.items);
    if (k === 'choice') return 'multi';
    return s.items === undefined || s.items === true ? 'json' : 'array';
  }
  return ['string', 'number', 'integer', 'boolean'].includes(t) ? t : 'json';
}

function nullable(s) {
  return typesOf(s).includes('null');
}

/** A field's common parts: label (or legend), help, error. */
function chrome(o, group) {
  const id = uid('f');
  const req = o.required && !o.noMark ? h('span', { class: 'req', 'aria-hidden': 'true', title: 'required' }, '*') : null;
  const text = o.label ?? humanize(o.key ?? 'Answer');
  const labelEl = group
    ? h('legend', null, text, req)
    : h('label', { for: id }, text, req);
  const help = o.schema?.description ? h('p', { class: 'help', id: `${id}-help` }, o.schema.description) : null;
  const error = h('p', { class: 'error', id: `${id}-err`, hidden: true });
  const wrap = group
    ? h('fieldset', { class: `field group ${o.class ?? ''}`, dataset: { path: o.path } })
    : h('div', { class: `field ${o.class ?? ''}`, dataset: { path: o.path } });
  return { id, wrap, labelEl, help, error, describedBy: help ? help.id : '' };
}

/**
 * control finishes a controller: errors are shown in the chrome's error element
 * and marked on the given inputs.
 */
function control(c, o, inputs, get, extra = {}) {
  const targets = () => (typeof inputs === 'function' ? inputs() : inputs);
  const ctl = {
    el: c.wrap,
    path: o.path,
    get,
    focus: () => targets()[0]?.focus(),
    setError(msg) {
      c.error.replaceChildren(h('span', { class: 'visually-hidden' }, 'Error: '), msg);
      c.error.hidden = false;
      c.wrap.classList.add('invalid');
      for (const el of targets()) {
        el.setAttribute('aria-invalid', 'true');
        el.setAttribute('aria-describedby', `${c.describedBy} ${c.error.id}`.trim());
      }
    },
    clearError() {
      if (c.error.hidden) return;
      c.error.hidden = true;
      c.error.replaceChildren();
      c.wrap.classList.remove('invalid');
      for (const el of targets()) {
        el.removeAttribute('aria-invalid');
        if (c.describedBy) el.setAttribute('aria-describedby', c.describedBy);
        else el.removeAttribute('aria-describedby');
      }
    },
    children: () => [],
    ...extra,
  };
  for (const el of targets()) {
    // The browser's own check (constraint validation) is shown next to the
    // field in the page's words, and only there: the browser's bubble is
    // suppressed (the forms are novalidate; see validate).
    el.addEventListener('invalid', (e) => {
      e.preventDefault();
      ctl.setError(el.validity.valueMissing && o.missing ? o.missing : messageOf(el));
    });
    el.addEventListener('input', () => ctl.clearError());
    el.addEventListener('change', () => ctl.clearError());
  }
  return ctl;
}

/** messageOf says, in the page's words, what is wrong with an input the browser refuses. */
export function messageOf(el) {
  const v = el.validity;
  if (v.valueMissing) {
    if (el.type === 'radio' || el.tagName === 'SELECT') return 'Choose one.';
    if (el.type === 'checkbox') return 'Tick this box.';
    return 'This is required.';
  }
  if (v.badInput) return el.type === 'number' ? 'Enter a number.' : 'Enter a valid value.';
  if (v.customError) return el.validationMessage;
  if (v.rangeUnderflow) return `Enter ${el.min} or more.`;
  if (v.rangeOverflow) return `Enter ${el.max} or less.`;
  if (v.stepMismatch) return el.step === '1' ? 'Enter a whole number.' : 'Enter a valid number.';
  if (v.typeMismatch) {
    if (el.type === 'email') return 'Enter an email address, such as ann@example.com.';
    if (el.type === 'url') return 'Enter a full web address, starting with https.';
  }
  if (v.tooShort) return `Enter at least ${el.minLength} characters.`;
  if (v.tooLong) return `Enter at most ${el.maxLength} characters.`;
  return el.validationMessage || 'Enter a valid value.';
}

/**
 * validate runs the browser's constraint validation on a form without its UI:
 * every refused field shows the page's message (marked aria-invalid and
 * described by it), the first one gets the focus, and validate reports whether
 * the form may be sent. Forms are novalidate, so the browser's own bubble
 * never shows on top of the page's message.
 */
export function validate(form) {
  const bad = [...form.elements].filter((el) => el.willValidate && !el.checkValidity());
  bad[0]?.focus();
  return bad.length === 0;
}

function initial(o) {
  return o.value !== undefined ? o.value : o.schema?.default;
}

const longText = /(^|_|-)(message|reason|comment|comments|note|notes|text|body|description|feedback|explanation|details|summary|instructions)$/i;

const inputTypes = { email: 'email', uri: 'url', url: 'url', date: 'date', 'date-time': 'datetime-local' };

function localDateTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A text or number input, or a text area for long text. */
function inputField(s, o, kind) {
  const c = chrome(o, false);
  const numeric = kind === 'number' || kind === 'integer';
  const format = kind === 'string' ? inputTypes[s.format] : undefined;
  const area = kind === 'string' && !format &&
    (s.maxLength > 200 || s.format === 'textarea' || s.contentMediaType !== undefined || longText.test(o.key ?? ''));
  const attrs = {
    id: c.id,
    name: o.path || 'answer',
    required: o.required || undefined,
    'aria-describedby': c.describedBy || undefined,
    autocomplete: 'off',
  };
  if (kind === 'string' && !format) attrs.spellcheck = area ? 'true' : 'false';
  if (numeric) {
    const min = s.minimum ?? s.exclusiveMinimum;
    const max = s.maximum ?? s.exclusiveMaximum;
    Object.assign(attrs, {
      type: 'number',
      inputmode: kind === 'integer' ? 'numeric' : 'decimal',
      min, max,
      step: kind === 'integer' ? '1' : 'any',
    });
  } else if (!area) {
    attrs.type = format ?? 'text';
  }
  if (area) attrs.rows = s.maxLength && s.maxLength < 400 ? 3 : 4;
  const input = h(area ? 'textarea' : 'input', attrs);
  const init = initial(o);
  if (init !== undefined && init !== null) {
    // An amount keeps its cents (89.50); the input reads back the same number.
    input.value = s.format === 'date-time' ? localDateTime(init) : numeric ? numberText(init, o.key) : String(init);
  }
  const limits = [];
  if (numeric) {
    if (s.minimum !== undefined) limits.push(`at least ${s.minimum}`);
    if (s.exclusiveMinimum !== undefined) limits.push(`more than ${s.exclusiveMinimum}`);
    if (s.maximum !== undefined) limits.push(`at most ${s.maximum}`);
    if (s.exclusiveMaximum !== undefined) limits.push(`less than ${s.exclusiveMaximum}`);
    if (s.multipleOf !== undefined) limits.push(`a multiple of ${s.multipleOf}`);
    if (kind === 'integer') limits.unshift('a whole number');
  } else if (kind === 'string') {
    if (s.minLength !== undefined && s.maxLength !== undefined) limits.push(`${s.minLength} to ${s.maxLength} characters`);
    else if (s.minLength !== undefined) limits.push(`at least ${s.minLength} characters`);
    else if (s.maxLength !== undefined) limits.push(`at most ${s.maxLength} characters`);
  }
  const sentence = limits.join(', ');
  const limitText = limits.length ? h('span', { class: 'limits' }, `${sentence[0].toUpperCase()}${sentence.slice(1)}.`) : null;
  if (limitText) {
    if (c.help) {
      if (!/[.!?:;]$/.test(c.help.textContent.trim())) c.help.append('.');
      c.help.append(' ', limitText);
    }
    else {
      c.help = h('p', { class: 'help', id: `${c.id}-help` }, limitText);
      c.describedBy = c.help.id;
      input.setAttribute('aria-describedby', c.describedBy);
    }
  }
  // What HTML attributes cannot say is checked with custom validity: exclusive
  // bounds, multipleOf, patterns (unanchored in JSON Schema, anchored in HTML),
  // and lengths, which JSON Schema counts in characters where HTML counts UTF-16
  // units (an emoji is one character and two units).
  const check = () => {
    let msg = '';
    const raw = input.value;
    if (raw !== '' && kind === 'string') {
      const n = [...raw].length;
      if (s.minLength !== undefined && n < s.minLength) msg = `Enter at least ${s.minLength} characters (now ${n}).`;
      else if (s.maxLength !== undefined && n > s.maxLength) msg = `Enter at most ${s.maxLength} characters (now ${n}).`;
    }
    if (raw !== '' && numeric && !Number.isNaN(input.valueAsNumber)) {
      const n = input.valueAsNumber;
      if (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum) msg = `Enter a number more than ${s.exclusiveMinimum}.`;
      else if (s.exclusiveMaximum !== undefined && n >= s.exclusiveMaximum) msg = `Enter a number less than ${s.exclusiveMaximum}.`;
      else if (s.multipleOf > 0 && Math.abs(n / s.multipleOf - Math.round(n / s.multipleOf)) > 1e-9) msg = `Enter a multiple of ${s.multipleOf}.`;
    }
    if (raw !== '' && kind === 'string' && typeof s.pattern === 'string') {
      try {
        if (!new RegExp(s.pattern, 'u').test(raw)) msg = `Use the expected format (pattern ${s.pattern}).`;
      } catch {
        // a pattern JavaScript cannot compile is left to the server
      }
    }
    input.setCustomValidity(msg);
  };
  input.addEventListener('input', check);
  check();
  add(c, input);
  const get = () => {
    const raw = input.value;
    if (raw === '') {
      if (o.required && nullable(s) && kind !== 'string') return null;
      if (o.required && kind === 'string') return '';
      return undefined;
    }
    if (numeric) {
      const n = input.valueAsNumber;
      return Number.isNaN(n) ? raw : n;
    }
    if (s.format === 'date-time') {
      const d = new Date(raw);
      return Number.isNaN(d.getTime()) ? raw : d.toISOString();
    }
    return raw;
  };
  return control(c, o, [input], get);
}

/** add assembles a single-input field: label, help, input, error. */
function add(c, input) {
  c.wrap.append(c.labelEl);
  if (c.help) c.wrap.append(c.help);
  c.wrap.append(input, c.error);
}

/** addGroup assembles a fieldset: legend, help, error, then its content. */
function addGroup(c, ...content) {
  c.wrap.append(c.labelEl);
  if (c.help) c.wrap.append(c.help);
  c.wrap.append(c.error, ...content.flat(Infinity));
  if (c.describedBy) c.wrap.setAttribute('aria-describedby', c.describedBy);
}

/** A checkbox. Left unticked, an optional boolean without a value is left out. */
function checkboxField(s, o) {
  const c = chrome(o, false);
  const init = initial(o);
  const input = h('input', { type: 'checkbox', id: c.id, name: o.path || 'answer', checked: init === true, 'aria-describedby': c.describedBy || undefined });
  c.wrap.classList.add('check');
  c.wrap.append(input, c.labelEl);
  if (c.help) c.wrap.append(c.help);
  c.wrap.append(c.error);
  const get = () => {
    if (input.checked) return true;
    return o.required || init !== undefined ? false : undefined;
  };
  return control(c, o, [input], get);
}

/** Radio buttons for up to four choices, a select beyond. */
function choiceField(s, o) {
  const choices = choicesOf(s);
  const init = initial(o);
  const selected = choices.findIndex((ch) => same(ch.value, init));
  if (choices.length <= 4) {
    const c = chrome(o, true);
    const name = uid('choice');
    const radios = [];
    const items = choices.map((ch, i) => {
      const id = uid('r');
      const r = h('input', { type: 'radio', id, name, value: String(i), checked: i === selected, required: o.required || undefined });
      radios.push(r);
      return h('div', { class: 'choice' }, r, h('label', { for: id }, ch.label),
        ch.help ? h('p', { class: 'help' }, ch.help) : null);
    });
    c.wrap.classList.add('choices');
    addGroup(c, h('div', { class: 'options' }, items));
    const get = () => {
      const r = radios.find((x) => x.checked);
      if (r) return choices[Number(r.value)].value;
      return o.required && nullable(s) ? null : undefined;
    };
    return control(c, o, radios, get);
  }
  const c = chrome(o, false);
  const select = h('select', { id: c.id, name: o.path || 'answer', required: o.required || undefined, 'aria-describedby': c.describedBy || undefined },
    h('option', { value: '' }, o.required ? 'Choose…' : '(none)'),
    choices.map((ch, i) => h('option', { value: String(i), selected: i === selected }, ch.label)));
  add(c, select);
  const get = () => (select.value === '' ? undefined : choices[Number(select.value)].value);
  return control(c, o, [select], get);
}

/** Checkboxes for an array of choices. */
function multiField(s, o) {
  const c = chrome(o, true);
  const choices = choicesOf(s.items);
  const init = initial(o);
  const boxes = choices.map((ch) => h('input', {
    type: 'checkbox', id: uid('m'), checked: Array.isArray(init) && init.some((v) => same(v, ch.value)),
  }));
  const check = () => {
    const n = boxes.filter((b) => b.checked).length;
    let msg = '';
    if (s.minItems !== undefined && n < s.minItems) msg = `Choose at least ${s.minItems}.`;
    if (s.maxItems !== undefined && n > s.maxItems) msg = `Choose at most ${s.maxItems}.`;
    boxes[0]?.setCustomValidity(msg);
  };
  for (const b of boxes) b.addEventListener('change', check);
  check();
  c.wrap.classList.add('choices');
  addGroup(c, h('div', { class: 'options' }, choices.map((ch, i) => h('div', { class: 'choice' }, boxes[i], h('label', { for: boxes[i].id }, ch.label)))));
  const get = () => {
    const out = choices.filter((_, i) => boxes[i].checked).map((ch) => ch.value);
    return out.length === 0 && !o.required && init === undefined ? undefined : out;
  };
  return control(c, o, boxes, get);
}

/** A fieldset of an object's properties; the root object has no fieldset. */
function objectField(s, o) {
  const props = s.properties;
  const req = new Set(Array.isArray(s.required) ? s.required : []);
  const init = initial(o);
  const value = isObject(init) ? init : {};
  // An optional object's required properties are required only once it is
  // sent, which the server checks: the browser must not demand them of an
  // answer that leaves the object out.
  const present = o.root || o.required;
  const kids = Object.entries(props).map(([k, ps]) => field(ps, {
    key: k, label: ps?.title, path: pointer(o.path, k), required: present && req.has(k), value: value[k],
  }));
  const get = () => {
    const out = {};
    Object.keys(props).forEach((k, i) => {
      const v = kids[i].get();
      if (v !== undefined) out[k] = v;
    });
    if (!o.root && !o.required && Object.keys(out).length === 0 && init === undefined) return undefined;
    return out;
  };
  if (o.root) {
    const c = { wrap: h('div', { class: 'object-root', dataset: { path: o.path } }), error: h('p', { class: 'error', hidden: true, id: uid('err') }), describedBy: '' };
    c.wrap.append(c.error, ...kids.map((k) => k.el));
    return control(c, o, [], get, { children: () => kids, focus: () => kids[0]?.focus() });
  }
  const c = chrome(o, true);
  c.wrap.classList.add('object');
  addGroup(c, kids.map((k) => k.el));
  return control(c, o, [], get, { children: () => kids, focus: () => kids[0]?.focus() });
}

/** A list of items that grows and shrinks. */
function arrayField(s, o) {
  const c = chrome(o, true);
  c.wrap.classList.add('list');
  const itemLabel = s.items?.title ?? 'Item';
  const init = initial(o);
  let items = [];
  const ol = h('ol', { class: 'items' });
  const addBtn = h('button', { type: 'button', class: 'secondary small' }, `Add ${itemLabel.toLowerCase()}`);
  const render = (values, focusIndex) => {
    items = values.map((v, i) => field(s.items, {
      key: `${itemLabel} ${i + 1}`, label: `${itemLabel} ${i + 1}`, path: pointer(o.path, i), required: true, value: v, noMark: true,
    }));
    ol.replaceChildren(...items.map((it, i) => h('li', null, it.el,
      h('button', {
        type: 'button', class: 'link small', disabled: s.minItems !== undefined && items.length <= s.minItems,
        onclick: () => {
          const vs = items.map((x) => x.get());
          vs.splice(i, 1);
          render(vs, Math.min(i, vs.length - 1));
        },
      }, `Remove ${itemLabel.toLowerCase()} ${i + 1}`))));
    addBtn.disabled = s.maxItems !== undefined && items.length >= s.maxItems;
    if (focusIndex === undefined) return;
    if (focusIndex < 0) addBtn.focus();
    else items[focusIndex].focus();
  };
  render(Array.isArray(init) ? init : Array.from({ length: s.minItems ?? 0 }, () => undefined));
  addBtn.addEventListener('click', () => render([...items.map((x) => x.get()), undefined], items.length));
  addGroup(c, ol, addBtn);
  const get = () => {
    const out = items.map((x) => x.get()).filter((v) => v !== undefined);
    return out.length === 0 && !o.required && init === undefined ? undefined : out;
  };
  return control(c, o, [], get, { children: () => items, focus: () => (items[0] ?? { focus: () => addBtn.focus() }).focus() });
}

/** JSON typed by hand, for schemas the form cannot express. */
function jsonField(s, o) {
  const c = chrome({ ...o, label: `${o.label ?? humanize(o.key ?? 'Answer')} (JSON)` }, false);
  const init = initial(o);
  const area = h('textarea', {
    id: c.id, class: 'code', rows: 5, spellcheck: 'false', autocomplete: 'off', name: o.path || 'answer',
    required: o.required || undefined, 'aria-describedby': c.describedBy || undefined,
  });
  if (init !== undefined) area.value = pretty(init);
  if (!c.help) {
    c.help = h('p', { class: 'help', id: `${c.id}-help` }, s && s !== true && isObject(s) && Object.keys(s).length
      ? 'Any JSON value the schema allows.' : 'Any JSON value: text in quotes, numbers, true or false, lists in [ ], objects in { }.');
    c.describedBy = c.help.id;
    area.setAttribute('aria-describedby', c.describedBy);
  }
  const check = () => {
    let msg = '';
    if (area.value.trim() !== '') {
      try {
        JSON.parse(area.value);
      } catch (err) {
        msg = `This is not valid JSON: ${err.message}`;
      }
    }
    area.setCustomValidity(msg);
  };
  area.addEventListener('input', check);
  check();
  add(c, area);
  const get = () => {
    if (area.value.trim() === '') return undefined;
    try {
      return JSON.parse(area.value);
    } catch {
      return undefined;
    }
  };
  return control(c, o, [area], get);
}

/**
 * field builds the controller of one value.
 * o: {key, label, path, required, value, root, missing}; missing is the message
 * for a required value left out, instead of "This is required."
 */
export function field(schema, o) {
  const s = schema === true || schema === undefined || schema === null ? {} : schema;
  o = { ...o, schema: s };
  const kind = kindOf(s);
  switch (kind) {
    case 'choice': {
      const choices = choicesOf(s);
      if (choices.length === 1 && o.required) {
        // A const: nothing to choose.
        const c = chrome(o, false);
        c.wrap.append(h('p', { class: 'const' }, h('span', { class: 'label' }, c.labelEl.textContent, ': '), h('code', null, choices[0].label)));
        return control(c, o, [], () => choices[0].value);
      }
      return choiceField(s, o);
    }
    case 'multi': return multiField(s, o);
    case 'object': return objectField(s, o);
    case 'array': return arrayField(s, o);
    case 'boolean': return checkboxField(s, o);
    case 'string':
    case 'number':
    case 'integer':
      return inputField(s, o, kind);
    default:
      return jsonField(s, o);
  }
}

/** find returns the controller at path, or the nearest one above it. */
export function find(root, path) {
  let best = null;
  const walk = (c) => {
    if (path === c.path || path.startsWith(`${c.path}/`)) {
      if (!best || c.path.length > best.path.length) best = c;
      for (const k of c.children()) walk(k);
    }
  };
  walk(root);
  return best;
}

/** walk calls fn on every controller of the tree. */
export function walk(root, fn) {
  fn(root);
  for (const k of root.children()) walk(k, fn);
}

/**
 * booleanAnswer reports how a schema is answered by two buttons: {key: null}
 * for a boolean, {key} for an object whose only property is a boolean, or null.
 */
export function booleanAnswer(schema) {
  if (!isObject(schema)) return null;
  const types = typesOf(schema).filter((t) => t !== 'null');
  if (types.length === 1 && types[0] === 'boolean' && !choicesOf(schema)) return { key: null };
  if (types.length === 1 && types[0] === 'object' && isObject(schema.properties)) {
    const keys = Object.keys(schema.properties);
    if (keys.length === 1) {
      const p = schema.properties[keys[0]];
      const pt = typesOf(p).filter((t) => t !== 'null');
      if (pt.length === 1 && pt[0] === 'boolean' && !choicesOf(p)) return { key: keys[0], description: p.description };
    }
  }
  return null;
}
