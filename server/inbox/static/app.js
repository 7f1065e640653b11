// The Interlude inbox: the pending questions of every thread, live, and a page per
// question to read and answer it. Routes live in the URL's fragment:
//
//   #/                         the list (and, on wide screens, an empty detail pane)
//   #/q/<thread>/<interrupt>   one question, pending or answered, beside the list

import { api, token, setToken, pendingQuestions, listen } from './api.js';
import { h, add, when, refreshTimes, renderValue, folded, plural, humanize, uid } from './view.js';
import { field, find, walk, booleanAnswer, pointer, validate } from './form.js';

const main = document.getElementById('main');
const announcer = document.getElementById('announce');
const who = document.getElementById('who');

const state = {
  me: null, // {name, roles}
  canAnswer: false,
  items: [], // pending questions: {thread_id, graph, q}
  loaded: false,
  listError: null,
  graphs: [],
  filter: loadFilter(),
  route: { view: 'list' },
  stream: null, // AbortController of the event stream
  away: false, // the stream was given up while the tab is hidden
  timers: [],
};

// Elements of the inbox layout, made by showInbox.
let ui = null;

function announce(text) {
  announcer.textContent = '';
  // A fresh text node is announced even when the text repeats.
  setTimeout(() => { announcer.textContent = text; }, 50);
}

function loadFilter() {
  try {
    const f = JSON.parse(sessionStorage.getItem('interlude.filter') ?? '{}');
    return { graph: typeof f.graph === 'string' ? f.graph : '', reason: typeof f.reason === 'string' ? f.reason : '', mine: f.mine === true };
  } catch {
    return { graph: '', reason: '', mine: false };
  }
}

function saveFilter() {
  try {
    sessionStorage.setItem('interlude.filter', JSON.stringify(state.filter));
  } catch {
    // not kept
  }
}

const roleText = (roles) => (roles?.length ? roles.join(', ') : 'read only');

// ---------------------------------------------------------------- signing in

async function boot() {
  let me;
  try {
    me = await api.me();
  } catch (err) {
    if (err.status === 401) {
      if (token()) setToken('');
      showSignIn(token() ? 'Your token is no longer accepted. Sign in again.' : '');
      return;
    }
    showFatal(err);
    return;
  }
  start(me);
}

function showFatal(err) {
  document.body.dataset.state = 'error';
  main.replaceChildren(h('section', { class: 'panel narrow' },
    h('h1', null, 'The inbox cannot start'),
    h('p', { class: 'form-error', role: 'alert' }, err.message),
    h('p', null, h('button', { type: 'button', onclick: () => location.reload() }, 'Try again'))));
}

function showSignIn(message) {
  stop();
  ui = null;
  who.replaceChildren();
  document.body.dataset.state = 'signin';
  document.title = 'Sign in – Interlude inbox';
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', required: true, autocomplete: 'current-password',
    spellcheck: 'false', 'aria-describedby': 'token-help',
  });
  const error = h('p', { class: 'form-error', id: 'signin-error', role: 'alert', hidden: !message }, message || '');
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'signin', 'aria-labelledby': 'signin-title', novalidate: true },
    h('h1', { id: 'signin-title' }, 'Sign in'),
    h('p', null, 'This server asks for an API token. Paste the token you were given.'),
    error,
    h('div', { class: 'field' },
      h('label', { for: 'token' }, 'API token'),
      h('p', { class: 'help', id: 'token-help' }, 'It is kept in this browser tab only, and forgotten when you close the tab.'),
      input),
    h('div', { class: 'actions' }, button));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const t = input.value.trim();
    if (!t) {
      error.textContent = 'Paste your API token first.';
      error.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      const me = await api.me(t);
      setToken(t);
      start(me);
      // The form is gone with the focus in it: put it where the page starts.
      if (document.activeElement === document.body) document.getElementById('list-title')?.focus();
    } catch (err) {
      error.textContent = err.status === 401 ? 'That token is not valid. Check it and try again.' : err.message;
      error.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    } finally {
      button.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
  main.replaceChildren(h('section', { class: 'panel narrow' }, form));
  input.focus();
}

function signOut(message = '') {
  setToken('');
  state.me = null;
  showSignIn(message);
}

function renderWho() {
  const me = state.me;
  if (!me.name) {
    who.replaceChildren(h('span', { class: 'who-name' }, 'Open server, no sign-in needed'));
    return;
  }
  who.replaceChildren(
    h('span', { class: 'who-name' }, 'Signed in as ', h('strong', null, me.name),
      ' ', h('span', { class: 'roles', title: 'roles of your token' }, roleText(me.roles))),
    h('button', { type: 'button', class: 'link on-dark', onclick: () => signOut('You signed out.') }, 'Sign out'));
}

// ---------------------------------------------------------------- the inbox

function start(me) {
  state.me = me;
  state.canAnswer = (me.roles ?? []).some((r) => r === 'approve' || r === 'admin');
  state.loaded = false;
  state.items = [];
  state.known = null;
  document.body.dataset.state = 'inbox';
  document.body.dataset.canAnswer = String(state.canAnswer);
  renderWho();
  showInbox();
  api.graphs().then((g) => {
    state.graphs = (g.graphs ?? []).map((x) => x.name);
    renderList();
  }, () => {});
  connect();
  state.timers.push(setInterval(() => refreshTimes(document), 30_000));
  route(false);
}

function stop() {
  state.stream?.abort();
  state.stream = null;
  state.away = false;
  for (const t of state.timers) clearInterval(t);
  state.timers = [];
}

function showInbox() {
  const graphSelect = h('select', { id: 'filter-graph', name: 'graph' });
  const reasonSelect = h('select', { id: 'filter-reason', name: 'reason' });
  const filtered = () => {
    saveFilter();
    renderList();
    announce(ui.shown.textContent);
  };
  const mineBox = h('input', { id: 'filter-mine', name: 'mine', type: 'checkbox', checked: state.filter.mine });
  mineBox.addEventListener('change', () => { state.filter.mine = mineBox.checked; filtered(); });
  graphSelect.addEventListener('change', () => { state.filter.graph = graphSelect.value; filtered(); });
  reasonSelect.addEventListener('change', () => { state.filter.reason = reasonSelect.value; filtered(); });
  ui = {
    layout: null,
    count: h('span', { class: 'count', id: 'count' }, '0'),
    liveStatus: h('p', { class: 'live-status', id: 'live-status' }),
    graphSelect,
    reasonSelect,
    shown: h('p', { class: 'shown', id: 'shown' }),
    list: h('ul', { class: 'questions', id: 'questions', 'aria-labelledby': 'list-title' }),
    empty: h('div', { class: 'empty', id: 'empty', hidden: true }),
    detail: h('section', { class: 'detail-pane', id: 'detail', 'aria-label': 'Question' }),
  };
  ui.layout = h('div', { class: 'layout', dataset: { view: 'list' } },
    h('section', { class: 'list-pane', 'aria-labelledby': 'list-title' },
      h('div', { class: 'list-head' },
        h('h1', { id: 'list-title', tabindex: '-1' }, 'Questions ', ui.count),
        ui.liveStatus),
      h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter questions', onsubmit: (e) => e.preventDefault() },
        h('div', { class: 'field' }, h('label', { for: 'filter-graph' }, 'Graph'), graphSelect),
        h('div', { class: 'field' }, h('label', { for: 'filter-reason' }, 'Reason'), reasonSelect),
        h('div', { class: 'field check' }, mineBox, h('label', { for: 'filter-mine' }, 'Assigned to me'))),
      ui.shown,
      ui.list,
      ui.empty),
    ui.detail);
  main.replaceChildren(ui.layout);
  setLive(state.liveMode ?? 'connecting');
  renderList();
}

