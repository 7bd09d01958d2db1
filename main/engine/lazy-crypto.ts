// node:crypto brings sixteen of Node's modules (some 0.5 MiB resident), and an idle daemon has no
// use for them: its hashes, HMACs and run ids are made when requests, deliveries and runs come.
// So the engine loads it with its first such use, and the few random bytes it needs as it
// starts (its owner tag, a new API token) come from the kernel's generator, which is where
// OpenSSL's own come from, unless this system has no /dev/urandom.
import type * as NodeCrypto from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

let loaded: typeof NodeCrypto | undefined;

export function nodeCrypto(): typeof NodeCrypto {
  return (loaded ??= process.getBuiltinModule('node:crypto'));
}

/** `n` cryptographically strong random bytes. */
export function randomBytes(n: number): Buffer {
  if (loaded === undefined) {
    const bytes = kernelRandom(n);
    if (bytes) return bytes;
  }
  return nodeCrypto().randomBytes(n);
}

function kernelRandom(n: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync('/dev/urandom', 'r');
  } catch {
    return null; // no such device (Windows)
  }
  try {
    const bytes = Buffer.alloc(n);
    for (let got = 0; got < n; ) {
      const read = readSync(fd, bytes, got, n - got, null);
      if (read <= 0) return null;
      got += read;
    }
    return bytes;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
