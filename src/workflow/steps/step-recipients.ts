import { parseRecipients } from '../../mail/recipients';
import { StepError } from '../sdk/step-error';

/** A step's rendered `to` as addresses, or the step fails (not retried) with `INVALID_RECIPIENT`. */
export function stepRecipients(to: unknown): string[] {
  const recipients = parseRecipients(to);
  if (!recipients.ok)
    throw StepError.fatal('INVALID_RECIPIENT', `Invalid recipient: ${recipients.reason}`, {
      details: { reason: recipients.reason, ...(recipients.invalid ? { invalid: recipients.invalid } : {}) },
    });
  return recipients.addresses;
}
