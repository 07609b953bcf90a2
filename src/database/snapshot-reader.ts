import { connect } from 'node:net';
import { Readable } from 'node:stream';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Pool, PoolClient } from 'pg';
import { to as copyTo, type CopyToStreamQuery } from 'pg-copy-streams';

/** Prefix of the transaction-local settings that carry a COPY statement's values. */
const SETTING_PREFIX = 'fdws.p';
/** set_config calls per statement: a select list holds at most 1,664 entries. */
const SETTINGS_PER_STATEMENT = 500;

/**
 * Reads on one pooled PostgreSQL connection inside one read-only REPEATABLE READ transaction, so every
 * statement of a reader (a lookup, then a COPY) sees the same snapshot. `close` (or the end of the
 * COPY stream, which takes the reader over) returns the connection.
 */
export class SnapshotReader {
  private closed = false;

  private constructor(private readonly client: PoolClient) {}

  static async open(pool: Pool): Promise<SnapshotReader> {
    const client = await pool.connect();
    try {
      await client.query('begin isolation level repeatable read read only');
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    return new SnapshotReader(client);
  }

  async rows(query: SQL): Promise<Record<string, unknown>[]> {
    const bound = new PgDialect().sqlToQuery(query);
    return (await this.client.query(bound.sql, bound.params)).rows;
  }

  /**
   * `COPY (<query>) TO STDOUT (FORMAT csv)` as a stream of CSV rows, each ended by "\n". COPY takes no
   * bind parameters, so the query's values travel as transaction-local settings (`set_config`) that
   * the statement reads back, each cast to the type PostgreSQL gives its placeholder: no value is
   * ever written into the statement. Resolves once the first rows (or the end) have arrived, so a
   * statement that fails to start is an error here, before anything is sent. The stream owns the
   * reader from here: read to its end, it commits and returns the connection; destroyed early (the
   * client went away), it cancels the COPY and drops the connection; a failed COPY errors the
   * stream and drops the connection.
   */
  async copyCsv(query: SQL): Promise<Readable> {
    const statement = await this.withValuesAsSettings(query);
    // The statement has many small expressions and runs once: JIT compilation would cost more
    // (hundreds of ms on a 1M-row export) than it saves.
    await this.client.query('set local jit = off');
    const copy = this.client.query(copyTo(`copy (${statement}) to stdout (format csv)`));
    const rows = new CopyOutStream(copy, this.client, (error) => this.close(error));
    await rows.started;
    return rows;
  }

  /** Ends the transaction and returns the connection; with an error, the connection is dropped. */
  async close(error?: Error): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (error) {
      this.client.release(error);
      return;
    }
    try {
      await this.client.query('commit');
      this.client.release();
    } catch (commitError) {
      this.client.release(commitError as Error);
    }
  }

  /** The text of `query` with each `$n` replaced by a read of the setting holding its value. */
  private async withValuesAsSettings(query: SQL): Promise<string> {
    const bound = new PgDialect().sqlToQuery(query);
    if (bound.params.length === 0) return bound.sql;
    const types = await this.parameterTypes(bound.sql);
    const present = bound.params.flatMap((value, index) =>
      value === null || value === undefined ? [] : [{ name: `${SETTING_PREFIX}${index + 1}`, value }],
    );
    for (let start = 0; start < present.length; start += SETTINGS_PER_STATEMENT) {
      const chunk = present.slice(start, start + SETTINGS_PER_STATEMENT);
      await this.client.query(
        `select ${chunk.map((setting, i) => `set_config('${setting.name}', $${i + 1}, true)`).join(', ')}`,
        chunk.map((setting) => setting.value),
      );
    }
    // A scalar subquery is evaluated once per statement (an InitPlan), not once per row.
    return new PlaceholderRendering((index) =>
      bound.params[index] === null || bound.params[index] === undefined
        ? `null::${types[index]}`
        : `(select current_setting('${SETTING_PREFIX}${index + 1}')::${types[index]})`,
    ).sqlToQuery(query).sql;
  }

  /**
   * The type PostgreSQL infers for each placeholder of `statement`, learned by preparing it (not
   * running it); a value cast to that type is read exactly as the bound value would have been.
   */
  private async parameterTypes(statement: string): Promise<string[]> {
    const results = (await this.client.query(
      `prepare fdws_copy_parameters as ${statement};
       select parameter_types::text[] as types from pg_prepared_statements where name = 'fdws_copy_parameters';
       deallocate fdws_copy_parameters`,
    )) as unknown as { rows: { types: string[] }[] }[];
    return results[1].rows[0].types;
  }
}

