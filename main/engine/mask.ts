// Secret-looking values never reach an output (pages, manifests, logs, events) in clear.
//
// A NAME is secret when one of its word parts is a secret word. Names are split on anything that
// is not a letter or digit and at camelCase boundaries (`apiKey`, `APIKey`, `api-key`, `API_KEY`
// all give api + key). A part matches when it is one of
//   pass, passwd, password, passwords, passphrase, passcode, secret, secrets, token, key,
//   credential, credentials, creds
// or such a word glued to a common qualifier (apikey, accesstoken, clientsecret, dbpassword, …).
// Whole parts only: `keyboard`, `monkey`, `bypass`, `tokenizer`, `passes` are not secret. Plurals
// `keys`/`tokens` are left out on purpose (`--sort-keys`, `--max-tokens` take no secret).
//
// Arguments (maskArgs):
//   --name=value | -name=value | name=value, secret name   → --name=***
//   --name value | -name value, secret name                 → --name ***
//       (unless the next argument starts with `--`: then `--name` was a switch; and never after
//        a negated switch such as `--no-password`)
//   Name: value (an HTTP header argument), secret name or Authorization → Name: ***
//   anywhere: URL passwords (scheme://user:***@host) and secret-named query parameters (?token=***)
// Not covered: values glued to short options (`-pSECRET`), positional secrets. Pass those through
// the environment (maskEnv) or name them to maskText().

export const MASK = '***';

const SECRET_WORDS = new Set([
  'pass', 'passwd', 'password', 'passwords', 'passphrase', 'passcode',
  'secret', 'secrets', 'token', 'key', 'credential', 'credentials', 'creds',
]);

const QUALIFIERS = [
  'access', 'admin', 'api', 'app', 'auth', 'bearer', 'client', 'db', 'id', 'master', 'oauth',
  'private', 'refresh', 'root', 'secret', 'session', 'signing', 'ssh', 'user',
];

const NEGATED = /^no[-_]/i;

/** Word parts of a name, lower-cased: `--clientSecret` → ['client', 'secret']. */
export function nameParts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== '')
    .map((p) => p.toLowerCase());
}

function isSecretPart(part: string): boolean {
  if (SECRET_WORDS.has(part)) return true;
  for (const q of QUALIFIERS) if (part.length > q.length && part.startsWith(q) && SECRET_WORDS.has(part.slice(q.length))) return true;
  return false;
}

/** True when a flag, variable, header or parameter name looks like it holds a secret. */
export function isSecretName(name: string): boolean {
  return nameParts(name).some(isSecretPart);
}

const ASSIGN = /^(-{0,2})([A-Za-z_][A-Za-z0-9_.-]*)=([\s\S]*)$/;
const FLAG = /^(-{1,2})([A-Za-z][A-Za-z0-9_.-]*)$/;
const HEADER = /^([A-Za-z][A-Za-z0-9-]*)(\s*:\s*)(\S[\s\S]*)$/;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/[^:@/\s]*):([^/\s]+)@/gi;
const QUERY_PARAM = /([?&])([^=&#\s]+)=([^&#\s]*)/g;

function isSecretHeader(name: string): boolean {
  return /^(proxy-)?authorization$/i.test(name) || isSecretName(name);
}

/** Masks secrets embedded in a value: URL passwords and secret-named query parameters. */
function maskEmbedded(value: string, found: string[]): string {
  return value
    .replace(URL_USERINFO, (_m, head: string, pw: string) => {
      found.push(pw);
      return `${head}:${MASK}@`;
    })
    .replace(QUERY_PARAM, (m, sep: string, name: string, v: string) => {
      if (v === '' || !isSecretName(name)) return m;
      found.push(v);
      return `${sep}${name}=${MASK}`;
    });
}

function scanArgs(args: readonly string[], found: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = String(args[i]);
    const assign = ASSIGN.exec(arg);
    if (assign) {
      if (isSecretName(assign[2]!)) {
        found.push(assign[3]!);
        out.push(`${assign[1]}${assign[2]}=${MASK}`);
      } else {
        out.push(maskEmbedded(arg, found));
      }
      continue;
    }
    const flag = FLAG.exec(arg);
    if (flag && isSecretName(flag[2]!) && !NEGATED.test(flag[2]!) && i + 1 < args.length && !String(args[i + 1]).startsWith('--')) {
      found.push(String(args[i + 1]));
      out.push(arg, MASK);
      i++;
      continue;
    }
    const header = HEADER.exec(arg);
    if (header && isSecretHeader(header[1]!)) {
      found.push(header[3]!);
      out.push(`${header[1]}${header[2]}${MASK}`);
      continue;
    }
    out.push(maskEmbedded(arg, found));
  }
  return out;
}

/** A copy of `args` with every secret-looking value replaced by `***` (rules at the top). */
export function maskArgs(args: readonly string[]): string[] {
  return scanArgs(args, []);
}

/** A copy of `env` whose secret-named values are `***`; other values keep only embedded masking. */
export function maskEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) out[name] = isSecretName(name) ? MASK : maskEmbedded(String(value), []);
  return out;
}

