import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { DatabaseClient } from './database-client';

/** Receives the payloads of one channel; `reset` means notices may have been missed. */
export interface ChangeListener {
  onNotice(payload: string): void;
  onReset(): void;
}

const RECONNECT_MS = 1000;
/** The channel of the self-check: each process sends itself a notice now and then. */
export const PROBE_CHANNEL = 'fdws_notification_probe';
/** How often the self-check runs once notices arrive, and how long one may take to come back. */
export const NOTIFICATION_PROBE = { intervalMs: 10_000, timeoutMs: 3_000 };
/** The listening connection's name in pg_stat_activity. */
export const LISTENER_NAME = 'fdws-change-notifications';
/** Channel names are written into LISTEN, which takes no parameters. */
const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * Tells every process of the service that something changed, through the database they share:
 * LISTEN/NOTIFY, on a dedicated connection with PostgreSQL; PGlite has one process (the data
 * directory is locked) but may serve several application instances (tests), which its own LISTEN
 * reaches. `connected` is false while the
 * listening connection is down: a listener must then not trust what it kept, since notices of that
 * time are lost; it is told `onReset` when the connection drops and again when it is back.
 *
 * A LISTEN that succeeds may still receive nothing: through a pooler in transaction mode the
 * listening session is a server connection other clients are handed. So `connected` also needs
 * the self-check: each process sends itself a notice through the pool (the way real notices
 * travel) when it starts listening and every NOTIFICATION_PROBE.intervalMs; until the first comes
 * back, and whenever one does not within timeoutMs, notices count as not arriving (warned once;
 * callers then keep nothing), until one arrives again.
 */
