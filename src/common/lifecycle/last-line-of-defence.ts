import { causeChain } from '../errors/cause-chain';

/**
 * The process-level last line of defence, installed once the server listens. Every dependency's
 * errors are handled where they belong (a query's rejection, a client's 'error' listener, a retry);
 * an error that still escapes to the process is a bug in that handling, and ending the process for
 * it would turn one bad request, run or connection into an outage of every instance at once (a
 * database restart did exactly that). It is logged once, with its cause and a stable code, and the
 * process keeps serving. Before the server listens nothing is installed: an error at boot is a
 * programming or configuration error and ends the process (main.ts logs why).
 */
export function installLastLineOfDefence(log: { error(fields: object, message: string): void }): void {
  process.on('uncaughtException', (error, origin) => {
    log.error(
      { code: 'UNHANDLED_ERROR', origin, err: error },
      `Unhandled error (the process keeps serving): ${causeChain(error)}`,
    );
  });
  process.on('unhandledRejection', (reason) => {
    log.error(
      { code: 'UNHANDLED_REJECTION', err: reason },
      `Unhandled promise rejection (the process keeps serving): ${causeChain(reason)}`,
    );
  });
}
