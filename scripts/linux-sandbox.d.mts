// Types of scripts/linux-sandbox.mjs for the tests.
export interface SandboxFacts {
  usernsUsable: boolean;
  usernsRestricted: boolean;
  sandbox: { uid: number; mode: number } | null;
}
export function probe(sandboxPath: string): SandboxFacts;
export function sandboxProblem(o: SandboxFacts & { platform: string; uid: number; args: string[]; sandboxPath: string }): string | null;
