// The Prometheus text exposition format (version 0.0.4): families with HELP and TYPE, escaped
// label values, histograms as cumulative `_bucket{le}` series plus `_sum` and `_count`.

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Record<string, string>;

export interface Sample {
  labels?: Labels;
  value: number;
}

export interface HistogramSeries {
  labels?: Labels;
  /** Observations ≤ each bound of the family's buckets, cumulative, in bucket order. */
  cumulative: number[];
  sum: number;
  count: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export const escapeLabelValue = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function labelText(labels: Labels | undefined, extra?: [string, string]): string {
  const pairs = Object.entries(labels ?? {});
  if (extra) pairs.push(extra);
  if (pairs.length === 0) return '';
  for (const [k] of pairs) if (!LABEL.test(k)) throw new Error(`bad label name ${k}`);
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

export class Exposition {
  private readonly lines: string[] = [];
  private readonly names = new Set<string>();

  private header(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    if (this.names.has(name)) throw new Error(`metric ${name} written twice`);
    this.names.add(name);
    this.lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
  }

  counter(name: string, help: string, samples: Sample[]): this {
    this.header(name, 'counter', help);
    for (const s of samples) this.lines.push(`${name}${labelText(s.labels)} ${formatValue(s.value)}`);
    return this;
  }

  gauge(name: string, help: string, samples: Sample[]): this {
    this.header(name, 'gauge', help);
    for (const s of samples) this.lines.push(`${name}${labelText(s.labels)} ${formatValue(s.value)}`);
    return this;
  }

  histogram(name: string, help: string, bounds: readonly number[], series: HistogramSeries[]): this {
    this.header(name, 'histogram', help);
    for (const s of series) {
      bounds.forEach((b, i) => this.lines.push(`${name}_bucket${labelText(s.labels, ['le', formatValue(b)])} ${formatValue(s.cumulative[i] ?? 0)}`));
      this.lines.push(`${name}_bucket${labelText(s.labels, ['le', '+Inf'])} ${formatValue(s.count)}`);
      this.lines.push(`${name}_sum${labelText(s.labels)} ${formatValue(s.sum)}`);
      this.lines.push(`${name}_count${labelText(s.labels)} ${formatValue(s.count)}`);
    }
    return this;
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

/** An in-memory histogram (for what the store does not keep, such as pass durations). */
export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) if (v <= this.bounds[i]!) this.counts[i]!++;
  }

  series(labels?: Labels): HistogramSeries {
    return { labels, cumulative: [...this.counts], sum: this.sum, count: this.count };
  }
}
