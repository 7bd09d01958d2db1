// `npm run bench -- --check`: a run's figures against the committed baseline (bench/baseline.json).
// Each metric names a figure of one bench's result by its path (`cli.status.ratio` is the
// `status.ratio` of the result named `cli`), the baseline value, which way is better, and how much
// worse than the baseline (a fraction of it) still passes: figures of a loaded machine are noisy.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const Metric = z.strictObject({
  value: z.number().refine(Number.isFinite, 'must be a finite number'),
  /** How much worse than `value` still passes, as a fraction of it (0.5: half as bad again). */
  tolerance: z.number().min(0, 'must be 0 or more'),
  better: z.enum(['lower', 'higher']),
});

const BaselineFile = z.strictObject({
  /** Where and how it was recorded (the machine, its load): what the figures are worth. */
  notes: z.string().min(1, 'must say where and how the baseline was recorded'),
  recordedAt: z.string(),
  metrics: z.record(z.string(), Metric),
});

export type MetricBaseline = z.infer<typeof Metric>;
export type Baseline = z.infer<typeof BaselineFile>;

/** The baseline in `text` (from `file`), or an error naming the field at fault and why. */
export function parseBaseline(text: string, file: string): Baseline {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  const parsed = BaselineFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${file}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  for (const [name, m] of Object.entries(parsed.data.metrics)) {
    if (!/^[\w-]+(\.[\w-]+)+$/.test(name)) throw new Error(`${file}: metrics.${name}: a metric is BENCH.PATH.TO.FIGURE (the bench's name, then the path to a number in its result)`);
    if (m.better === 'higher' && m.tolerance >= 1) throw new Error(`${file}: metrics.${name}.tolerance: must be below 1 when higher is better (1 would pass a zero)`);
  }
  return parsed.data;
}

export function readBaseline(file: string): Baseline {
  return parseBaseline(readFileSync(file, 'utf8'), file);
}

/** The benches a baseline has figures of (what `--check` runs when no bench is named). */
export function benchesOf(baseline: Baseline): string[] {
  return [...new Set(Object.keys(baseline.metrics).map((m) => m.split('.')[0]!))];
}

/** The number at `metric` (BENCH.PATH…) in a run's results, or null when there is none. */
export function figure(results: readonly unknown[], metric: string): number | null {
  const [bench, ...path] = metric.split('.');
  let at: unknown = results.find((r) => typeof r === 'object' && r !== null && (r as { name?: unknown }).name === bench);
  for (const key of path) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return typeof at === 'number' && Number.isFinite(at) ? at : null;
}

export interface Finding {
  metric: string;
  /** This run's figure; null when the run has none. */
  value: number | null;
  baseline: number;
  tolerance: number;
  better: 'lower' | 'higher';
  /** The worst figure that still passes. */
  limit: number;
  ok: boolean;
  message: string;
}

const fmt = (x: number) => String(Math.round(x * 1000) / 1000);

/**
 * Every baseline metric of the benches that ran (`ran`: their names), checked against the run's
 * results. A metric of a bench that ran but whose figure is missing fails, named.
 */
export function checkResults(results: readonly unknown[], baseline: Baseline, ran: ReadonlySet<string>): Finding[] {
  const out: Finding[] = [];
  for (const [metric, m] of Object.entries(baseline.metrics)) {
    if (!ran.has(metric.split('.')[0]!)) continue;
    const value = figure(results, metric);
    const limit = m.better === 'lower' ? m.value * (1 + m.tolerance) : m.value * (1 - m.tolerance);
    const base = `baseline ${fmt(m.value)}, tolerance ${fmt(m.tolerance * 100)}% (${m.better} is better, limit ${fmt(limit)})`;
    if (value === null) {
      out.push({ metric, value, baseline: m.value, tolerance: m.tolerance, better: m.better, limit, ok: false, message: `${metric}: missing from this run's results (${base})` });
      continue;
    }
    const ok = m.better === 'lower' ? value <= limit : value >= limit;
    const message = `${metric} = ${fmt(value)}: ${ok ? 'within' : 'regressed beyond'} its ${base}`;
    out.push({ metric, value, baseline: m.value, tolerance: m.tolerance, better: m.better, limit, ok, message });
  }
  return out;
}

/**
 * The baseline with this run's figures as its values (`npm run bench -- --record`): the metrics,
 * tolerances and notes are kept (say in the notes what the machine was doing); a metric the run
 * has no figure of is named and nothing is recorded.
 */
export function recorded(baseline: Baseline, results: readonly unknown[], ran: ReadonlySet<string>, at: string): Baseline {
  const metrics: Baseline['metrics'] = {};
  for (const [metric, m] of Object.entries(baseline.metrics)) {
    const value = ran.has(metric.split('.')[0]!) ? figure(results, metric) : m.value;
    if (value === null) throw new Error(`${metric}: missing from this run's results, so nothing was recorded`);
    metrics[metric] = { ...m, value };
  }
  return { ...baseline, recordedAt: at, metrics };
}
