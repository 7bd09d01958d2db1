// `tend mcp` over stdio: stdout carries only the protocol; anything else goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createTendMcpServer, type TendMcpOptions } from './server.js';

export async function runMcpStdio(o: TendMcpOptions): Promise<void> {
  const { server, close } = createTendMcpServer(o);
  const transport = new StdioServerTransport();
  let done!: () => void;
  const closed = new Promise<void>((resolve) => (done = resolve));
  transport.onclose = () => done();
  process.stdin.once('end', () => done());
  process.stdin.once('close', () => done());
  const onSignal = () => done();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await server.connect(transport);
  process.stderr.write(`tend mcp: serving ${o.dataDir} over stdio${o.allowActions ? ' (actions allowed)' : ' (read-only)'}\n`);
  await closed;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await server.close().catch(() => undefined);
  close();
}
