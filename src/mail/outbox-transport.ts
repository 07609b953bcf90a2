import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transport } from 'nodemailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import StreamTransport from 'nodemailer/lib/stream-transport';

export interface OutboxSentMessageInfo {
  envelope: StreamTransport.SentMessageInfo['envelope'];
  messageId: string;
  /** Absolute path of the written `.eml` file. */
  path: string;
}

/**
 * A nodemailer transport for running without SMTP: nodemailer's `streamTransport` composes the
 * message (CRLF line breaks, as in any `.eml`), and the message is written to `<dir>/<time>-<random>.eml`.
 * The file appears atomically (written under a dot-prefixed `.tmp` name, then renamed), so a reader
 * of `*.eml` never sees a partial message. Names sort by creation time.
 */
export class OutboxTransport implements Transport<OutboxSentMessageInfo> {
  readonly name = 'OutboxTransport';
  readonly version = '1.0.0';
  private readonly composer = new StreamTransport({
    streamTransport: true,
    buffer: true,
    newline: 'windows',
  });

  constructor(readonly dir: string) {}

  send(
    mail: MailMessage<OutboxSentMessageInfo>,
    callback: (err: Error | null, info: OutboxSentMessageInfo) => void,
  ): void {
    this.composer.send(mail, (error, info) => {
      if (error) return callback(error, undefined as never);
      writeAtomically(this.dir, info.message as Buffer).then(
        (path) => callback(null, { envelope: info.envelope, messageId: info.messageId, path }),
        (writeError: Error) => callback(writeError, undefined as never),
      );
    });
  }
}

/** `2024-05-01T10-20-30-123Z-1a2b3c4d5e6f.eml`: ISO time (sortable as text), then a random part. */
export function outboxFileName(now = new Date()): string {
  return `${now.toISOString().replace(/[:.]/g, '-')}-${randomBytes(6).toString('hex')}.eml`;
}

async function writeAtomically(dir: string, content: Buffer): Promise<string> {
  await mkdir(dir, { recursive: true });
  const name = outboxFileName();
  const path = join(dir, name);
  const temporary = join(dir, `.${name}.tmp`);
  try {
    await writeFile(temporary, content, { flag: 'wx', mode: 0o640 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return path;
}
