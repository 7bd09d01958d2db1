// The e2e tests drive the built daemon and the built renderer: say so plainly when either is missing.
import { existsSync } from 'node:fs';

export default function globalSetup(): void {
  const missing = ['dist/main/cli/tend.js', 'dist/renderer/index.html'].filter((f) => !existsSync(f));
  if (missing.length) throw new Error(`e2e: ${missing.join(', ')} missing — run \`npm run build\` first`);
  const chromium = process.env.TEND_CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(chromium)) throw new Error(`e2e: no Chromium at ${chromium} — apt-get install -y chromium (or set TEND_CHROMIUM)`);
}
