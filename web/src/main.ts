// The agentchat web console: project chat over the local server's API.

import './style.css';
import { Api, ApiError, type ChatRequest, type ChatSession, type GNS3Project, type History, type Message, type StreamEvent } from './api';
import { Pause, pendingOf, snapshotNote } from './approvals';
import { AssistantTurn, Conversation } from './conversation';
import { byId, confirmDialog, h, newUUID } from './dom';
import { applyIcons } from './icons';
import { Settings } from './settings';
import { Sidebar } from './sidebar';
import { readEvents } from './sse';

const KEY_TOKEN = 'agentchat.token'; // sessionStorage: this tab only
const KEY_PROJECT = 'agentchat.project';
const KEY_PROJECTS = 'agentchat.projects';
const KEY_MODE = 'agentchat.mode';
const KEY_APPROVAL = 'agentchat.approval';
const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HISTORY_LIMIT = 100;
const MAX_HISTORY = 1000;
/** How long a stop waits for the server to end the stream. */
const STOP_GRACE_MS = 10_000;
/** How often, and how many times, stop asks again for a session not stored yet. */
const ABORT_RETRY_MS = 250;
const ABORT_TRIES = 12;
/** How long the first visit waits for the GNS3 projects before offering a new id. */
const PROJECTS_WAIT_MS = 1500;
/** The pauses before each attempt to rejoin a lost stream: about 30 s in all. */
const REJOIN_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 8000, 8000];

function stored(storage: Storage, key: string): string {
  try {
    return storage.getItem(key) ?? '';
  } catch {
    return '';
  }
}

function store(storage: Storage, key: string, value: string): void {
  try {
    if (value) storage.setItem(key, value);
    else storage.removeItem(key);
  } catch {
    // storage disabled: the value lives until the page is left
  }
}

// Elements.
const app = byId('app');
const projectForm = byId<HTMLFormElement>('project-form');
const projectInput = byId<HTMLInputElement>('project');
const projectList = byId<HTMLDataListElement>('projects');
const projectPicker = byId<HTMLSelectElement>('project-picker');
const modeSelect = byId<HTMLSelectElement>('mode');
const approvalSelect = byId<HTMLSelectElement>('approval');
const input = byId<HTMLTextAreaElement>('input');
const sendBtn = byId<HTMLButtonElement>('send');
const stopBtn = byId<HTMLButtonElement>('stop');
const statusEl = byId('status');
const conversationEl = byId('conversation');
const scrim = byId('scrim');
const statsEl = byId('stats');
const tokenDialog = byId<HTMLDialogElement>('token-dialog');
const tokenInput = byId<HTMLInputElement>('token');
const tokenReason = byId('token-reason');
const tokenBtn = byId<HTMLButtonElement>('open-token');

// State.
let token = stored(sessionStorage, KEY_TOKEN);
let project = '';
let gns3Projects: GNS3Project[] = []; // from the GNS3 controller, when the server has one
let generated = ''; // the id offered on a first visit, until another is chosen
let projectsLoad = 0;
let current = ''; // the open session ('' = a new chat)
let running: Running | null = null;
let opens = 0; // counts openSession calls: only the last one shows its session
let historyLimit = HISTORY_LIMIT;
let notice = { text: '', until: 0 }; // a message that briefly replaces the status

interface Running {
  session: string;
  controller: AbortController;
  stopping: boolean;
  lastEvent: number;
  started: number;
  heartbeat: boolean;
  tool: string;
  /** pause collects the calls the turn waits on (approval_required). */
  pause: Pause | null;
  /** lastEventId is the id of the last event handled: a lost stream is rejoined after it. */
  lastEventId: string;
  /** reconnecting: the stream was lost, the page asks for it again. */
  reconnecting: boolean;
  /** attempt counts the attempts to rejoin since the last event. */
  attempt: number;
  /** wake ends the wait before the next attempt to rejoin (a stop does not wait). */
  wake: () => void;
}

