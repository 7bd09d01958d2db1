// Every page in light and dark, saved for people to look at (test-results/screenshots).
import { mkdirSync } from 'node:fs';
import type { Page } from '@playwright/test';

export const SHOTS = 'test-results/screenshots';

export async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    // Let the new palette paint before capturing.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    await page.screenshot({ path: `${SHOTS}/${name}-${scheme}.png` });
  }
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'no-preference' });
}