function setLive(mode) {
  state.liveMode = mode;
  document.body.dataset.live = mode;
  if (!ui) return;
  const text = {
    connecting: 'Connecting…',
    on: 'Live',
    polling: 'Refreshing every 15 s',
    off: 'Not updating',
  }[mode];
  ui.liveStatus.replaceChildren(h('span', { class: 'dot', 'aria-hidden': 'true' }), text);
  ui.liveStatus.dataset.mode = mode;
  ui.liveStatus.title = mode === 'on'
    ? 'New questions appear here as they are asked.'
    : mode === 'polling' ? 'This server has no event feed, so the list is read again every 15 seconds.' : '';
}

// Listing refreshes run one at a time; one asked for meanwhile runs afterwards.
let refreshing = null;
let again = false;
let soon = null;

function refresh() {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      try {
        state.items = await pendingQuestions();
        state.listError = null;
        state.loaded = true;
      } catch (err) {
        if (err.status === 401) {
          signOut('Your token is no longer accepted. Sign in again.');
          return;
        }
        state.listError = err;
      }
      renderList();
    } while (again);
  })().finally(() => { refreshing = null; });
  return refreshing;
}

/** scheduleRefresh coalesces the refreshes that a burst of events asks for. */
function scheduleRefresh() {
  if (soon) return;
  soon = setTimeout(() => {
    soon = null;
    refresh();
  }, 60);
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

// A hidden tab gives its event stream up and takes it back, catching up on the
// list, when shown: a browser opens at most six connections to a server over
// HTTP/1.1, and a stream held by every open inbox tab would leave none for the
// next tab's requests. A page kept in the back/forward cache gives it up too.
function leave() {
  if (!state.stream) return;
  state.stream.abort();
  state.stream = null;
  state.away = true;
}

function comeBack() {
  if (!state.away || document.visibilityState === 'hidden') return;
  state.away = false;
  connect();
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') leave(); else comeBack();
});
window.addEventListener('pagehide', leave);
window.addEventListener('pageshow', comeBack);

async function connect() {
  const ctl = new AbortController();
  state.stream = ctl;
  let delay = 1000;
  setLive('connecting');
  while (!ctl.signal.aborted) {
    try {
      await listen({
        signal: ctl.signal,
        onOpen: () => {
          // Subscribed first, read second: nothing asked in between is missed.
          setLive('on');
          delay = 1000;
          refresh();
        },
        onEvent,
      });
    } catch (err) {
      if (ctl.signal.aborted) return;
      if (err.status === 401) {
        signOut('Your token is no longer accepted. Sign in again.');
        return;
      }
      if (err.status === 501) {
        state.stream = null; // no stream to give up when hidden
        setLive('polling');
        refresh();
        state.timers.push(setInterval(refresh, 15_000));
        return;
      }
    }
    if (ctl.signal.aborted) return;
    setLive('connecting');
    refresh();
    await sleep(delay, ctl.signal);
    delay = Math.min(delay * 2, 30_000);
  }
}

function onEvent(ev) {
  const pause = ev.event === 'updates' && ev.data?.status === 'interrupted';
  if (pause || ev.event === 'end' || ev.event === 'metadata') scheduleRefresh();
  if ((pause || ev.event === 'end') && state.route.view === 'question' && ev.thread_id === state.route.thread) {
    detailChanged();
  }
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && ui) refresh();
});

const NONE = '-';
const reasonOf = (q) => q.reason || NONE;
const reasonLabel = (r) => (r === NONE ? 'No reason' : humanize(r));

function fillSelect(select, allLabel, values, counts, selected, label = (v) => v) {
  const options = [['', allLabel], ...values.map((v) => [v, `${label(v)} (${counts.get(v) ?? 0})`])];
  // Rebuilt only when they change, so that a refresh does not disturb a person
  // choosing from it.
  const signature = JSON.stringify(options);
  if (select.dataset.signature !== signature) {
    select.replaceChildren(...options.map(([v, text]) => h('option', { value: v }, text)));
    select.dataset.signature = signature;
  }
  if (select.value !== selected) select.value = selected;
}

function renderList() {
  if (!ui) return;
  const items = state.items;
  const graphs = new Map();
  const reasons = new Map();
  for (const it of items) {
    graphs.set(it.graph, (graphs.get(it.graph) ?? 0) + 1);
    reasons.set(reasonOf(it.q), (reasons.get(reasonOf(it.q)) ?? 0) + 1);
  }
  const { graph, reason } = state.filter;
  const graphNames = [...new Set([...state.graphs, ...graphs.keys(), ...(graph ? [graph] : [])])].sort();
  const reasonNames = [...new Set([...reasons.keys(), ...(reason ? [reason] : [])])].sort();
  fillSelect(ui.graphSelect, 'All graphs', graphNames, graphs, graph);
  fillSelect(ui.reasonSelect, 'All reasons', reasonNames, reasons, reason, reasonLabel);

  const shown = items.filter((it) => (!graph || it.graph === graph) && (!reason || reasonOf(it.q) === reason) &&
    (!state.filter.mine || assignedToMe(it.q)));
  ui.count.textContent = String(items.length);
  ui.count.setAttribute('aria-label', plural(items.length, 'question') + ' waiting');
  document.title = items.length ? `(${items.length}) Interlude inbox` : 'Interlude inbox';
  ui.shown.textContent = !state.loaded ? '' : shown.length === items.length
    ? `${plural(items.length, 'question')} waiting`
    : `Showing ${shown.length} of ${plural(items.length, 'question')}`;

  // Questions not seen before are announced (not those of the first reading).
  const keyOf = (it) => `${it.thread_id}\u0000${it.q.id}`;
  const fresh = state.known ? items.filter((it) => !state.known.has(keyOf(it))) : [];
  if (state.loaded) state.known = new Set(items.map(keyOf));

  // Keyed update: rows that stay keep their elements (and focus).
  const old = new Map([...ui.list.children].map((li) => [li.dataset.key, li]));
  const rows = shown.map((it) => {
    let li = old.get(keyOf(it));
    if (!li) {
      li = questionRow(it);
      li.dataset.key = keyOf(it);
    }
    return li;
  });
  const focused = ui.list.contains(document.activeElement) ? document.activeElement.closest('li') : null;
  const index = focused ? [...ui.list.children].indexOf(focused) : -1;
  for (const li of old.values()) if (!rows.includes(li)) li.remove();
  rows.forEach((li, i) => {
    if (ui.list.children[i] !== li) ui.list.insertBefore(li, ui.list.children[i] ?? null);
  });
  if (focused && !focused.isConnected) {
    // The focused question left: focus the one now in its place.
    const next = ui.list.children[Math.min(index, ui.list.children.length - 1)];
    (next?.querySelector('a') ?? document.getElementById('list-title')).focus();
  }
  markCurrent();

  ui.empty.hidden = shown.length > 0 || (!state.loaded && !state.listError);
  if (state.listError) {
    ui.empty.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, `The list cannot be read: ${state.listError.message}`),
      h('button', { type: 'button', class: 'secondary', onclick: () => refresh() }, 'Try again'));
    ui.empty.hidden = false;
  } else if (items.length === 0) {
    ui.empty.replaceChildren(h('p', { class: 'empty-title' }, 'Nothing is waiting for an answer.'),
      h('p', null, 'New questions appear here as soon as they are asked.'));
  } else {
    ui.empty.replaceChildren(h('p', { class: 'empty-title' }, 'No question matches the filters.'),
      h('button', {
        type: 'button', class: 'secondary', onclick: () => {
          state.filter = { graph: '', reason: '', mine: false };
          saveFilter();
          renderList();
        },
      }, 'Show all questions'));
  }
  if (fresh.length === 1) announce(`New question: ${fresh[0].q.message || 'without a message'}`);
  else if (fresh.length > 1) announce(`${plural(fresh.length, 'new question')}`);
}

