// The conversation: user messages, and assistant turns made of text
// blocks (streamed Markdown), tool cards and errors, live or from history.

import type { Message, ToolCall } from './api';
import { h } from './dom';
import { icon } from './icons';
import { renderMarkdown } from './markdown';

/** prettyJSON pretty-prints JSON text, or returns it as it is. */
export function prettyJSON(s: string): string {
  const t = s.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return s;
  try {
    return JSON.stringify(JSON.parse(t), null, 2);
  } catch {
    return s;
  }
}

/** failedOutput tells a tool output that reports a failure. */
export function failedOutput(output: string): boolean {
  if (output.startsWith('Error:')) return true;
  try {
    const v = JSON.parse(output) as { success?: unknown };
    return v !== null && typeof v === 'object' && v.success === false;
  } catch {
    return false;
  }
}

function preview(s: string, n = 120): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

/** TextBlock is one assistant message's text, rendered once per frame. */
class TextBlock {
  readonly el = h('div', { class: 'md' });
  private text = '';
  private frame = 0;

  append(delta: string): void {
    this.text += delta;
    if (!this.frame) this.frame = requestAnimationFrame(() => this.render());
  }

  set(text: string): void {
    this.text = text;
    this.render();
  }

  render(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.el.innerHTML = renderMarkdown(this.text);
  }
}

type ToolStatus = 'calling' | 'called' | 'running' | 'done' | 'failed' | 'no-result' | 'awaiting';

const statusText: Record<ToolStatus, string> = {
  calling: 'preparing…',
  called: 'waiting to run',
  running: 'running…',
  done: 'done',
  failed: 'failed',
  'no-result': 'no result',
  awaiting: 'awaiting approval',
};

/** ToolCard is one tool call: arguments growing live, then status and output. */
class ToolCard {
  readonly el: HTMLElement;
  private readonly status = h('span', { class: 'tool-status' });
  private readonly args = h('pre', { class: 'tool-args' });
  private readonly argsBox: HTMLDetailsElement;
  private readonly outBox: HTMLDetailsElement;
  private readonly outSummary = h('summary', {}, 'Output');
  private readonly out = h('pre', { class: 'tool-output' });

  constructor(
    readonly id: string,
    name: string,
  ) {
    this.argsBox = h('details', { class: 'tool-section', open: true }, h('summary', {}, 'Arguments'), this.args);
    this.outBox = h('details', { class: 'tool-section', hidden: true }, this.outSummary, this.out);
    this.el = h(
      'div',
      { class: 'tool', 'data-tool-call-id': id, 'data-tool-name': name },
      h('div', { class: 'tool-head' }, h('span', { class: 'tool-icon' }, icon('gear')), h('span', { class: 'tool-name' }, name), this.status),
      this.argsBox,
      this.outBox,
    );
    this.setStatus('calling');
  }

  setStatus(s: ToolStatus): void {
    this.el.dataset.status = s;
    this.status.textContent = statusText[s];
  }

  get state(): ToolStatus {
    return this.el.dataset.status as ToolStatus;
  }

  setArguments(args: string, complete: boolean): void {
    this.args.textContent = complete ? prettyJSON(args) || '{}' : args;
    if (complete && this.state === 'calling') this.setStatus('called');
  }

  setOutput(output: string, failed: boolean): void {
    this.out.textContent = prettyJSON(output);
    this.outSummary.textContent = `Output: ${preview(output)}`;
    this.outBox.hidden = false;
    this.argsBox.open = false;
    this.setStatus(failed ? 'failed' : 'done');
  }
}

/** AssistantTurn is the assistant's side of one turn. */
export class AssistantTurn {
  readonly el = h('div', { class: 'msg assistant' });
  private readonly body = h('div', { class: 'msg-body' });
  private readonly texts = new Map<string, TextBlock>();
  private readonly tools = new Map<string, ToolCard>();
  private last: TextBlock | ToolCard | null = null;
  private waiting: HTMLElement | null = null;

  constructor() {
    this.el.append(this.body);
  }

  /** thinking shows a placeholder until the first event. */
  thinking(): void {
    this.waiting = h('div', { class: 'thinking', 'aria-label': 'Thinking' }, h('span'), h('span'), h('span'));
    this.body.append(this.waiting);
  }

