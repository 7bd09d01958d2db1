// IANA time zones through Intl (no tz database of our own).

const validity = new Map<string, boolean>();

export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz === '') return false;
  let ok = validity.get(tz);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      ok = true;
    } catch {
      ok = false;
    }
    validity.set(tz, ok);
  }
  return ok;
}

export function machineTimeZone(): string {
  return process.env.TZ && isValidTimeZone(process.env.TZ)
    ? process.env.TZ
    : Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
