import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process's name as the owner of run leases; unique per start. */
export const WORKFLOW_INSTANCE = Symbol('WORKFLOW_INSTANCE');

export function newInstanceName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}
