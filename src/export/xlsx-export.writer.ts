import { PassThrough } from 'node:stream';
import type ExcelJS from 'exceljs';
import {
  cellText,
  columnsOfFirstRecord,
  fieldHeaders,
  formulaSafe,
  type CellOptions,
  type ChunkWriter,
  type ExportLabels,
  type ExportWriter,
} from './export-format';
import type { RecordValues } from '../data/record.mapper';

const HEADER_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFD9D9D9' } };
const COLUMN_WIDTH = 20;
const CREATED_AT_FORMAT = 'yyyy-mm-dd hh:mm:ss';

/**
 * The spec's workbook: one sheet `Data`, a bold grey header (localized id, created-at and
 * configuration-version labels, then the field names), `createdAt` as a real date, every column 20 wide; rows are committed as
 * they come so memory stays flat. An empty result is a workbook whose sheet has no rows.
 */
export class XlsxExportWriter implements ExportWriter<RecordValues> {
  private readonly output = new PassThrough();
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private readonly sheet: ExcelJS.Worksheet;
  private columns: string[] | null;
  /** One style object per column, shared by the column's cells (see writeBatch). */
  private cellStyles: Partial<ExcelJS.Style>[] = [];
  private readonly pump: Promise<void>;
  private started = false;

  /**
   * exceljs is loaded at the first XLSX export, not at boot: it is the largest library of the service
   * (about 25 MB resident once loaded), and most processes never write a workbook.
   */
  static async open(
    write: ChunkWriter,
    labels: ExportLabels,
    options: CellOptions,
    columns?: string[],
    schemaOrder: string[] = [],
  ): Promise<XlsxExportWriter> {
    const { default: excel } = await import('exceljs');
    return new XlsxExportWriter(excel, write, labels, options, columns, schemaOrder);
  }

  private constructor(
    excel: typeof ExcelJS,
    write: ChunkWriter,
    private readonly labels: ExportLabels,
    private readonly options: CellOptions,
    columns: string[] | undefined,
    private readonly schemaOrder: string[],
  ) {
    this.columns = columns && columns.length > 0 ? columns : null;
    this.workbook = new excel.stream.xlsx.WorkbookWriter({
      stream: this.output,
      useStyles: true,
      useSharedStrings: false,
      // Fast compression: the workbook is bigger but the compressor keeps pace with the database.
      zip: { zlib: { level: 1 } },
    });
    this.sheet = this.workbook.addWorksheet('Data');
    // Forward what exceljs produces, honouring the receiver's backpressure.
    this.pump = (async () => {
      for await (const chunk of this.output) {
        if (!(await write(chunk as Buffer))) {
          this.output.destroy();
          return;
        }
      }
    })();
  }

  async writeBatch(rows: RecordValues[]): Promise<boolean> {
    if (rows.length === 0) return !this.output.destroyed;
    if (!this.started) this.startSheet(rows[0]);
    const columns = this.columns!;
    const styles = this.cellStyles;
    const safe = !this.options.raw;
    const withVersion = this.options.configVersionColumn;
    const system = withVersion ? 3 : 2;
    const values: (string | number | boolean | Date | null)[] = new Array(columns.length + system);
    for (const row of rows) {
      values[0] = row.id;
      values[1] = row.createdAt;
      if (withVersion) values[2] = row.configVersion;
      for (let index = 0; index < columns.length; index++) {
        values[index + system] = excelValue(row.data?.[columns[index]], safe);
      }
      const sheetRow = this.sheet.addRow(values);
      // exceljs gives every cell a fresh copy of its column's style and then, to find the style's
      // id, renders that copy as XML: the largest cost of a row. It remembers the id of a style
      // object it has seen, so cells that share their column's object skip the rendering. The ids,
      // and so the workbook, are the same.
      for (let index = 0; index < styles.length; index++) {
        sheetRow.getCell(index + 1).style = styles[index];
      }
      sheetRow.commit();
    }
    await this.compressionCaughtUp();
    return !this.output.destroyed;
  }

