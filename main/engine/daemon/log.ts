// daemon.log, rotated by size: daemon.log → daemon.log.1 → … → daemon.log.N (oldest dropped).
import { appendFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';

export class RotatingLog {
  private size: number;
  constructor(
    private readonly path: string,
    private readonly maxBytes = 5 * 1024 * 1024,
    private readonly keep = 3,
  ) {
    this.size = existsSync(path) ? statSync(path).size : 0;
  }

  write(line: string): void {
    const text = `${new Date().toISOString()} ${line}\n`;
    try {
      const bytes = Buffer.byteLength(text);
      if (this.size + bytes > this.maxBytes) this.rotate();
      appendFileSync(this.path, text, { mode: 0o600 });
      this.size += bytes;
    } catch {
      /* a full disk must not take the daemon down; doctor reports low disk */
    }
  }

  private rotate(): void {
    rmSync(`${this.path}.${this.keep}`, { force: true });
    for (let i = this.keep - 1; i >= 1; i--) if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    if (existsSync(this.path)) renameSync(this.path, `${this.path}.1`);
    this.size = 0;
  }
}
