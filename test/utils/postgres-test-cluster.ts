import { execFile } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from 'node:net';
import { freePort } from './free-port';

const run = promisify(execFile);

/**
 * The PostgreSQL server binaries (Debian keeps them out of PATH, under /usr/lib/postgresql/<n>/bin);
 * PG_BINDIR wins. Null when this machine has none.
 */
export function postgresBinDir(): string | null {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : null;
}

/** PostgreSQL and PgBouncer refuse to run as root: as root, they run as the `postgres` user. */
const asRoot = process.getuid?.() === 0;
function command(file: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}
function ownedByServer(path: string): void {
  if (!asRoot) return;
  const { uid, gid } = userIds('postgres');
  chownSync(path, uid, gid);
}
let postgresIds: { uid: number; gid: number } | null = null;
function userIds(name: string): { uid: number; gid: number } {
  if (postgresIds) return postgresIds;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry: string) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`no user ${name} to run PostgreSQL as`);
  const [, , uid, gid] = line.split(':');
  postgresIds = { uid: Number(uid), gid: Number(gid) };
  return postgresIds;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', () => resolve(false));
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
  });
}

/**
 * A PostgreSQL server of a test's own (initdb in a temporary directory, trust authentication, on a
 * free port of 127.0.0.1), so a test can restart, stop and crash it without touching the server
 * other suites use. Optionally a PgBouncer in transaction mode in front of it (`.ci/pgbouncer-start`).
 */
export class PostgresTestCluster {
  private bouncerDir: string | null = null;

  private constructor(
    private readonly binDir: string,
    private readonly dataDir: string,
    readonly port: number,
    /** PgBouncer's port, once `startPgBouncer` ran. */
    public bouncerPort: number | null = null,
  ) {}

  static async create(): Promise<PostgresTestCluster> {
    const binDir = postgresBinDir();
    if (!binDir) throw new Error('no PostgreSQL server binaries (set PG_BINDIR)');
    const root = mkdtempSync(join(tmpdir(), 'fdws-pg-'));
    ownedByServer(root);
    const dataDir = join(root, 'data');
    const initdb = command(join(binDir, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--locale',
      'C.UTF-8',
      '--no-sync',
    ]);
    await run(...initdb);
    const port = await freePort();
    // Sockets only on TCP (no shared /var/run directory); fsync off: a crash of the server process
    // (what the tests do) loses nothing written to the OS, and the tests stay fast.
    writeFileSync(
      join(dataDir, 'postgresql.auto.conf'),
      [
        `port = ${port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = ''`,
        'fsync = off',
        'max_connections = 200',
        '',
      ].join('\n'),
    );
    ownedByServer(join(dataDir, 'postgresql.auto.conf'));
    const cluster = new PostgresTestCluster(binDir, dataDir, port);
    await cluster.start();
    return cluster;
  }

  url(database = 'postgres', viaBouncer = false): string {
    const port = viaBouncer ? this.bouncerPort : this.port;
    if (port === null) throw new Error('PgBouncer is not started');
    return `postgres://postgres@127.0.0.1:${port}/${database}`;
  }

  async start(): Promise<void> {
    await run(
      ...command(join(this.binDir, 'pg_ctl'), ['-D', this.dataDir, '-w', '-l', this.logFile, 'start']),
    );
  }

  /** `immediate` is a crash: every connection dropped at once, recovery from WAL at the next start. */
  async stop(mode: 'immediate' | 'fast' = 'immediate'): Promise<void> {
    await run(...command(join(this.binDir, 'pg_ctl'), ['-D', this.dataDir, '-w', '-m', mode, 'stop']));
  }

  async restart(mode: 'immediate' | 'fast' = 'immediate'): Promise<void> {
    await this.stop(mode);
    await this.start();
  }

  /** PgBouncer in transaction mode in front of this server, as production runs it. */
  async startPgBouncer(): Promise<void> {
    this.bouncerPort ??= await freePort();
    this.bouncerDir ??= mkdtempSync(join(tmpdir(), 'fdws-pgbouncer-'));
    await run(join(__dirname, '../../.ci/pgbouncer-start'), [
      String(this.bouncerPort),
      String(this.port),
      this.bouncerDir,
    ]);
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.bouncerPort))) {
      if (Date.now() > deadline) throw new Error('PgBouncer did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Kills PgBouncer (SIGKILL: every client connection dropped), if it runs. */
  async killPgBouncer(): Promise<void> {
    if (!this.bouncerDir) return;
    const pidFile = join(this.bouncerDir, 'pgbouncer.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    while (existsSync(`/proc/${pid}`)) await new Promise((resolve) => setTimeout(resolve, 20));
    rmSync(pidFile, { force: true });
  }

  async destroy(): Promise<void> {
    await this.killPgBouncer();
    await this.stop('immediate').catch(() => undefined);
    rmSync(join(this.dataDir, '..'), { recursive: true, force: true });
    if (this.bouncerDir) rmSync(this.bouncerDir, { recursive: true, force: true });
  }

  private get logFile(): string {
    return join(this.dataDir, '..', 'server.log');
  }
}
