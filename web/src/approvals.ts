// Approval cards: the tool calls a paused turn waits on (approval_required
// events, or a session's metadata.pending_approvals after a reload), each
// with its summary and arguments, Approve / Decline and a note. Once every
// call of the pause is decided, the decisions go to POST .../approvals.

import type { Decision, PendingApproval } from './api';
import { prettyJSON } from './conversation';
import { h } from './dom';

/** ApprovalCard is one call waiting for a decision. */
class ApprovalCard {
  readonly el: HTMLElement;
  decision: Decision | null = null;
  private readonly status: HTMLElement;
  private readonly note: HTMLInputElement;
  private readonly buttons: HTMLButtonElement[];

  constructor(readonly p: PendingApproval, onDecide: () => void) {
    this.status = h('span', { class: 'tool-status' }, 'waiting for you');
    this.note = h('input', { class: 'approval-note', type: 'text', maxlength: 2000, placeholder: 'Note for the copilot (optional)', 'aria-label': 'Note' });
    const decide = (approve: boolean) => () => {
      this.decision = { tool_call_id: p.tool_call_id, approve, note: this.note.value.trim() || undefined };
      this.el.dataset.decision = approve ? 'approved' : 'declined';
      this.status.textContent = approve ? 'approved' : 'declined';
      for (const b of this.buttons) b.disabled = true;
      this.note.disabled = true;
      onDecide();
    };
    this.buttons = [
      h('button', { class: 'approve', type: 'button', onclick: decide(true) }, 'Approve'),
      h('button', { class: 'decline', type: 'button', onclick: decide(false) }, 'Decline'),
    ];
    this.el = h(
      'div',
      { class: 'tool approval', 'data-tool-name': p.tool_name, 'data-call-id': p.tool_call_id, 'data-decision': 'pending' },
      h('div', { class: 'tool-head' }, h('span', { class: 'tool-name' }, p.tool_name), this.status),
      h('p', { class: 'approval-summary' }, p.summary),
      h('details', { class: 'tool-section' }, h('summary', {}, 'Arguments'), h('pre', { class: 'tool-args' }, prettyJSON(p.arguments))),
      h('div', { class: 'approval-actions' }, this.note, ...this.buttons),
    );
  }

  /** sent marks the card once its decision is on its way. */
  sent(): void {
    this.status.textContent = this.decision?.approve ? 'approved: running' : 'declined';
  }

  /** reopen lets the person decide again (the submit failed). */
  reopen(): void {
    this.decision = null;
    this.el.dataset.decision = 'pending';
    this.status.textContent = 'waiting for you';
    for (const b of this.buttons) b.disabled = false;
    this.note.disabled = false;
  }
}

/**
 * Pause is the calls of one paused turn. submit gets the decisions once
 * every card has one, and returns whether they were accepted.
 */
export class Pause {
  private readonly cards: ApprovalCard[] = [];

  constructor(private readonly submit: (decisions: Decision[]) => Promise<boolean>) {}

  /** add makes the card of p and returns its element. */
  add(p: PendingApproval): HTMLElement {
    const c = new ApprovalCard(p, () => void this.decided());
    this.cards.push(c);
    return c.el;
  }

  get size(): number {
    return this.cards.length;
  }

  private async decided(): Promise<void> {
    if (this.cards.some((c) => !c.decision)) return;
    for (const c of this.cards) c.sent();
    const ok = await this.submit(this.cards.map((c) => c.decision as Decision));
    if (!ok) for (const c of this.cards) c.reopen();
  }
}

/** pendingOf reads a session's metadata.pending_approvals. */
export function pendingOf(metadata: Record<string, unknown> | undefined): PendingApproval[] {
  const v = metadata?.pending_approvals;
  if (!Array.isArray(v)) return [];
  return v.filter(
    (p): p is PendingApproval =>
      !!p && typeof p === 'object' && typeof (p as PendingApproval).tool_call_id === 'string' && typeof (p as PendingApproval).tool_name === 'string',
  ).map((p) => ({ tool_call_id: p.tool_call_id, tool_name: p.tool_name, arguments: String(p.arguments ?? ''), summary: String(p.summary ?? '') }));
}

/** snapshotNote is the snapshot event's line, with Undo when one was taken. */
export function snapshotNote(name: string, id: string, error: string, undo: (btn: HTMLButtonElement) => void): HTMLElement {
  if (!id) return h('div', { class: 'note snapshot', 'data-snapshot': 'failed' }, error || 'No snapshot was taken before the changes.');
  const btn = h('button', { class: 'undo', type: 'button' }, 'Undo');
  btn.addEventListener('click', () => undo(btn));
  return h('div', { class: 'note snapshot', 'data-snapshot': id }, `Snapshot “${name}” taken before the changes. `, btn);
}
