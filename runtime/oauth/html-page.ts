// Server-rendered HTML of the sign-in and consent pages: escaping, the page frame, and headers that keep it unframed.
import type { AppContext } from '../http/state';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A hidden form field. */
export function hiddenField(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}

/**
 * Sends a page: no scripts, no framing (clickjacking a consent button), inline styles only. No `form-action`: the
 * consent form's answer redirects to the client, which browsers would check against it.
 */
export function sendPage(ctx: AppContext, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#222}
label,input,button{display:block;width:100%;margin:.4rem 0;font-size:1rem}input{padding:.4rem}
button{padding:.5rem;cursor:pointer}.row{display:flex;gap:.5rem}.row button{flex:1}.error{color:#b00}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}
