import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the test SMTP server received it, with a minimal MIME reading of it. */
export interface ReceivedMail {
  envelope: { from: string | null; to: string[] };
  /** The user that authenticated, when the client logged in. */
  user?: string;
  /** The message exactly as sent (CRLF line breaks). */
  raw: string;
  /** Header fields by lower-case name (unfolded; the first occurrence wins). */
  headers: Record<string, string>;
  /** The decoded `Subject` (RFC 2047 encoded words decoded). */
  subject: string;
  /** The decoded first `text/plain` part, when there is one. */
  text?: string;
  /** The decoded first `text/html` part, when there is one. */
  html?: string;
}

export interface SmtpTestServerOptions {
  /** Require and check these credentials (plain AUTH over the unencrypted loopback connection). */
  auth?: { user: string; pass: string };
  /** Recipients refused with `550` at RCPT TO. */
  rejectRecipients?: string[];
}

export interface SmtpTestServer {
  /** `smtp://127.0.0.1:<port>` (without credentials). */
  readonly url: string;
  readonly port: number;
  /** Every message received so far, in arrival order. */
  readonly messages: ReceivedMail[];
  /**
   * How the server treats clients from now on: `accept` (the default), `tempfail` (451 to every
   * MAIL FROM, as a server over quota does) or `refuse` (not listening: connection refused).
   */
  behave(mode: 'accept' | 'tempfail' | 'refuse'): Promise<void>;
  /** Resolves once at least `count` messages arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** Starts a real SMTP server (the `smtp-server` package) on 127.0.0.1, a random port, no TLS. */
export async function startSmtpTestServer(options: SmtpTestServerOptions = {}): Promise<SmtpTestServer> {
  const messages: ReceivedMail[] = [];
  let mode: 'accept' | 'tempfail' | 'refuse' = 'accept';
  const waiters = new Set<() => void>();
  const rejected = new Set((options.rejectRecipients ?? []).map((address) => address.toLowerCase()));

  const server = new SMTPServer({
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onMailFrom(_address, _session, callback) {
      if (mode === 'tempfail') callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
      else callback();
    },
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase())) {
        callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      } else {
        callback();
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          },
          ...(session.user ? { user: String(session.user) } : {}),
          raw,
          ...parseMessage(raw),
        });
        for (const wake of waiters) wake();
        callback();
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    async behave(next) {
      if (next === 'refuse' && mode !== 'refuse')
        await new Promise<void>((resolve) => server.server.close(() => resolve()));
      if (next !== 'refuse' && mode === 'refuse')
        await new Promise<void>((resolve) => server.server.listen(port, '127.0.0.1', () => resolve()));
      mode = next;
    },
    waitFor(count, timeoutMs = 5000) {
      if (messages.length >= count) return Promise.resolve(messages);
      return new Promise((resolve, reject) => {
        const wake = () => {
          if (messages.length < count) return;
          cleanup();
          resolve(messages);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`Expected ${count} message(s) within ${timeoutMs} ms, got ${messages.length}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        waiters.add(wake);
      });
    },
    close: () =>
      mode === 'refuse' ? Promise.resolve() : new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type ParsedParts = Pick<ReceivedMail, 'headers' | 'subject' | 'text' | 'html'>;

/** Enough MIME for assertions: headers, the subject, and the first text and HTML parts, decoded. */
export function parseMessage(raw: string): ParsedParts {
  const { headers, body } = splitEntity(raw.replace(/\r\n/g, '\n'));
  const leaves = collectLeaves(headers, body);
  const text = leaves.find((leaf) => leaf.type === 'text/plain')?.content;
  const html = leaves.find((leaf) => leaf.type === 'text/html')?.content;
  return {
    headers,
    subject: decodeEncodedWords(headers.subject ?? ''),
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
  };
}

function splitEntity(entity: string): { headers: Record<string, string>; body: string } {
  const end = entity.indexOf('\n\n');
  const head = end === -1 ? entity : entity.slice(0, end);
  const body = end === -1 ? '' : entity.slice(end + 2);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function collectLeaves(headers: Record<string, string>, body: string): { type: string; content: string }[] {
  const contentType = headers['content-type'] ?? 'text/plain';
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
    if (!boundary) return [];
    return body
      .split(`--${boundary}`)
      .slice(1)
      .filter((part) => !part.startsWith('--'))
      .flatMap((part) => {
        const inner = splitEntity(part.replace(/^\n/, ''));
        return collectLeaves(inner.headers, inner.body);
      });
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  return [{ type, content: decodeBody(body.replace(/\n$/, ''), encoding) }];
}

function decodeBody(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body.replace(/=\n/g, ''));
  return body;
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(text[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `=?UTF-8?Q?...?=` and `=?UTF-8?B?...?=` (adjacent encoded words join without the space between). */
function decodeEncodedWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g, (_, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}