@Injectable()
export class ChangeNotifications implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeNotifications.name);
  private readonly listeners = new Map<string, Set<ChangeListener>>();
  private client: Client | null = null;
  private listening = false;
  private closed = false;
  private starting: Promise<void> | null = null;
  private readonly pgliteUnlisteners: Array<() => Promise<void>> = [];
  /** Listening starts once the application is up: a boot that fails leaves no connection behind. */
  private started = false;
  /** Whether the last self-check notice came back (false until the first one has). */
  private arriving = false;
  /** The self-check notice awaited, with its deadline. */
  private probe: { payload: string; timer: NodeJS.Timeout } | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeCount = 0;
  private warnedNotArriving = false;
  private readonly probeId = randomUUID();

  constructor(private readonly database: DatabaseClient) {}

  /** Whether notices from other processes reach this one right now. */
  get connected(): boolean {
    return this.database.driver === 'pglite' || (this.listening && this.arriving);
  }

  /** Registers a listener; on PostgreSQL the listening connection opens once the application is up. */
  subscribe(channel: string, listener: ChangeListener): void {
    if (!CHANNEL.test(channel)) throw new Error(`invalid notification channel "${channel}"`);
    let set = this.listeners.get(channel);
    const isNew = !set;
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    if (this.database.pglite) {
      if (isNew) void this.listenOnPglite(channel);
      return;
    }
    if (isNew && this.listening && this.client) {
      this.client
        .query(`listen "${channel}"`)
        .catch(() => this.client?.emit('error', new Error('listen failed')));
    }
    if (this.started) void this.ensureListening();
  }

  onApplicationBootstrap(): void {
    this.started = true;
    if (this.database.driver === 'postgres' && this.listeners.size > 0) void this.ensureListening();
  }

  /** Sends `payload` (at most ~7,000 bytes) to every process, this one included. */
  async notify(channel: string, payload: string): Promise<void> {
    // Delivered here at once: this process must not wait for its own echo.
    this.deliver(channel, payload);
    if (this.database.pglite)
      await this.database.pglite.query('select pg_notify($1, $2)', [channel, payload]);
    else await this.database.pool?.query('select pg_notify($1, $2)', [channel, payload]);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.stopProbing();
    for (const unlisten of this.pgliteUnlisteners.splice(0)) await unlisten().catch(() => undefined);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private deliver(channel: string, payload: string): void {
    if (channel === PROBE_CHANNEL) {
      this.probeReturned(payload);
      return;
    }
    for (const listener of this.listeners.get(channel) ?? []) listener.onNotice(payload);
  }

  private async listenOnPglite(channel: string): Promise<void> {
    const unlisten = await this.database.pglite!.listen(channel, (payload) => this.deliver(channel, payload));
    this.pgliteUnlisteners.push(unlisten);
  }

  private resetAll(): void {
    for (const set of this.listeners.values()) for (const listener of set) listener.onReset();
  }

  private ensureListening(): Promise<void> {
    this.starting ??= this.listen()
      .catch((error: unknown) =>
        this.logger.warn(`change notifications unavailable: ${(error as Error).message}`),
      )
      .finally(() => {
        this.starting = null;
      });
    return this.starting;
  }

  /** The pool is gone once the database client is closed: nothing to listen to any more. */
  private get stopped(): boolean {
    return this.closed || !this.database.pool || this.database.pool.ended;
  }

  private async listen(): Promise<void> {
    if (this.stopped || this.listening) return;
    // A session of its own: straight to PostgreSQL when DATABASE_URL goes through a pooler.
    const target = this.database.listenUrl
      ? { connectionString: this.database.listenUrl }
      : this.database.pool!.options;
    const client = new Client({ ...target, application_name: LISTENER_NAME });
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.arriving = false;
      this.stopProbing();
      this.resetAll();
      client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.ensureListening(), RECONNECT_MS).unref();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
    this.client = client;
    try {
      await client.connect();
      for (const channel of [PROBE_CHANNEL, ...this.listeners.keys()])
        await client.query(`listen "${channel}"`);
      if (this.stopped) {
        await client.end();
        return;
      }
      this.listening = true;
      // Whatever was kept while nobody listened may be stale.
      this.resetAll();
      this.startProbing();
    } catch (error) {
      this.logger.warn(`change notifications unavailable: ${(error as Error).message}`);
      lost();
    }
  }

  private startProbing(): void {
    this.stopProbing();
    void this.sendProbe();
    this.probeTimer = setInterval(() => void this.sendProbe(), NOTIFICATION_PROBE.intervalMs);
    this.probeTimer.unref();
  }

  private stopProbing(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    if (this.probe) clearTimeout(this.probe.timer);
    this.probeTimer = null;
    this.probe = null;
  }

  /** A notice to this process alone (its id in the payload), through the pool like real ones. */
  private async sendProbe(): Promise<void> {
    if (this.stopped || !this.listening || this.probe) return;
    const payload = `${this.probeId}:${++this.probeCount}`;
    const timer = setTimeout(() => this.probeLost(), NOTIFICATION_PROBE.timeoutMs);
    timer.unref();
    this.probe = { payload, timer };
    // A failed send (database away) is a notice that does not arrive: the deadline tells.
    await this.database.pool
      ?.query('select pg_notify($1, $2)', [PROBE_CHANNEL, payload])
      .catch(() => undefined);
  }

  private probeReturned(payload: string): void {
    if (this.probe?.payload !== payload) return;
    clearTimeout(this.probe.timer);
    this.probe = null;
    if (this.arriving) return;
    this.arriving = true;
    // Nothing was kept while notices did not arrive; start from a clean slate all the same.
    this.resetAll();
    if (this.warnedNotArriving) {
      this.warnedNotArriving = false;
      this.logger.log('change notifications arrive again: in-process lookups are kept again');
    }
  }

  private probeLost(): void {
    this.probe = null;
    if (this.arriving) {
      this.arriving = false;
      this.resetAll();
    }
    if (!this.warnedNotArriving) {
      this.warnedNotArriving = true;
      this.logger.warn(
        `change notifications do not arrive (a notice sent to this process did not come back within ${NOTIFICATION_PROBE.timeoutMs} ms): lookups are read from the database every time until they do. Behind a pooler in transaction mode, set DATABASE_LISTEN_URL to a direct PostgreSQL URL`,
      );
    }
  }
}
