// The routine editor's model: a flat form of strings ↔ the routine input the shared schema
// validates. The server decides what is valid; the form only maps its issue paths to fields.
import type { Issue, RoutineDef } from '../../../contract/calls.js';

export const TIMING_MODES = ['runtimes', 'cron', 'every', 'at', 'in'] as const;
export type TimingMode = (typeof TIMING_MODES)[number];

export const TIMING_HELP: Record<TimingMode, { label: string; placeholder: string; hint: string }> = {
  runtimes: { label: 'Daily at', placeholder: '07:00, 19:30', hint: 'Start times HH:MM in the time zone, comma separated.' },
  cron: { label: 'Cron', placeholder: '*/15 * * * 1-5', hint: 'Five fields: minute hour day-of-month month day-of-week.' },
  every: { label: 'Every', placeholder: '30m', hint: 'Interval counted from the end of the previous run, e.g. 30m, 1h30m.' },
  at: { label: 'Once at', placeholder: '2026-12-01T09:00', hint: 'ISO 8601; without an offset it is in the time zone.' },
  in: { label: 'Once in', placeholder: '2h', hint: 'This long after saving.' },
};

export interface EditorForm {
  id: string;
  name: string;
  schedule: string;
  computer: string;
  kind: 'batch' | 'realtime';
  external: boolean;
  command: string;
  /** One argument per line. */
  args: string;
  cwd: string;
  /** KEY=VALUE per line. */
  env: string;
  mode: TimingMode;
  timing: Record<TimingMode, string>;
  tz: string;
  /** Routine ids, comma or newline separated. */
  after: string;
  retry: 'default' | 'none' | 'custom';
  retryEvery: string;
  retryFor: string;
  misfire: '' | 'skip' | 'once' | 'all';
  overlap: '' | 'skip' | 'queue-one' | 'allow';
  timeout: string;
  heartbeat: string;
  grace: string;
  tolerance: string;
  logCap: string;
  revision: string;
}

export type FieldName = keyof EditorForm | 'timing' | 'form';

export function emptyForm(tz: string): EditorForm {
  return {
    id: '',
    name: '',
    schedule: '',
    computer: '',
    kind: 'batch',
    external: false,
    command: '',
    args: '',
    cwd: '',
    env: '',
    mode: 'cron',
    timing: { runtimes: '', cron: '', every: '', at: '', in: '' },
    tz,
    after: '',
    retry: 'default',
    retryEvery: '',
    retryFor: '',
    misfire: '',
    overlap: '',
    timeout: '',
    heartbeat: '',
    grace: '',
    tolerance: '',
    logCap: '',
    revision: '',
  };
}

/** ms → "1h30m", the shape the duration parser reads back. */
export function formatMs(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest) parts.push(`${rest}ms`);
  return parts.join('');
}

const DEFAULT_GRACE = 45_000;
const DEFAULT_TOLERANCE = 5 * 60_000;
const DEFAULT_LOG_CAP = 64 * 1024 * 1024;

export function formFromDef(def: RoutineDef): EditorForm {
  const f = emptyForm(def.tz);
  const path = def.id.slice(def.id.indexOf(':') + 1);
  const computer = def.id.slice(0, def.id.indexOf(':'));
  f.id = def.id;
  f.name = def.name === path ? '' : def.name;
  f.schedule = def.schedule === 'default' ? '' : def.schedule;
  f.computer = def.computer === computer ? '' : def.computer;
  f.kind = def.kind;
  f.external = def.external;
  f.command = def.command;
  f.args = def.args.join('\n');
  f.cwd = def.cwd ?? '';
  f.env = Object.entries(def.env).map(([k, v]) => `${k}=${v}`).join('\n');
  const t = def.timing;
  if (t) {
    f.mode = t.mode;
    f.timing[t.mode] = t.mode === 'runtimes' ? t.runtimes.join(', ') : t.mode === 'cron' ? t.cron : t.mode === 'every' ? formatMs(t.everyMs) : t.at;
  }
  f.after = def.dependencies.join(', ');
  const oneShot = t?.mode === 'at';
  const dflt = oneShot ? { delayMs: 60_000, windowMs: 3_600_000 } : { delayMs: 0, windowMs: 0 };
  if (def.retry.delayMs !== dflt.delayMs || def.retry.windowMs !== dflt.windowMs) {
    if (def.retry.delayMs === 0) f.retry = 'none';
    else {
      f.retry = 'custom';
      f.retryEvery = formatMs(def.retry.delayMs);
      f.retryFor = formatMs(def.retry.windowMs);
    }
  }
  f.misfire = def.misfire === 'once' ? '' : def.misfire;
  f.overlap = def.overlap === 'skip' ? '' : def.overlap;
  f.timeout = def.timeoutMs !== null ? formatMs(def.timeoutMs) : '';
  f.heartbeat = def.heartbeatMs !== null ? formatMs(def.heartbeatMs) : '';
  f.grace = def.graceMs !== DEFAULT_GRACE ? formatMs(def.graceMs) : '';
  f.tolerance = def.toleranceMs !== DEFAULT_TOLERANCE ? formatMs(def.toleranceMs) : '';
  f.logCap = def.logCapBytes !== DEFAULT_LOG_CAP ? String(def.logCapBytes) : '';
  f.revision = def.revision ?? '';
  return f;
}

