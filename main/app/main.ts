// Electron's entry (package.json "main"): the desktop app. `--hidden` starts it in the tray only.
import { startApp } from './shell.js';

startApp()
  .then((running) => {
    // The real-Electron smoke test (test/e2e/electron.spec.ts) reads the tray's model through
    // Playwright's app.evaluate; nothing else looks here.
    if (running && process.env.TEND_SMOKE_TEST === '1') (globalThis as { tendApp?: unknown }).tendApp = running;
  })
  .catch((err: unknown) => {
    console.error('tend: the app failed to start', err);
    process.exit(1);
  });
