// Server-sent events over fetch (EventSource cannot POST nor send headers).

import type { StreamEvent } from './api';

/**
 * Received is an event with its SSE id: the last `id:` line seen in the
 * stream (as EventSource's lastEventId), "" before the first. The
 * server numbers every event but heartbeats ("<turn id>:<n>"); a client
 * that lost the stream asks for the events after it.
 */
export type Received = StreamEvent & { lastEventId: string };

/**
 * readEvents yields the events of a text/event-stream response as they
 * arrive: `data:` lines up to a blank line form one event, which carries
 * the last id seen; `:` comments are skipped, and so is data that is not
 * JSON.
 */
export async function* readEvents(res: Response): AsyncGenerator<Received> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let data: string[] = [];
  let lastEventId = '';
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
            if (ev) yield { ...ev, lastEventId };
          }
        } else if (line.startsWith('data:')) {
          data.push(field(line, 'data:'));
        } else if (line.startsWith('id:')) {
          // As EventSource: an id with a NUL is ignored; it holds for the
          // events after it until the next one.
          const id = field(line, 'id:');
          if (!id.includes('\0')) lastEventId = id;
        }
      }
    }
    if (data.length > 0) {
      // The stream ended without the blank line after its last event.
      const ev = parse(data.join('\n'));
      if (ev) yield { ...ev, lastEventId };
    }
  } finally {
    // Left early (the caller stopped reading): let the connection go.
    if (!ended) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
}

/** field is the value of a line "name: value" (one space after the colon is dropped). */
function field(line: string, name: string): string {
  return line.slice(line.startsWith(`${name} `) ? name.length + 1 : name.length);
}

function parse(s: string): StreamEvent | null {
  try {
    const v = JSON.parse(s) as StreamEvent;
    return v && typeof v === 'object' && typeof v.type === 'string' ? v : null;
  } catch {
    return null;
  }
}
