import { PDF, PNG } from '../../test/factories/attachment-files';
import { sniffMediaType } from './media-type-sniffer';

/** A text whose bytes 0 and 188 are `G`: file-type's whole test for an MPEG transport stream. */
const transportStreamLookalike = Buffer.from(`G${'x'.repeat(187)}G${'y'.repeat(400)}`);

describe('sniffMediaType', () => {
  it.each([
    ['a text opening with a bitmap signature', Buffer.from('BMW and Audi sales by month\n')],
    ['a text opening with a Windows program signature', Buffer.from('MZ-2 field notes\n')],
    ['a text shaped like a transport stream', transportStreamLookalike],
    ['a text opening with a Musepack signature', Buffer.from('MP+ plan for next week')],
    ['plain UTF-8 text', Buffer.from('Kovács Anna, árvíztűrő tükörfúrógép\n')],
  ])('calls %s text/plain', async (_name, bytes) => {
    expect(await sniffMediaType(bytes)).toBe('text/plain');
  });

  it('keeps the formats that are text themselves', async () => {
    expect(await sniffMediaType(PDF)).toBe('application/pdf');
    expect(await sniffMediaType(Buffer.from('{\\rtf1\\ansi Hello}'))).toBe('application/rtf');
    expect(await sniffMediaType(Buffer.from('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n'))).toBe(
      'text/calendar',
    );
  });

  it('names binary files by their signature, and unknown binary bytes octet-stream', async () => {
    expect(await sniffMediaType(PNG)).toBe('image/png');
    const bitmap = Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]);
    expect(await sniffMediaType(bitmap)).toBe('image/bmp');
    const transportStream = Buffer.from(transportStreamLookalike);
    transportStream[1] = 0x00;
    expect(await sniffMediaType(transportStream)).toBe('video/mp2t');
    expect(await sniffMediaType(Buffer.from([0x00, 0xff, 0x10, 0x80]))).toBe('application/octet-stream');
  });
});
