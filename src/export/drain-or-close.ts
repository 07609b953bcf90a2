import type { PassThrough } from 'node:stream';

/**
 * Resolves when the stream can take more, or is gone; leaves no listener behind. The export's
 * writers wait on it after a write that filled the stream, whether it goes to the response or into
 * the zip archive.
 */
export function drainOrClose(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
