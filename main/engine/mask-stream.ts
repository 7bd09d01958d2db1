// Masking a log as it is followed: a secret may arrive split across two reads, so the last few
// characters (one shorter than the longest secret) are held back until the next read, or the end.
// Only they wait: a live view lags by at most that many characters of its last line.
import { MASK } from './mask.js';

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class LogMasker {
  private readonly re: RegExp | null;
  private readonly keep: number;
  private carry = '';

  constructor(secrets: readonly string[]) {
    const list = [...new Set(secrets.filter((s) => s !== ''))].sort((a, b) => b.length - a.length);
    this.re = list.length ? new RegExp(list.map(escapeRegExp).join('|'), 'g') : null;
    this.keep = list.length ? list[0]!.length - 1 : 0;
  }

  /** The masked text that can be shown now. */
  push(chunk: string): string {
    if (!this.re) return chunk;
    const text = this.carry + chunk;
    // Text before `cutoff` has at least a longest secret's length after it: every match starting
    // there is decided. A match that runs past it is shown whole.
    let cutoff = Math.max(0, text.length - this.keep);
    let out = '';
    let last = 0;
    for (const m of text.matchAll(this.re)) {
      if (m.index >= cutoff) break;
      out += text.slice(last, m.index) + MASK;
      last = m.index + m[0].length;
    }
    cutoff = Math.max(cutoff, last);
    out += text.slice(last, cutoff);
    this.carry = text.slice(cutoff);
    return out;
  }

  /** What was held back, masked: the stream is over. */
  end(): string {
    const rest = this.carry;
    this.carry = '';
    return this.re ? rest.replace(this.re, MASK) : rest;
  }
}

/** A followed log, masked (see LogMasker). */
export async function* maskFollowed(chunks: AsyncIterable<string>, secrets: readonly string[]): AsyncGenerator<string> {
  const m = new LogMasker(secrets);
  for await (const c of chunks) {
    const shown = m.push(c);
    if (shown) yield shown;
  }
  const rest = m.end();
  if (rest) yield rest;
}
