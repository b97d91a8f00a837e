// The streamed XLSX writer: what Excel's format needs (escaping, column names, inline strings) read back by exceljs,
// hostile text, an error while reading the pages, and a slow reader holding the pages back (backpressure).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ExcelJS from 'exceljs';
import { columnName, escapeXml, type XlsxCell, xlsxWorkbook } from '../../runtime/data-export/xlsx-writer';

async function* pagesOf(...pages: XlsxCell[][][]): AsyncIterable<XlsxCell[][]> {
  for (const page of pages) yield page;
}

async function bytesOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function cellsOf(bytes: Buffer): Promise<{ name: string; cells: unknown[][] }> {
  const book = new ExcelJS.Workbook();
  // exceljs types its input as an ArrayBuffer.
  await book.xlsx.load(new Uint8Array(bytes).buffer);
  const sheet = book.worksheets[0]!;
  const cells: unknown[][] = [];
  sheet.eachRow((row) => cells.push((row.values as unknown[]).slice(1)));
  return { name: sheet.name, cells };
}

test('column names run A..Z, AA..AZ, BA.., ZZ, AAA', () => {
  expect([0, 25, 26, 51, 52, 701, 702].map(columnName)).toEqual(['A', 'Z', 'AA', 'AZ', 'BA', 'ZZ', 'AAA']);
});

test('markup is escaped; control characters and lone surrogates are dropped; pairs are kept', () => {
  expect(escapeXml('<b a="1">&amp;</b>')).toBe('&lt;b a=&quot;1&quot;&gt;&amp;amp;&lt;/b&gt;');
  expect(escapeXml('a\u0000b\u0007c\u001fd\ud800e\udc00f')).toBe('abcdef');
  // A carriage return as a reference: XML readers turn a literal one into a line feed.
  expect(escapeXml('tab\tlf\ncr\r😀')).toBe('tab\tlf\ncr&#13;😀');
});

test('text, numbers and empty cells read back as written, over several pages', async () => {
  const bytes = await bytesOf(
    xlsxWorkbook(
      'To Do & <more>',
      pagesOf(
        [['name', 'count', 'note']],
        [
          ['a', 1.5, null],
          [null, -2, '  padded  '],
        ],
        [],
        [['</t></is></c><c t="str"><f>1+1</f>', 0, 'line\nbreak']],
      ),
    ),
  );
  const { name, cells } = await cellsOf(bytes);
  expect(name).toBe('To Do & <more>');
  expect(cells).toEqual([
    ['name', 'count', 'note'],
    ['a', 1.5],
    [undefined, -2, '  padded  '],
    ['</t></is></c><c t="str"><f>1+1</f>', 0, 'line\nbreak'],
  ]);
});

test('an error while reading the pages ends the stream with that error', async () => {
  async function* failing(): AsyncIterable<XlsxCell[][]> {
    yield [['first']];
    throw new Error('the database went away');
  }
  await expect(bytesOf(xlsxWorkbook('x', failing()))).rejects.toThrow('the database went away');
});

test('a reader that does not read holds the pages back; one that leaves stops them', async () => {
  let pulled = 0;
  let stopped = false;
  async function* endless(): AsyncIterable<XlsxCell[][]> {
    try {
      for (;;) {
        pulled++;
        // Random text: what the zip holds back is counted in compressed bytes, so text that compresses well would
        // let many pages through before the zip's buffers fill.
        yield Array.from({ length: 1000 }, (_, i) => [
          `row ${pulled}-${i}`,
          randomBytes(50).toString('hex'),
          i,
        ]);
      }
    } finally {
      stopped = true;
    }
  }
  const stream = xlsxWorkbook('x', endless());
  // Wait until no page has been pulled for 1 s (the compressor works through what it was given, and a loaded machine
  // can hold it up for a moment), at most 15 s, or until far more pages were pulled than the buffers hold.
  let quietMs = 0;
  for (const end = Date.now() + 15_000; quietMs < 1000 && pulled < 100 && Date.now() < end;) {
    const before = pulled;
    await new Promise((resolve) => setTimeout(resolve, 200));
    quietMs = pulled === before ? quietMs + 200 : 0;
  }
  const pausedAt = pulled;
  // 16 pages in Readable.from's buffer plus what the zip's own buffers hold: nowhere near an endless read, and no
  // more pages while nothing reads.
  expect(pausedAt).toBeLessThan(100);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(pulled).toBe(pausedAt);
  let bytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > 20_000_000) stream.destroy();
      done();
    },
  });
  await pipeline(stream, sink).catch(() => undefined);
  expect(pulled).toBeGreaterThan(pausedAt);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(stopped).toBe(true);
});