const api = new Api({
  token: () => token,
  unauthorized: (msg) => askToken(`${msg}. This server needs a JWT or an API key (ack_…).`),
});
const conversation = new Conversation(byId('messages'));
const settings = new Settings(api);
const sidebar = new Sidebar(
  api,
  byId<HTMLUListElement>('sessions'),
  byId<HTMLButtonElement>('load-more'),
  byId('sessions-empty'),
  byId('sessions-error'),
  {
    open: (s) => {
      closeDrawer();
      void openSession(s.thread_id);
    },
    deleted: (id) => {
      if (id === current) newChat();
    },
    changed: (s) => {
      if (s.thread_id === current) renderStats();
    },
  },
);

// Credentials.
function updateTokenButton(): void {
  tokenBtn.classList.toggle('active', token !== '');
  tokenBtn.title = token ? 'Credentials (a token is set for this tab)' : 'Credentials';
}

function askToken(reason = ''): void {
  if (tokenDialog.open) return;
  if (reason) tokenReason.textContent = reason;
  tokenInput.value = token;
  tokenDialog.showModal();
}

tokenBtn.addEventListener('click', () => askToken());
tokenDialog.addEventListener('close', () => {
  const v = tokenDialog.returnValue;
  if (v === 'save') token = tokenInput.value.trim();
  else if (v === 'forget') token = '';
  else return;
  tokenInput.value = '';
  store(sessionStorage, KEY_TOKEN, token);
  updateTokenButton();
  void sidebar.load(project).then(() => renderStats());
  if (current) void openSession(current);
  void loadProjects();
});

