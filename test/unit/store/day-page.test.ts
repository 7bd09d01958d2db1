// The day's runs a page at a time (GET /api/runs?after=ID&limit=N): creation order, no run twice or
// missed across pages, the first page also holding what began the day before and was open or ended today.
import { describe, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { Store } from '../../../main/engine/store/store.js';

const DAY = 86_400_000;
const FROM = Date.UTC(2026, 0, 5);

function run(id: string, createdAt: number, status: RunRow['status'], endedAt: number | null = null): RunRow {
  return { id, routineId: 'me@h:r', kind: 'batch', cycle: '2026-01-05', scheduledAt: createdAt, attempt: 1, status, reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt, startedAt: null, endedAt, heartbeatAt: null };
}

describe('a day of runs, paged', () => {
  it('pages in creation order (ties by insertion), carrying yesterday’s open and late-ending runs on the first page', () => {
    const store = Store.open(':memory:');
    store.tx(() => {
      store.runs.insert(run('old-done', FROM - DAY, 'PENDING'));
      store.runs.insert(run('old-open', FROM - 1000, 'PENDING'));
      store.runs.insert(run('old-late', FROM - 500, 'PENDING'));
      store.runs.insert(run('old-early', FROM - 400, 'PENDING'));
      for (let i = 0; i < 7; i++) store.runs.insert(run(`t${i}`, FROM + Math.floor(i / 3) * 1000, 'PENDING'));
      store.runs.insert(run('tomorrow', FROM + DAY, 'PENDING'));
    });
    store.runs.cas('old-done', ['PENDING'], 'COMPLETED', { endedAt: FROM - DAY + 10 });
    store.runs.cas('old-late', ['PENDING'], 'COMPLETED', { endedAt: FROM + 10 });
    store.runs.cas('old-early', ['PENDING'], 'ERROR', { endedAt: FROM - 10 });

    const ids: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: RunRow[] = store.runs.dayPage(FROM, FROM + DAY, after, 3)!;
      if (pages === 0) expect(page.slice(0, 2).map((r) => r.id)).toEqual(['old-open', 'old-late']);
      if (page.length === 0) break;
      ids.push(...page.map((r) => r.id));
      after = page[page.length - 1]!.id;
    }
    expect(ids).toEqual(['old-open', 'old-late', 't0', 't1', 't2', 't3', 't4', 't5', 't6']);
    expect(store.runs.dayPage(FROM, FROM + DAY, 'no-such-run', 3)).toBeNull();
    store.close();
  });

  it('carries what began before the day and ended in it, however long it ran (both sides of the ten-minute window)', () => {
    const store = Store.open(':memory:');
    const W = 600_000;
    const ended: [string, number, number][] = [
      ['edge-in', FROM - W, FROM], // created at the window's start: found by creation time
      ['just-long', FROM - W - 1, FROM], // one ms earlier (lasted just over the window): found by its end
      ['long', FROM - 3 * DAY, FROM + 5 * 3_600_000],
      ['short', FROM - 1, FROM + 1],
      ['ended-before', FROM - 2 * 3_600_000, FROM - 1],
      ['long-ended-before', FROM - DAY, FROM - 1],
      ['today', FROM + 1, FROM + 2],
    ];
    store.tx(() => {
      for (const [id, created] of ended) store.runs.insert(run(id, created, 'PENDING'));
      store.runs.insert(run('open-long', FROM - 2 * DAY, 'PENDING'));
    });
    for (const [id, , end] of ended) store.runs.cas(id, ['PENDING'], 'COMPLETED', { endedAt: end });
    const expected = ['long', 'open-long', 'just-long', 'edge-in', 'short', 'today'];
    expect(store.runs.dayPage(FROM, FROM + DAY, null, 10)!.map((r) => r.id)).toEqual(expected);
    expect(store.runs.since(FROM).map((r) => r.id)).toEqual(expected);
    store.close();
  });
});
