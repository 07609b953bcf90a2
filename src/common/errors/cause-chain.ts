import { inspect } from 'node:util';

/**
 * An error and the errors it wraps, as one log line (`message [code] <- cause [code] <- ...`), up
 * to five deep: what a log needs to find the cause, where `String(error)` shows the outer message only.
 */
export function causeChain(error: unknown): string {
  const messages: string[] = [];
  for (let current = error; current !== undefined && current !== null && messages.length < 5;) {
    if (current instanceof Error) {
      messages.push(errorLine(current));
      current = current.cause;
    } else {
      messages.push(inspect(current));
      current = undefined;
    }
  }
  return messages.join(' <- ');
}

/**
 * One error as a log line: its message and code. A failed query's own message (drizzle's `Failed
 * query: <sql> params: <values>`) carries the statement and the submitted values, which no log line
 * may: it reads `query failed`, and its cause (the driver's error) says why.
 */
export function errorLine(error: Error): string {
  const code = (error as { code?: unknown }).code;
  const message =
    error.name === 'DrizzleQueryError' || error.message.startsWith('Failed query:')
      ? 'query failed'
      : error.message.trim();
  return `${message}${typeof code === 'string' ? ` [${code}]` : ''}`;
}