function questionRow(it) {
  const q = it.q;
  return h('li', { dataset: { thread: it.thread_id, interrupt: q.id, graph: it.graph } },
    h('a', { href: questionHref(it.thread_id, q.id), class: 'row' },
      h('span', { class: 'msg' }, q.message || h('em', null, 'No message')),
      h('span', { class: 'meta' },
        h('span', { class: 'badge graph' }, it.graph),
        q.reason ? h('span', { class: `badge reason reason-${q.reason.replace(/[^a-z0-9_-]/gi, '')}` }, humanize(q.reason)) : null,
        h('span', { class: 'thread', title: 'thread' }, it.thread_id),
        when(q.created_at))));
}

function questionHref(thread, id) {
  return `#/q/${encodeURIComponent(thread)}/${encodeURIComponent(id)}`;
}

function markCurrent() {
  if (!ui) return;
  const r = state.route;
  for (const li of ui.list.children) {
    const a = li.firstElementChild;
    if (r.view === 'question' && li.dataset.thread === r.thread && li.dataset.interrupt === r.id) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// ---------------------------------------------------------------- routing

function parseRoute() {
  const m = location.hash.match(/^#\/q\/([^/]+)\/([^/]+)\/?$/);
  if (m) {
    try {
      return { view: 'question', thread: decodeURIComponent(m[1]), id: decodeURIComponent(m[2]) };
    } catch {
      // malformed: the list
    }
  }
  return { view: 'list' };
}

window.addEventListener('hashchange', () => route(true));
// The inbox puts the page where it belongs on every route (see route).
if ('scrollRestoration' in history) history.scrollRestoration = 'manual';

let flash = null; // shown once, on the next render of its question

function route(moveFocus) {
  if (!ui) return;
  const was = state.route;
  state.route = parseRoute();
  ui.layout.dataset.view = state.route.view;
  markCurrent();
  // On a narrow screen the list and a question take turns in the page: a
  // question opens at its top, and the list comes back where it was left. (On
  // a wide one the page does not scroll; each pane scrolls on its own.)
  if (was.view === 'list' && state.route.view === 'question') state.listScroll = window.scrollY;
  if (state.route.view === 'question' && (was.thread !== state.route.thread || was.id !== state.route.id)) {
    window.scrollTo(0, 0);
    ui.detail.scrollTop = 0;
  } else if (state.route.view === 'list' && was.view === 'question') {
    window.scrollTo(0, state.listScroll ?? 0);
  }
  if (state.route.view === 'question') {
    openQuestion(state.route.thread, state.route.id, moveFocus);
  } else {
    detailSeq++;
    detail = null;
    ui.detail.replaceChildren(h('div', { class: 'placeholder' },
      h('p', null, state.canAnswer ? 'Choose a question to read and answer it.' : 'Choose a question to read it.')));
    if (moveFocus) document.getElementById('list-title')?.focus();
  }
}

// ---------------------------------------------------------------- a question

let detailSeq = 0;
let detail = null; // the question shown: {thread, id, pending, submitting, form, article}

function historyOf(hist) {
  // Oldest first: each question raised, when, and its resolution.
  const byID = new Map();
  const entries = [];
  for (const cp of [...(hist?.checkpoints ?? [])].reverse()) {
    for (const q of cp.raised ?? []) {
      if (byID.has(q.id)) continue;
      const e = { q, at: q.created_at ?? cp.at, resolution: null };
      byID.set(q.id, e);
      entries.push(e);
    }
    for (const r of cp.resolved ?? []) {
      const e = byID.get(r.interrupt_id);
      if (e) e.resolution = r;
    }
    if (cp.kind === 'fail' && cp.error) entries.push({ failed: cp.error, at: cp.at });
  }
  return { entries, byID };
}

/** withOlderHistory returns hist with the page of history before it added. */
async function withOlderHistory(thread, hist, limit) {
  const older = await api.history(thread, { before: hist.next_before, limit });
  return { ...hist, checkpoints: [...(hist.checkpoints ?? []), ...(older.checkpoints ?? [])], next_before: older.next_before ?? null };
}

async function openQuestion(thread, id, moveFocus) {
  const seq = ++detailSeq;
  const shownFlash = flash && flash.thread === thread && flash.id === id ? flash : null;
  flash = null;
  if (!detail || detail.thread !== thread || detail.id !== id) {
    ui.detail.replaceChildren(h('p', { class: 'loading', role: 'status' }, 'Loading the question…'));
  }
  let th;
  let hist;
  try {
    [th, hist] = await Promise.all([api.thread(thread), api.history(thread).catch((err) => ({ error: err }))]);
  } catch (err) {
    if (seq !== detailSeq) return;
    if (err.status === 401) {
      signOut('Your token is no longer accepted. Sign in again.');
      return;
    }
    detail = null;
    ui.detail.replaceChildren(backLink(), h('div', { class: 'panel' },
      h('h2', { tabindex: '-1' }, err.status === 404 ? 'This thread does not exist' : 'The question cannot be read'),
      h('p', null, err.message)));
    return;
  }
  if (seq !== detailSeq) return;
  let { entries, byID } = historyOf(hist);
  const pending = (th.interrupts ?? []).find((q) => q.id === id);
  // An answered question older than the latest page: read back until it shows.
  while (!pending && !byID.has(id) && hist.next_before && !hist.error) {
    try {
      hist = await withOlderHistory(thread, hist, 100);
    } catch (err) {
      hist = { ...hist, error: err };
    }
    if (seq !== detailSeq) return;
    ({ entries, byID } = historyOf(hist));
  }
  const q = pending ?? byID.get(id)?.q;
  if (!q) {
    detail = null;
    ui.detail.replaceChildren(backLink(), h('div', { class: 'panel' },
      h('h2', { tabindex: '-1' }, 'No such question'),
      h('p', null, `Thread ${thread} has no question ${id}.`)));
    return;
  }
  detail = { thread, id, pending: Boolean(pending), submitting: false, form: null, expiresAt: q.expires_at ?? null, hist };
  const d = detail;
  const headingID = uid('qh');
  const resolution = pending ? null : byID.get(id)?.resolution ?? null;
  const article = h('article', { class: 'question', 'aria-labelledby': headingID, dataset: { status: pending ? 'pending' : 'answered' } },
    questionHeader(th, q, headingID),
    pending ? null : resolvedBox(resolution, th, q, shownFlash),
    h('div', { class: 'gone', role: 'status', hidden: true }),
    isToolApproval(q) ? toolSection(q, pending ? undefined : resolution) : valueSection(q),
    conversation(th.messages, pending ? th.finished_tool_results : null),
    pending ? answerSection(th, q) : null,
    historySection(entries, id, hist?.error, hist?.next_before ? () => showOlderHistory(d) : null));
  ui.detail.replaceChildren(backLink(), article);
  detail.article = article;
  if (shownFlash) {
    // The confirmation sits under the question's title: both stay in view.
    article.querySelector('.flash')?.focus({ preventScroll: true });
    ui.detail.scrollTop = 0;
    window.scrollTo(0, 0);
  }
  else if (moveFocus) document.getElementById(headingID)?.focus();
}

function backLink() {
  return h('nav', { class: 'back', 'aria-label': 'Back' }, h('a', { href: '#/' }, h('span', { 'aria-hidden': 'true' }, '← '), 'All questions'));
}

/**
 * breadcrumb shows where a question raised inside a subgraph or an inner agent
 * was asked: the graph, the subgraphs (an agent's tool call by the agent tool's
 * name), and the tool asked about, as "team-agent › billing › issue_refund".
 * It is null for a question of a plain node or a top-level tool call.
 */
function breadcrumb(graph, q) {
  const path = Array.isArray(q.path) ? q.path : [];
  if (path.length < 2 || (path.length === 2 && q.tool_call_id)) return null;
  const parts = [graph];
  for (let i = 0; i < path.length; i++) {
    if (path[i] === 'tools' && i + 1 < path.length) { i++; continue; }
    parts.push(path[i]);
  }
  if (q.reason === 'tool_approval' && q.value && typeof q.value.tool === 'string') parts.push(q.value.tool);
  return h('span', { class: 'breadcrumb' }, parts.join(' › '));
}

/** assignedToMe reports whether the question names the signed-in person or one of their groups. */
function assignedToMe(q) {
  const me = state.me;
  return Boolean(me && q.assignees?.some((a) => a === me.name || me.groups?.includes(a)));
}

function questionHeader(th, q, headingID) {
  const facts = [
    ['Thread', h('code', null, th.thread_id)],
    ['Graph', th.graph],
    // A tool call's node is the agent's tool node: the tool, shown below, says more.
    // A question from inside a subgraph or an inner agent shows the way down to it.
    ['Asked in', breadcrumb(th.graph, q) || (q.node && !q.tool_call_id ? h('code', null, q.node) : null)],
    ['Asked', when(q.created_at)],
    ['Expires', q.expires_at ? when(q.expires_at) : null],
    ['May answer', q.assignees?.length ? q.assignees.join(', ') : null],
  ].filter(([, v]) => v);
  return h('header', null,
    h('p', { class: 'kicker' },
      q.reason ? h('span', { class: `badge reason reason-${q.reason.replace(/[^a-z0-9_-]/gi, '')}` }, humanize(q.reason)) : null,
      h('span', { class: 'badge graph' }, th.graph)),
    h('h2', { id: headingID, tabindex: '-1' }, q.message || 'A question without a message'),
    h('dl', { class: 'facts' }, facts.map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, v)))));
}

