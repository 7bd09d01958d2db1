// The doctor's findings on routines in ERROR or DELAYED come from each routine's latest run alone:
// one statement for every routine (routine_latest), the reason of the very run whose status is
// reported, however many routines are DELAYED (a thousand is usual while their worker is away).
import { expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { doctor } from '../../../main/engine/daemon/doctor.js';
import { Store } from '../../../main/engine/store/store.js';
import { scratch } from '../../helpers/engine-fixture.js';

function run(id: string, routineId: string, scheduledAt: number, createdAt: number, status: RunRow['status'], reason: string | null): RunRow {
  return { id, routineId, kind: 'batch', cycle: '2026-01-05', scheduledAt, attempt: 1, status, reason, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt, startedAt: null, endedAt: null, heartbeatAt: null };
}

it('names each routine in ERROR or DELAYED with the reason of the run it reports, in one read of the routines', () => {
  const box = scratch('tend-doctor-routines-');
  const heard: string[] = [];
  const store = Store.open(box.db, { trace: (sql) => heard.push(sql) });
  try {
    const now = Date.now();
    store.db.prepare(`INSERT INTO schedules (name, created_at) VALUES ('default', 0)`).run();
    const ids = ['me@h:failed', ...Array.from({ length: 20 }, (_, i) => `me@h:waits/${i}`)];
    for (const id of ids) {
      store.db.prepare(`INSERT INTO routines (id, schedule, name, computer, kind, def, seq, created_at, updated_at) VALUES (?, 'default', ?, 'me@h', 'batch', ?, 1, 0, 0)`).run(id, id, JSON.stringify({ id, name: id, schedule: 'default', computer: 'me@h', kind: 'batch', external: false, command: 'true', args: [], env: {} }));
    }
    store.tx(() => {
      store.runs.insert(run('f1', 'me@h:failed', now, now, 'ERROR', 'exit 3'));
      // Created after it for an earlier run time (a catch-up): the latest created, not the latest run.
      store.runs.insert(run('f0', 'me@h:failed', now - 60_000, now + 1, 'COMPLETED', null));
      ids.slice(1).forEach((id, i) => store.runs.insert(run(`w${i}`, id, now, now, 'DELAYED', `worker ${i} away`)));
    });
    heard.length = 0;
    const findings = doctor(box.dir, store, now + 2, null);
    expect(findings.filter((f) => f.id === 'routine-error').map((f) => f.message)).toEqual(['me@h:failed is in ERROR: exit 3']);
    const delayed = findings.filter((f) => f.id === 'routine-delayed').map((f) => f.message);
    expect(delayed).toHaveLength(20);
    expect(delayed).toContain('me@h:waits/7 is DELAYED: worker 7 away');
    // Runs read once for all routines, not once more per finding.
    expect(heard.filter((sql) => /\b(FROM|JOIN) runs\b/.test(sql))).toHaveLength(1);
  } finally {
    store.close();
    box.remove();
  }
});
