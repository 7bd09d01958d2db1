// axe-core (pinned in package.json) run inside the page: the same engine browser extensions and
// CI audits use. Injected through page.evaluate, which the page's CSP (script-src 'self') allows.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from '@playwright/test';

const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary: string }[];
}

/** The violations on the page as it is now (WCAG 2.x A/AA and best practice). */
export async function violations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(source);
  const found = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.map(String), failureSummary: n.failureSummary || '' })),
  })))`)) as Violation[];
  return found;
}

export const isSerious = (v: Violation) => v.impact === 'serious' || v.impact === 'critical';

/** One line per offending element, for a failure message a person can act on. */
export function describe(vs: Violation[]): string {
  return vs.map((v) => `${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`).join('\n')}`).join('\n');
}
