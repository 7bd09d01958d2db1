// Schedules as YAML files a person keeps in git. Import validates the whole file first and
// changes nothing if any routine is invalid, reporting every error with its path. A file is the
// whole schedule: routines of that schedule missing from the file are removed.
import { isAbsolute, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { expandRoutineId, localComputer, parseRoutine, ROUTINE_ID, RoutineFields, ScheduleFileSchema, toInput, zodIssues } from '../domain/schema.js';
import type { RoutineDef, ScheduleMode } from '../domain/types.js';
import { invalid, notFound, TendError, type Issue } from '../errors.js';
import { maskedSecretPaths } from '../mask.js';
import type { Store } from '../store/store.js';
import { cancelQueuedRetries, dependencyIssues, initialTrigger } from './routines.js';
import { publicDef } from './views.js';

// The API's switch of a schedule's mode lives apart, so the daemon loads no YAML parser for it.
export { setScheduleMode } from './schedule-mode.js';

export interface ImportResult {
  schedule: string;
  created: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
}

interface ParsedSchedule {
  name: string;
  mode: ScheduleMode | undefined;
  maxParallel: number | undefined;
  defs: RoutineDef[];
  /** Path of each def in the file (`routines.3`, `documents.1.routines.0`), parallel to defs. */
  paths: string[];
}

/**
 * A file written by `schedule export` carries `***` where a secret was. Importing it back must not
 * overwrite the stored secret with the mask: an arg or env value that is exactly what masking the
 * stored value gives (and differs from it) keeps the stored value.
 */
function restoreMasked(def: RoutineDef, stored: RoutineDef | null): RoutineDef {
  if (!stored) return def;
  const shown = publicDef(stored);
  let args = def.args;
  if (def.args.length === stored.args.length) {
    args = def.args.map((a, i) => (a === shown.args[i] && a !== stored.args[i] ? stored.args[i]! : a));
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(def.env)) {
    const old = stored.env[k];
    env[k] = old !== undefined && v === shown.env[k] && v !== old ? old : v;
  }
  return { ...def, args, env };
}

/** `${env:NAME}` in an argument or an environment value: filled in at import from the importer's environment. */
const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Fill in environment references; a variable that is not set is an issue at the value's path. */
function resolveEnvRefs(def: RoutineDef, at: string, env: Readonly<Record<string, string | undefined>> | null, issues: Issue[]): RoutineDef {
  const fill = (value: string, path: string): string =>
    value.replace(ENV_REF, (ref, name: string) => {
      const v = env?.[name];
      if (v === undefined) {
        issues.push({ path, message: env ? `environment variable ${name} is not set (referenced as ${ref})` : `${ref}: environment references are filled in by \`tend schedule import\` on the command line` });
        return ref;
      }
      return v;
    });
  const args = def.args.map((a, i) => fill(a, `${at}.args.${i}`));
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(def.env)) vars[k] = fill(v, `${at}.env.${k}`);
  return { ...def, args, env: vars };
}

/**
 * A `***` left where a secret was (a file exported from another data dir, or edited) would be
 * stored as the secret itself: refused, each with its path and how to pass the real value.
 */
