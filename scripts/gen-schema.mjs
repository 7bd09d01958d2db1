// Writes the published JSON Schema of schedule files, schemas/schedule.schema.json, from the
// built code (run `npm run build` first). `--check` writes nothing and exits 1 when the committed
// file differs from what the code generates.
//
//   node scripts/gen-schema.mjs          regenerate
//   node scripts/gen-schema.mjs --check  verify (CI)
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../dist/main/engine/ops/schedules.js', import.meta.url));
const target = fileURLToPath(new URL('../schemas/schedule.schema.json', import.meta.url));

if (!existsSync(built)) {
  process.stderr.write(`gen-schema: ${built} not found: run \`npm run build\` first\n`);
  process.exit(2);
}
const { scheduleJsonSchema } = await import(pathToFileURL(built).href);
const text = `${JSON.stringify(scheduleJsonSchema(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
  if (current !== text) {
    process.stderr.write(`gen-schema: ${target} is out of date: run \`node scripts/gen-schema.mjs\`\n`);
    process.exit(1);
  }
  process.stdout.write(`gen-schema: ${target} is up to date\n`);
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`gen-schema: wrote ${target}\n`);
}