// Project.
function recentProjects(): string[] {
  try {
    const v = JSON.parse(stored(localStorage, KEY_PROJECTS) || '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && PROJECT_ID.test(x)) : [];
  } catch {
    return [];
  }
}

function rememberProject(p: string): void {
  const list = [p, ...recentProjects().filter((x) => x !== p)].slice(0, 10);
  store(localStorage, KEY_PROJECTS, JSON.stringify(list));
  store(localStorage, KEY_PROJECT, p);
  renderProjectOptions();
}

function forgetProject(p: string): void {
  store(localStorage, KEY_PROJECTS, JSON.stringify(recentProjects().filter((x) => x !== p)));
}

function projectLabel(p: GNS3Project): string {
  return `${p.name || p.project_id} (${p.status || 'unknown'})`;
}

/**
 * renderProjectOptions fills the suggestions of the free-text field (the
 * GNS3 projects, then the recent ids) and the picker of GNS3 projects.
 */
function renderProjectOptions(): void {
  const listed = new Set(gns3Projects.map((p) => p.project_id));
  projectList.replaceChildren(
    ...gns3Projects.map((p) => h('option', { value: p.project_id, label: projectLabel(p) })),
    ...recentProjects().filter((x) => !listed.has(x)).map((x) => h('option', { value: x })),
  );
  projectPicker.replaceChildren(
    h('option', { value: '' }, 'GNS3 projects…'),
    ...gns3Projects.map((p) => h('option', { value: p.project_id, title: p.project_id, 'data-status': p.status }, projectLabel(p))),
  );
  projectPicker.hidden = gns3Projects.length === 0;
  projectPicker.value = listed.has(project) ? project : '';
}

function isProject(v: unknown): v is GNS3Project {
  if (!v || typeof v !== 'object') return false;
  const p = v as Record<string, unknown>;
  return typeof p.project_id === 'string' && PROJECT_ID.test(p.project_id) && typeof p.name === 'string' && typeof p.status === 'string';
}

/**
 * loadProjects asks the server for the user's GNS3 projects (opened
 * first). Without a GNS3 controller (204) or when GNS3 refuses, there is
 * no list: the free-text field alone, as before. A first visit still on
 * its offered id moves to the first opened project.
 */
async function loadProjects(): Promise<void> {
  const n = ++projectsLoad;
  let list: GNS3Project[] = [];
  try {
    const got: unknown = await api.listProjects();
    list = Array.isArray(got) ? got.filter(isProject) : [];
  } catch {
    list = []; // no GNS3_URL, or GNS3 said no: any id can still be typed
  }
  if (n !== projectsLoad) return;
  gns3Projects = list;
  renderProjectOptions();
  const first = list.find((p) => p.status === 'opened');
  if (first && generated && project === generated && !current && !running) {
    forgetProject(generated);
    generated = '';
    setProject(first.project_id);
  }
}

function setProject(p: string, keepSession = false): void {
  if (!PROJECT_ID.test(p)) {
    projectInput.setCustomValidity('A project id: letters, digits, "-", "_" and "." (at most 128)');
    projectInput.reportValidity();
    return;
  }
  projectInput.setCustomValidity('');
  projectInput.value = p;
  const changed = p !== project;
  project = p;
  rememberProject(p);
  if (!changed) return;
  void sidebar.load(p).then(() => renderStats());
  if (!keepSession) newChat();
}

projectForm.addEventListener('submit', (e) => {
  e.preventDefault();
  setProject(projectInput.value.trim());
});
projectInput.addEventListener('change', () => setProject(projectInput.value.trim()));
projectPicker.addEventListener('change', () => {
  if (projectPicker.value) setProject(projectPicker.value);
});

// Mode.
modeSelect.value = stored(localStorage, KEY_MODE) || 'teaching_assistant';
if (!modeSelect.value) modeSelect.value = 'teaching_assistant';
modeSelect.addEventListener('change', () => store(localStorage, KEY_MODE, modeSelect.value));

// Approval policy: empty follows the session, then the model configuration.
approvalSelect.value = stored(localStorage, KEY_APPROVAL);
if (approvalSelect.selectedIndex < 0) approvalSelect.value = '';
approvalSelect.addEventListener('change', () => store(localStorage, KEY_APPROVAL, approvalSelect.value));

// Sessions.
function setHash(id: string): void {
  const url = id ? `#session=${id}` : `${location.pathname}${location.search}`;
  history.replaceState(null, '', url);
}

function hashSession(): string {
  const m = /^#session=(.+)$/.exec(location.hash);
  return m && SESSION_ID.test(m[1]) ? m[1].toLowerCase() : '';
}

function busyNotice(): boolean {
  if (!running) return false;
  notice = { text: 'An answer is still coming: stop it or wait for it first.', until: Date.now() + 3000 };
  tick();
  return true;
}

function newChat(): void {
  if (busyNotice()) return;
  current = '';
  historyLimit = HISTORY_LIMIT;
  setHash('');
  sidebar.select('');
  conversation.intro('New conversation', 'Ask the GNS3 copilot about your lab: it can read the topology, add nodes and links, and run show commands.');
  renderStats();
  input.focus();
}

async function openSession(id: string): Promise<void> {
  if (busyNotice()) return;
  current = id;
  setHash(id);
  sidebar.select(id);
  const s = sidebar.get(id);
  const mode = s?.metadata.copilot_mode;
  if (typeof mode === 'string' && [...modeSelect.options].some((o) => o.value === mode)) modeSelect.value = mode;
  renderStats();
  conversation.intro(s?.title ?? 'Loading…', 'Loading the conversation…');
  const n = ++opens;
  const controller = new AbortController();
  const shown = () => current === id && n === opens;
  // Asked before the history: a turn that ends in between is then in the
  // history, and one still running is left out of it (its stream brings
  // it whole).
  const live = await runningStream(id, controller.signal);
  let hist: History;
  try {
    hist = await api.history(project, id, historyLimit);
  } catch (e) {
    controller.abort();
    if (!shown()) return;
    const err = e as ApiError;
    conversation.intro(err.status === 404 ? 'Conversation not found' : 'Could not load the conversation', err.message);
    return;
  }
  if (!shown() || (live && running)) {
    // Another session was opened meanwhile, or a message sent.
    controller.abort();
    return;
  }
  const turnId = live?.headers.get('X-Turn-Id') ?? '';
  showSession(id, turnId ? withoutTurn(hist.messages, turnId) : hist.messages, hist.messages.length, !live);
  if (live) await rejoinTurn(id, live, controller);
}

/**
 * runningStream rejoins the turn session id is still answering (another
 * tab's, or this page's before a reload): its stream from the first
 * event, or null when none is running (204) or it cannot be asked (the
 * history then tells what is wrong).
 */
async function runningStream(id: string, signal: AbortSignal): Promise<Response | null> {
  try {
    const res = await api.rejoin(project, id, '', true, signal);
    return res.status === 204 ? null : res;
  } catch {
    return null;
  }
}

/** withoutTurn leaves out the answer of turn turnId: the user's message stays. */
function withoutTurn(messages: Message[], turnId: string): Message[] {
  return messages.filter((m) => m.role === 'user' || m.metadata?.turn_id !== turnId);
}

/**
 * showSession renders the stored messages of session id (count of them
 * read), and with pending the calls that wait for a decision (none while
 * a turn runs: its stream brings them).
 */
function showSession(id: string, messages: Message[], count: number, pending: boolean): void {
  conversation.showHistory(messages);
  const waiting = pending ? pendingOf(sidebar.get(id)?.metadata) : [];
  if (waiting.length > 0) {
    const turn = conversation.beginAssistant();
    const pause = newPause(id);
    for (const p of waiting) turn.block(pause.add(p));
    turn.finish();
  }
  if (count >= historyLimit && historyLimit < MAX_HISTORY) {
    conversation.prepend(h('button', { class: 'earlier', type: 'button', onclick: () => {
      historyLimit = MAX_HISTORY;
      void openSession(id);
    } }, 'Show earlier messages'));
  }
  scrollToEnd(true);
}

/** rejoinTurn shows the running turn of session id, read from live, as a live answer. */
async function rejoinTurn(id: string, live: Response, controller: AbortController): Promise<void> {
  const turn = conversation.beginAssistant();
  turn.thinking();
  scrollToEnd(true);
  await follow(id, turn, () => Promise.resolve(live), controller);
}

byId('new-chat').addEventListener('click', () => {
  closeDrawer();
  newChat();
});

// Statistics.
function renderStats(): void {
  const s: ChatSession | undefined = current ? sidebar.get(current) : undefined;
  if (!s) {
    statsEl.replaceChildren(h('p', { class: 'muted small' }, current ? 'No statistics yet.' : 'Start a conversation to see its statistics.'));
    return;
  }
  const n = (v: number) => v.toLocaleString();
  const rows: [string, string][] = [
    ['Messages', n(s.message_count)],
    ['Turns', n(s.stats.turns)],
    ['LLM calls', n(s.llm_calls_count)],
    ['Input tokens', n(s.input_tokens)],
    ['Output tokens', n(s.output_tokens)],
    ['Total tokens', n(s.total_tokens)],
    ['Errors', n(s.stats.errors)],
    ['Stopped turns', n(s.stats.aborted_turns)],
  ];
  const mode = typeof s.metadata.copilot_mode === 'string' ? s.metadata.copilot_mode : '';
  const tools = Object.entries(s.stats.tool_calls).sort((a, b) => b[1] - a[1]);
  statsEl.replaceChildren(
    h('h3', { class: 'stats-title' }, s.title),
    h('p', { class: 'muted small stats-mode' }, mode ? `Mode: ${mode.replace(/_/g, ' ')}` : ''),
    h('dl', { class: 'stats-list' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { 'data-stat': k }, v)])),
    h('h3', {}, 'Tool calls'),
    tools.length
      ? h('ul', { class: 'tool-stats' }, ...tools.map(([name, count]) => h('li', { 'data-tool': name }, h('code', {}, name), h('span', {}, `× ${count}`))))
      : h('p', { class: 'muted small' }, 'None'),
  );
}

