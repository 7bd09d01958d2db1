// The one server-sent-events parser every client of the API reads streams with.
import { describe, expect, it } from 'vitest';
import { readSse, sseParser, type SseMessage } from '../../contract/sse.js';

function parseAll(chunks: string[]): SseMessage[] {
  const got: SseMessage[] = [];
  const p = sseParser((m) => got.push(m));
  for (const c of chunks) p.push(c);
  return got;
}

describe('sseParser', () => {
  it('gives the same messages however the text is cut: inside a field name, a value, a CRLF', () => {
    const text = ': connected\r\n\r\nid: 7\nevent: event\ndata: {"a":1}\n\nevent: pass\r\ndata: line1\r\ndata: line2\r\n\r\ndata:no-space\n\n';
    const want = [
      { event: 'event', data: '{"a":1}', id: '7' },
      { event: 'pass', data: 'line1\nline2', id: '7' },
      { event: 'message', data: 'no-space', id: '7' },
    ];
    expect(parseAll([text])).toEqual(want);
    for (let size = 1; size <= 7; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      expect(parseAll(chunks), `chunks of ${size}`).toEqual(want);
    }
    // Every single cut point, in two pieces.
    for (let i = 1; i < text.length; i++) expect(parseAll([text.slice(0, i), text.slice(i)]), `cut at ${i}`).toEqual(want);
  });

  it('joins multi-line data with newlines and keeps an empty data line', () => {
    expect(parseAll(['data: {"a":\ndata: 1}\ndata:\ndata: end\n\n'])).toEqual([{ event: 'message', data: '{"a":\n1}\n\nend', id: null }]);
  });

  it('carries the last id over to later messages, and an empty id resets it', () => {
    expect(parseAll(['id: 41\ndata: a\n\ndata: b\n\nid: 42\ndata: c\n\nid\ndata: d\n\n']).map((m) => m.id)).toEqual(['41', '41', '42', '']);
  });

  it('skips comments and heartbeats; a message without data dispatches nothing and its event name is dropped', () => {
    expect(parseAll([': heartbeat\n\n:\n\nevent: pass\n\n: keep-alive\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x', id: null }]);
  });

  it('keeps a message until its blank line comes, and a lone CR waits for its LF', () => {
    const got: SseMessage[] = [];
    const p = sseParser((m) => got.push(m));
    p.push('event: x\ndata: 1\n');
    expect(got).toEqual([]);
    p.push('\r');
    expect(got).toEqual([]);
    p.push('\ndata: 2\n\n');
    expect(got).toEqual([
      { event: 'x', data: '1', id: null },
      { event: 'message', data: '2', id: null },
    ]);
  });

  it('ignores unknown fields, and a line without a colon is a field with an empty value', () => {
    expect(parseAll(['retry: 100\nfoo: bar\ndata\n\n'])).toEqual([{ event: 'message', data: '', id: null }]);
  });
});

describe('readSse', () => {
  it('decodes a byte stream whose chunks split a multi-byte character', async () => {
    const bytes = new TextEncoder().encode('event: chunk\ndata: "é → ✓"\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]));
        c.close();
      },
    });
    const got: SseMessage[] = [];
    await readSse(body, (m) => got.push(m));
    expect(got).toEqual([{ event: 'chunk', data: '"é → ✓"', id: null }]);
  });

  it('returns when the signal aborts, without waiting for the stream to end', async () => {
    const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('data: 1\n\n')) });
    const abort = new AbortController();
    const got: string[] = [];
    const reading = readSse(body, (m) => (got.push(m.data), abort.abort()), abort.signal);
    await expect(reading).resolves.toBeUndefined();
    expect(got).toEqual(['1']);
  });
});
