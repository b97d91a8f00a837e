// What a connection gets when node's HTTP parser refuses its request before the app sees it (a request line and headers
// past node's 16 KB, a malformed request, a request that did not arrive within the timeouts): the same JSON error
// body as every other refusal (render-error.ts), then the connection closes. Node's own answer has no body.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  BadRequestError,
  RequestHeaderFieldsTooLargeError,
  RequestTimeoutError,
  type AppError,
} from '../errors/errors';
import { renderError } from '../errors/render-error';

/** The error of a parser refusal, by node's error code. */
function refusalOf(code: string | undefined): AppError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new RequestHeaderFieldsTooLargeError('The request line and headers are larger than 16 KB');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new RequestTimeoutError('The request did not arrive within the server timeout');
  return new BadRequestError('Malformed HTTP request');
}

/** The http.Server `clientError` listener: answers the refusal as JSON, or drops a connection that is gone. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, body } = renderError(refusalOf(err.code), { version: 1, developerMode: false });
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
