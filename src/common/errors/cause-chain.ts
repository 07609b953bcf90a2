import { inspect } from 'node:util';

/**
 * An error and the errors it wraps, as one log line (`message [code] <- cause [code] <- ...`), up
 * to five deep: what a log needs to find the cause, where `String(error)` shows the outer message only.
 */
export function causeChain(error: unknown): string {
  const messages: string[] = [];
  for (let current = error; current !== undefined && current !== null && messages.length < 5;) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      messages.push(`${current.message.trim()}${typeof code === 'string' ? ` [${code}]` : ''}`);
      current = current.cause;
    } else {
      messages.push(inspect(current));
      current = undefined;
    }
  }
  return messages.join(' <- ');
}
