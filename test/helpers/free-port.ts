/** A TCP port on 127.0.0.1 that was free a moment ago (for servers a test configures by port, e.g. ingest listeners). */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}
