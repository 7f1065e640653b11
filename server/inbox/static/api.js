// The HTTP API, as the inbox uses it. The API lives beside the inbox: /inbox/ is
// served by the same server as /v1/, so URLs are resolved from the page's own.

const base = new URL('../', document.baseURI);
const tokenKey = 'interlude.token';

/** An error answer of the API: {"error": {"code", "message", "details"}}. */
export class APIError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The bearer token of this tab, or "". It lives in sessionStorage only. */
export function token() {
  try {
    return sessionStorage.getItem(tokenKey) ?? '';
  } catch {
    return '';
  }
}

export function setToken(t) {
  try {
    if (t) sessionStorage.setItem(tokenKey, t);
    else sessionStorage.removeItem(tokenKey);
  } catch {
    // Storage refused (private mode): the token lasts until the page reloads.
  }
  memoryToken = t;
}

let memoryToken = '';

function headers(extra = {}, tok = token() || memoryToken) {
  const h = { Accept: 'application/json', ...extra };
  if (tok) h.Authorization = `Bearer ${tok}`;
  return h;
}

function url(path, query) {
  const u = new URL(path.replace(/^\//, ''), base);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, v);
  }
  return u;
}

async function errorOf(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    // not JSON
  }
  const e = body?.error;
  return new APIError(res.status, e?.code ?? `http_${res.status}`,
    e?.message ?? `The server answered ${res.status} ${res.statusText}.`, e?.details);
}

async function call(method, path, { query, body, tok, signal } = {}) {
  let res;
  try {
    res = await fetch(url(path, query), {
      method,
      headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }, tok),
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      signal,
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new APIError(0, 'network', 'The server cannot be reached. Check your connection and try again.');
  }
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

/** The checkpoints a page of history holds: enough for a question's story. */
export const HISTORY_PAGE = 20;

export const api = {
  /** GET /v1/me: {"name", "roles"}. tok overrides the stored token. */
  me: (tok) => call('GET', '/v1/me', { tok }),
  graphs: () => call('GET', '/v1/graphs'),
  threads: (query) => call('GET', '/v1/threads', { query }),
  thread: (id) => call('GET', `/v1/threads/${encodeURIComponent(id)}`),
  /** A page of history, newest first; pass its next_before as before for the older page. */
  history: (id, { limit, before } = {}) => call('GET', `/v1/threads/${encodeURIComponent(id)}/history`,
    { query: { limit: limit ?? HISTORY_PAGE, ...(before ? { before } : {}) } }),
  resume: (id, interruptID, response) =>
    // A null response would cancel: answer null through responses instead.
    call('POST', `/v1/threads/${encodeURIComponent(id)}/resume`, {
      body: response === null
        ? { responses: [{ interrupt_id: interruptID, status: 'resolved', response: null }] }
        : { interrupt_id: interruptID, response },
    }),
  reject: (id, interruptID, reason) =>
    call('POST', `/v1/threads/${encodeURIComponent(id)}/reject`, {
      body: reason ? { interrupt_id: interruptID, error: { name: 'rejected', message: reason } } : { interrupt_id: interruptID },
    }),
  cancel: (id, interruptID) =>
    call('POST', `/v1/threads/${encodeURIComponent(id)}/cancel`, { body: { interrupt_id: interruptID } }),
};

/**
 * Every pending question: the interrupted threads' interrupts, all pages, each
 * {thread_id, graph, q}, newest first.
 */
export async function pendingQuestions(signal) {
  const out = [];
  let cursor;
  for (let page = 0; page < 20; page++) {
    const res = await call('GET', '/v1/threads', { query: { status: 'interrupted', limit: 1000, cursor }, signal });
    for (const t of res.threads ?? []) {
      for (const q of t.interrupts ?? []) out.push({ thread_id: t.thread_id, graph: t.graph, q });
    }
    if (!res.next_cursor) break;
    cursor = res.next_cursor;
  }
  out.sort((a, b) => (b.q.created_at ?? '').localeCompare(a.q.created_at ?? '') ||
    a.thread_id.localeCompare(b.thread_id) || a.q.id.localeCompare(b.q.id));
  return out;
}

/**
 * Listens to GET /v1/events, the live events of every thread, until signal
 * aborts. onOpen runs once subscribed, before any event; onEvent gets
 * {event, thread_id, data}. It resolves when the stream ends and rejects with an
 * APIError for an error answer. (EventSource cannot send a bearer token, so the
 * stream is read with fetch.)
 */
export async function listen({ onOpen, onEvent, signal }) {
  let res;
  try {
    res = await fetch(url('/v1/events'), {
      headers: headers({ Accept: 'text/event-stream' }),
      cache: 'no-store',
      credentials: 'omit',
      signal,
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new APIError(0, 'network', 'The server cannot be reached.');
  }
  if (!res.ok) throw await errorOf(res);
  onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        if (field === 'event') name = val;
        else if (field === 'data') data.push(val);
      }
      if (data.length === 0) continue;
      let parsed;
      try {
        parsed = JSON.parse(data.join('\n'));
      } catch {
        continue;
      }
      onEvent({ event: name, thread_id: parsed?.thread_id, data: parsed?.data });
    }
  }
}
