import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (the Standard Webhooks form). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The Standard Webhooks signature of one attempt: `v1,` and the base64 HMAC-SHA256, keyed by the
 * base64-decoded part of the secret after `whsec_`, of `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one attempt: one signature per secret (the previous one too during a rotation's grace). */
export function webhookHeaders(
  secrets: string[],
  id: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'fdws-webhooks/1.0',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' '),
  };
}
