// The settings panel: the user's LLM model configurations (list, create,
// set default, delete).

import type { Api, LLMConfig } from './api';
import { byId, confirmDialog, h, showError } from './dom';

export class Settings {
  private readonly dialog = byId<HTMLDialogElement>('settings-dialog');
  private readonly list = byId<HTMLUListElement>('configs');
  private readonly errorEl = byId('configs-error');
  private readonly form = byId<HTMLFormElement>('config-form');

  constructor(private readonly api: Api) {
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.create();
    });
  }

  async open(): Promise<void> {
    showError(this.errorEl, '');
    this.list.replaceChildren(h('li', { class: 'muted small' }, 'Loading…'));
    if (!this.dialog.open) this.dialog.showModal();
    await this.load();
  }

  private async load(): Promise<void> {
    try {
      const res = await this.api.listConfigs();
      const items = res.configs.map((c) => this.item(c, res.default_config?.config_id === c.config_id));
      if (items.length === 0) {
        items.push(h('li', { class: 'muted small' }, 'No configuration yet: the server default (OPENAI_*) applies, if the server has one.'));
      }
      this.list.replaceChildren(...items);
    } catch (e) {
      this.list.replaceChildren();
      showError(this.errorEl, (e as Error).message);
    }
  }

  private item(c: LLMConfig, effectiveDefault: boolean): HTMLLIElement {
    const cfg = c.config;
    const own = c.source !== 'group';
    const facts = [
      `${String(cfg.provider ?? '?')} · ${String(cfg.model ?? '?')}`,
      cfg.base_url ? String(cfg.base_url) : '',
      cfg.context_limit ? `${String(cfg.context_limit)}k context` : '',
      c.api_key_set ? `key ${c.api_key_hint || 'set'}` : 'no key',
      own ? '' : `from group ${c.group_name ?? ''}`,
    ].filter(Boolean);
    return h('li', { class: `config${effectiveDefault ? ' is-default' : ''}`, 'data-config-id': c.config_id },
      h('div', { class: 'config-main' },
        h('strong', { class: 'config-name' }, c.name),
        effectiveDefault ? h('span', { class: 'badge' }, 'default') : null,
        h('div', { class: 'muted small' }, facts.join(' · '))),
      own ? h('div', { class: 'config-actions' },
        c.is_default ? null : h('button', { type: 'button', class: 'make-default', onclick: () => void this.run(() => this.api.setDefaultConfig(c.config_id)) }, 'Make default'),
        h('button', { type: 'button', class: 'danger delete-config', onclick: () => void this.remove(c) }, 'Delete')) : null);
  }

  private async run(f: () => Promise<unknown>): Promise<void> {
    try {
      await f();
      showError(this.errorEl, '');
    } catch (e) {
      showError(this.errorEl, (e as Error).message);
    }
    await this.load();
  }

  private async remove(c: LLMConfig): Promise<void> {
    if (!(await confirmDialog(`Delete the model configuration “${c.name}”?`))) return;
    await this.run(() => this.api.deleteConfig(c.config_id));
  }

  private async create(): Promise<void> {
    const f = new FormData(this.form);
    const text = (k: string) => String(f.get(k) ?? '').trim();
    const config: Record<string, unknown> = {
      provider: text('provider'),
      model: text('model'),
      context_limit: Number(text('context_limit')),
    };
    if (text('base_url')) config.base_url = text('base_url');
    if (text('api_key')) config.api_key = text('api_key');
    try {
      await this.api.createConfig({ name: text('name'), model_type: 'text', is_default: f.get('is_default') === 'on', config });
    } catch (e) {
      showError(this.errorEl, (e as Error).message);
      return;
    }
    showError(this.errorEl, '');
    this.form.reset();
    await this.load();
  }
}
