// Electron's entry (package.json "main"): the desktop app. `--hidden` starts it in the tray only.
import { startApp } from './shell.js';

startApp().catch((err: unknown) => {
  console.error('tend: the app failed to start', err);
  process.exit(1);
});