// Composer.
function autosize(): void {
  input.style.height = 'auto';
  input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
}

input.addEventListener('input', autosize);
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    void send();
  }
});
byId<HTMLFormElement>('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  void send();
});
stopBtn.addEventListener('click', () => void stop());

function nearEnd(): boolean {
  return conversationEl.scrollHeight - conversationEl.scrollTop - conversationEl.clientHeight < 120;
}

function scrollToEnd(force = false): void {
  if (force || nearEnd()) conversationEl.scrollTop = conversationEl.scrollHeight;
}

function setBusy(busy: boolean): void {
  sendBtn.hidden = busy;
  stopBtn.hidden = !busy;
  stopBtn.disabled = false;
  projectInput.disabled = busy;
  projectPicker.disabled = busy;
  app.classList.toggle('busy', busy);
}

function setStatus(text: string): void {
  statusEl.textContent = text;
}

/** tick refreshes the status line of the running turn once a second. */
function tick(): void {
  const r = running;
  if (!r) return;
  const now = Date.now();
  const secs = Math.round((now - r.started) / 1000);
  const quiet = now - r.lastEvent;
  if (now < notice.until) setStatus(notice.text);
  else if (r.stopping) setStatus('Stopping…');
  else if (r.reconnecting) setStatus('Reconnecting…');
  else if (quiet > 45_000) setStatus(`No news from the server for ${Math.round(quiet / 1000)} s…`);
  else if (r.heartbeat) setStatus(`Still working${r.tool ? ` (${r.tool})` : ''}… ${secs} s`);
  else if (r.tool) setStatus(`Running ${r.tool}… ${secs} s`);
  else setStatus(`Answering… ${secs} s`);
}
setInterval(tick, 1000);