/**
 * byWhom says who answered: " by alice", or, when nobody signed in (a server
 * without tokens), " by you" right after answering and nothing otherwise.
 */
function byWhom(by, mine = false) {
  if (by) return [' by ', h('strong', { class: 'by' }, by)];
  return mine ? [' by ', h('span', { class: 'by' }, 'you')] : [];
}

function isDecision(v) {
  return v && typeof v === 'object' && !Array.isArray(v) && ['approve', 'edit', 'reject', 'respond'].includes(v.action);
}

/** outcome describes the resolution of question q: [verb, details, kind]. */
function outcome(r, q) {
  if (!r) return ['Waiting for an answer', null, 'pending'];
  switch (r.status) {
    case 'rejected':
      return ['Rejected', r.error?.message ? h('q', { class: 'reason-text' }, r.error.message) : h('span', { class: 'none' }, 'no reason given'), 'rejected'];
    case 'cancelled':
      return ['Cancelled', null, 'cancelled'];
    case 'expired':
      return ['Expired', null, 'cancelled'];
  }
  const v = r.response;
  if (v === true || v === false) return [v ? 'Approved' : 'Declined', null, v ? 'approved' : 'declined'];
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const keys = Object.keys(v);
    if (keys.length === 1 && typeof v[keys[0]] === 'boolean') {
      return [v[keys[0]] ? 'Approved' : 'Declined', null, v[keys[0]] ? 'approved' : 'declined'];
    }
  }
  if (isDecision(v)) {
    switch (v.action) {
      case 'approve':
        return [v.sticky ? 'Approved for the rest of the run' : 'Approved', null, 'approved'];
      case 'edit':
        return ['Approved with edited arguments', changesLine(q?.value?.arguments, v.arguments), 'approved'];
      case 'reject':
        return ['Rejected', v.message ? h('q', { class: 'reason-text' }, v.message) : h('span', { class: 'none' }, 'no reason given'), 'rejected'];
      case 'respond':
        return ['Responded in the tool’s place', v.message ? h('q', null, v.message) : null, 'approved'];
    }
  }
  return ['Answered', renderValue(v), 'approved'];
}

/**
 * resolvedBox says how an answered question was answered, and what the thread
 * did next. Right after answering it is the one confirmation (f, the answer's
 * outcome): with the link to the thread's next question and back to the list.
 */
function resolvedBox(r, th, q, f) {
  const [verb, more, kind] = outcome(r, q);
  const replay = f?.kind === 'replayed';
  const said = r
    ? [h('strong', null, verb), byWhom(r.by, Boolean(f) && !replay), ' ', when(r.at), '.']
    : [h('strong', null, f ? f.title : 'No longer waiting')];
  const after = f && !replay ? f.text : threadNow(th);
  return h('div', { class: `resolved ${kind}${f ? ` flash${replay ? ' replayed' : ''}` : ''}`, role: f ? 'status' : null, tabindex: f ? '-1' : null },
    replay ? h('p', null, h('strong', null, 'Already answered. '), f.text) : null,
    h('p', null, said),
    more,
    after ? h('p', { class: 'small' }, after) : null,
    f?.next?.length ? h('p', null, 'It now asks: ',
      f.next.map((n, i) => [i ? ', ' : '', h('a', { href: questionHref(f.thread, n.id) }, n.message || n.id)])) : null,
    f ? h('p', null, h('a', { href: '#/' }, 'Back to all questions')) : null);
}

function threadNow(th) {
  switch (th.status) {
    case 'interrupted':
      return (th.interrupts ?? []).length ? 'The thread is waiting for another answer.' : 'The thread is paused.';
    case 'running':
      return 'The thread is running.';
    case 'failed':
      return `The thread failed${th.error ? `: ${th.error}` : '.'}`;
  }
  return null;
}

function valueSection(q) {
  if (q.value === null || q.value === undefined) return null;
  return h('section', { class: 'value', 'aria-label': 'Details' },
    h('h3', null, 'Details'),
    renderValue(q.value));
}

