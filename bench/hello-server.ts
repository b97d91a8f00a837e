// Baseline for `npm run bench`: the smallest Koa server answering JSON. Run with PORT and HOST.
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { hello: 'world' };
});

const host = process.env.HOST ?? '127.0.0.1';
const server = app.listen(Number(process.env.PORT ?? 0), host, () => {
  console.log(`hello listening on http://${host}:${(server.address() as AddressInfo).port}`);
});
const stop = () => server.close(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
