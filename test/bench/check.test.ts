// `npm run bench -- --check`: the comparison with the baseline, on made-up results (no timing).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchesOf, checkResults, figure, parseBaseline, recorded, type Baseline } from '../../bench/check.js';
import { REPO } from '../helpers/cli.js';

const baseline: Baseline = {
  notes: 'made up for the test',
  recordedAt: '2026-12-01T00:00:00Z',
  metrics: {
    'cli.status.ratio': { value: 2, tolerance: 0.25, better: 'lower' },
    'pass.large.medianMs': { value: 4, tolerance: 1, better: 'lower' },
    'jobs.jobsPerSec': { value: 100, tolerance: 0.2, better: 'higher' },
  },
};

const cli = (ratio: number) => ({ name: 'cli', status: { ms: 80, ratio } });
const ran = (...names: string[]) => new Set(names);

describe('bench --check', () => {
  it('a figure worse than its baseline by more than the tolerance fails, naming metric, value, baseline and tolerance', () => {
    const [f] = checkResults([cli(2.6)], baseline, ran('cli'));
    expect(f).toMatchObject({ metric: 'cli.status.ratio', value: 2.6, baseline: 2, tolerance: 0.25, limit: 2.5, ok: false });
    expect(f!.message).toBe('cli.status.ratio = 2.6: regressed beyond its baseline 2, tolerance 25% (lower is better, limit 2.5)');
  });

  it('a figure within the tolerance passes, up to the limit itself; a better one passes', () => {
    for (const ratio of [2.5, 2.2, 1.1]) expect(checkResults([cli(ratio)], baseline, ran('cli'))[0]!.ok, `ratio ${ratio}`).toBe(true);
  });

  it('when higher is better, a figure below baseline × (1 − tolerance) fails and one above it passes', () => {
    const check = (jobsPerSec: number) => checkResults([{ name: 'jobs', jobsPerSec }], baseline, ran('jobs'))[0]!;
    expect(check(79)).toMatchObject({ ok: false, limit: 80 });
    expect(check(79).message).toMatch(/^jobs\.jobsPerSec = 79: regressed beyond its baseline 100, tolerance 20% \(higher is better, limit 80\)$/);
    expect(check(80).ok).toBe(true);
    expect(check(250).ok).toBe(true);
  });

  it('a figure missing from a bench that ran fails, named; so does one that is not a number', () => {
    const missing = checkResults([{ name: 'cli', status: { ms: 80 } }], baseline, ran('cli'));
    expect(missing).toEqual([expect.objectContaining({ metric: 'cli.status.ratio', value: null, ok: false })]);
    expect(missing[0]!.message).toBe("cli.status.ratio: missing from this run's results (baseline 2, tolerance 25% (lower is better, limit 2.5))");
    expect(checkResults([{ name: 'cli', status: { ratio: 'fast' } }], baseline, ran('cli'))[0]!.ok).toBe(false);
    // A bench that ran but returned nothing under its name (e.g. it was skipped).
    expect(checkResults([], baseline, ran('pass'))).toEqual([expect.objectContaining({ metric: 'pass.large.medianMs', value: null, ok: false })]);
  });

  it('only the benches that ran are checked', () => {
    expect(checkResults([cli(2), { name: 'pass', large: { medianMs: 100 } }], baseline, ran('cli')).map((f) => f.metric)).toEqual(['cli.status.ratio']);
  });

  it('figure follows the path into the result named by its first part', () => {
    const results = [{ name: 'pass', large: { medianMs: 3.5 } }, cli(1.9)];
    expect(figure(results, 'pass.large.medianMs')).toBe(3.5);
    expect(figure(results, 'cli.status.ratio')).toBe(1.9);
    expect(figure(results, 'cli.status')).toBeNull();
    expect(figure(results, 'idle.rssMiB.median')).toBeNull();
  });

  it('--record takes the figures of the benches that ran as the values, keeping tolerances and notes; a missing one is named', () => {
    const next = recorded(baseline, [cli(1.7)], ran('cli'), '2026-12-02T00:00:00Z');
    expect(next.metrics['cli.status.ratio']).toEqual({ value: 1.7, tolerance: 0.25, better: 'lower' });
    expect(next.metrics['pass.large.medianMs']).toEqual(baseline.metrics['pass.large.medianMs']);
    expect(next).toMatchObject({ notes: baseline.notes, recordedAt: '2026-12-02T00:00:00Z' });
    expect(() => recorded(baseline, [{ name: 'cli' }], ran('cli'), 'now')).toThrow("cli.status.ratio: missing from this run's results, so nothing was recorded");
  });

  it('the benches to run are those the baseline has figures of', () => {
    expect(benchesOf(baseline)).toEqual(['cli', 'pass', 'jobs']);
  });
});

describe('the baseline file', () => {
  const text = (b: unknown) => JSON.stringify(b);

  it('a bad field is refused, naming it and why', () => {
    const bad = (metrics: unknown, extra: Record<string, unknown> = {}) => () => parseBaseline(text({ notes: 'n', recordedAt: 'now', metrics, ...extra }), 'b.json');
    expect(bad({ 'cli.status.ratio': { value: 2, tolerance: -0.1, better: 'lower' } })).toThrow('b.json: metrics.cli.status.ratio.tolerance: must be 0 or more');
    expect(bad({ 'cli.status.ratio': { value: 2, tolerance: 0.1, better: 'faster' } })).toThrow(/^b\.json: metrics\.cli\.status\.ratio\.better: /);
    expect(bad({ 'jobs.jobsPerSec': { value: 2, tolerance: 1, better: 'higher' } })).toThrow('b.json: metrics.jobs.jobsPerSec.tolerance: must be below 1 when higher is better');
    expect(bad({ cli: { value: 2, tolerance: 0.1, better: 'lower' } })).toThrow('a metric is BENCH.PATH.TO.FIGURE');
    expect(bad({}, { notes: '' })).toThrow('b.json: notes: must say where and how the baseline was recorded');
    expect(() => parseBaseline('{', 'b.json')).toThrow(/^b\.json: not JSON/);
  });

  it('the committed bench/baseline.json is valid and says the machine it was recorded on was loaded', () => {
    const file = join(REPO, 'bench', 'baseline.json');
    const b = parseBaseline(readFileSync(file, 'utf8'), file);
    expect(b.notes).toMatch(/loaded/);
    expect(Object.keys(b.metrics).length).toBeGreaterThan(0);
  });
});
