// Server-sent events over fetch streaming (EventSource cannot send an Authorization header).

export interface SseMessage {
  event: string;
  data: string;
  id: string | null;
}

/** Parse a text/event-stream body, calling `onMessage` per dispatched message. */
export async function readSse(body: ReadableStream<Uint8Array>, onMessage: (m: SseMessage) => void, signal?: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = sseParser(onMessage);
  const abort = () => void reader.cancel().catch(() => undefined);
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

/** Incremental parser (split out so it can be tested without streams). */
export function sseParser(onMessage: (m: SseMessage) => void): { push(text: string): void } {
  let buf = '';
  let event = '';
  let data: string[] = [];
  let id: string | null = null;
  const dispatch = () => {
    if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n'), id });
    event = '';
    data = [];
  };
  return {
    push(text: string) {
      buf += text;
      for (;;) {
        const nl = buf.search(/\r\n|\r|\n/);
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(buf[nl] === '\r' && buf[nl + 1] === '\n' ? nl + 2 : nl + 1);
        if (line === '') {
          dispatch();
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
