import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, troubleOf as catalogueTrouble } from '../../main/engine/events/catalogue.js';
import { NotificationPolicy, routineTarget, troubleOf, type PolicyEvent } from '../../main/app/notify-policy.js';

const MIN = 60_000;
const failed = (path: string, message = 'failed: exit code 3'): PolicyEvent => ({ type: 'run:failed', routineId: `me@host:${path}`, message });
const delayed = (path: string): PolicyEvent => ({ type: 'run:delayed', routineId: `me@host:${path}`, message: 'DELAYED: not started within 60s' });

describe('troubleOf', () => {
  it('maps failures, launch failures, refusals, crash loops and silent external routines to ERROR and late runs to DELAYED', () => {
    // routine:silent: the webhooks always called it an error; the notifier now agrees (the catalogue's answer).
    for (const type of ['run:failed', 'run:launch-failed', 'run:refused', 'routine:crash-loop', 'routine:silent']) expect(troubleOf({ type, routineId: 'a@b:c', message: '' })).toBe('ERROR');
    expect(troubleOf({ type: 'run:delayed', routineId: 'a@b:c', message: '' })).toBe('DELAYED');
  });

  it('is the catalogue: error trouble is ERROR, delayed is DELAYED, a realtime restart and the rest are not news', () => {
    for (const type of EVENT_TYPES) {
      const t = catalogueTrouble(type);
      expect(troubleOf({ type, routineId: 'a@b:c', message: '' }), type).toBe(t === 'error' ? 'ERROR' : t === 'delayed' ? 'DELAYED' : null);
    }
  });

  it('ignores everything else, and events without a routine', () => {
    for (const type of ['run:completed', 'run:exited', 'run:retry', 'job:failed', 'run:submitted']) expect(troubleOf({ type, routineId: 'a@b:c', message: '' })).toBeNull();
    expect(troubleOf({ type: 'run:failed', routineId: null, message: '' })).toBeNull();
  });
});

describe('NotificationPolicy', () => {
  it('shows one failure once its grouping window is over, opening that routine', () => {
    const p = new NotificationPolicy({ groupWindowMs: 5000 });
    expect(p.offer(failed('reports/download'), 1000)).toBe(6000);
    expect(p.flush(5999)).toEqual([]);
    expect(p.flush(6000)).toEqual([
      { title: 'reports/download failed', body: 'failed: exit code 3', target: '#/routine/me%40host%3Areports%2Fdownload', routineIds: ['me@host:reports/download'] },
    ]);
    expect(p.flush(7000)).toEqual([]);
  });

  it('says a late routine is delayed', () => {
    const p = new NotificationPolicy({ groupWindowMs: 10 });
    p.offer(delayed('feeds/morning'), 0);
    expect(p.flush(10)[0]).toMatchObject({ title: 'feeds/morning is delayed', body: 'DELAYED: not started within 60s' });
  });

  it('groups what arrives within the window into one notification that opens Today', () => {
    const p = new NotificationPolicy({ groupWindowMs: 5000 });
    expect(p.offer(failed('a/one'), 0)).toBe(5000);
    expect(p.offer(failed('b/two'), 1000)).toBeNull();
    expect(p.offer(failed('c/three'), 4999)).toBeNull();
    expect(p.flush(5000)).toEqual([{ title: '3 routines failed', body: 'a/one, b/two, c/three', target: '#/today', routineIds: ['me@host:a/one', 'me@host:b/two', 'me@host:c/three'] }]);
  });

  it('counts failures and delays apart in a mixed group, failures named first', () => {
    const p = new NotificationPolicy({ groupWindowMs: 100 });
    p.offer(delayed('d/late'), 0);
    p.offer(failed('a/broken'), 10);
    p.offer(failed('b/broken'), 20);
    expect(p.flush(100)).toEqual([{ title: '2 routines failed, 1 delayed', body: 'a/broken, b/broken, d/late', target: '#/today', routineIds: ['me@host:a/broken', 'me@host:b/broken', 'me@host:d/late'] }]);
  });

  it('names a few routines of a large group and sums up the rest', () => {
    const p = new NotificationPolicy({ groupWindowMs: 100, maxNamed: 3 });
    for (let i = 0; i < 20; i++) p.offer(failed(`r/${i}`), i);
    const [n] = p.flush(100);
    expect(n).toMatchObject({ title: '20 routines failed', body: 'r/0, r/1, r/2 and 17 more' });
    expect(n!.routineIds).toHaveLength(20);
  });

  it('notifies a routine at most once per kind per perRoutineMs: a retried one-shot does not flood', () => {
    const p = new NotificationPolicy({ groupWindowMs: 1000, perRoutineMs: 15 * MIN });
    const shown: string[] = [];
    // Fails every minute for an hour (seed 002's retry policy).
    for (let t = 0; t < 60 * MIN; t += MIN) {
      const due = p.offer(failed('once/backup'), t);
      if (due !== null) shown.push(...p.flush(due).map((n) => `${n.title}@${t / MIN}`));
    }
    expect(shown).toEqual(['once/backup failed@0', 'once/backup failed@15', 'once/backup failed@30', 'once/backup failed@45']);
  });

  it('rate-limits per routine, not globally: another routine still gets through', () => {
    const p = new NotificationPolicy({ groupWindowMs: 100, perRoutineMs: 15 * MIN });
    p.offer(failed('a/x'), 0);
    p.flush(100);
    expect(p.offer(failed('a/x'), 5 * MIN)).toBeNull();
    expect(p.offer(failed('b/y'), 5 * MIN)).toBe(5 * MIN + 100);
    expect(p.flush(5 * MIN + 100).map((n) => n.title)).toEqual(['b/y failed']);
  });

  it('lets ERROR through right after DELAYED for the same routine (it got worse)', () => {
    const p = new NotificationPolicy({ groupWindowMs: 100 });
    p.offer(delayed('a/x'), 0);
    expect(p.flush(100).map((n) => n.title)).toEqual(['a/x is delayed']);
    p.offer(failed('a/x'), 1000);
    expect(p.flush(1100).map((n) => n.title)).toEqual(['a/x failed']);
  });

  it('keeps one line per routine in a window, the worse state winning', () => {
    const p = new NotificationPolicy({ groupWindowMs: 100 });
    p.offer(delayed('a/x'), 0);
    p.offer(failed('a/x', 'failed: killed by SIGKILL'), 50);
    expect(p.flush(100)).toEqual([{ title: 'a/x failed', body: 'failed: killed by SIGKILL', target: routineTarget('me@host:a/x'), routineIds: ['me@host:a/x'] }]);
  });

  it('opens a new window after a flush', () => {
    const p = new NotificationPolicy({ groupWindowMs: 100 });
    p.offer(failed('a/x'), 0);
    p.flush(100);
    expect(p.offer(failed('b/y'), 200)).toBe(300);
    expect(p.dueAt).toBe(300);
  });

  it('ignores events that are not trouble without opening a window', () => {
    const p = new NotificationPolicy();
    expect(p.offer({ type: 'run:completed', routineId: 'me@host:a/x', message: 'completed' }, 0)).toBeNull();
    expect(p.dueAt).toBeNull();
  });
});