function isToolApproval(q) {
  const props = q.response_schema?.properties;
  return q.reason === 'tool_approval' && q.value && typeof q.value.tool === 'string' &&
    Array.isArray(props?.action?.enum) && props.action.enum.includes('approve');
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const sameJSON = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** argumentRows pairs the fields of two argument objects: [{key, proposed, ran, changed}]. */
function argumentRows(proposed, ran) {
  const p = isPlainObject(proposed) ? proposed : {};
  const r = isPlainObject(ran) ? ran : {};
  const keys = [...new Set([...Object.keys(p), ...Object.keys(r)])];
  return keys.map((key) => ({ key, proposed: p[key], ran: r[key], changed: !sameJSON(p[key], r[key]) }));
}

/** argValue shows one argument's value, or says it was not given. */
function argValue(v, key) {
  return v === undefined ? h('span', { class: 'none' }, 'not given') : renderValue(v, 1, key);
}

/**
 * changesLine lists, field by field, what an edit changed in the model's
 * arguments: "Amount: 150 → 40".
 */
function changesLine(proposed, ran) {
  const changed = argumentRows(proposed, ran).filter((x) => x.changed);
  if (!isPlainObject(proposed) || !isPlainObject(ran)) {
    return h('div', { class: 'changes' }, h('p', null, 'It ran with: '), folded(ran ?? null, 'the arguments it ran with'));
  }
  if (changed.length === 0) return h('p', { class: 'changes' }, 'No argument was changed.');
  return h('ul', { class: 'changes', 'aria-label': 'Changed arguments' }, changed.map((x) => h('li', null,
    h('span', { class: 'label' }, humanize(x.key)), ': ',
    h('del', { class: 'proposed' }, argValue(x.proposed, x.key)), h('span', { 'aria-label': 'changed to' }, ' → '),
    h('ins', { class: 'ran' }, argValue(x.ran, x.key)))));
}

/** fieldLabel names an argument as its schema does, with its description below. */
function fieldLabel(key, schema) {
  const p = isPlainObject(schema?.properties?.[key]) ? schema.properties[key] : {};
  return [h('span', { class: 'label' }, p.title ?? humanize(key)),
    p.description ? h('span', { class: 'description' }, p.description) : null];
}

/**
 * argumentsTable shows the arguments of a tool call, field by field. With the
 * model's proposal and what ran both given, it is a diff: each field with what
 * ran and what the model proposed, the changed ones marked.
 */
function argumentsTable(proposed, schema, ran) {
  const diff = ran !== undefined;
  const rows = argumentRows(proposed, diff ? ran : proposed);
  const changes = rows.filter((x) => x.changed).length;
  return h('table', { class: `args${diff ? ' diff' : ''}` },
    diff ? h('caption', null, changes === 0 ? 'No field was changed.' : `${plural(changes, 'field')} changed from the model’s proposal.`) : null,
    h('thead', null, h('tr', null,
      h('th', { scope: 'col' }, 'Field'),
      h('th', { scope: 'col' }, diff ? 'Ran with' : 'Value'),
      diff ? h('th', { scope: 'col' }, 'Model proposed') : null)),
    h('tbody', null, rows.map((x) => h('tr', { class: x.changed ? 'changed' : null, dataset: { key: x.key } },
      h('th', { scope: 'row' }, fieldLabel(x.key, schema)),
      h('td', { class: 'ran' }, argValue(x.ran, x.key),
        x.changed ? h('span', { class: 'badge changed' }, 'changed') : null),
      diff ? h('td', { class: 'proposed' }, x.changed ? h('del', null, argValue(x.proposed, x.key)) : h('span', { class: 'none' }, 'same')) : null))));
}

/**
 * toolSection shows the tool call a question asks about. Once answered, it
 * shows what ran: the arguments as approved or, after an edit, as edited,
 * beside the model's proposal.
 */
function toolSection(q, r) {
  const v = q.value;
  const rest = Object.fromEntries(Object.entries(v).filter(([k]) => !['tool', 'tool_call_id', 'arguments', 'input_schema', 'violations'].includes(k)));
  const d = r && !r.status?.match(/^(rejected|cancelled|expired)$/) && isDecision(r.response) ? r.response : null;
  const ran = d?.action === 'edit' ? d.arguments : d?.action === 'approve' ? v.arguments : undefined;
  let heading = 'Arguments the model proposed';
  if (d?.action === 'edit') heading = 'Arguments it ran with, edited';
  else if (d?.action === 'approve') heading = 'Arguments it ran with';
  const notRun = r && ran === undefined;
  let body;
  if (typeof v.arguments === 'string' && d?.action !== 'edit') body = h('pre', null, h('code', null, v.arguments));
  else if (d?.action === 'edit') body = argumentsTable(typeof v.arguments === 'string' ? {} : v.arguments, v.input_schema, ran);
  else body = argumentsTable(v.arguments ?? {}, v.input_schema);
  return h('section', { class: 'tool', 'aria-label': 'Tool call' },
    h('h3', null, 'Tool call'),
    h('dl', { class: 'facts' },
      h('div', null, h('dt', null, 'Tool'), h('dd', null, h('code', { class: 'tool-name' }, v.tool)))),
    h('h4', null, heading),
    notRun ? h('p', { class: 'small' }, `${v.tool} did not run with them.`) : null,
    h('div', { class: 'arguments' }, body),
    Array.isArray(v.violations) && v.violations.length && !r ? h('div', { class: 'warning' },
      h('p', null, 'The model’s arguments do not fit what the tool accepts, so approving them cannot run it; edit them instead.'),
      h('ul', null, v.violations.map((x) => h('li', null, x.path ? [h('code', null, x.path), ' '] : null, x.message)))) : null,
    Object.keys(rest).length ? [h('h4', null, 'Other details'), renderValue(rest)] : null);
}

function blockText(b) {
  if (typeof b?.text === 'string') return b.text;
  if (Array.isArray(b?.content)) return b.content.map(blockText).join('\n');
  if (typeof b?.content === 'string') return b.content;
  return '';
}

const roleNames = { user: 'User', assistant: 'Agent', system: 'System' };

function blocksOf(m) {
  return Array.isArray(m.content) ? m.content : [{ type: 'text', text: String(m.content ?? '') }];
}

/**
 * conversation shows an agent thread's last messages: each turn with who
 * spoke, and each tool result as a turn of its own, named after its tool. The
 * results of the waiting turn's calls that already finished (finished) follow,
 * marked as such: the approver sees what the lookup found before deciding.
 */
function conversation(messages, finished) {
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const done = Array.isArray(finished) ? finished.filter((b) => b?.type === 'tool_result') : [];
  const tools = new Map(); // tool call id → tool name
  for (const m of messages) {
    for (const b of blocksOf(m)) if (b?.type === 'tool_use' && b.id) tools.set(b.id, b.name);
  }
  const last = messages.slice(-20);
  const items = [];
  for (const m of last) {
    const blocks = blocksOf(m);
    const results = blocks.filter((b) => b?.type === 'tool_result');
    const said = blocks.filter((b) => b?.type !== 'tool_result');
    if (said.length > 0 || results.length === 0) {
      items.push(h('li', { class: `message role-${m.role}${m.imported ? ' imported' : ''}` },
        h('p', { class: 'role' }, roleNames[m.role] ?? humanize(m.role ?? 'message'),
          m.imported ? h('span', { class: 'imported-label', title: 'This turn came with the input, not from the agent’s own model or tools.' }, 'imported') : null),
        said.map(blockView)));
    }
    for (const b of results) {
      const name = tools.get(b.tool_use_id);
      items.push(h('li', { class: `message role-tool${b.is_error ? ' failed' : ''}${m.imported ? ' imported' : ''}` },
        h('p', { class: 'role' }, b.is_error ? 'Tool failed' : 'Tool result', name ? [': ', h('code', { class: 'tool-name' }, name)] : null),
        h('p', { class: `tool-result${b.is_error ? ' error-result' : ''}` }, blockText(b) || h('span', { class: 'none' }, 'no text'))));
    }
  }
  for (const b of done) {
    const name = tools.get(b.tool_use_id);
    items.push(h('li', { class: `message role-tool finished${b.is_error ? ' failed' : ''}` },
      h('p', { class: 'role' }, b.is_error ? 'Tool failed' : 'Tool result', name ? [': ', h('code', { class: 'tool-name' }, name)] : null,
        h('span', { class: 'finished-label' }, 'finished while this question waits')),
      h('p', { class: `tool-result${b.is_error ? ' error-result' : ''}` }, blockText(b) || h('span', { class: 'none' }, 'no text'))));
  }
  const waiting = done.length > 0 ? `, ${plural(done.length, 'finished tool result')}` : '';
  return h('details', { class: 'conversation' },
    h('summary', null, `Conversation (${plural(messages.length, 'message')}${waiting})`),
    messages.length > last.length ? h('p', { class: 'small' }, `The last ${last.length} are shown.`) : null,
    h('ol', null, items));
}

function blockView(b) {
  switch (b?.type) {
    case 'text':
      return h('p', { class: 'text' }, b.text);
    case 'tool_use': {
      const args = JSON.stringify(b.input ?? null);
      return args.length <= 120
        ? h('p', { class: 'tool-use' }, 'Calls ', h('code', null, b.name), ' with ', h('code', null, args))
        : h('div', { class: 'tool-use' }, h('p', null, 'Calls ', h('code', null, b.name)), folded(b.input ?? null, 'arguments'));
    }
    case 'thinking':
      return b.thinking ? h('details', { class: 'thinking' }, h('summary', null, 'Thinking'), h('p', { class: 'text' }, b.thinking)) : null;
    case 'redacted_thinking':
      return null; // encrypted by the provider; nothing to read
    default:
      return folded(b, b?.type ?? 'block');
  }
}

/** showOlderHistory adds the page of history before the one shown. */
async function showOlderHistory(d) {
  const section = d.article?.querySelector('section.history');
  const button = section?.querySelector('button.older-history');
  if (!button || button.disabled) return;
  button.disabled = true;
  button.textContent = 'Loading earlier history…';
  let hist;
  try {
    hist = await withOlderHistory(d.thread, d.hist);
  } catch (err) {
    if (err.status === 401) {
      signOut('Your token is no longer accepted. Sign in again.');
      return;
    }
    hist = { ...d.hist, error: err };
  }
  if (detail !== d || !section.isConnected) return;
  if (!hist.error) d.hist = hist;
  const fresh = historySection(historyOf(hist).entries, d.id, hist.error, d.hist.next_before ? () => showOlderHistory(d) : null);
  section.replaceWith(fresh);
  (fresh.querySelector('button.older-history') ?? fresh.querySelector('h3')).focus();
}

function historySection(entries, current, error, older) {
  const list = entries.map((e) => {
    if (e.failed) {
      return h('li', { class: 'entry failed' }, h('p', null, h('strong', null, 'The run failed: '), e.failed), h('p', { class: 'meta' }, when(e.at)));
    }
    const [verb, more, kind] = outcome(e.resolution, e.q);
    return h('li', { class: `entry ${kind}`, 'aria-current': e.q.id === current ? 'true' : undefined },
      h('p', { class: 'asked' },
        e.q.id === current ? h('span', { class: 'badge current' }, 'This question') : null, ' ',
        e.q.id === current ? h('span', null, e.q.message || e.q.id) : h('a', { href: questionHref(detail.thread, e.q.id) }, e.q.message || e.q.id)),
      h('p', { class: 'meta' }, 'Asked ', when(e.at), e.q.node ? [' in ', h('code', null, e.q.node)] : null),
      h('p', { class: 'outcome' }, h('span', { class: 'verb' }, verb),
        e.resolution ? [byWhom(e.resolution.by), ' ', when(e.resolution.at)] : null),
      more ? h('div', { class: 'more' }, more) : null);
  });
  return h('section', { class: 'history', 'aria-label': 'History' },
    h('h3', { tabindex: '-1' }, 'History'),
    error ? h('p', { class: 'form-error' }, `The history cannot be read: ${error.message}`) : null,
    list.length ? h('ol', { class: 'timeline' }, list)
      : h('p', { class: 'none' }, older ? 'No questions in the latest history.' : 'No questions yet.'),
    older ? h('button', { type: 'button', class: 'secondary small older-history', onclick: older }, 'Show earlier history') : null);
}

/** detailChanged runs when the shown question's thread paused or ended. */
async function detailChanged() {
  const d = detail;
  if (!d || !d.pending || d.submitting) return;
  let th;
  try {
    th = await api.thread(d.thread);
  } catch {
    return;
  }
  if (detail !== d || d.submitting || (th.interrupts ?? []).some((q) => q.id === d.id)) return;
  d.pending = false;
  d.form?.markGone();
  // A question past its time was closed by the server, not answered.
  const expired = d.expiresAt !== null && Date.parse(d.expiresAt) <= Date.now();
  const gone = d.article.querySelector('.gone');
  gone.replaceChildren(h('p', null, h('strong', null, expired ? 'This question expired before anyone answered it.' : 'This question was answered meanwhile.'), ' ',
    h('a', { href: location.hash, onclick: (e) => { e.preventDefault(); openQuestion(d.thread, d.id, true); } }, 'See how')));
  gone.hidden = false;
}

// ---------------------------------------------------------------- answering

function answerSection(th, q) {
  const headingID = uid('ah');
  const section = h('section', { class: 'answer', 'aria-labelledby': headingID },
    h('h3', { id: headingID }, 'Your answer'));
  if (!state.canAnswer) {
    section.append(h('p', { class: 'note readonly' },
      `You are signed in as ${state.me.name}, whose token may read questions but not answer them: that needs the approve role.`));
    return section;
  }
  const tool = isToolApproval(q);
  const f = tool ? toolForm(th, q) : genericForm(th, q, headingID);
  detail.form = f;
  section.append(f.el);
  if (!tool) section.append(rejectBlock(th, q, Boolean(booleanAnswer(q.response_schema))));
  section.append(cancelBlock(th, q, tool ? `${q.value.tool} does not run, and the agent is told the call was cancelled.`
    : 'The thread is told that nobody will answer it.'));
  return section;
}

/** errorSummary lists a refused answer's problems above the form. */
function errorSummary() {
  const el = h('div', { class: 'error-summary', role: 'alert', tabindex: '-1', hidden: true });
  return {
    el,
    show(title, items = []) {
      el.replaceChildren(h('p', null, h('strong', null, title)),
        items.length ? h('ul', null, items.map(([text, ctl]) => h('li', null,
          ctl ? h('button', { type: 'button', class: 'link', onclick: () => ctl.focus() }, text) : text))) : null);
      el.hidden = false;
      el.focus();
    },
    clear() {
      el.hidden = true;
      el.replaceChildren();
    },
  };
}

function requiredNote(root) {
  return root.querySelector('.req') ? h('p', { class: 'note small' }, 'Fields marked ', h('span', { class: 'req', 'aria-hidden': 'true' }, '*'), ' are required.') : null;
}

/** labelOf finds the text a person knows a field by. */
function labelOf(ctl) {
  const l = ctl.el.querySelector(':scope > label, :scope > legend, :scope > .const .label');
  return l ? l.textContent.replace(/\*$/, '').trim() : ctl.path || 'The answer';
}

/**
 * send posts an answer and shows the outcome: on success the question is shown
 * again as answered; on a refusal the form stays as it was, with the server's
 * violations at their fields.
 */
async function send(th, q, form, root, summary, verb, post) {
  const d = detail;
  summary.clear();
  if (root) walk(root, (c) => c.clearError());
  const buttons = [...form.querySelectorAll('button')];
  buttons.forEach((b) => { b.disabled = true; });
  form.setAttribute('aria-busy', 'true');
  d.submitting = true;
  try {
    const res = await post();
    d.pending = false;
    // The same answer had been given before (by someone else, or by a double
    // click): it was not applied again, and the person should know they did
    // not decide.
    const replay = res.replayed ? (res.replays ?? []).find((r) => r.interrupt_id === q.id) : null;
    const shown = replay ? {
      thread: th.thread_id, id: q.id, kind: 'replayed', title: 'Already answered.',
      text: [replay.by ? h('strong', null, replay.by) : 'Someone', ' gave this answer ', when(replay.at), '; yours was not applied again.'],
      next: (res.interrupts ?? []).filter((n) => n.id !== q.id),
    } : {
      thread: th.thread_id, id: q.id, kind: 'ok', title: `${verb}.`,
      text: res.status === 'completed' ? 'The thread finished.'
        : res.status === 'failed' ? `The thread failed: ${res.error ?? 'no reason given'}.`
          : res.interrupts?.length ? 'The thread is waiting for another answer.' : `The thread is ${res.status}.`,
      next: (res.interrupts ?? []).filter((n) => n.id !== q.id),
    };
    announce(replay ? 'Already answered; your answer was not applied again.' : `${verb}.`);
    refresh();
    if (detail === d) {
      flash = shown;
      openQuestion(th.thread_id, q.id, false);
    }
  } catch (err) {
    d.submitting = false;
    buttons.forEach((b) => { b.disabled = false; });
    form.removeAttribute('aria-busy');
    refused(err, form, root, summary, d);
  }
}

function refused(err, form, root, summary, d) {
  if (err.status === 401) {
    signOut('Your token is no longer accepted. Sign in again.');
    return;
  }
  // The details are {violations, total}; servers that described every
  // violation sent the bare array.
  const violations = Array.isArray(err.details) ? err.details : err.details?.violations;
  if (err.code === 'invalid_response' && Array.isArray(violations)) {
    const items = [];
    for (const v of violations) {
      // A missing property is shown at the property's own field.
      const missing = /^missing propert(?:y|ies) (.+)$/.exec(v.message ?? '');
      if (missing && root) {
        const fields = [...missing[1].matchAll(/'([^']*)'/g)]
          .map((m) => find(root, pointer(v.path ?? '', m[1])))
          .filter((c, i, all) => c && all.indexOf(c) === i && c.path.startsWith(`${v.path ?? ''}/`));
        if (fields.length) {
          for (const c of fields) {
            c.setError('This is required.');
            items.push([`${labelOf(c)}: this is required.`, c]);
          }
          continue;
        }
      }
      const ctl = root ? find(root, v.path ?? '') : null;
      if (ctl) {
        // A violation of the whole answer (a top-level string too short, say)
        // is marked at the answer's own control, if it has one.
        ctl.setError(v.message);
        items.push([ctl.path !== '' ? `${labelOf(ctl)}: ${v.message}` : v.message, ctl]);
      } else {
        items.push([v.path ? `${v.path}: ${v.message}` : v.message, null]);
      }
    }
    const more = (err.details?.total ?? 0) - violations.length;
    if (more > 0) {
      items.push([`and ${more} more ${more === 1 ? 'problem' : 'problems'}`, null]);
    }
    summary.show('The server refused the answer. Correct what is marked and send it again.', items);
    return;
  }
  if (['unknown_interrupt', 'not_interrupted'].includes(err.code)) {
    summary.show('This question was answered or withdrawn meanwhile.', [[err.message, null]]);
    d.form?.markGone();
    return;
  }
  if (err.status === 403) {
    summary.show('Your token may not answer questions.', [[err.message, null]]);
    return;
  }
  summary.show('The answer was not sent.', [[err.message, null]]);
}

function formParts(className, labelledBy) {
  // novalidate: the page shows its own messages at the fields (see validate).
  const form = h('form', { class: `answer-form ${className}`, 'aria-labelledby': labelledBy, novalidate: true });
  return {
    form,
    markGone() {
      form.inert = true;
      form.classList.add('gone-form');
    },
  };
}

function genericForm(th, q, labelledBy) {
  const schema = q.response_schema;
  const bool = booleanAnswer(schema);
  const summary = errorSummary();
  const parts = formParts('generic', labelledBy);
  const { form } = parts;
  let root = null;
  if (bool) {
    const help = bool.description ?? (bool.key ? null : schema?.description);
    add(form, [summary.el,
      help ? h('p', { class: 'help' }, help) : null,
      h('div', { class: 'actions choices-row' },
        withHelp(h('button', { type: 'submit', class: 'primary approve', value: 'true' }, 'Approve'), 'Answers yes.'),
        withHelp(h('button', { type: 'submit', class: 'secondary decline', value: 'false' }, 'Decline'), 'Answers no, without a reason.'))]);
  } else {
    const isObj = schema && typeof schema === 'object' && schema.properties && Object.keys(schema.properties).length > 0;
    root = field(schema, { key: 'answer', label: schema?.title ?? 'Answer', path: '', required: true, root: Boolean(isObj) });
    form.append(summary.el, root.el);
    const note = requiredNote(form);
    if (note) form.insertBefore(note, root.el);
    form.append(h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send answer')));
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!bool && !validate(form)) return;
    let value;
    let verb = 'Answered';
    if (bool) {
      const yes = e.submitter?.value === 'true';
      value = bool.key === null ? yes : { [bool.key]: yes };
      verb = yes ? 'Approved' : 'Declined';
    } else {
      value = root.get();
      if (value === undefined) value = null;
    }
    send(th, q, form, root, summary, verb, () => api.resume(th.thread_id, q.id, value));
  });
  return { el: form, markGone: parts.markGone };
}

