// The ps provider (macOS, the BSDs; any OS without /proc): one `ps -A` per table, so a poll of
// many jobs costs one process. Start times are `lstart` (whole seconds) read in UTC with the C
// locale, the same way the wrapper reads them (wrapper.ts). ps prints no session id on every OS,
// so membership of a job is its process group plus the leader's descendants (proc.ts).
import { execFileSync } from 'node:child_process';
import type { ProcStat, ProcessTable } from './proc.js';

/** The environment every ps call gets, the wrapper's included: start times must read alike. */
export const PS_ENV = { LC_ALL: 'C', TZ: 'UTC0' } as const;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `ps -o lstart=` under LC_ALL=C TZ=UTC0 ("Tue Dec  1 11:49:51 2026") → seconds since the epoch. */
export function lstartSeconds(text: string): number | null {
  const m = /^\s*\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})\s*$/.exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[1] as string);
  if (month < 0) return null;
  return Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) / 1000;
}

const LINE = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/;

function snapshot(): Map<number, ProcStat> {
  let out: string;
  try {
    out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='], {
      encoding: 'utf8',
      env: { PATH: `${process.env['PATH'] ?? ''}:/bin:/usr/bin`, ...PS_ENV },
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch {
    return new Map();
  }
  const table = new Map<number, ProcStat>();
  for (const line of out.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const startTime = lstartSeconds(m[5] as string);
    if (startTime === null) continue;
    const pid = Number(m[1]);
    table.set(pid, { pid, ppid: Number(m[2]), pgid: Number(m[3]), sid: null, state: (m[4] as string).charAt(0), startTime });
  }
  return table;
}

export function psTable(): ProcessTable {
  let procs: Map<number, ProcStat> | null = null;
  const get = () => (procs ??= snapshot());
  return {
    stat: (pid) => get().get(pid) ?? null,
    all: () => [...get().values()],
  };
}

let cachedBootId: string | null | undefined;

/** pid 1 starts with the machine: its start second names the boot (no /proc boot_id here). */
export function psBootId(): string | null {
  if (cachedBootId === undefined) {
    const init = psTable().stat(1);
    cachedBootId = init ? `ps-boot-${init.startTime}` : null;
  }
  return cachedBootId;
}