function maskedIssues(def: RoutineDef, at: string): Issue[] {
  return maskedSecretPaths(def.args, def.env).map((p) => {
    const value = p.startsWith('env.') ? def.env[p.slice(4)]! : def.args[Number(p.slice(5))]!;
    const example = value.split('***').join(p.startsWith('env.') ? `\${env:${p.slice(4)}}` : '${env:SECRET}');
    return {
      path: `${at}.${p}`,
      message: `holds a masked secret (***), as \`tend schedule export\` writes it: give the real value, in the file or as a reference to a variable set when you run \`tend schedule import\` (${JSON.stringify(example)})`,
    };
  });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface FileContext {
  /** The file's directory: relative `cwd`s are resolved against it, and it is the `cwd` of this host's routines that give none. */
  baseDir?: string;
  /** What `${env:NAME}` references are filled in from (the importing command's environment); absent: they are refused. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Paths in a file mean what they mean next to the file: a relative `cwd` is resolved against the
 * file's directory, and a routine of this host without one runs there (so `command: ./x.sh` is
 * the x.sh beside the file). A routine of another host keeps what it says: that host's paths.
 */
function placeCwd(r: Record<string, unknown>, fileComputer: string, here: string, baseDir: string | undefined): Record<string, unknown> {
  if (baseDir === undefined) return r;
  const id = typeof r.id === 'string' ? r.id : '';
  const computer = typeof r.computer === 'string' ? r.computer : ROUTINE_ID.test(id) ? id.slice(0, id.indexOf(':')) : fileComputer;
  if (computer !== here) return r;
  if (typeof r.cwd === 'string' && r.cwd !== '' && !isAbsolute(r.cwd)) return { ...r, cwd: resolve(baseDir, r.cwd) };
  if (r.cwd === undefined && r.external !== true) return { ...r, cwd: resolve(baseDir) };
  return r;
}

/**
 * Parse and validate every document of a schedule file. Throws INVALID listing every issue with
 * its path: a bad header does not hide bad routines, and a bad routine does not hide the
 * dependency problems of the others.
 */
export function parseScheduleFile(text: string, store: Store, now: number, fileCtx: FileContext = {}): ParsedSchedule[] {
  const here = localComputer();
  const env = fileCtx.env ?? null;
  const issues: Issue[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const docList = Array.isArray(docs) ? docs : [docs];
  if (docList.length === 0) throw invalid({ path: '', message: 'empty file: a schedule file has `schedule: NAME` and `routines: [...]`' });
  const out: ParsedSchedule[] = [];
  /** Ids of routines that did not validate: not "unknown" to the routines that depend on them. */
  const failedIds = new Map<string, string>();
  docList.forEach((doc, d) => {
    const prefix = docList.length > 1 ? `documents.${d}.` : '';
    const docPath = prefix ? [prefix.slice(0, -1)] : [];
    for (const e of doc.errors) issues.push({ path: prefix.replace(/\.$/, ''), message: `YAML: ${e.message.split('\n')[0]!.replace(/:$/, '')}` });
    if (doc.errors.length) return;
    const raw = doc.toJS({ maxAliasCount: 100 }) as unknown;
    const file = ScheduleFileSchema.safeParse(raw);
    if (!file.success) issues.push(...zodIssues(file.error, docPath));
    if (!isRecord(raw)) return;
    // A bad header still lets the routines be checked, under its name when that name is valid.
    const name = file.success ? file.data.schedule : ScheduleFileSchema.shape.schedule.safeParse(raw.schedule).success ? (raw.schedule as string) : null;
    const routines = Array.isArray(raw.routines) ? (raw.routines as unknown[]) : [];
    const fileComputer = file.success && file.data.computer ? file.data.computer : typeof raw.computer === 'string' ? raw.computer : here;
    const complete = (id: string) => expandRoutineId(id, fileComputer);
    const defs: RoutineDef[] = [];
    const paths: string[] = [];
    const seen = new Map<string, string>();
    routines.forEach((r, i) => {
      const at = `${prefix}routines.${i}`;
      if (isRecord(r)) {
        const given = r.schedule;
        if (given !== undefined && name !== null && given !== name) {
          issues.push({ path: `${at}.schedule`, message: `routine says schedule ${String(given)}, but the file is schedule ${name}` });
          if (typeof r.id === 'string') failedIds.set(complete(r.id), name);
          return;
        }
        if (name !== null) r = { ...r, schedule: name };
        r = placeCwd(r as Record<string, unknown>, fileComputer, here, fileCtx.baseDir);
      }
      try {
        const parsed = resolveEnvRefs(parseRoutine(r, { now, localComputer: fileComputer }, at.split('.')), at, env, issues);
        const stored = store.routines.get(parsed.id);
        // Unchanged `***` of a routine this data dir holds keep its stored secrets (a re-import).
        let def = restoreMasked(parsed, stored);
        issues.push(...maskedIssues(def, at));
        // `in:` is resolved once, at the first import, and kept: importing the same file again
        // must not move the time (and run the routine again).
        if (isRecord(r) && r.in !== undefined && stored?.timing?.mode === 'at' && def.timing?.mode === 'at') def = { ...def, timing: stored.timing };
        const first = seen.get(def.id);
        if (first !== undefined) {
          issues.push({ path: `${at}.id`, message: `duplicate routine id ${def.id} (also ${first})` });
          return;
        }
        seen.set(def.id, at);
        defs.push(def);
        paths.push(at);
      } catch (err) {
        if (!(err instanceof TendError)) throw err;
        issues.push(...err.issues);
        if (isRecord(r) && typeof r.id === 'string' && name !== null) failedIds.set(complete(r.id), name);
      }
    });
    if (file.success) out.push({ name: file.data.schedule, mode: file.data.mode, maxParallel: file.data.max_parallel, defs, paths });
    else if (name !== null) out.push({ name, mode: undefined, maxParallel: undefined, defs, paths });
  });
  // Dependencies are checked across the file as one (the file replaces its schedules), also when
  // other problems were found, so that every problem is reported at once.
  const incoming = out.flatMap((p) => p.defs);
  const incomingPaths = out.flatMap((p) => p.paths);
  const replaced = new Set(out.map((p) => p.name));
  const stored = store.routines.allDefs();
  const kept = stored.filter((d) => !replaced.has(d.schedule) && !incoming.some((x) => x.id === d.id));
  // Routines that failed validation stand in as dependency-free placeholders.
  const placeholders = [...failedIds]
    .filter(([id]) => !incoming.some((d) => d.id === id))
    .map(([id, schedule]): RoutineDef => ({ ...incoming[0]!, id, schedule, dependencies: [] }));
  const depIssues = incoming.length ? dependencyIssues([...kept, ...placeholders], incoming, (i) => incomingPaths[i] ?? '') : [];
  issues.push(...depIssues);
  for (const other of stored) {
    if (replaced.has(other.schedule)) continue;
    for (const dep of other.dependencies) {
      const gone = store.routines.get(dep);
      if (gone && replaced.has(gone.schedule) && !incoming.some((d) => d.id === dep) && !failedIds.has(dep)) {
        issues.push({ path: '', message: `${other.id} depends on ${dep}, which this file would remove` });
      }
    }
  }
  if (issues.length) throw invalid(issues);
  return out;
}

export function importSchedule(store: Store, text: string, now: number, fileCtx: FileContext = {}): ImportResult[] {
  const parsed = parseScheduleFile(text, store, now, fileCtx);
  return store.tx(() => parsed.map((p) => apply(store, p, now)));
}

function apply(store: Store, p: ParsedSchedule, now: number): ImportResult {
  const res: ImportResult = { schedule: p.name, created: [], updated: [], removed: [], unchanged: [] };
  store.routines.ensureSchedule(p.name, now);
  if (p.mode) store.routines.setScheduleMode(p.name, p.mode);
  store.routines.setScheduleMaxParallel(p.name, p.maxParallel ?? null);
  const keep = new Set(p.defs.map((d) => d.id));
  // Remove dependents before what they depend on.
  const stale = store.routines.allDefs().filter((d) => d.schedule === p.name && !keep.has(d.id));
  for (const d of stale) store.routines.remove(d.id);
  res.removed = stale.map((d) => d.id);
  for (const def of p.defs) {
    const existing = store.routines.get(def.id);
    if (existing && JSON.stringify(existing) === JSON.stringify(def)) {
      res.unchanged.push(def.id);
      continue;
    }
    store.routines.save(def, now);
    if (existing) cancelQueuedRetries(store, existing, def, now);
    const prev = store.routines.trigger(def.id);
    const timingChanged = !existing || JSON.stringify([existing.timing, existing.tz, existing.kind]) !== JSON.stringify([def.timing, def.tz, def.kind]);
    if (!prev || timingChanged) store.routines.saveTrigger(initialTrigger(def, now, prev), now);
    (existing ? res.updated : res.created).push(def.id);
  }
  store.events.append({ type: 'schedule:imported', message: `schedule ${p.name} imported: ${res.created.length} created, ${res.updated.length} updated, ${res.removed.length} removed`, data: { ...res } }, now);
  return res;
}

export function exportSchedule(store: Store, name?: string): string {
  const schedules = store.routines.schedules().filter((s) => !name || s.name === name);
  if (name && schedules.length === 0) throw notFound(`schedule ${name}`);
  const all = store.routines.allDefs();
  return schedules
    .map((s) => {
      const doc: Record<string, unknown> = { schedule: s.name };
      if (s.mode !== 'active') doc.mode = s.mode;
      if (s.maxParallel !== null) doc.max_parallel = s.maxParallel;
      doc.routines = all.filter((d) => d.schedule === s.name).map((d) => {
        // Secrets never leave the store in clear, not even into a file meant for git.
        const input = toInput(publicDef(d)) as Record<string, unknown>;
        delete input.schedule;
        return input;
      });
      // Quote what YAML 1.1 tools would misread (07:00 as a number, yes as a boolean).
      return stringify(doc, { lineWidth: 0, version: '1.1' });
    })
    .join('---\n');
}

/** The published JSON Schema of schedule files (schemas/schedule.schema.json). */
export function scheduleJsonSchema(): unknown {
  const file = ScheduleFileSchema.extend({ routines: z.array(RoutineFields).max(100_000).describe(ScheduleFileSchema.shape.routines.description ?? '') });
  const schema = z.toJSONSchema(file, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return {
    $schema,
    $id: 'https://tend.dev/schemas/schedule.schema.json',
    title: 'Tend schedule file',
    description: 'A schedule: a named list of routines, kept as YAML in git and loaded with `tend schedule import FILE`. Durations: 500ms, 30s, 5m, 2h, 1d, 1h30m (a bare number is milliseconds).',
    ...rest,
  };
}
