// Schedules as YAML files a person keeps in git. Import validates the whole file first and
// changes nothing if any routine is invalid, reporting every error with its path. A file is the
// whole schedule: routines of that schedule missing from the file are removed.
import { parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { parseRoutine, RoutineFields, ScheduleFileSchema, toInput, zodIssues } from '../domain/schema.js';
import type { RoutineDef, ScheduleMode } from '../domain/types.js';
import { invalid, notFound, TendError, type Issue } from '../errors.js';
import type { Store } from '../store/store.js';
import { dependencyIssues, initialTrigger } from './routines.js';
import { publicDef } from './views.js';

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
  prefix: string;
}

/** Parse and validate every document of a schedule file. Throws INVALID with all issues. */
export function parseScheduleFile(text: string, store: Store, now: number): ParsedSchedule[] {
  const issues: Issue[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const docList = Array.isArray(docs) ? docs : [docs];
  const out: ParsedSchedule[] = [];
  docList.forEach((doc, d) => {
    const prefix = docList.length > 1 ? `documents.${d}.` : '';
    for (const e of doc.errors) issues.push({ path: prefix.replace(/\.$/, ''), message: `YAML: ${e.message.split('\n')[0]}` });
    if (doc.errors.length) return;
    const raw = doc.toJS({ maxAliasCount: 100 }) as unknown;
    const file = ScheduleFileSchema.safeParse(raw);
    if (!file.success) {
      issues.push(...zodIssues(file.error, prefix ? [prefix.slice(0, -1)] : []));
      return;
    }
    const defs: RoutineDef[] = [];
    file.data.routines.forEach((r, i) => {
      const at = `${prefix}routines.${i}`;
      if (r && typeof r === 'object' && !Array.isArray(r)) {
        const given = (r as Record<string, unknown>).schedule;
        if (given !== undefined && given !== file.data.schedule) {
          issues.push({ path: `${at}.schedule`, message: `routine says schedule ${String(given)}, but the file is schedule ${file.data.schedule}` });
          return;
        }
        r = { ...(r as Record<string, unknown>), schedule: file.data.schedule };
      }
      try {
        defs.push(parseRoutine(r, { now }, at.split('.')));
      } catch (err) {
        if (err instanceof TendError) issues.push(...err.issues);
        else throw err;
      }
    });
    const seen = new Map<string, number>();
    defs.forEach((def, i) => {
      if (seen.has(def.id)) issues.push({ path: `${prefix}routines.${i}.id`, message: `duplicate routine id ${def.id} (also routines.${seen.get(def.id)})` });
      seen.set(def.id, i);
    });
    out.push({ name: file.data.schedule, mode: file.data.mode, maxParallel: file.data.max_parallel, defs, prefix });
  });
  if (issues.length === 0) {
    // Dependencies are checked across the file as one (the file replaces its schedule).
    const incoming = out.flatMap((p) => p.defs);
    const replaced = new Set(out.map((p) => p.name));
    const kept = store.routines.allDefs().filter((d) => !replaced.has(d.schedule));
    const offsets = out.flatMap((p) => p.defs.map((_, i) => `${p.prefix}routines.${i}`));
    issues.push(...dependencyIssues(kept, incoming, (i) => offsets[i] ?? ''));
    for (const other of store.routines.allDefs()) {
      if (replaced.has(other.schedule)) continue;
      for (const dep of other.dependencies) {
        const gone = store.routines.get(dep);
        if (gone && replaced.has(gone.schedule) && !incoming.some((d) => d.id === dep)) {
          issues.push({ path: '', message: `${other.id} depends on ${dep}, which this file would remove` });
        }
      }
    }
  }
  if (issues.length) throw invalid(issues);
  return out;
}

export function importSchedule(store: Store, text: string, now: number): ImportResult[] {
  const parsed = parseScheduleFile(text, store, now);
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
      return stringify(doc, { lineWidth: 0 });
    })
    .join('---\n');
}

/** The published JSON Schema of schedule files (schemas/schedule.schema.json). */
export function scheduleJsonSchema(): unknown {
  const file = ScheduleFileSchema.extend({ routines: z.array(RoutineFields.extend({ schedule: RoutineFields.shape.schedule })) });
  const schema = z.toJSONSchema(file, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://tend.dev/schemas/schedule.schema.json',
    title: 'Tend schedule file',
    description: 'A schedule: a named list of routines, kept as YAML in git and loaded with `tend schedule import FILE`.',
  };
}

export function setScheduleMode(store: Store, name: string, mode: ScheduleMode, now: number): void {
  if (!store.routines.schedule(name)) throw notFound(`schedule ${name}`);
  store.tx(() => {
    store.routines.setScheduleMode(name, mode);
    store.events.append({ type: mode === 'observe' ? 'schedule:observe' : 'schedule:active', message: `schedule ${name} is ${mode === 'observe' ? 'observe-only: status tracked, no commands sent' : 'active'}` }, now);
  });
}