const list = (s: string) => s.split(/[,\n]/).map((x) => x.trim()).filter(Boolean);

/** The routine input a form describes, plus what the form itself can tell is wrong. */
export function inputFromForm(f: EditorForm): { input: Record<string, unknown>; issues: Issue[] } {
  const issues: Issue[] = [];
  const input: Record<string, unknown> = { id: f.id.trim() };
  const opt = (k: string, v: string) => {
    if (v.trim() !== '') input[k] = v.trim();
  };
  opt('name', f.name);
  opt('schedule', f.schedule);
  opt('computer', f.computer);
  if (f.kind === 'realtime') input.realtime = true;
  if (f.external) input.external = true;
  opt('command', f.command);
  const args = f.args.split('\n').filter((a) => a.trim() !== '');
  if (args.length) input.args = args.map((a) => a.trim());
  opt('cwd', f.cwd);
  const env: Record<string, string> = {};
  f.env.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const eq = line.indexOf('=');
    if (eq <= 0) issues.push({ path: 'env', message: `line ${i + 1}: expected KEY=VALUE` });
    else env[line.slice(0, eq).trim()] = line.slice(eq + 1);
  });
  if (Object.keys(env).length) input.env = env;
  if (f.kind === 'batch') {
    const v = f.timing[f.mode].trim();
    if (v !== '') input[f.mode] = f.mode === 'runtimes' ? list(v) : v;
  }
  opt('tz', f.tz);
  const after = list(f.after);
  if (after.length) input.after = after;
  if (f.retry === 'none') input.retry = 'none';
  else if (f.retry === 'custom') input.retry = { every: f.retryEvery.trim(), for: f.retryFor.trim() };
  if (f.misfire) input.misfire = f.misfire;
  if (f.overlap) input.overlap = f.overlap;
  opt('timeout', f.timeout);
  if (f.kind === 'realtime') {
    opt('heartbeat', f.heartbeat);
    opt('grace', f.grace);
  } else opt('tolerance', f.tolerance);
  if (f.logCap.trim()) input.log_cap = /^\d+$/.test(f.logCap.trim()) ? Number(f.logCap.trim()) : f.logCap.trim();
  opt('revision', f.revision);
  return { input, issues };
}

const MASKED = /\*\*\*/;

/**
 * Edit mode: only the fields that changed (secrets come back masked, so unchanged args and env
 * must not be sent). A changed field that still holds a mask is refused: it would store `***`.
 */
export function changesFrom(initial: EditorForm, f: EditorForm): { changes: Record<string, unknown>; issues: Issue[] } {
  const a = inputFromForm(initial).input;
  const { input: b, issues } = inputFromForm(f);
  const changes: Record<string, unknown> = {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (k === 'id') continue;
    if (JSON.stringify(a[k]) === JSON.stringify(b[k])) continue;
    if (b[k] === undefined) {
      // Switching realtime off must be said explicitly; other cleared fields are not sent.
      if (k === 'realtime') changes.realtime = false;
      if (k === 'external') changes.external = false;
      continue;
    }
    changes[k] = b[k];
  }
  for (const k of ['args', 'env'] as const) {
    if (k in changes && MASKED.test(JSON.stringify(changes[k]))) {
      issues.push({ path: k, message: 'still holds a masked secret (***): type the real value, or undo the change to keep the stored one' });
    }
  }
  return { changes, issues };
}

/** Which form field an issue path from the server belongs to. */
export function fieldOf(path: string): FieldName {
  const head = path.split('.')[0] ?? '';
  if (head === '') return 'form';
  if ((TIMING_MODES as readonly string[]).includes(head)) return 'timing';
  if (head === 'realtime') return 'kind';
  if (head === 'log_cap') return 'logCap';
  if (head === 'retry') return 'retry';
  const fields: readonly string[] = ['id', 'name', 'schedule', 'computer', 'external', 'command', 'args', 'cwd', 'env', 'tz', 'after', 'misfire', 'overlap', 'timeout', 'heartbeat', 'grace', 'tolerance', 'revision'];
  return fields.includes(head) ? (head as FieldName) : 'form';
}

export function issuesByField(issues: readonly Issue[]): Partial<Record<FieldName, string>> {
  const out: Partial<Record<FieldName, string>> = {};
  for (const i of issues) {
    const f = fieldOf(i.path);
    const sub = i.path.includes('.') && f !== 'timing' ? `${i.path}: ` : '';
    out[f] = out[f] ? `${out[f]}; ${sub}${i.message}` : `${sub}${i.message}`;
  }
  return out;
}

/** The timing part of a form, for `timing.preview`; null when there is nothing to preview. */
export function timingOf(f: EditorForm): Record<string, unknown> | null {
  if (f.kind !== 'batch') return null;
  const v = f.timing[f.mode].trim();
  if (!v) return null;
  const t: Record<string, unknown> = { [f.mode]: f.mode === 'runtimes' ? list(v) : v };
  if (f.tz.trim()) t.tz = f.tz.trim();
  return t;
}
