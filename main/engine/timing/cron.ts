// Five-field cron expressions: minute hour day-of-month month day-of-week, local to the routine's
// zone. Fields take `*`, values, ranges, steps (`*/15`, `1-23/3`, `5/15`) and comma lists; months
// and weekdays also take three-letter names; Sunday is 0 or 7. When day-of-month and day-of-week
// are both restricted (neither is `*`), a day matching either fires.
//
// Our own checker reads the fields, so every rejection names its field and says why; cron-parser
// must agree the expression is valid. We do not use cron-parser's
// iterator, because of what it does around DST (5.10.6): it moves a skipped fixed time by the
// gap's length (02:30 → 03:30) instead of to the end of the gap (03:00); it fires a stepped hour
// (`1-23/3`) or a minute wildcard with a fixed hour (`*/15 1 * * *`) only in the first pass of a
// repeated hour; it misses sub-hour folds (Lord Howe); and it runs `*/15 2 * * *` every 15 minutes
// of the hour after a gap. calendar.ts does the search instead.

import { createRequire } from 'node:module';
import type { CronExpressionParser as Parser } from 'cron-parser';
import type { CalendarSpec } from './calendar.js';
import { TimingError } from './errors.js';
import { Memo } from './memo.js';

// Loaded (synchronously) on the first expression validated, not with the module: cron-parser and
// the luxon it brings are megabytes a daemon need not hold, and a CommonJS package imported as an
// ES module is lexed for its exports on every CLI start. Only validation asks it: an expression
// is stored once validated, so working out a stored routine's next run (as a daemon does each
// time a cron routine fires) reads the fields with our checker alone.
let parser: typeof Parser | null = null;
function cronParser(): typeof Parser {
  parser ??= (createRequire(import.meta.url)('cron-parser') as { CronExpressionParser: typeof Parser }).CronExpressionParser;
  return parser;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['', 'jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { name: 'day-of-week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

const FIELD_LIST = 'minute hour day-of-month month day-of-week';
/** Longest possible length of each month (February counts its leap day). */
const MONTH_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export interface CompiledCron extends CalendarSpec {
  readonly expression: string;
  /** The five fields, one space apart. */
  readonly fields: string;
}

const compiled = new Memo<string, CompiledCron | string>(10_000);
/** cron-parser's verdict on an expression our checker accepts (null: it agrees), by its five fields. */
const verdicts = new Memo<string, string | null>(10_000);

/** null when the expression is a valid 5-field cron expression (our checker and cron-parser agree), else the reason. */
export function validateCron(expr: string): string | null {
  const c = lookup(expr);
  return typeof c === 'string' ? c : verdicts.get(c.fields, cronParserVerdict);
}

// cron-parser must agree: a second reading of the same five fields.
function cronParserVerdict(fields: string): string | null {
  try {
    cronParser().parse(fields);
    return null;
  } catch (err) {
    return `rejected by cron-parser: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** The compiled expression (cached) of one our checker accepts; throws TimingError with the reason. */
export function compileCron(expr: string): CompiledCron {
  const c = lookup(expr);
  if (typeof c === 'string') throw new TimingError(c);
  return c;
}

function lookup(expr: string): CompiledCron | string {
  if (typeof expr !== 'string') return `expected a string, got ${typeof expr}`;
  return compiled.get(expr, compile);
}

function compile(expr: string): CompiledCron | string {
  const text = expr.trim();
  if (text === '') return `is empty (expected 5 fields: ${FIELD_LIST})`;
  if (text.startsWith('@')) {
    return `macros such as ${text.split(/\s/)[0]} are not supported; write the 5 fields (e.g. 0 0 * * * for @daily)`;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5) return `expected 5 fields, got ${parts.length} (${FIELD_LIST})`;

  const problems: string[] = [];
  const sets: boolean[][] = [];
  FIELDS.forEach((field, i) => {
    const r = checkField(field, parts[i]!);
    if (typeof r === 'string') problems.push(r);
    else sets.push(r);
  });
  if (problems.length > 0) return problems.join('; ');
  const [, , domSet, monthSet] = sets as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  const domStar = parts[2] === '*';
  const dowStar = parts[4] === '*';
  if (!domStar && dowStar) {
    let possible = false;
    for (let m = 1; m <= 12 && !possible; m++) {
      if (!monthSet[m]) continue;
      for (let d = 1; d <= MONTH_DAYS[m]!; d++) if (domSet[d]) possible = true;
    }
    if (!possible) return `never fires: day-of-month "${parts[2]}" does not occur in month "${parts[3]}"`;
  }

  const [minuteSet, hourSet, , , dowSet] = sets as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  // The sets are sparse (only allowed values are present) and flatMap skips holes: ascending times.
  const times = hourSet.flatMap((_, h) => minuteSet.flatMap((__, m) => [h * 60 + m]));
  return {
    expression: text,
    fields: parts.join(' '),
    times,
    months: monthSet,
    daysOfMonth: domStar ? null : domSet,
    // Sunday is 0 or 7.
    daysOfWeek: dowStar ? null : ([dowSet[0] || dowSet[7], ...dowSet.slice(1, 7)] as boolean[]),
    wildcard: /[*/]/.test(parts[0]!) || /[*/]/.test(parts[1]!),
  };
}

/** The field's allowed values (index = value, present only when allowed), or the reason it is invalid. */
function checkField(field: FieldSpec, text: string): boolean[] | string {
  const { name, min, max } = field;
  const set: boolean[] = [];
  for (const item of text.split(',')) {
    if (item === '') return `${name}: empty item in list "${text}"`;
    const slash = item.split('/');
    if (slash.length > 2) return `${name}: "${item}" has more than one "/"`;
    const [range, stepText] = slash as [string, string | undefined];
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) {
        return `${name}: step "${stepText}" in "${item}" must be a whole number of at least 1`;
      }
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = min;
      hi = max;
    } else {
      const bounds = range.split('-');
      if (bounds.length > 2 || bounds.some((b) => b === '')) return `${name}: "${item}" is not a value, a range or a step`;
      const values: number[] = [];
      for (const b of bounds) {
        const v = value(field, b);
        if (typeof v === 'string') return v;
        values.push(v);
      }
      lo = values[0]!;
      hi = values.length === 2 ? values[1]! : stepText !== undefined ? max : lo;
      if (lo > hi) return `${name}: range "${range}" runs backwards (${lo} > ${hi})`;
    }
    for (let v = lo; v <= hi; v += step) set[v] = true;
  }
  return set;
}

function value(field: FieldSpec, text: string): number | string {
  const { name, min, max, names } = field;
  let v: number;
  if (/^\d+$/.test(text)) v = Number(text);
  else {
    const i = names ? names.indexOf(text.toLowerCase()) : -1;
    if (i < 0) {
      const special = /[LW#?H]/.test(text) ? ' (L, W, #, ? and H are not supported)' : '';
      const hint = names ? ` or a name (${names.filter(Boolean).slice(0, 3).join(', ')}, …)` : '';
      return `${name}: "${text}" is not a number${hint}${special}`;
    }
    v = i;
  }
  if (v < min || v > max) return `${name}: ${v} is out of range ${min}-${max}`;
  return v;
}
