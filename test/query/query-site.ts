// The query tests' site: the fixture registry with Query Customer / Query Order, and a fixed set of orders to list.
import { today } from '../../runtime/db/stored-values';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';
import type { SiteConfig } from '../../runtime/config/config';

/** The seeded orders by title, with the names the site gave them. */
export interface Seeded {
  t: TestSite;
  names: Record<string, string>;
}

/** The seeded orders (titles are unique; `zeta` is dated today for the timespan tests). */
export const ORDERS: Record<string, unknown>[] = [
  {
    title: 'alpha',
    status: 'Open',
    customer: 'Acme',
    amount: 100,
    qty: 1,
    urgent: 1,
    order_date: '2024-01-10',
    ship_at: '2024-01-10 09:00:00',
    note: 'first',
    cost: 40,
    lines: [
      { item: 'bolt', qty: 2, rate: 1.5, customer: 'Globex' },
      { item: 'nut', qty: 10, rate: 0.25 },
      { item: 'bolt', qty: 4, rate: 1.5 },
    ],
  },
  {
    title: 'beta',
    status: 'Closed',
    customer: 'Globex',
    amount: 250.5,
    qty: 5,
    urgent: 0,
    order_date: '2024-02-01',
    ship_at: '2024-02-01 23:30:00',
    lines: [{ item: 'bolt', qty: 1 }],
  },
  { title: 'gamma', status: 'Open', amount: 0, qty: 0, order_date: '2024-02-15', note: '' },
  {
    title: 'delta',
    status: 'Cancelled',
    customer: 'Acme',
    amount: 75,
    qty: 3,
    urgent: 1,
    note: 'last',
    lines: [{ item: 'gear', qty: 7 }],
  },
  {
    title: 'epsilon',
    status: 'Open',
    customer: 'Globex',
    amount: 500,
    qty: 2,
    order_date: '2024-03-01',
    note: 'x%y',
  },
  { title: 'zeta', status: 'Closed', customer: 'Initech', amount: 10, qty: 2, order_date: today() },
];

/** Every seeded title. */
export const ALL = ORDERS.map((o) => o.title as string).sort();

/** The v1 and v2 list paths of Query Order. */
export const PATHS = { v1: '/api/resource/Query%20Order', v2: '/api/v2/document/Query%20Order' } as const;

/** Opens a site with the customers and orders seeded by Administrator. */
export async function seededSite(site: Partial<SiteConfig> = {}): Promise<Seeded> {
  const t = await createTestSite({ registry: await fixtureRegistry(), site });
  const post = async (doctype: string, body: object) => {
    const res = await t.http
      .post(`/api/v2/document/${encodeURIComponent(doctype)}`)
      .set('Authorization', t.adminToken)
      .send(body);
    if (res.status !== 201) throw new Error(`seeding ${doctype}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };
  await post('Query Customer', { customer_name: 'Acme', region: 'North', credit_limit: 1000 });
  await post('Query Customer', { customer_name: 'Globex', region: 'South', credit_limit: 2000 });
  await post('Query Customer', { customer_name: 'Initech' });
  const names: Record<string, string> = {};
  for (const order of ORDERS)
    names[order.title as string] = (await post('Query Order', order)).name as string;
  return { t, names };
}

/** Query parameters with JSON values encoded as Frappe clients send them. */
export function query(params: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

/** The sorted titles of a list answer. */
export function titles(body: { data: { title: string }[] }): string[] {
  return body.data.map((r) => r.title).sort();
}