  private add(el: HTMLElement): void {
    this.waiting?.remove();
    this.waiting = null;
    this.body.append(el);
  }

  private text(id: string): TextBlock {
    let b = this.texts.get(id);
    if (!b || this.last !== b) {
      // A new message, or more text after a tool card: a new block.
      b = new TextBlock();
      this.texts.set(id, b);
      this.add(b.el);
      this.last = b;
    }
    return b;
  }

  appendContent(messageId: string, delta: string): void {
    this.text(messageId || '_').append(delta);
  }

  setText(messageId: string, text: string): void {
    this.text(messageId).set(text);
  }

  card(id: string, name: string): ToolCard {
    let c = this.tools.get(id);
    if (!c) {
      c = new ToolCard(id, name);
      this.tools.set(id, c);
      this.add(c.el);
      this.last = c;
    }
    return c;
  }

  toolCall(tc: ToolCall): void {
    this.card(tc.id, tc.function.name).setArguments(tc.function.arguments, tc.function.complete === true);
  }

  toolStart(id: string, name: string): void {
    const c = this.card(id, name);
    c.setStatus('running');
  }

  /** awaiting marks a call that waits for the user's approval. */
  awaiting(id: string, name: string): void {
    this.card(id, name).setStatus('awaiting');
  }

  toolEnd(id: string, name: string, output: string, failed = failedOutput(output)): void {
    this.card(id, name).setOutput(output, failed);
  }

  error(message: string): void {
    this.add(h('div', { class: 'error-block', role: 'alert' }, message));
    this.last = null;
  }

  /** block adds an element of its own (an approval card, a snapshot note). */
  block(el: HTMLElement): void {
    this.add(el);
    this.last = null;
  }

  note(message: string): void {
    this.add(h('div', { class: 'note' }, message));
    this.last = null;
  }

  /** finish renders pending text and marks unanswered tool calls. */
  finish(): void {
    this.waiting?.remove();
    this.waiting = null;
    for (const b of this.texts.values()) b.render();
    for (const c of this.tools.values()) {
      if (c.state === 'calling' || c.state === 'called' || c.state === 'running') c.setStatus('no-result');
    }
    this.el.classList.add('finished');
  }

  get empty(): boolean {
    return this.body.childElementCount === 0;
  }
}

/** Conversation is the list of messages of the current session. */
export class Conversation {
  constructor(private readonly el: HTMLElement) {}

  clear(): void {
    this.el.replaceChildren();
  }

  intro(title: string, text: string): void {
    this.el.replaceChildren(h('div', { class: 'intro' }, h('h2', {}, title), h('p', { class: 'muted' }, text)));
  }

  private dropIntro(): void {
    this.el.querySelector('.intro')?.remove();
  }

  addUser(text: string): HTMLElement {
    this.dropIntro();
    const el = h('div', { class: 'msg user' }, h('div', { class: 'msg-body' }, text));
    this.el.append(el);
    return el;
  }

  beginAssistant(): AssistantTurn {
    this.dropIntro();
    const t = new AssistantTurn();
    this.el.append(t.el);
    return t;
  }

  prepend(el: HTMLElement): void {
    this.el.prepend(el);
  }

  /** showHistory renders stored messages as the live view renders a turn. */
  showHistory(messages: Message[]): void {
    this.clear();
    let turn = null as AssistantTurn | null;
    const open = (): AssistantTurn => (turn ??= this.beginAssistant());
    for (const m of messages) {
      const failed = m.metadata?.error === true;
      switch (m.role) {
        case 'user':
          turn?.finish();
          turn = null;
          this.addUser(m.content);
          break;
        case 'assistant': {
          const t = open();
          if (m.content) t.setText(m.id, m.content);
          for (const tc of m.tool_calls ?? []) t.toolCall({ ...tc, function: { ...tc.function, complete: true } });
          if (m.metadata?.interrupted === true) t.note('Stopped before the end of the answer.');
          else if (m.metadata?.finish_reason === 'length') t.note('The answer was cut at the token limit.');
          else if (failed) t.error('This answer failed.');
          break;
        }
        case 'tool':
          open().toolEnd(m.tool_call_id ?? m.id, m.name ?? 'tool', m.content, failed || failedOutput(m.content));
          break;
        default:
          break; // system messages are not shown
      }
    }
    turn?.finish();
  }
}
