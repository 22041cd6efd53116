// Server-sent events over fetch (EventSource cannot POST nor send headers).

import type { StreamEvent } from './api';

/**
 * readEvents yields the events of a text/event-stream response as they
 * arrive: `data:` lines up to a blank line form one event; `:` comments
 * are skipped, and so is data that is not JSON.
 */
export async function* readEvents(res: Response): AsyncGenerator<StreamEvent> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let data: string[] = [];
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buf += value;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) {
            const ev = parse(data.join('\n'));
            data = [];
            if (ev) yield ev;
          }
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
    }
    if (data.length > 0) {
      const ev = parse(data.join('\n'));
      if (ev) yield ev;
    }
  } finally {
    // Left early (the caller stopped reading): let the connection go.
    if (!ended) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
}

function parse(s: string): StreamEvent | null {
  try {
    const v = JSON.parse(s) as StreamEvent;
    return v && typeof v === 'object' && typeof v.type === 'string' ? v : null;
  } catch {
    return null;
  }
}