/** hasText checks that a required text field holds more than spaces, marking it if not. */
function hasText(ctl, message) {
  if ((ctl.get() ?? '').trim() !== '') return true;
  ctl.setError(message);
  ctl.focus();
  return false;
}

/** withHelp puts a short line under a button saying what it does. */
function withHelp(button, text) {
  const id = uid('does');
  button.setAttribute('aria-describedby', id);
  return h('div', { class: 'does' }, button, h('p', { class: 'help', id }, text));
}

/**
 * rejectBlock rejects a question with a reason, which the waiting thread
 * receives: the reason is asked for, and focused, when the block opens.
 */
function rejectBlock(th, q, yesNo) {
  const summary = errorSummary();
  const reason = field({ type: 'string', description: 'The thread receives it with the rejection.' },
    { key: 'reason', label: 'Reason', path: '/error', required: true, missing: 'Write the reason: the thread receives it.' });
  const form = h('form', { class: 'reject-form', novalidate: true },
    summary.el,
    reason.el,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'danger' }, 'Reject')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!validate(form) || !hasText(reason, 'Write the reason: the thread receives it.')) return;
    send(th, q, form, reason, summary, 'Rejected', () => api.reject(th.thread_id, q.id, reason.get().trim()));
  });
  const block = h('details', { class: 'more-actions' },
    h('summary', null, h('span', { class: 'summary-title' }, 'Reject with a reason'),
      h('span', { class: 'help' }, yesNo ? 'Answers no and says why.' : 'Refuses to answer and says why.')),
    form);
  block.addEventListener('toggle', () => { if (block.open) reason.focus(); });
  return block;
}

