// Installers are only offered where Tend can run jobs: no Windows target while the local backend
// cannot run there (README, "What runs where").
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

describe('installers', () => {
  it('electron-builder.yml builds for Linux and macOS, not for Windows', () => {
    const config = parse(readFileSync(new URL('../../electron-builder.yml', import.meta.url), 'utf8')) as Record<string, unknown>;
    expect(config['linux']).toBeDefined();
    expect(config['mac']).toBeDefined();
    expect(config['win']).toBeUndefined();
    expect(config['nsis']).toBeUndefined();
  });

  it('the README says what runs on which OS', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toMatch(/\| Windows \| no \|/);
    expect(readme).not.toMatch(/--win\b/);
  });
});