async function send(): Promise<void> {
  const text = input.value;
  if (running || text.trim() === '') return;
  if (!project) {
    setProject(projectInput.value.trim());
    if (!project) return;
  }
  const isNew = current === '';
  const id = isNew ? newUUID() : current;
  if (isNew) {
    current = id;
    setHash(id);
    conversation.clear();
  }
  input.value = '';
  autosize();
  conversation.addUser(text);
  const turn = conversation.beginAssistant();
  turn.thinking();
  scrollToEnd(true);
  if (isNew) {
    sidebar.placeholder(id, project, text.trim());
    sidebar.select(id);
    renderStats();
  }
  const req: ChatRequest = { message: text, session_id: id, copilot_mode: modeSelect.value };
  if (approvalSelect.value) req.approval = approvalSelect.value;
  await follow(id, turn, (signal) => api.stream(project, req, signal));
}

/**
 * follow runs one streamed turn of session id into turn: the stream opened
 * by open (a message, the decisions of a paused turn, or a rejoined
 * turn), with controller's signal. A stream lost before done is rejoined
 * after its last event (see rejoin). It reports whether the stream opened.
 */
async function follow(id: string, turn: AssistantTurn, open: (signal: AbortSignal) => Promise<Response>, controller = new AbortController()): Promise<boolean> {
  const r: Running = {
    session: id, controller, stopping: false, lastEvent: Date.now(), started: Date.now(), heartbeat: false, tool: '', pause: null,
    lastEventId: '', reconnecting: false, attempt: 0, wake: () => {},
  };
  running = r;
  setBusy(true);
  tick();
  let opened = false;
  try {
    let res: Response | null = await open(r.controller.signal);
    opened = true;
    while (res && !(await readTurn(turn, r, res))) {
      // Also after a stop: the rejoined stream ends when the turn does.
      res = await rejoin(r);
      if (!res && !r.stopping && !r.controller.signal.aborted) turn.error('The connection ended before the answer was complete.');
    }
  } catch (e) {
    if (r.controller.signal.aborted) {
      // stopped here after the grace: nothing to report
    } else if (e instanceof ApiError) {
      turn.error(e.status === 409 ? `${e.message}` : e.message);
    } else {
      turn.error(`Connection lost: ${(e as Error).message}`);
    }
  } finally {
    if (r.stopping) turn.note('Stopped.');
    turn.finish();
    running = null;
    setBusy(false);
    setStatus('');
    scrollToEnd();
    await refreshAfterTurn(id);
  }
  return opened;
}

