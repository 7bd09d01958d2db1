// Server-sent events read with fetch streaming, for every client of the API (the app attached to
// a daemon, the browser page). Not EventSource: it cannot send an Authorization header, and the
// token must never travel in a URL. Runs in Node and in the browser: no Node imports here.

export interface SseMessage {
  event: string;
  data: string;
  /** The last `id:` seen on the stream (it carries over to later messages, as EventSource's does). */
  id: string | null;
}

/**
 * Incremental text/event-stream parser: push text as it arrives (split anywhere, even inside a
 * CRLF), messages come out at each blank line. Comments (`: heartbeat`) are skipped; a message
 * with no `data:` line dispatches nothing.
 */
export function sseParser(onMessage: (m: SseMessage) => void): { push(text: string): void } {
  let buf = '';
  let event = '';
  let data: string[] = [];
  let id: string | null = null;
  return {
    push(text: string) {
      buf += text;
      for (;;) {
        const m = /\r\n|\r|\n/.exec(buf);
        if (!m) return;
        // A lone \r at the end may be the first half of \r\n: wait for more.
        if (m[0] === '\r' && m.index === buf.length - 1) return;
        const line = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        if (line === '') {
          if (data.length) onMessage({ event: event || 'message', data: data.join('\n'), id });
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
    },
  };
}

/** Read a text/event-stream body to its end (or until `signal` aborts), calling `onMessage` per message. */
export async function readSse(body: ReadableStream<Uint8Array>, onMessage: (m: SseMessage) => void, signal?: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = sseParser(onMessage);
  const abort = () => void reader.cancel().catch(() => undefined);
  if (signal?.aborted) abort();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    parser.push(decoder.decode());
  } finally {
    signal?.removeEventListener('abort', abort);
    reader.releaseLock();
  }
}
