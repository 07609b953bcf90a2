import {
  CSV_SAMPLE_LIMITS,
  CsvSampleError,
  cellValue,
  csvSamples,
  detectDelimiter,
  parseCsv,
} from './csv-samples';

describe('parseCsv (RFC 4180)', () => {
  it('reads quoted fields with delimiters, doubled quotes and line breaks, and CRLF, LF or CR record ends', () => {
    const text = 'name,note\r\n"Kovács, Anna","She said ""hi""\r\nthen left"\nBob,plain\rEve,"" \r\n';
    expect(parseCsv(text)).toEqual([
      ['name', 'note'],
      ['Kovács, Anna', 'She said "hi"\r\nthen left'],
      ['Bob', 'plain'],
      ['Eve', ' '],
    ]);
  });

  it('keeps empty fields, drops a byte-order mark, and refuses an unterminated quote', () => {
    expect(parseCsv('\uFEFFa,b,c\n1,,3')).toEqual([
      ['a', 'b', 'c'],
      ['1', '', '3'],
    ]);
    expect(() => parseCsv('a,b\n"x,1')).toThrow(CsvSampleError);
  });

  it('detects comma, semicolon or tab from the header line, ignoring quoted ones', () => {
    expect(detectDelimiter('a,b,c\n1;2;3')).toBe(',');
    expect(detectDelimiter('név;"város, megye";kor\n')).toBe(';');
    expect(detectDelimiter('a\tb\tc')).toBe('\t');
  });
});

describe('csvSamples', () => {
  it('types cells as a form would submit them and nests dotted headers', () => {
    const { records } = csvSamples(
      'name;age;price;vip;zip;address.city;address.street\nAnn;34;12.5;TRUE;01234;Pécs;Fő u. 1\nBob;;-3;false;;Győr;\n',
    );
    expect(records).toEqual([
      {
        name: 'Ann',
        age: 34,
        price: 12.5,
        vip: true,
        zip: '01234',
        address: { city: 'Pécs', street: 'Fő u. 1' },
      },
      { name: 'Bob', price: -3, vip: false, address: { city: 'Győr' } },
    ]);
    expect(cellValue('1e3')).toBe(1000);
    expect(cellValue(' 7 ')).toBe(7);
    expect(cellValue('12abc')).toBe('12abc');
  });

  it('keeps a dotted header flat when a prefix is a column of its own or a segment is empty', () => {
    const { records } = csvSamples('a,a.b,c.\n1,2,4');
    expect(records[0]).toEqual({ a: 1, 'a.b': 2, 'c.': 4 });
    expect(Object.getPrototypeOf(records[0])).toBe(Object.prototype);
  });

  it('refuses a header with a part naming an object property (__proto__, constructor, toString)', () => {
    for (const header of ['__proto__', '__proto__.x', 'a.constructor', 'toString']) {
      expect(() => csvSamples(`a,${header}\n1,2`)).toThrow(
        `the header "${header}" names a JavaScript object property (such as __proto__ or constructor), which cannot be a field name`,
      );
    }
  });

  it('reports rows with extra cells and names empty headers', () => {
    const parsed = csvSamples('a,\n1,2,3\n4,5');
    expect(parsed.records).toEqual([
      { a: 1, column2: 2 },
      { a: 4, column2: 5 },
    ]);
    expect(parsed.rowsWithExtraCells).toEqual([2]);
  });

  it('refuses a missing data row, duplicate headers and oversized input', () => {
    const rule = (text: string) => {
      try {
        csvSamples(text);
        return null;
      } catch (error) {
        return (error as CsvSampleError).problem.rule;
      }
    };
    expect(rule('a,b\n')).toBe('csv');
    expect(rule('a,a\n1,2')).toBe('csv');
    expect(rule(`a\n${'1\n'.repeat(CSV_SAMPLE_LIMITS.records + 1)}`)).toBe('maxRecords');
    expect(rule(`a\n${'x'.repeat(CSV_SAMPLE_LIMITS.bytes)}`)).toBe('maxBytes');
    expect(rule(`a\n${'1\n'.repeat(CSV_SAMPLE_LIMITS.records)}`)).toBeNull();
  });
});
