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
});
