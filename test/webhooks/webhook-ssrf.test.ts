// Where a webhook may not send: private, loopback, link-local, metadata and unique-local addresses, written as
// literals or behind a name (a DNS server on loopback answers in-process), refused when saved (400, nothing saved)
// unless webhook_allowed_hosts allows them; and a name that resolves elsewhere after the save is refused at delivery.
import { isRefusedAddress } from '../../runtime/webhooks/address-policy';
import { WEBHOOKS } from '../../runtime/webhooks/webhook-index';
import { startDnsResponder, type DnsResponder } from '../helpers/dns-responder';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(30_000);

const table: Record<string, string[]> = {
  'loopback.test': ['127.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'private6.test': ['fd00::1'],
  'mixed.test': ['93.184.216.34', '10.0.0.7'],
  'receiver.test': ['127.0.0.1'],
};

let t: TestSite;
let dns: DnsResponder;
let receiver: Receiver | undefined;

beforeAll(async () => {
  dns = await startDnsResponder(table);
});

afterAll(async () => {
  await dns.close();
});

beforeEach(async () => {
  t = await createTestSite({
    site: {
      webhook_allowed_hosts: ['127.0.0.1', 'allowed.test'],
      webhook_retry_schedule: [],
      job_poll_ms: 50,
    },
  });
  WEBHOOKS.of(t.site).lookup = dns.lookup;
});

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
  await t.close();
});

it.each([
  'http://10.0.0.1/hook',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00::1]/hook',
  'http://[fd00:ec2::254]/',
  'http://127.0.0.2:8080/hook',
  'http://0x7f.0.0.2/hook',
  'http://2130706434/hook',
  'http://[::1]/hook',
  'http://[::ffff:10.0.0.1]/hook',
  'http://[::ffff:7f00:2]/hook',
  'http://[64:ff9b::a9fe:a9fe]/hook',
  // NAT64 local use, 6to4 and SIIT forms of 127.0.0.2.
  'http://[64:ff9b:1::7f00:2]/hook',
  'http://[2002:7f00:2::]/hook',
  'http://[::ffff:0:7f00:2]/hook',
  'http://[fe80::1]/hook',
  'http://0.0.0.0/hook',
  'http://192.168.1.10/hook',
  'http://172.16.0.1/hook',
  'http://100.64.0.1/hook',
  'http://loopback.test/hook',
  'http://metadata.test/hook',
  'http://private6.test/hook',
  'http://mixed.test/hook',
  'http://nowhere.test/hook',
  'ftp://93.184.216.34/hook',
  'file:///etc/passwd',
  'http://user:pass@93.184.216.34/hook',
  'not a url',
])('refuses %s at save, saving nothing', async (url) => {
  const res = await createWebhook(t, { name: 'hostile', request_url: url });
  expect(res.status).toBe(400);
  expect(res.body.exc_type ?? res.body.errors?.[0]?.type).toBe('ValidationError');
  expect(await t.site.db.knex('tabWebhook').count({ n: '*' }).first()).toEqual({ n: 0 });
});

it.each(['http://127.0.0.1:9/hook', 'http://allowed.test/hook', 'http://93.184.216.34/hook'])(
  'accepts %s (allowed, or public)',
  async (url) => {
    WEBHOOKS.of(t.site).lookup = async (host) =>
      host === 'allowed.test' ? [{ address: '10.9.9.9', family: 4 }] : dns.lookup(host);
    expect((await createWebhook(t, { name: 'ok', request_url: url })).status).toBe(201);
  },
);

it('refuses hostile headers at save', async () => {
  for (const header of [
    { key: 'Host', value: 'evil' },
    { key: 'X-A', value: 'a\r\nX-Injected: 1' },
    { key: 'Bad Name', value: 'x' },
    { key: 'webhook-signature', value: 'v1,forged' },
  ]) {
    const res = await createWebhook(t, {
      name: 'h',
      request_url: 'http://127.0.0.1:9/',
      webhook_headers: [header],
    });
    expect(res.status).toBe(400);
  }
  expect(await t.site.db.knex('tabWebhook').count({ n: '*' }).first()).toEqual({ n: 0 });
});

it('refuses at delivery a name that resolves to a refused address after the save (no rebinding)', async () => {
  receiver = await startReceiver(0, [200]);
  const url = `http://receiver.test:${new URL(receiver.url).port}/hook`;
  expect((await createWebhook(t, { name: 'rebind', request_url: url })).status).toBe(201);
  table['receiver.test'] = ['127.0.0.9'];
  try {
    await createTodo(t);
    await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Exhausted'), 10_000, 'Exhausted');
  } finally {
    table['receiver.test'] = ['127.0.0.1'];
  }
  const [row] = await logRows(t);
  expect(String(row?.error)).toMatch(/127\.0\.0\.9: a loopback, private/);
  expect(receiver.requests).toHaveLength(0);
});

it('classifies addresses', () => {
  for (const refused of [
    '127.0.0.1',
    '10.1.2.3',
    '::1',
    'fd12::1',
    '::ffff:192.168.0.1',
    '169.254.169.254',
    '224.0.0.1',
    '2002:a00:1::1',
    '::ffff:0:a9fe:a9fe',
  ])
    expect([refused, isRefusedAddress(refused)]).toEqual([refused, true]);
  // 6to4 of a public address is public.
  for (const open of ['93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '8.8.8.8', '2002:808:808::1'])
    expect([open, isRefusedAddress(open)]).toEqual([open, false]);
});
