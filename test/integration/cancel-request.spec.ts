import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import { cancelRunningStatement, type CancelTarget } from '../../src/database/snapshot-reader';

/**
 * The cancel request an abandoned export sends (a CancelRequest on a connection of its own). It must
 * leave its connection open until the server closes it, as libpq does: PgBouncer 1.18 (Debian 12's
 * package, the production topology) exits with "bad client state: 0" when the cancelling client
 * closes first.
 */
describe('cancelling a running statement', () => {
  describe('against a loopback server standing in for the postmaster', () => {
    let server: Server;
    let port: number;
    const connections: Socket[] = [];
    beforeAll(async () => {
      server = createServer({ allowHalfOpen: true }, (socket) => connections.push(socket));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of connections) socket.destroy();
      server.close();
      await once(server, 'close');
    });

    const nextConnection = async (): Promise<{
      socket: Socket;
      received: Buffer;
      endedEarly: () => boolean;
    }> => {
      const before = connections.length;
      while (connections.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
      const socket = connections[connections.length - 1];
      let ended = false;
      socket.on('end', () => (ended = true));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      while (Buffer.concat(chunks).length < 16) await new Promise((resolve) => setTimeout(resolve, 5));
      return { socket, received: Buffer.concat(chunks), endedEarly: () => ended };
    };

    const target = (): CancelTarget => ({ host: '127.0.0.1', port, processID: 4242, secretKey: -17 });

    it('sends the CancelRequest packet and keeps its side open until the server closes, then closes', async () => {
      cancelRunningStatement(target());
      const { socket, received, endedEarly } = await nextConnection();
      expect([...received]).toEqual([
        0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 0, 0, 0x10, 0x92, 0xff, 0xff, 0xff, 0xef,
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(endedEarly()).toBe(false);
      socket.end();
      await once(socket, 'close');
      expect(endedEarly()).toBe(true);
    });

    it('gives up on a server that never closes after the wait it was given', async () => {
      cancelRunningStatement(target(), 200);
      const { endedEarly } = await nextConnection();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(endedEarly()).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(endedEarly()).toBe(true);
    });
  });

  const databaseUrl = process.env.TEST_PGBOUNCER_URL ?? process.env.TEST_DATABASE_URL;
  const onServer = databaseUrl ? it : it.skip;
  onServer(
    `stops a running statement, 20 times in a row, and the server (${process.env.TEST_PGBOUNCER_URL ? 'PgBouncer' : 'PostgreSQL'}) keeps answering`,
    async () => {
      const sleeper = new Client({ connectionString: databaseUrl });
      await sleeper.connect();
      try {
        for (let round = 0; round < 20; round++) {
          const sleeping = sleeper.query('select pg_sleep(30)').then(
            () => null,
            (error: { code?: string }) => error.code,
          );
          await new Promise((resolve) => setTimeout(resolve, 20));
          cancelRunningStatement(sleeper as unknown as CancelTarget);
          expect(await sleeping).toBe('57014');
        }
      } finally {
        await sleeper.end();
      }
      const probe = new Client({ connectionString: databaseUrl });
      await probe.connect();
      expect((await probe.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      await probe.end();
    },
  );
});
