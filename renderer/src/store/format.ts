// Times and durations for people. Pure (the reference time is always passed in).

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** "in 4m", "3m ago", "now". */
export function relative(iso: string | number | null | undefined, now: number): string {
  if (iso === null || iso === undefined) return '—';
  const t = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(t)) return '—';
  const d = t - now;
  const a = Math.abs(d);
  if (a < 1500) return 'now';
  const mins = Math.round(a / 60_000);
  const text = a < 60_000 ? `${Math.round(a / 1000)}s` : mins < 60 ? `${mins}m` : mins < 48 * 60 ? `${Math.floor(mins / 60)}h ${mins % 60}m` : `${Math.round(a / 86_400_000)}d`;
  return d > 0 ? `in ${text}` : `${text} ago`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Local wall clock: "14:05:09", with the date when it is not today. */
export function clock(iso: string | number | null | undefined, now: number, seconds = true): string {
  if (iso === null || iso === undefined) return '—';
  const d = new Date(iso);
  if (!Number.isFinite(d.getTime())) return '—';
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
  const n = new Date(now);
  if (d.getFullYear() === n.getFullYear() && d.getMonth() === n.getMonth() && d.getDate() === n.getDate()) return time;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** Full local date-time for titles and tooltips. */
export function stamp(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const d = new Date(iso);
  if (!Number.isFinite(d.getTime())) return '—';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The path part of a routine id: `me@host:reports/daily` → `reports/daily`. */
export function routinePath(id: string): string {
  const i = id.indexOf(':');
  return i >= 0 ? id.slice(i + 1) : id;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v % 1 === 0 ? v : v.toFixed(1)} ${units[u]}`;
}
