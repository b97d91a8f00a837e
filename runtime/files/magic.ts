// The content type of stored bytes, from their first bytes (magic numbers), never from the name or the uploader's
// claim; and whether a browser may show it inline (raster images only: everything else is a download).

/** How many leading bytes the sniffer reads. */
export const SNIFF_BYTES = 512;

/** A sniffed type: the Content-Type to send and whether it may be shown inline. */
export interface SniffedType {
  type: string;
  inline: boolean;
}

const starts = (bytes: Buffer, magic: number[], at = 0) => magic.every((b, i) => bytes[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** Binary signatures, in order; `inline` only for raster images, which carry no active content. */
const SIGNATURES: {
  magic: number[];
  at?: number;
  also?: { magic: number[]; at: number };
  type: string;
  inline?: true;
}[] = [
  { magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], type: 'image/png', inline: true },
  { magic: [0xff, 0xd8, 0xff], type: 'image/jpeg', inline: true },
  { magic: ascii('GIF87a'), type: 'image/gif', inline: true },
  { magic: ascii('GIF89a'), type: 'image/gif', inline: true },
  { magic: ascii('RIFF'), also: { magic: ascii('WEBP'), at: 8 }, type: 'image/webp', inline: true },
  { magic: ascii('BM'), type: 'image/bmp', inline: true },
  { magic: [0x00, 0x00, 0x01, 0x00], type: 'image/x-icon', inline: true },
  { magic: ascii('%PDF-'), type: 'application/pdf' },
  { magic: [0x50, 0x4b, 0x03, 0x04], type: 'application/zip' },
  { magic: [0x1f, 0x8b], type: 'application/gzip' },
  { magic: ascii('ftyp'), at: 4, type: 'video/mp4' },
  { magic: ascii('ID3'), type: 'audio/mpeg' },
  { magic: ascii('OggS'), type: 'application/ogg' },
  { magic: ascii('RIFF'), also: { magic: ascii('WAVE'), at: 8 }, type: 'audio/wav' },
];

/** Markup a browser would render as HTML when it starts a text file (WHATWG MIME sniffing's list, abridged). */
const HTML_START =
  /^<(!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|img|svg|object|embed|meta|link|form|!--)[\s/>]/i;

/** The type of `head`, the first SNIFF_BYTES bytes of a file. */
export function sniffType(head: Buffer): SniffedType {
  for (const sig of SIGNATURES) {
    if (!starts(head, sig.magic, sig.at ?? 0)) continue;
    if (sig.also && !starts(head, sig.also.magic, sig.also.at)) continue;
    return { type: sig.type, inline: sig.inline === true };
  }
  if (head.includes(0)) return { type: 'application/octet-stream', inline: false };
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  const lower = text.toLowerCase();
  if (lower.startsWith('<svg') || (lower.startsWith('<?xml') && lower.includes('<svg')))
    return { type: 'image/svg+xml', inline: false };
  if (lower.startsWith('<?xml')) return { type: 'application/xml', inline: false };
  if (HTML_START.test(text)) return { type: 'text/html; charset=utf-8', inline: false };
  return { type: 'text/plain; charset=utf-8', inline: false };
}
