// `svc serve`'s check that generated/ is current: a DocType JSON edited, added or removed since the generator recorded
// the files (generated/doctype-sources.json) is one warning each; an unchanged one, or a JSON file that is no DocType,
// none. The generator's and the server's hashes agree (the map is emitted here from the loader's hashes).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createContext } from '../../generator/context';
import { DOCTYPE_SOURCES_PATH, emitDocTypeSources } from '../../generator/emit/doctype-sources';
import { loadDocTypes } from '../../generator/load-doctypes';
import { normalizeDocTypes } from '../../generator/normalize';
import { staleDocTypes, warnStaleDocTypes } from '../../runtime/cli/stale-doctypes';
import { captureLog } from '../helpers/captured-log';

const dir = path.resolve(__dirname, '../tmp', `stale_${process.pid}_${randomBytes(4).toString('hex')}`);
const doctypes = path.join(dir, 'doctypes');
const generated = path.join(dir, 'generated');

const docType = (name: string, fields: string[]) =>
  `${JSON.stringify(
    {
      doctype: 'DocType',
      name,
      module: 'Test',
      fields: fields.map((f) => ({ fieldname: f, fieldtype: 'Data' })),
    },
    null,
    2,
  )}\n`;

function write(rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(doctypes, rel)), { recursive: true });
  writeFileSync(path.join(doctypes, rel), text);
}

/** What `npm run generate` records about the files under doctypes/. */
function generate(): void {
  const loaded = loadDocTypes([doctypes]);
  mkdirSync(generated, { recursive: true });
  const ctx = createContext(normalizeDocTypes(loaded.doctypes), generated);
  writeFileSync(path.join(generated, DOCTYPE_SOURCES_PATH), emitDocTypeSources(ctx));
}

beforeEach(() => {
  rmSync(dir, { recursive: true, force: true });
  write('shop/gadget/gadget.json', docType('Gadget', ['title']));
  write('shop/order/order.json', docType('Order', ['customer']));
  write('shop/order/sample.json', '{"not": "a DocType"}\n');
  generate();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('nothing is stale right after generating', async () => {
  expect(await staleDocTypes(doctypes, generated)).toEqual([]);
});

test('an edited, an added and a removed DocType are each reported; other JSON files are not', async () => {
  write('shop/gadget/gadget.json', docType('Gadget', ['title', 'colour']));
  write('shop/invoice/invoice.json', docType('Invoice', ['total']));
  write('shop/order/sample.json', '{"still": "not a DocType"}\n');
  rmSync(path.join(doctypes, 'shop/order/order.json'));
  expect(await staleDocTypes(doctypes, generated)).toEqual([
    { doctype: 'Gadget', file: 'shop/gadget/gadget.json', change: 'changed' },
    { doctype: 'Invoice', file: 'shop/invoice/invoice.json', change: 'new' },
    { doctype: 'Order', file: 'shop/order/order.json', change: 'removed' },
  ]);
});

test('the warning is one log line per DocType, naming it and the command to run', async () => {
  write('shop/gadget/gadget.json', docType('Gadget', ['title', 'colour']));
  write('shop/order/order.json', docType('Order', ['customer', 'total']));
  const log = captureLog('warn');
  try {
    await warnStaleDocTypes(doctypes, generated);
  } finally {
    log.restore();
  }
  expect(log.lines.map((l) => [l.event, l.doctype, l.change])).toEqual([
    ['doctype_not_generated', 'Gadget', 'changed'],
    ['doctype_not_generated', 'Order', 'changed'],
  ]);
  expect(String(log.lines[0]?.msg)).toMatch(
    /Gadget .*changed since generated\/ was written.*npm run generate/,
  );
});

test('without a record (generated/ older than the record) nothing is reported', async () => {
  rmSync(path.join(generated, DOCTYPE_SOURCES_PATH));
  write('shop/gadget/gadget.json', docType('Gadget', ['title', 'colour']));
  expect(await staleDocTypes(doctypes, generated)).toEqual([]);
});