  /**
   * exceljs pushes committed rows into the zip compressor without waiting for it, so a fast database
   * would fill memory with uncompressed XML. Waiting for the compressor's input to drain after each
   * batch keeps memory flat; the compressor in turn waits for the HTTP client through the pump.
   */
  private async compressionCaughtUp(): Promise<void> {
    type CompressorInput = NodeJS.WritableStream & { _writableState?: { needDrain?: boolean } };
    const sheetStream = (this.sheet as unknown as { stream?: { pipes?: CompressorInput[] } }).stream;
    // archiver's input is a readable-stream v2 PassThrough: its state says whether it is over its mark.
    const compressor = sheetStream?.pipes?.[0];
    if (compressor?._writableState?.needDrain && !this.output.destroyed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          compressor.removeListener('drain', done);
          this.output.removeListener('close', done);
          resolve();
        };
        compressor.once('drain', done);
        this.output.once('close', done);
      });
    }
  }

  async end(): Promise<void> {
    this.sheet.commit();
    await this.workbook.commit();
    await this.pump;
  }

  private startSheet(first: RecordValues): void {
    this.started = true;
    this.columns ??= columnsOfFirstRecord(first, this.schemaOrder);
    // Field names are keys a submission chose: they get the cell rules too, and never shadow the
    // system columns (`fieldHeaders`).
    const system = [this.labels.id, this.labels.createdAt];
    if (this.options.configVersionColumn) system.push(this.labels.configVersion);
    const fields = fieldHeaders(this.columns.map(xlsxText), system, this.options);
    // Cut again: a `'` or `data.` in front may have taken a cut name over the cell limit.
    const headers = [...system, ...fields.map(xlsxText)];
    const columnStyle = (index: number) => (index === 1 ? { numFmt: CREATED_AT_FORMAT } : {});
    this.sheet.columns = headers.map((header, index) => ({
      header,
      key: `c${index}`,
      width: COLUMN_WIDTH,
      style: columnStyle(index),
    }));
    this.cellStyles = headers.map((_, index) => columnStyle(index));
    const header = this.sheet.getRow(1);
    header.eachCell((cell) => {
      cell.font = { bold: true };
      cell.fill = HEADER_FILL;
      cell.numFmt = '@';
    });
    header.commit();
  }
}

/**
 * Code points XML 1.0 does not allow in a document: C0 controls but tab, LF and CR; U+FFFE, U+FFFF;
 * and lone surrogates. One of them in a cell would make the sheet's XML, so the whole workbook,
 * unreadable.
 */
const XML_ILLEGAL =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Excel's limit on the text of one cell, in UTF-16 code units. */
const EXCEL_CELL_MAX_CHARS = 32_767;

/**
 * Text as a cell can hold it: XML-illegal code points removed, then cut at Excel's 32,767 characters
 * (never between the two halves of a surrogate pair). Most text needs neither, and pays one test.
 */
function xlsxText(text: string): string {
  XML_ILLEGAL.lastIndex = 0;
  let clean = XML_ILLEGAL.test(text) ? text.replace(XML_ILLEGAL, '') : text;
  if (clean.length > EXCEL_CELL_MAX_CHARS) {
    const high = clean.charCodeAt(EXCEL_CELL_MAX_CHARS - 1);
    clean = clean.slice(
      0,
      high >= 0xd800 && high <= 0xdbff ? EXCEL_CELL_MAX_CHARS - 1 : EXCEL_CELL_MAX_CHARS,
    );
  }
  return clean;
}

/**
 * Numbers and booleans stay typed (a negative number is a number, not a formula); strings as cells
 * can hold them and, when `safe`, with a leading `'` if a spreadsheet would evaluate them (cut again
 * if that made them one character too long); objects and arrays as JSON text.
 */
function excelValue(value: unknown, safe: boolean): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'string') return xlsxText(cellText(value));
  const text = xlsxText(value);
  if (!safe) return text;
  const neutralised = formulaSafe(text);
  return neutralised === text ? text : xlsxText(neutralised);
}
