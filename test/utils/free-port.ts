import { createServer, type AddressInfo } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on now, for the server of a child process. The system
 * picks it, so it is not one in use: a random pick from 20000-40000 overlaps Linux's range of ports
 * for outgoing connections (from 32768), and once met EADDRINUSE in CI.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
