import ExcelJS from 'exceljs';

/** Reading the XLSX exports the way a spreadsheet would, in the suites that check their cells. */

/** The workbook an XLSX answer carries. */
export async function xlsxWorkbook(response: { rawPayload: Buffer }): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(response.rawPayload as unknown as ArrayBuffer);
  return workbook;
}

/** The export's one sheet, `Data`, of an XLSX answer. */
export async function dataSheet(response: { rawPayload: Buffer }): Promise<ExcelJS.Worksheet> {
  const sheet = (await xlsxWorkbook(response)).getWorksheet('Data');
  if (!sheet) throw new Error('the workbook has no Data sheet');
  return sheet;
}
