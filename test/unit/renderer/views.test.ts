// @vitest-environment node
// The pure models behind the pages: Today's rows, the timeline, the job graph, the editor form,
// the SSE parser and the IPC log follower.
import { describe, expect, it } from 'vitest';
import type { JobRow, RoutineDef } from '../../../contract/calls.js';
import { appendedText } from '../../../renderer/src/api/ipc.js';
import { changesFrom, fieldOf, formFromDef, inputFromForm, issuesByField, timingOf } from '../../../renderer/src/store/editor.js';
import { layerJobs } from '../../../renderer/src/store/graph.js';
import { NOT_RUN, worst } from '../../../renderer/src/store/status.js';
import { timelineLayout, type TimelineRun } from '../../../renderer/src/store/timeline.js';
import { NO_FILTERS, todayView, groupKey } from '../../../renderer/src/store/today.js';
import { detail, summary } from './fake-client.js';

describe('Today rows', () => {
  const routines = [
    summary('me@a:feeds/eu', { name: 'Feeds', today: 'COMPLETED' }),
    summary('me@b:feeds/us', { name: 'Feeds', today: 'ERROR' }),
    summary('me@a:report', { today: 'RUNNING' }),
    summary('me@a:lab/x', { schedule: 'lab', observeOnly: true }),
  ];

  it('groups by schedule then name, rolling a group up to its worst state', () => {
    const v = todayView(routines, NO_FILTERS, new Set());
    expect(v.rows.map((r) => (r.type === 'routine' ? r.routine.id : r.type === 'group' ? `group ${r.name} ${r.status}` : `schedule ${r.schedule}${r.observeOnly ? ' (observe)' : ''}`))).toEqual([
      'schedule default',
      'group Feeds ERROR',
      'me@a:report',
      'schedule lab (observe)',
      'me@a:lab/x',
    ]);
  });

  it('expanded groups list their members', () => {
    const v = todayView(routines, NO_FILTERS, new Set([groupKey('default', 'Feeds')]));
    expect(v.rows.filter((r) => r.type === 'routine' && r.nested).map((r) => r.key)).toEqual(['me@a:feeds/eu', 'me@b:feeds/us']);
  });

  it('filters by status, computer, schedule and text; status counts ignore the status filter', () => {
    const ids = (f: Partial<typeof NO_FILTERS>) => todayView(routines, { ...NO_FILTERS, ...f }, new Set([groupKey('default', 'Feeds')])).rows.flatMap((r) => (r.type === 'routine' ? [r.routine.id] : []));
    expect(ids({ status: 'ERROR' })).toEqual(['me@b:feeds/us']);
    expect(ids({ status: NOT_RUN })).toEqual(['me@a:lab/x']);
    expect(ids({ computer: 'me@b' })).toEqual(['me@b:feeds/us']);
    expect(ids({ schedule: 'lab' })).toEqual(['me@a:lab/x']);
    expect(ids({ text: 'REPORT' })).toEqual(['me@a:report']);
    expect(todayView(routines, { ...NO_FILTERS, status: 'ERROR' }, new Set()).counts).toEqual({ COMPLETED: 1, ERROR: 1, RUNNING: 1, [NOT_RUN]: 1 });
  });

  it('derives 5,000 routines into groups and a text filter', () => {
    const many = Array.from({ length: 5000 }, (_, i) => summary(`me@h${i % 7}:group${i % 300}/r${i}`, { name: `group ${i % 300}`, today: i % 13 === 0 ? 'ERROR' : 'COMPLETED' }));
    const v = todayView(many, { ...NO_FILTERS, text: 'r1' }, new Set());
    expect(v.shown).toBe(1 + 10 + 100 + 1000); // r1, r10–r19, r100–r199, r1000–r1999
    expect(v.total).toBe(5000);
  });

  it('the worst state wins a roll-up', () => {
    expect(worst(['COMPLETED', 'RUNNING', 'DELAYED'])).toBe('DELAYED');
    expect(worst([NOT_RUN, 'COMPLETED'])).toBe('COMPLETED');
  });
});

