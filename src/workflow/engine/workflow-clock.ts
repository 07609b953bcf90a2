import { Injectable } from '@nestjs/common';

/** Time for the runner: waiting between retry attempts. Tests replace it to record the delays. */
@Injectable()
export class WorkflowClock {
  now(): number {
    return Date.now();
  }

  /** Resolves after `ms`, or early (rejecting) when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(done, ms);
      function done() {
        signal?.removeEventListener('abort', abort);
        resolve();
      }
      function abort() {
        clearTimeout(timer);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      }
      signal?.addEventListener('abort', abort, { once: true });
    });
  }
}
