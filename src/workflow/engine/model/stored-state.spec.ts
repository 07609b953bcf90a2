import { AppError } from '../../../common/errors/app-error';
import { parseCheckpoint, parseDefinition, parseRunRequest } from './stored-state';

describe('stored state parsers', () => {
  it('a checkpoint written before versions (heldMail) is read as version 2 with its mail as an effect', () => {
    const mail = { to: 'a@example.com', subject: 'Hi', text: 'x' };
    const checkpoint = parseCheckpoint({
      scope: { input: { a: 1 }, results: {}, savedData: { _id: 'rec-1' } },
      completed: [{ index: 0, result: null, provided: ['savedData'] }],
      heldMail: [{ index: 1, mail }],
      lastFailure: null,
      pendingRetry: null,
      startedAt: 5,
    });
    expect(checkpoint).toMatchObject({
      version: 2,
      effects: [{ index: 1, seq: 0, kind: 'mail', payload: mail }],
      dataId: 'rec-1',
      startedAt: 5,
      // Written before approval steps: not waiting, nothing paused.
      waiting: null,
      signal: null,
      pausedMs: 0,
    });
  });

  it('a damaged row is WORKFLOW_STATE_INVALID naming what could not be read', () => {
    const code = (parse: () => unknown) => {
      try {
        parse();
      } catch (error) {
        return error instanceof AppError ? [error.code, error.params.what] : error;
      }
      return null;
    };
    expect(code(() => parseCheckpoint({ damaged: true }))).toEqual(['WORKFLOW_STATE_INVALID', 'checkpoint']);
    expect(code(() => parseDefinition({ steps: [{ name: 1 }] }))).toEqual([
      'WORKFLOW_STATE_INVALID',
      'definition',
    ]);
    expect(code(() => parseRunRequest({ configId: 'c' }))).toEqual(['WORKFLOW_STATE_INVALID', 'run request']);
  });

  it('a queued run request keeps the traceparent of the request that queued it; one without it reads as before', () => {
    const stored = {
      configId: 'c',
      data: {},
      actor: { userId: 'u' },
      mode: 'async',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    };
    expect(parseRunRequest(stored).traceparent).toBe(stored.traceparent);
    expect(parseRunRequest({ ...stored, traceparent: undefined })).not.toHaveProperty('traceparent');
  });
});