describe('timeline layout', () => {
  const base = Date.parse('2026-03-02T10:00:00Z');
  const r = (id: string, routineId: string, status: TimelineRun['status'], start: number, end: number | null): TimelineRun => ({
    id, routineId, kind: 'batch', status, attempt: 1, scheduledAt: new Date(start).toISOString(), startedAt: new Date(start).toISOString(), endedAt: end === null ? null : new Date(end).toISOString(),
    durationMs: end === null ? null : end - start, exitCode: null, signal: null, reason: null, heartbeatAt: null, manual: false, runDir: null,
  });
  it('one lane per routine; running bars reach now; failures are marked', () => {
    const now = base + 30 * 60_000;
    const l = timelineLayout([r('1', 'a', 'COMPLETED', base, base + 60_000), r('2', 'a', 'ERROR', base + 120_000, base + 180_000), r('3', 'b', 'RUNNING', base + 600_000, null)], now, 'fit');
    expect(l.lanes.map((x) => [x.routineId, x.bars.length, x.failures])).toEqual([['a', 2, 1], ['b', 1, 0]]);
    expect(l.lanes[1]!.bars[0]).toMatchObject({ open: true, end: now });
    expect(l.from).toBeLessThan(base);
    expect(l.to).toBeGreaterThan(now);
    expect(l.ticks.length).toBeGreaterThan(2);
  });
});

describe('job graph', () => {
  const job = (id: number, deps: number[] = []): JobRow => ({ id, name: `j${id}`, command: 'true', args: [], cwd: null, env: {}, computer: null, status: 'WAITING', reason: null, exitCode: null, signal: null, runDir: null, backend: null, dependencies: deps, createdAt: 0, startedAt: null, endedAt: null });
  it('puts a job one layer right of its deepest dependency', () => {
    const g = layerJobs([job(1), job(2, [1]), job(3, [1, 2]), job(4)]);
    expect(Object.fromEntries(g.nodes.map((n) => [n.job.id, n.layer]))).toEqual({ 1: 0, 2: 1, 3: 2, 4: 0 });
    expect(g.edges.map((e) => `${e.from.job.id}->${e.to.job.id}`).sort()).toEqual(['1->2', '1->3', '2->3']);
  });
});

describe('editor form', () => {
  const def = (o: Partial<RoutineDef> = {}): RoutineDef => ({ ...detail(summary('me@box:sync/photos')).definition, timing: { mode: 'every', everyMs: 30 * 60_000 }, env: { DB_PASSWORD: '***', REGION: 'eu' }, ...o });

  it('round-trips a definition into the input the schema reads', () => {
    const { input, issues } = inputFromForm(formFromDef(def()));
    expect(issues).toEqual([]);
    expect(input).toMatchObject({ id: 'me@box:sync/photos', command: 'true', every: '30m', tz: 'UTC', env: { DB_PASSWORD: '***', REGION: 'eu' } });
  });

  it('edits send only changed fields, and refuse a changed field that still holds a mask', () => {
    const before = formFromDef(def());
    expect(changesFrom(before, { ...before, name: 'Photos', timing: { ...before.timing, every: '1h' } })).toEqual({ changes: { name: 'Photos', every: '1h' }, issues: [] });
    const r = changesFrom(before, { ...before, env: 'DB_PASSWORD=***\nREGION=us' });
    expect(r.issues.map((i) => i.path)).toEqual(['env']);
  });

  it('server issue paths land on the fields they name', () => {
    expect(fieldOf('cron')).toBe('timing');
    expect(fieldOf('after.0')).toBe('after');
    expect(fieldOf('log_cap')).toBe('logCap');
    expect(fieldOf('')).toBe('form');
    expect(issuesByField([{ path: 'cron', message: 'minute: 99 is out of range 0-59' }])).toEqual({ timing: 'minute: 99 is out of range 0-59' });
  });

  it('previews the timing being typed, with its time zone', () => {
    const f = { ...formFromDef(def()), mode: 'runtimes' as const };
    f.timing.runtimes = '07:00, 19:30';
    expect(timingOf(f)).toEqual({ runtimes: ['07:00', '19:30'], tz: 'UTC' });
    expect(timingOf({ ...f, kind: 'realtime' })).toBeNull();
  });
});

describe('transports', () => {
  it('the IPC log follower yields only what a new tail added', () => {
    expect(appendedText('', 'a\n')).toBe('a\n');
    expect(appendedText('a\nb\n', 'a\nb\nc\n')).toBe('c\n');
    const long = 'x'.repeat(300) + 'END';
    expect(appendedText(long, long.slice(100) + '\nmore')).toBe('\nmore');
  });
});

describe('formatting', () => {
  it('relative times never say 60m', async () => {
    const { relative } = await import('../../../renderer/src/store/format.js');
    const now = Date.parse('2026-03-02T10:00:00Z');
    expect(relative(now + (9 * 60 + 59.8) * 60_000, now)).toBe('in 10h 0m');
    expect(relative(now - 59.7 * 60_000, now)).toBe('1h 0m ago');
    expect(relative(now + 30_000, now)).toBe('in 30s');
  });
});
