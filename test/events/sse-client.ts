// A minimal server-sent events client for the tests: opens a stream, parses its messages and waits for them.
import http from 'node:http';

/** One parsed message (comments are counted apart). */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
}

/** An open stream (or a refused request: status and body). */
export class SseClient {
  readonly messages: SseMessage[] = [];
  comments = 0;
  body = '';
  ended = false;
  private buffer = '';
  private waiters: (() => void)[] = [];

  private constructor(
    readonly status: number,
    readonly headers: http.IncomingHttpHeaders,
    private readonly req: http.ClientRequest,
  ) {}

  /** GETs `path` on 127.0.0.1:`port`; resolves once the response headers arrived. */
  static open(port: number, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        const client = new SseClient(res.statusCode ?? 0, res.headers, req);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => client.take(chunk));
        res.on('end', () => client.finish());
        res.on('error', () => client.finish());
        resolve(client);
      });
      req.on('error', reject);
    });
  }

  /** The messages of one `event:` type. */
  of(event: string): SseMessage[] {
    return this.messages.filter((m) => m.event === event);
  }

  /** Resolves once `ready()` holds; rejects after `ms`. */
  async until(ready: (c: SseClient) => boolean, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!ready(this)) {
      if (Date.now() > end)
        throw new Error(`timed out; got ${JSON.stringify(this.messages)} ${this.body.slice(0, 200)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Cuts the connection off. */
  close(): void {
    this.req.destroy();
  }

  private take(chunk: string): void {
    this.body += chunk;
    this.buffer += chunk;
    let cut: number;
    while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 2);
      const message: SseMessage = {};
      let fields = 0;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const key = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (key === 'id' || key === 'event' || key === 'data') {
          message[key] = value;
          fields++;
        }
      }
      if (fields) this.messages.push(message);
    }
    this.wake();
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
