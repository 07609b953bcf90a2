import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a real server (the test replica, or a test database's server
 * at `host`), that a test takes away (every connection cut, new ones refused, as when the server
 * stops) and brings back on the same port.
 */
export async function relayTo(
  port: number,
  host = '127.0.0.1',
): Promise<{
  port: number;
  takeAway(): Promise<void>;
  bringBack(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  const relay = createServer((incoming) => {
    const outgoing = connect(port, host);
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayPort = (relay.address() as { port: number }).port;
  const takeAway = () =>
    new Promise<void>((resolve) => {
      if (!relay.listening) return resolve();
      relay.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return {
    port: relayPort,
    takeAway,
    bringBack: () => new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve)),
    close: takeAway,
  };
}
