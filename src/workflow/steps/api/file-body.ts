import { PassThrough, type Readable } from 'node:stream';
import FormData from 'form-data';
import type { StreamedBody } from '../../../common/outbound-http';
import { runRecordFiles, StepError, type StepContext, type StepFile, type StepFiles } from '../../sdk';
import { DEFAULT_DATA_PART_NAME, DEFAULT_FILE_PART_NAME, type ApiFileConfig } from './api-step.config';

/** A text body part (the rendered `payload`) with its content type. */
export interface TextPart {
  text: string;
  contentType: string;
}

/** What an api step's `file` sends: the body (streamed from the blob store) and its content type. */
export interface FileBody {
  body: StreamedBody;
  contentType: string;
}

/** A record's file to send, and how to open its bytes (again for each request that sends them). */
export interface FileToSend {
  file: StepFile;
  open: () => Promise<Readable>;
}

/**
 * The one file of the run's record (savedData) in `field`, read as the run's caller (the record's
 * read rules): NO_RECORD_TO_ATTACH without a record, NO_FILE_TO_SEND when the field holds none,
 * TOO_MANY_FILES_TO_SEND when it holds several (which one to send is not ours to guess).
 */
export async function recordFileToSend(
  files: StepFiles | undefined,
  context: StepContext,
  field: string,
): Promise<FileToSend> {
  const found = await runRecordFiles(files, context, 'file', [field]);
  const recordId = context.scope.savedData?._id;
  if (found.length === 0)
    throw new StepError(`The record's field "${field}" holds no file`, {
      code: 'NO_FILE_TO_SEND',
      details: { field, recordId },
    });
  if (found.length > 1)
    throw new StepError(`The record's field "${field}" holds ${found.length} files; file sends one`, {
      code: 'TOO_MANY_FILES_TO_SEND',
      details: { field, recordId, count: found.length },
    });
  const [file] = found;
  // runRecordFiles refuses a step without StepFiles, so `files` is there.
  return { file, open: () => files!.open(context, file) };
}

/**
 * The body that sends `file`: its bytes alone (`as: body`, typed with its media type), or a
 * multipart/form-data body with `data` (the rendered payload) as one part and the file as another
 * (its filename and media type). Either is streamed from the blob store each time it is sent and
 * has a known length; the multipart encoding is form-data's (the encoder axios itself uses).
 */
export function fileBody(
  { file, open }: FileToSend,
  config: ApiFileConfig,
  data: TextPart | undefined,
): FileBody {
  if (config.as === 'body')
    return { body: { length: file.size, open }, contentType: file.mediaType || 'application/octet-stream' };
  const boundary = new FormData().getBoundary();
  const form = (content: Readable | Buffer) => {
    const built = new FormData();
    built.setBoundary(boundary);
    if (data)
      built.append(config.dataPartName ?? DEFAULT_DATA_PART_NAME, data.text, {
        contentType: data.contentType,
      });
    built.append(config.partName ?? DEFAULT_FILE_PART_NAME, content, {
      filename: file.filename,
      contentType: file.mediaType || 'application/octet-stream',
      knownLength: file.size,
    });
    return built;
  };
  // Every send builds the same form (same boundary and parts), so its length is known before.
  const length = form(Buffer.alloc(0)).getLengthSync();
  return {
    body: { length, open: async () => readableOf(form, await open()) },
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/**
 * The form with `source` as its file part, as a stream of today's kind (form-data is an old-style
 * stream): its errors (a blob read failing) fail the request, and ending it early ends `source`.
 */
function readableOf(form: (content: Readable) => FormData, source: Readable): Readable {
  const out = new PassThrough();
  const encoded = form(source);
  encoded.on('error', (error: Error) => out.destroy(error));
  out.on('close', () => source.destroy());
  encoded.pipe(out);
  return out;
}