const TRIVIAL = new Set(['true', 'false', 'yes', 'no', 'null', 'none', MASK]);

/**
 * The secret values maskArgs/maskEnv hide, for maskText() over logs. Values shorter than 4
 * characters and boolean-ish literals (true, false, yes, no, null, none) are left out: masking
 * every `1` or `true` in a log would destroy it without protecting anything.
 */
export function collectSecrets(args: readonly string[], env: Readonly<Record<string, string>> = {}): string[] {
  const found: string[] = [];
  scanArgs(args, found);
  for (const [name, value] of Object.entries(env)) {
    if (isSecretName(name)) found.push(String(value));
    else maskEmbedded(String(value), found);
  }
  return [...new Set(found)].filter((s) => s.length >= 4 && !TRIVIAL.has(s.toLowerCase()));
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Replaces every occurrence of each known secret value in free text with `***` (longest first,
 * so a secret containing another is masked whole). Empty secrets are ignored. */
export function maskText(text: string, secrets: readonly string[]): string {
  const list = [...new Set(secrets.filter((s) => typeof s === 'string' && s !== ''))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return text;
  return text.replace(new RegExp(list.map(escapeRegExp).join('|'), 'g'), MASK);
}

/** The secret values of a routine's (or job's) arguments and environment, for maskText(). */
export function secretsOf(def: { args: readonly string[]; env: Readonly<Record<string, string>> } | null | undefined): string[] {
  return def ? collectSecrets(def.args, def.env) : [];
}

const SECRET_LABEL = /^([A-Za-z][A-Za-z0-9_-]*):$/;
const AUTH_SCHEME = /^(bearer|basic|token|digest)$/i;

/**
 * Free text someone supplied (a reporter's message, a reason), masked by the argument rules word
 * by word (`password=hunter2`, `--token abc`, URLs), plus `Password: hunter2` and
 * `Authorization: Bearer abc` in prose, plus the given known secret values anywhere.
 */
export function maskFreeText(text: string, secrets: readonly string[] = []): string {
  const parts = text.split(/(\s+)/);
  const words = parts.filter((_, i) => i % 2 === 0);
  for (let i = 0; i + 1 < words.length; i++) {
    const label = SECRET_LABEL.exec(words[i]!);
    if (!label || !isSecretHeader(label[1]!)) continue;
    const at = AUTH_SCHEME.test(words[i + 1]!) && i + 2 < words.length ? i + 2 : i + 1;
    if (words[at] !== '') words[at] = MASK;
    i = at;
  }
  const masked = scanArgs(words, []);
  return maskText(parts.map((p, i) => (i % 2 === 0 ? masked[i / 2]! : p)).join(''), secrets);
}

const PROBE = 'tendMaskedValueProbe';

/**
 * Where a definition holds `***` in place of a secret (what export writes): `args.N` and
 * `env.NAME` paths. A `***` that masking would not have produced there (`--glob=***`) is a value.
 */
export function maskedSecretPaths(args: readonly string[], env: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  args.forEach((a, j) => {
    if (!a.includes(MASK)) return;
    const found: string[] = [];
    scanArgs(args.map((x, i) => (i === j ? x.split(MASK).join(PROBE) : x)), found);
    if (found.some((f) => f.includes(PROBE))) out.push(`args.${j}`);
  });
  for (const [name, value] of Object.entries(env)) {
    if (value.includes(MASK) && collectSecrets([], { [name]: value.split(MASK).join(PROBE) }).some((f) => f.includes(PROBE))) out.push(`env.${name}`);
  }
  return out;
}
