// Sends exact bytes to the app (supertest re-encodes bodies and always sets Content-Length): a throwaway server on a free port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request to send byte for byte. `chunked` streams the body without Content-Length. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  chunked?: boolean;
}

/** The response: status and parsed JSON body (undefined when the body is not JSON). */
export interface RawResponse {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** Serves `handler` on 127.0.0.1 for one request and returns the response. */
export function rawRequest(handler: http.RequestListener, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(handler).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      const headers = request.chunked
        ? request.headers
        : { ...request.headers, 'content-length': String(request.body.length) };
      const req = http.request(
        { host: '127.0.0.1', port, method: request.method, path: request.path, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            server.close();
            const text = Buffer.concat(chunks).toString('utf8');
            let body: Record<string, unknown> | undefined;
            try {
              body = JSON.parse(text) as Record<string, unknown>;
            } catch {
              body = undefined;
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on('error', (err) => {
        server.close();
        reject(err);
      });
      if (!request.chunked) req.end(request.body);
      else {
        for (let i = 0; i < request.body.length; i += 1024) req.write(request.body.subarray(i, i + 1024));
        req.end();
      }
    });
  });
}
