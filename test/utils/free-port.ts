import { createServer, type AddressInfo } from 'node:net';

/** Listens on `port` of 127.0.0.1 (0: the system picks one) and closes at once; the port, or null if it is taken. */
async function listenAndClose(port: number): Promise<number | null> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!listening) return null;
  const taken = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return taken;
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on now, for the server of a child process. The system
 * picks it, so it is not one in use: a random pick from 20000-40000 overlaps Linux's range of ports
 * for outgoing connections (from 32768), and once met EADDRINUSE in CI.
 */
export async function freePort(): Promise<number> {
  const port = await listenAndClose(0);
  if (port === null) throw new Error('the system gave no free port on 127.0.0.1');
  return port;
}

/**
 * A port on 127.0.0.1 that nothing listens on (for ECONNREFUSED). It lies below Linux's range of
 * ports the system hands out (32768-60999), so no other suite's server started on port 0 can take it
 * meanwhile: a port from that range once went to a parallel suite's server, which then recorded this
 * suite's request.
 */
export async function closedPort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await listenAndClose(20_000 + Math.floor(Math.random() * 12_000));
    if (port !== null) return port;
  }
  throw new Error('no closed port found in 20000-31999 on 127.0.0.1');
}