/** drizzle's PostgreSQL rendering with each placeholder (`$n`) written as the given expression. */
class PlaceholderRendering extends PgDialect {
  constructor(placeholder: (index: number) => string) {
    super();
    // drizzle passes escapeParam around as a plain function, so the override is one too.
    this.escapeParam = placeholder;
  }
}

/**
 * The output of a running COPY, with backpressure: while the consumer does not read, the COPY
 * stream is paused, node-postgres stops reading the socket and PostgreSQL waits. `release` is
 * called exactly once, when the COPY is over: without an error after a complete read, with one
 * otherwise (the connection is then dropped, never reused).
 */
class CopyOutStream extends Readable {
  /** Settled by the first chunk or the end of the COPY; rejected when it fails before either. */
  readonly started: Promise<void>;
  private copyOver = false;
  private released = false;

  constructor(
    private readonly copy: CopyToStreamQuery,
    private readonly client: PoolClient,
    private readonly release: (error?: Error) => Promise<void>,
  ) {
    super();
    let hasStarted = false;
    let start!: (error?: Error) => void;
    this.started = new Promise((resolve, reject) => {
      start = (error) => {
        hasStarted = true;
        if (error) reject(error);
        else resolve();
      };
    });
    copy.on('data', (chunk: Buffer) => {
      if (!hasStarted) start();
      // Once this stream is destroyed the rest of the COPY is drained into nothing.
      if (!this.destroyed && !this.push(chunk)) copy.pause();
    });
    copy.once('end', () => {
      if (!hasStarted) start();
      this.copyOver = true;
      if (this.destroyed) {
        this.finish(new Error('COPY output abandoned by its reader'));
      } else {
        this.finish();
        this.push(null);
      }
    });
    copy.on('error', (error: Error) => {
      this.copyOver = true;
      this.finish(error);
      if (hasStarted) {
        this.destroy(error);
      } else {
        // Nobody reads this stream yet: the error goes to whoever awaits `started`.
        start(error);
        this.destroy();
      }
    });
  }

  override _read(): void {
    this.copy.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.copyOver) {
      // The reader went away mid-COPY: ask PostgreSQL to stop (a cancel request on a connection of
      // its own, so no pool slot is needed) and drain what is still in flight until the COPY ends.
      // The connection is dropped afterwards, so a cancel arriving late can hit nothing else.
      cancelRunningStatement(this.client as unknown as CancelTarget);
      this.copy.resume();
    }
    callback(error);
  }

  private finish(error?: Error): void {
    if (this.released) return;
    this.released = true;
    void this.release(error);
  }
}

/** CancelRequest: its code, and the packet's length (protocol 3.0, a 4-byte secret key). */
const CANCEL_REQUEST_CODE = 80877102;
const CANCEL_REQUEST_LENGTH = 16;
/** Where a backend listens and the key that cancels its statement (node-postgres keeps them on its client). */
export interface CancelTarget {
  host: string;
  port: number;
  processID: number;
  secretKey: number;
}
/** How long a cancel connection waits for the server to close it before giving up on it. */
export const CANCEL_WAIT_MS = 15_000;

/**
 * Asks PostgreSQL to cancel whatever `client`'s backend is running, the way libpq's PQcancel does: a
 * CancelRequest on a new connection of its own (no authentication, no pool slot), then waiting for
 * the server to close that connection, which is how it says it handled the request. Closing our
 * side first (sending the packet with a FIN) is what crashes PgBouncer 1.18 (Debian 12's package):
 * it frees the cancel client on our EOF and frees it again when the server is done ("bad client
 * state: 0"). The connection details are node-postgres's own; a cancel that cannot be delivered
 * changes nothing.
 */
export function cancelRunningStatement(backend: CancelTarget, waitMs = CANCEL_WAIT_MS): void {
  const { host, port, processID, secretKey } = backend;
  const socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
  socket.on('error', () => socket.destroy());
  // The server closes first; ours follows it (allowHalfOpen is off). A server that never answers
  // is left after waitMs.
  socket.setTimeout(waitMs, () => socket.destroy());
  // A cancel still waiting for its answer never keeps a stopping process alive.
  socket.unref();
  socket.on('connect', () => {
    const packet = Buffer.alloc(CANCEL_REQUEST_LENGTH);
    packet.writeInt32BE(CANCEL_REQUEST_LENGTH, 0);
    packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
    packet.writeInt32BE(processID, 8);
    packet.writeInt32BE(secretKey, 12);
    socket.write(packet);
  });
}