/**
 * readTurn handles the events of res into turn until done (true), or
 * until the stream ends or fails without it (false: lost, not over). A
 * stop that gave up waiting (the signal aborted) throws.
 */
async function readTurn(turn: AssistantTurn, r: Running, res: Response): Promise<boolean> {
  try {
    for await (const ev of readEvents(res)) {
      r.lastEvent = Date.now();
      r.attempt = 0; // the connection works: a later loss gets every attempt again
      if (ev.lastEventId) r.lastEventId = ev.lastEventId;
      handle(turn, r, ev);
      scrollToEnd();
      if (ev.type === 'done') return true;
    }
  } catch (e) {
    if (r.controller.signal.aborted) throw e;
    // A network error: the stream is lost, the turn goes on on the server.
  }
  return false;
}

/**
 * rejoin asks for the rest of r's turn after its last event (GET
 * .../sessions/{id}/stream with Last-Event-ID; before any event, the
 * running turn from its start), waiting longer before each attempt. It
 * gives up (null) on 204 (nothing to rejoin), a 4xx, when the signal is
 * aborted, or when the attempts run out; network errors and 5xx are tried
 * again.
 */
async function rejoin(r: Running): Promise<Response | null> {
  r.reconnecting = true;
  tick();
  try {
    while (r.attempt < REJOIN_DELAYS_MS.length) {
      await wait(r, REJOIN_DELAYS_MS[r.attempt++]);
      if (r.controller.signal.aborted) return null;
      try {
        const res = await api.rejoin(project, r.session, r.lastEventId, r.lastEventId === '', r.controller.signal);
        return res.status === 204 ? null : res;
      } catch (e) {
        if (r.controller.signal.aborted || (e instanceof ApiError && e.status < 500)) return null;
      }
    }
    return null;
  } finally {
    r.reconnecting = false;
    tick();
  }
}

/** wait resolves after ms, or at once when r is stopped (r.wake): the turn's end is then near. */
function wait(r: Running, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(end, ms);
    function end(): void {
      clearTimeout(timer);
      r.wake = () => {};
      resolve();
    }
    r.wake = end;
  });
}

/** newPause is the pause of session id: its decisions continue the turn in a new answer. */
function newPause(id: string): Pause {
  return new Pause(async (decisions) => {
    if (running || current !== id) return false;
    const turn = conversation.beginAssistant();
    turn.thinking();
    scrollToEnd(true);
    return follow(id, turn, (signal) => api.approvals(project, id, decisions, signal));
  });
}

/** undo restores the snapshot of session id (the Undo of a snapshot note). */
async function undo(id: string, btn: HTMLButtonElement): Promise<void> {
  if (!(await confirmDialog('Restore the lab as it was before these changes? GNS3 reopens the project; running configurations that were not saved are lost.', 'Undo'))) return;
  btn.disabled = true;
  try {
    const res = await api.undo(project, id);
    btn.replaceWith(h('span', { class: 'undone' }, `Restored “${res.name}”.`));
  } catch (e) {
    btn.disabled = false;
    btn.after(h('span', { class: 'error-inline', role: 'alert' }, ` ${(e as Error).message}`));
  }
}

function handle(turn: AssistantTurn, r: Running, ev: StreamEvent): void {
  switch (ev.type) {
    case 'content':
      r.heartbeat = false;
      r.tool = '';
      turn.appendContent(ev.message_id, ev.content);
      break;
    case 'tool_call':
      r.heartbeat = false;
      turn.toolCall(ev.tool_call);
      break;
    case 'tool_start':
      r.tool = ev.tool_name;
      turn.toolStart(ev.tool_call_id, ev.tool_name);
      break;
    case 'tool_end':
      r.tool = '';
      r.heartbeat = false;
      turn.toolEnd(ev.tool_call_id, ev.tool_name, ev.tool_output);
      break;
    case 'error':
      turn.error(ev.error);
      break;
    case 'approval_required':
      r.pause ??= newPause(r.session);
      turn.awaiting(ev.tool_call_id, ev.tool_name);
      turn.block(r.pause.add(ev));
      break;
    case 'snapshot': {
      const id = r.session;
      turn.block(snapshotNote(ev.name ?? '', ev.snapshot_id ?? '', ev.error ?? '', (btn) => void undo(id, btn)));
      break;
    }
    case 'heartbeat':
      r.heartbeat = true;
      break;
    case 'done':
      break;
  }
  tick();
}

