// End-to-end tests of the UI in browser mode, against a real daemon each spec file starts.
// Chromium is Debian's (/usr/bin/chromium): never `npx playwright install` here.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '*.spec.ts',
  globalSetup: './test/e2e/global-setup.ts',
  timeout: 90_000,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  workers: 1,
  // One retry on CI, as Playwright recommends: a loaded 2-core machine can starve a browser test; a real break fails twice.
  retries: process.env.CI ? 1 : 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  // Screenshots of every page go to test-results/screenshots (see test/e2e/shots.ts); this is
  // Playwright's own scratch space (traces, failure screenshots), wiped at the start of a run.
  outputDir: 'test-results/playwright',
  use: {
    headless: true,
    viewport: { width: 1440, height: 900 },
    launchOptions: {
      executablePath: process.env.TEND_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
