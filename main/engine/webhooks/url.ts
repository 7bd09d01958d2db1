// Receiver URLs often carry their secret in the path or the query (Slack, Discord, Teams): shown
// anywhere but the CLI's own `webhook list --show-urls`, a URL keeps its origin and first path
// segment only.

/** `https://hooks.slack.com/services/T0/B0/XYZ?x=1` → `https://hooks.slack.com/services/…`. */
export function redactUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '(invalid url)';
  }
  const segments = u.pathname.split('/').filter(Boolean);
  let out = `${u.protocol}//${u.host}`;
  if (segments.length > 0) out += `/${segments[0]}`;
  if (segments.length > 1) out += '/…';
  else if (u.search || u.hash) out += segments.length ? '?…' : '/?…';
  return out;
}

/** http(s) only, no spaces, a host: what `webhook add` accepts. */
export function urlProblem(raw: string): string | null {
  if (raw.length > 2048) return 'at most 2048 characters';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `only http and https receivers are supported, not ${u.protocol.replace(/:$/, '')}`;
  if (!u.hostname) return 'has no host';
  return null;
}