/** cancelBlock withdraws the question, once confirmed; consequence says what the waiting code is told. */
function cancelBlock(th, q, consequence) {
  const summary = errorSummary();
  let askRow = null;
  const ask = h('button', {
    type: 'button', class: 'secondary cancel-question',
    onclick: () => { confirm.hidden = false; askRow.hidden = true; confirm.querySelector('button').focus(); },
  }, 'Cancel this question…');
  askRow = withHelp(ask, `Withdraws the question unanswered: ${consequence[0].toLowerCase()}${consequence.slice(1)}`);
  const confirm = h('div', { class: 'confirm', hidden: true },
    h('p', null, `${consequence} This cannot be undone.`),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'danger' }, 'Yes, cancel it'),
      h('button', { type: 'button', class: 'secondary', onclick: () => { confirm.hidden = true; askRow.hidden = false; ask.focus(); } }, 'Keep it')));
  const form = h('form', { class: 'cancel-form' }, summary.el, askRow, confirm);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    send(th, q, form, null, summary, 'Cancelled', () => api.cancel(th.thread_id, q.id));
  });
  return form;
}

const actionText = {
  approve: ['Approve', '{tool} runs with the arguments shown above.', 'Approve'],
  edit: ['Edit, then run', 'Change the arguments; {tool} runs with yours.', 'Run with these arguments'],
  reject: ['Reject', '{tool} does not run; the agent is told why.', 'Reject'],
  respond: ['Respond instead', '{tool} does not run; the agent gets your text as its result.', 'Send response'],
};

