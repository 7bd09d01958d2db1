// The published JSON Schema of schedule files, and the example schedule, stay true to the code.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { scheduleJsonSchema, parseScheduleFile } from '../../../main/engine/ops/schedules.js';
import { Store } from '../../../main/engine/store/store.js';

const REPO = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const SCHEMA_FILE = join(REPO, 'schemas', 'schedule.schema.json');
const EXAMPLE = join(REPO, 'examples', 'daily-reports.yaml');

interface ObjectSchema {
  properties: Record<string, { description?: string }>;
  required?: string[];
  additionalProperties?: boolean;
}

describe('schemas/schedule.schema.json', () => {
  it('is exactly what scheduleJsonSchema() generates (regenerate: npm run build && node scripts/gen-schema.mjs)', () => {
    const generated = `${JSON.stringify(scheduleJsonSchema(), null, 2)}\n`;
    expect(readFileSync(SCHEMA_FILE, 'utf8'), 'schemas/schedule.schema.json is stale: run `npm run build && node scripts/gen-schema.mjs`').toBe(generated);
  });

  it('is a draft 2020-12 schema with an $id, closed objects and a description on every field', () => {
    const s = scheduleJsonSchema() as ObjectSchema & { $schema: string; $id: string; properties: { routines: { items: ObjectSchema } } };
    expect(s.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(s.$id).toMatch(/schedule\.schema\.json$/);
    expect(s.additionalProperties).toBe(false);
    expect(s.required).toEqual(['schedule', 'routines']);
    const routine = s.properties.routines.items;
    expect(routine.additionalProperties).toBe(false);
    expect(routine.required).toEqual(['id']);
    const fields: [string, { description?: string }][] = [...Object.entries(s.properties as Record<string, { description?: string }>), ...Object.entries(routine.properties)];
    for (const [name, field] of fields) {
      expect(field.description, `${name} has no description`).toBeTruthy();
    }
  });
});

describe('examples/daily-reports.yaml', () => {
  const text = readFileSync(EXAMPLE, 'utf8');

  it('uses only fields the schema declares', () => {
    const s = scheduleJsonSchema() as ObjectSchema & { properties: { routines: { items: ObjectSchema } } };
    const doc = parse(text) as Record<string, unknown> & { routines: Record<string, unknown>[] };
    for (const k of Object.keys(doc)) expect(s.properties, k).toHaveProperty(k);
    for (const r of doc.routines) for (const k of Object.keys(r)) expect(s.properties.routines.items.properties, k).toHaveProperty(k);
  });

  it('parses cleanly: a 07:00 download, a parser after it, a report after that, a realtime collector with a heartbeat', () => {
    const store = Store.open(':memory:');
    try {
      const [schedule, ...more] = parseScheduleFile(text, store, Date.UTC(2026, 0, 5, 12));
      expect(more).toEqual([]);
      expect(schedule!.name).toBe('daily-reports');
      const byId = new Map(schedule!.defs.map((d) => [d.id.split(':')[1], d]));
      expect(byId.get('reports/download')).toMatchObject({ kind: 'batch', timing: { mode: 'runtimes', runtimes: ['07:00'] }, dependencies: [] });
      expect(byId.get('reports/parse')!.dependencies).toEqual([byId.get('reports/download')!.id]);
      expect(byId.get('reports/report')!.dependencies).toEqual([byId.get('reports/parse')!.id]);
      expect(byId.get('collectors/quotes')).toMatchObject({ kind: 'realtime', timing: null });
      expect(byId.get('collectors/quotes')!.heartbeatMs).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });
});
