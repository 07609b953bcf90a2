import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { DatabaseClient } from './database-client';

/** Receives the payloads of one channel; `reset` means notices may have been missed. */
export interface ChangeListener {
  onNotice(payload: string): void;
  onReset(): void;
}

const RECONNECT_MS = 1000;
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

  constructor(private readonly database: DatabaseClient) {}

  /** Whether notices from other processes reach this one right now. */
  get connected(): boolean {
    return this.database.driver === 'pglite' || this.listening;
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
    for (const unlisten of this.pgliteUnlisteners.splice(0)) await unlisten().catch(() => undefined);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private deliver(channel: string, payload: string): void {
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
    const client = new Client({ ...this.database.pool!.options, application_name: LISTENER_NAME });
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
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
      for (const channel of this.listeners.keys()) await client.query(`listen "${channel}"`);
      if (this.stopped) {
        await client.end();
        return;
      }
      this.listening = true;
      // Whatever was kept while nobody listened may be stale.
      this.resetAll();
    } catch (error) {
      this.logger.warn(`change notifications unavailable: ${(error as Error).message}`);
      lost();
    }
  }
}