function toolForm(th, q) {
  const v = q.value;
  const props = q.response_schema.properties;
  const tool = v.tool;
  const summary = errorSummary();
  const parts = formParts('tool-approval', undefined);
  const { form } = parts;
  const actions = props.action.enum.filter((a) => actionText[a]);
  const name = uid('action');
  const radios = {};
  const panels = {};
  const ctls = [];

  // approve: optionally for the rest of the run
  if (props.sticky) {
    const sticky = field({ ...props.sticky, description: undefined }, { key: 'sticky', label: `Also approve later calls of ${tool} in this run`, path: '/sticky' });
    panels.approve = [sticky];
    ctls.push(sticky);
  }
  // edit: the tool's input schema, filled with the model's arguments
  const argsSchema = props.arguments ?? v.input_schema;
  let args = null;
  if (actions.includes('edit')) {
    const initial = typeof v.arguments === 'string' ? undefined : v.arguments;
    args = field(argsSchema ?? true, { key: 'arguments', label: 'Arguments', path: '/arguments', required: true, value: initial });
    panels.edit = [args];
    ctls.push(args);
  }
  // reject: a reason, sent with POST /reject
  const reason = field({ type: 'string', description: `The agent is told it as the reason ${tool} did not run.` },
    { key: 'reason', label: 'Reason', path: '/error', required: true, missing: 'Write the reason: the agent is told it.' });
  panels.reject = [reason];
  ctls.push(reason);
  // respond: the text the agent gets as the tool's result
  const message = field({ type: 'string', description: `The agent gets it as the result of ${tool}.` }, { key: 'message', label: 'Result text', path: '/message', required: true });
  panels.respond = [message];
  ctls.push(message);

  const choices = actions.map((a) => {
    const id = uid('act');
    radios[a] = h('input', { type: 'radio', name, id, value: a, checked: a === actions[0], 'aria-describedby': `${id}-help` });
    const [label, help] = actionText[a];
    return h('div', { class: 'choice' }, radios[a], h('label', { for: id }, label),
      h('p', { class: 'help', id: `${id}-help` }, help.replace('{tool}', tool)));
  });
  const decision = h('fieldset', { class: 'field group choices decision', dataset: { path: '/action' } },
    h('legend', null, 'Decision'), h('div', { class: 'options' }, choices));
  const panelEls = Object.fromEntries(Object.entries(panels).map(([a, cs]) => [a,
    h('fieldset', { class: `decision-panel decision-${a}`, dataset: { action: a } }, h('legend', { class: 'visually-hidden' }, actionText[a]?.[0] ?? a), cs.map((c) => c.el))]));
  // While editing, the changes to the model's arguments show field by field.
  if (panelEls.edit && typeof v.arguments !== 'string') {
    const changes = h('div', { class: 'live-changes', 'aria-live': 'polite' });
    const show = () => changes.replaceChildren(h('p', { class: 'changes-title' }, 'Your changes'), changesLine(v.arguments, args.get() ?? {}));
    panelEls.edit.addEventListener('input', show);
    panelEls.edit.addEventListener('change', show);
    panelEls.edit.addEventListener('click', (e) => { if (e.target.closest('button')) setTimeout(show); });
    show();
    panelEls.edit.append(changes);
  }
  const submit = h('button', { type: 'submit', class: 'primary' });
  const current = () => actions.find((a) => radios[a].checked) ?? actions[0];
  const sync = () => {
    const a = current();
    for (const [k, el] of Object.entries(panelEls)) {
      el.hidden = k !== a;
      el.disabled = k !== a; // a hidden panel's fields are not checked
    }
    submit.textContent = actionText[a][2];
    submit.dataset.action = a;
    form.dataset.action = a;
  };
  for (const r of Object.values(radios)) r.addEventListener('change', sync);
  // Chosen with the pointer, reject moves on to its reason; with the arrow
  // keys the focus stays in the choices.
  let byPointer = false;
  decision.addEventListener('pointerdown', () => { byPointer = true; });
  decision.addEventListener('keydown', () => { byPointer = false; });
  radios.reject?.addEventListener('change', () => { if (byPointer && radios.reject.checked) reason.focus(); });
  form.append(summary.el, decision, ...Object.values(panelEls), h('div', { class: 'actions' }, submit));
  sync();

  // The controllers' tree, rooted at the answer: violations find their field.
  const root = {
    el: form, path: '', get: () => undefined, focus: () => radios[current()].focus(),
    setError: () => {}, clearError: () => {}, children: () => ctls,
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!validate(form)) return;
    const a = current();
    const tid = th.thread_id;
    switch (a) {
      case 'approve': {
        const sticky = panels.approve?.[0]?.get() === true;
        send(th, q, form, root, summary, sticky ? 'Approved for the rest of the run' : 'Approved',
          () => api.resume(tid, q.id, sticky ? { action: 'approve', sticky: true } : { action: 'approve' }));
        break;
      }
      case 'edit':
        send(th, q, form, root, summary, 'Approved with edited arguments',
          () => api.resume(tid, q.id, { action: 'edit', arguments: args.get() ?? {} }));
        break;
      case 'reject':
        if (!hasText(reason, 'Write the reason: the agent is told it.')) return;
        send(th, q, form, root, summary, 'Rejected', () => api.reject(tid, q.id, reason.get().trim()));
        break;
      case 'respond':
        send(th, q, form, root, summary, 'Responded', () => api.resume(tid, q.id, { action: 'respond', message: message.get() ?? '' }));
        break;
    }
  });
  return { el: form, markGone: parts.markGone };
}

// The skip link moves focus without touching the route in the fragment.
document.querySelector('.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});

boot();