async function stop(): Promise<void> {
  const r = running;
  if (!r || r.stopping) return;
  r.stopping = true;
  stopBtn.disabled = true;
  r.wake(); // lost meanwhile: rejoin at once, to see the turn end
  tick();
  // If the server does not end the stream in time, stop reading it.
  const timer = setTimeout(() => r.controller.abort(), STOP_GRACE_MS);
  r.controller.signal.addEventListener('abort', () => clearTimeout(timer));
  // A new conversation's session is stored beside the turn's first LLM
  // call: until then the abort finds none (404), so it asks again. Only a
  // session still missing after that never started a turn: stop reading
  // (a turn no longer stops when its client leaves).
  for (let tries = 1; ; tries++) {
    try {
      await api.abort(project, r.session);
      return;
    } catch (e) {
      const missing = e instanceof ApiError && e.status === 404;
      if (missing && tries < ABORT_TRIES && !r.controller.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, ABORT_RETRY_MS));
        continue;
      }
      if (missing) r.controller.abort();
      else setStatus(`Could not stop: ${(e as Error).message}`);
      return;
    }
  }
}

async function refreshAfterTurn(id: string): Promise<void> {
  await sidebar.refresh();
  if (current === id) {
    sidebar.select(id);
    renderStats();
  }
  const s = sidebar.get(id);
  if (s && s.title === 'New Conversation') {
    // The title is generated after the answer: look again shortly.
    setTimeout(() => {
      void sidebar.refresh().then(() => current === id && renderStats());
    }, 1500);
  }
}

// Narrow windows: the sidebar is a drawer, the statistics a panel.
const drawerBtn = byId<HTMLButtonElement>('toggle-sidebar');
function closeDrawer(): void {
  app.classList.remove('drawer-open');
  drawerBtn.setAttribute('aria-expanded', 'false');
  scrim.hidden = true;
}
drawerBtn.addEventListener('click', () => {
  const open = !app.classList.contains('drawer-open');
  app.classList.toggle('drawer-open', open);
  drawerBtn.setAttribute('aria-expanded', String(open));
  scrim.hidden = !open;
});
scrim.addEventListener('click', closeDrawer);
const detailsBtn = byId<HTMLButtonElement>('toggle-details');
detailsBtn.addEventListener('click', () => {
  const open = !app.classList.contains('details-open');
  app.classList.toggle('details-open', open);
  detailsBtn.setAttribute('aria-expanded', String(open));
});
byId('open-settings').addEventListener('click', () => void settings.open());

window.addEventListener('hashchange', () => {
  const id = hashSession();
  if (id && id !== current) void openSession(id);
});

// Start: ?project= (a link from elsewhere), else the last one, else the
// first opened GNS3 project, else a new id.
async function start(): Promise<void> {
  applyIcons(document);
  updateTokenButton();
  app.hidden = false;
  autosize();
  input.focus();
  const fromURL = new URLSearchParams(location.search).get('project') ?? '';
  const known = [fromURL, stored(localStorage, KEY_PROJECT)].find((p) => PROJECT_ID.test(p));
  const loading = loadProjects();
  let initial = known;
  if (!initial) {
    // A first visit: a GNS3 project if the list comes soon, else a new id
    // (and the first opened project once the list comes).
    await Promise.race([loading, new Promise((resolve) => setTimeout(resolve, PROJECTS_WAIT_MS))]);
    initial = gns3Projects.find((p) => p.status === 'opened')?.project_id;
    if (!initial) initial = generated = newUUID();
  }
  const id = hashSession();
  setProject(initial, id !== '');
  if (id) void openSession(id);
}

void start();
