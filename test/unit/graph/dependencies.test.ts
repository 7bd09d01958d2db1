import { describe, expect, it } from 'vitest';
import type { Timing } from '../../../main/engine/domain/types.js';
import { dailyOrder } from '../../../main/engine/graph/daily-order.js';
import { checkDependencies, downstream, upstream, type DepRoutine } from '../../../main/engine/graph/dependencies.js';

function r(id: string, dependencies: string[] = [], extra: Partial<DepRoutine> = {}): DepRoutine {
  return { id, schedule: 'main', kind: 'batch', dependencies, timing: null, tz: 'UTC', ...extra };
}
const at = (...runtimes: string[]): { timing: Timing } => ({ timing: { mode: 'runtimes', runtimes } });
const DAY = '2025-03-10';
const utc = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`);

describe('checkDependencies', () => {
  it('finds nothing wrong with a clean graph', () => {
    expect(checkDependencies([r('a'), r('b', ['a']), r('c', ['a', 'b'])])).toEqual([]);
  });

  it('names an unknown dependency', () => {
    expect(checkDependencies([r('a', ['ghost'])])).toEqual([
      { path: 'routines.0.dependencies.0', message: 'unknown dependency ghost: no routine with that id in schedule main' },
    ]);
  });

  it('refuses a dependency in another schedule', () => {
    expect(checkDependencies([r('a'), r('b', ['a'], { schedule: 'night' })])).toEqual([
      { path: 'routines.1.dependencies.0', message: 'dependency a is in schedule main, not night (dependencies must be in the same schedule)' },
    ]);
  });

  it('reports a self-dependency once, not also as a cycle', () => {
    expect(checkDependencies([r('a', ['a'])])).toEqual([{ path: 'routines.0.dependencies.0', message: 'a depends on itself' }]);
  });

  it('reports a dependency listed twice and a duplicate routine id', () => {
    expect(checkDependencies([r('a'), r('b', ['a', 'a']), r('a')])).toEqual([
      { path: 'routines.2.id', message: 'duplicate routine id a (first defined at routines.0)' },
      { path: 'routines.1.dependencies.1', message: 'dependency a is listed twice' },
    ]);
  });

  it('names the cycle, starting at its smallest id', () => {
    expect(checkDependencies([r('c', ['a']), r('b', ['c']), r('a', ['b']), r('d', ['a'])])).toEqual([
      { path: 'routines.2.dependencies', message: 'dependency cycle: a → b → c → a' },
    ]);
  });

  it('reports each separate cycle, in definition order of their start', () => {
    expect(checkDependencies([r('y', ['x']), r('x', ['y']), r('q', ['p']), r('p', ['q'])])).toEqual([
      { path: 'routines.1.dependencies', message: 'dependency cycle: x → y → x' },
      { path: 'routines.3.dependencies', message: 'dependency cycle: p → q → p' },
    ]);
  });

  it('names a shortest cycle and lists the others caught in the same tangle', () => {
    // a → b → a and a → c → d → a share a: one strongly connected component.
    expect(checkDependencies([r('a', ['c', 'b']), r('b', ['a']), r('c', ['d']), r('d', ['a'])])).toEqual([
      { path: 'routines.0.dependencies', message: 'dependency cycle: a → b → a (also caught in the same cycles: c, d)' },
    ]);
  });

  it('ignores cross-schedule edges when looking for cycles', () => {
    const issues = checkDependencies([r('a', ['b']), r('b', ['a'], { schedule: 'other' })]);
    expect(issues.map((i) => i.message)).toEqual([
      'dependency b is in schedule other, not main (dependencies must be in the same schedule)',
      'dependency a is in schedule main, not other (dependencies must be in the same schedule)',
    ]);
  });

  it('handles 10k routines in a chain closed into one cycle without recursion (no stack overflow)', () => {
    const n = 10_000;
    const id = (i: number) => `r${String(i).padStart(5, '0')}`;
    const routines = Array.from({ length: n }, (_, i) => r(id(i), [id((i + 1) % n)]));
    const issues = checkDependencies(routines);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('routines.0.dependencies');
    expect(issues[0]!.message).toBe(
      'dependency cycle: r00000 → r00001 → r00002 → r00003 → r00004 → r00005 → r00006 → r00007 → r00008 → r00009 → ' +
        '… (9981 more) → r09991 → r09992 → r09993 → r09994 → r09995 → r09996 → r09997 → r09998 → r09999 → r00000',
    );
  });

  it('handles 10k routines with 30k edges and no cycle', () => {
    const n = 10_000;
    const routines = Array.from({ length: n }, (_, i) => r(`r${i}`, [1, 2, 3].filter((k) => i - k >= 0).map((k) => `r${i - k}`)));
    expect(checkDependencies(routines)).toEqual([]);
    const order = dailyOrder(routines, DAY);
    expect(order.map((e) => e.id)).toEqual(routines.map((x) => x.id));
  });
});

describe('dailyOrder', () => {
  it('orders by first run time of the day, then by id', () => {
    const order = dailyOrder([r('late', [], at('18:00')), r('b', [], at('09:00', '06:00')), r('a', [], at('06:00')), r('none')], DAY);
    expect(order).toEqual([
      { id: 'a', firstRunAt: utc('06:00'), blocked: false },
      { id: 'b', firstRunAt: utc('06:00'), blocked: false },
      { id: 'late', firstRunAt: utc('18:00'), blocked: false },
      { id: 'none', firstRunAt: null, blocked: false },
    ]);
  });

  it('puts a routine after its dependencies even when it is due earlier', () => {
    const order = dailyOrder([r('report', ['parse'], at('05:00')), r('parse', ['download'], at('07:00')), r('download', [], at('08:00')), r('other', [], at('07:30'))], DAY);
    expect(order.map((e) => e.id)).toEqual(['other', 'download', 'parse', 'report']);
  });

  it('puts realtime routines first, batch routines without a run that day last', () => {
    const order = dailyOrder([r('z-batch', [], at('00:01')), r('m-idle'), r('y-feed', [], { kind: 'realtime' }), r('a-api', [], { kind: 'realtime' })], DAY);
    expect(order.map((e) => [e.id, e.firstRunAt])).toEqual([
      ['a-api', null],
      ['y-feed', null],
      ['z-batch', utc('00:01')],
      ['m-idle', null],
    ]);
  });

  it('compares run times as instants across time zones', () => {
    // 08:00 in Tokyo (UTC+9) is 23:00 UTC the day before; 06:00 in New York (EDT, UTC-4) is 10:00 UTC.
    const order = dailyOrder([r('ny', [], { ...at('06:00'), tz: 'America/New_York' }), r('tokyo', [], { ...at('08:00'), tz: 'Asia/Tokyo' })], DAY);
    expect(order).toEqual([
      { id: 'tokyo', firstRunAt: Date.parse('2025-03-09T23:00:00Z'), blocked: false },
      { id: 'ny', firstRunAt: Date.parse('2025-03-10T10:00:00Z'), blocked: false },
    ]);
  });

  it('places cycles and what depends on them last, flagged blocked', () => {
    const order = dailyOrder([r('x', ['y'], at('01:00')), r('y', ['x'], at('02:00')), r('after', ['x'], at('00:30')), r('free', [], at('12:00')), r('self', ['self'], at('03:00'))], DAY);
    expect(order.map((e) => [e.id, e.blocked])).toEqual([
      ['free', false],
      ['after', true],
      ['x', true],
      ['y', true],
      ['self', true],
    ]);
  });

  it('ignores unknown and cross-schedule dependencies and lists each id once', () => {
    const order = dailyOrder([r('a', ['ghost', 'b'], at('01:00')), r('b', [], { ...at('02:00'), schedule: 'other' }), r('a', [], at('00:00'))], DAY);
    expect(order.map((e) => e.id)).toEqual(['a', 'b']);
  });

  it('uses an injected resolver for timings the default does not know', () => {
    const cron = r('cron', [], { timing: { mode: 'cron', cron: '0 3 * * *' } });
    const every = r('every', [], { timing: { mode: 'every', everyMs: 60_000 } });
    // cron has a first run of the day by default; an `every` loop has none.
    expect(dailyOrder([cron, every], DAY).map((e) => e.firstRunAt)).toEqual([Date.parse(`${DAY}T03:00:00Z`), null]);
    const order = dailyOrder([cron, every, r('four', [], at('04:00'))], DAY, {
      firstRunAt: (x, day) => (x.id === 'cron' ? Date.parse(`${day}T03:00:00Z`) : x.id === 'every' ? Date.parse(`${day}T00:00:00Z`) : null),
    });
    expect(order.map((e) => e.id)).toEqual(['every', 'cron', 'four']);
  });
});

describe('upstream / downstream', () => {
  const graph = [r('download'), r('parse', ['download']), r('derive', ['parse']), r('report', ['derive', 'parse']), r('backup'), r('elsewhere', ['download'], { schedule: 'other' })];

  it('downstream lists everything held up by a routine, nearest first then by id', () => {
    expect(downstream('download', graph)).toEqual(['parse', 'derive', 'report']);
    expect(downstream('derive', graph)).toEqual(['report']);
    expect(downstream('report', graph)).toEqual([]);
  });

  it('upstream lists everything a routine waits for, nearest first then by id', () => {
    expect(upstream('report', graph)).toEqual(['derive', 'parse', 'download']);
    expect(upstream('download', graph)).toEqual([]);
  });

  it('ignores cross-schedule edges, unknown ids, and never includes the routine itself on a cycle', () => {
    expect(upstream('elsewhere', graph)).toEqual([]);
    expect(downstream('ghost', graph)).toEqual([]);
    const cyc = [r('a', ['b']), r('b', ['a']), r('c', ['a'])];
    expect(downstream('a', cyc)).toEqual(['b', 'c']);
    expect(upstream('a', cyc)).toEqual(['b']);
  });
});
