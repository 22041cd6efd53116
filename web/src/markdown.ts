// Markdown rendering of answers: marked, then DOMPurify.

import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    // HTML written by the model is shown as text, never interpreted.
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    // Images become links: the page loads nothing from elsewhere.
    image(token: Tokens.Image): string {
      const label = token.text || token.href;
      return `<a href="${escapeHtml(token.href)}">${escapeHtml(label)}</a>`;
    },
  },
});

const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'img', 'svg', 'math', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'video', 'audio', 'picture', 'source'],
  FORBID_ATTR: ['style', 'class', 'id'],
  ADD_ATTR: ['target'],
};

/** renderMarkdown returns the sanitized HTML of a Markdown text. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false });
  return purify.sanitize(html, PURIFY);
}
