// `tend mcp` (the built CLI) driven by the MCP SDK's own Client over stdio.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assertBuilt, childEnv, REPO, TEND, track } from '../helpers/cli.js';

export interface ToolAnswer {
  isError: boolean;
  text: string;
}

export interface McpSession {
  client: Client;
  pid: number | null;
  stderr: () => string;
  call: (name: string, args?: Record<string, unknown>) => Promise<ToolAnswer>;
  /** Call and parse the JSON after the first (summary) line; the call must succeed. */
  json: <T = any>(name: string, args?: Record<string, unknown>) => Promise<T>;
  close: () => Promise<void>;
}

/** The JSON body of a tool answer: everything from the first `{` or `[` that starts a line. */
export function bodyOf(text: string): any {
  const i = text.search(/^[[{]/m);
  if (i < 0) throw new Error(`no JSON in answer: ${text.slice(0, 300)}`);
  return JSON.parse(text.slice(i));
}

export async function mcp(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<McpSession> {
  assertBuilt();
  const transport = new StdioClientTransport({ command: process.execPath, args: [TEND, 'mcp', ...args], env: childEnv(dataDir, env), cwd: REPO, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
  const client = new Client({ name: 'tend-tests', version: '1.0.0' });
  await client.connect(transport);
  if (transport.pid) track(transport.pid);
  const call = async (name: string, a: Record<string, unknown> = {}): Promise<ToolAnswer> => {
    const r = (await client.callTool({ name, arguments: a })) as { isError?: boolean; content: { type: string; text?: string }[] };
    return { isError: r.isError === true, text: r.content.map((c) => c.text ?? '').join('\n') };
  };
  return {
    client,
    pid: transport.pid,
    stderr: () => err,
    call,
    json: async (name, a = {}) => {
      const r = await call(name, a);
      if (r.isError) throw new Error(`${name} failed: ${r.text}`);
      return bodyOf(r.text);
    },
    close: () => client.close(),
  };
}
