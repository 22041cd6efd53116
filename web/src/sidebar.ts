// The sessions sidebar: pinned first, then most recent; paginated with
// X-Next-Cursor; open, rename inline, pin/unpin and delete.

import type { Api, ChatSession } from './api';
import { ago, confirmDialog, h, showError } from './dom';
import { icon } from './icons';

export const PAGE_SIZE = 20;

export interface SidebarEvents {
  open: (s: ChatSession) => void;
  deleted: (id: string) => void;
  changed: (s: ChatSession) => void;
}

/** order sorts as the server lists: pinned first, then updated_at desc. */
function order(a: ChatSession, b: ChatSession): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  return a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0;
}

export class Sidebar {
  private sessions: ChatSession[] = [];
  private next = '';
  private current = '';
  private project = '';
  private editing = '';
  private generation = 0;

  constructor(
    private readonly api: Api,
    private readonly list: HTMLUListElement,
    private readonly more: HTMLButtonElement,
    private readonly empty: HTMLElement,
    private readonly errorEl: HTMLElement,
    private readonly on: SidebarEvents,
  ) {
    more.addEventListener('click', () => void this.loadMore());
  }

  get(id: string): ChatSession | undefined {
    return this.sessions.find((s) => s.thread_id === id);
  }

  select(id: string): void {
    this.current = id;
    for (const li of this.list.children) {
      const el = li as HTMLElement;
      el.classList.toggle('current', el.dataset.id === id);
      if (el.dataset.id === id) el.querySelector('.session-open')?.setAttribute('aria-current', 'true');
      else el.querySelector('.session-open')?.removeAttribute('aria-current');
    }
  }

  /** load shows the first page of a project's sessions. */
  async load(project: string): Promise<void> {
    this.project = project;
    this.sessions = [];
    this.next = '';
    this.render();
    await this.fetchPage('', true);
  }

  /** refresh reloads the first page and keeps the further pages loaded. */
  async refresh(): Promise<void> {
    await this.fetchPage('', false);
  }

  private async loadMore(): Promise<void> {
    if (!this.next) return;
    this.more.disabled = true;
    await this.fetchPage(this.next, false);
    this.more.disabled = false;
  }

  private async fetchPage(cursor: string, reset: boolean): Promise<void> {
    const gen = ++this.generation;
    const project = this.project;
    try {
      const page = await this.api.listSessions(project, PAGE_SIZE, cursor);
      if (gen !== this.generation || project !== this.project) return;
      showError(this.errorEl, '');
      if (reset) this.sessions = [];
      this.merge(page.sessions);
      if (cursor || reset || !this.next) this.next = page.next;
      this.render();
    } catch (e) {
      if (gen !== this.generation) return;
      showError(this.errorEl, (e as Error).message);
      if (reset) this.render();
    }
  }

  private merge(list: ChatSession[]): void {
    for (const s of list) {
      const i = this.sessions.findIndex((x) => x.thread_id === s.thread_id);
      if (i >= 0) this.sessions[i] = s;
      else this.sessions.push(s);
    }
    this.sessions.sort(order);
  }

  /** placeholder lists a session that the server creates with its first turn. */
  placeholder(id: string, project: string, firstMessage: string): void {
    if (this.get(id)) return;
    const now = new Date().toISOString();
    this.sessions.push({
      thread_id: id, user_id: '', project_id: project, title: firstMessage.slice(0, 40) || 'New Conversation',
      message_count: 0, llm_calls_count: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0,
      last_message_at: null, created_at: now, updated_at: now, metadata: {},
      stats: { tool_calls: {}, errors: 0, aborted_turns: 0, turns: 0 }, pinned: false,
    });
    this.sessions.sort(order);
    this.render();
  }

  private update(s: ChatSession): void {
    this.merge([s]);
    this.render();
    this.on.changed(s);
  }

  render(): void {
    const items = this.sessions.map((s) => this.item(s));
    this.list.replaceChildren(...items);
    this.more.hidden = !this.next;
    this.empty.hidden = this.sessions.length > 0;
    this.select(this.current);
  }

  private item(s: ChatSession): HTMLLIElement {
    const when = ago(s.last_message_at ?? s.updated_at);
    const title = h('button', { class: 'session-open', type: 'button', title: s.title, onclick: () => this.on.open(s) },
      h('span', { class: 'session-title' }, s.pinned ? h('span', { class: 'pin-mark', title: 'Pinned' }, icon('pin'), h('span', { class: 'visually-hidden' }, 'Pinned: ')) : null, s.title),
      h('span', { class: 'session-meta' }, `${when}${s.message_count ? ` · ${s.message_count} message${s.message_count === 1 ? '' : 's'}` : ''}`));
    const actions = h('div', { class: 'session-actions' },
      h('button', { class: 'icon-btn rename', type: 'button', title: 'Rename', 'aria-label': `Rename “${s.title}”`, onclick: () => this.startRename(s) }, icon('pencil')),
      h('button', { class: 'icon-btn pin', type: 'button', title: s.pinned ? 'Unpin' : 'Pin',
        'aria-label': `${s.pinned ? 'Unpin' : 'Pin'} “${s.title}”`, 'aria-pressed': String(s.pinned), onclick: () => void this.togglePin(s) }, icon(s.pinned ? 'unpin' : 'pin')),
      h('button', { class: 'icon-btn delete', type: 'button', title: 'Delete', 'aria-label': `Delete “${s.title}”`, onclick: () => void this.delete(s) }, icon('trash')));
    const li = h('li', { class: `session${s.pinned ? ' pinned' : ''}`, 'data-id': s.thread_id }, title, actions);
    if (this.editing === s.thread_id) this.renameField(li, s);
    return li;
  }

  private startRename(s: ChatSession): void {
    this.editing = s.thread_id;
    this.render();
  }

  private renameField(li: HTMLLIElement, s: ChatSession): void {
    const input = h('input', { class: 'rename-input', value: s.title, maxlength: 255, 'aria-label': 'New title' });
    let done = false;
    const finish = async (save: boolean) => {
      if (done) return;
      done = true;
      this.editing = '';
      const title = input.value.trim();
      if (save && title && title !== s.title) {
        try {
          this.update(await this.api.rename(this.project, s.thread_id, title));
          return;
        } catch (e) {
          showError(this.errorEl, (e as Error).message);
        }
      }
      this.render();
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        void finish(true);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        void finish(false);
      }
    });
    input.addEventListener('blur', () => void finish(true));
    li.replaceChildren(input);
    queueMicrotask(() => {
      input.focus();
      input.select();
    });
  }

  private async togglePin(s: ChatSession): Promise<void> {
    try {
      this.update(await this.api.setPinned(this.project, s.thread_id, !s.pinned));
    } catch (e) {
      showError(this.errorEl, (e as Error).message);
    }
  }

  private async delete(s: ChatSession): Promise<void> {
    if (!(await confirmDialog(`Delete “${s.title}” and all its messages?`))) return;
    try {
      await this.api.remove(this.project, s.thread_id);
    } catch (e) {
      showError(this.errorEl, (e as Error).message);
      return;
    }
    this.sessions = this.sessions.filter((x) => x.thread_id !== s.thread_id);
    this.render();
    this.on.deleted(s.thread_id);
  }
}
