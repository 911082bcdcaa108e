// The request head of the one case the lean HTTP front serves itself: `POST <route> HTTP/1.1`, a Content-Length body,
// every header once. Anything else — another method or version, chunked bodies, `Expect`, `Upgrade`, a header given
// twice (Node joins or drops duplicates by its own rules), malformed or unusual syntax — is not parsed here: the
// connection goes to Node's HTTP server, which serves it or answers the error, exactly as without this front.

export interface LeanHead {
  url: string;
  /** lower-case names, values with surrounding whitespace trimmed: what Node's IncomingMessage.headers holds */
  headers: Record<string, string>;
  contentLength: number;
  /** the client asked for `Connection: close` */
  close: boolean;
}

/** an HTTP token (RFC 9110): method and header-name syntax */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// field values: visible ASCII, space, tab and obs-text; llhttp rejects the other control characters
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const OWS = /^[ \t]+|[ \t]+$/g;
const DIGITS = /^[0-9]{1,15}$/;
const CLOSE = /(?:^|,)[ \t]*close[ \t]*(?:,|$)/i;

/** A Connection header value that asks to close (request or response). */
export function hasCloseToken(value: string): boolean {
  return CLOSE.test(value);
}
// Node's default server.maxHeadersCount: past it Node drops the rest, which only Node should decide
const MAX_HEADERS = 2000;
const PREFIX = 'POST ';
const SUFFIX = ' HTTP/1.1';

/**
 * Parses `buf[0, end)`, the head without its final CRLF CRLF. Returns null when the request is not the simple case
 * for a route `isRoute` accepts.
 */
export function parseHead(buf: Buffer, end: number, isRoute: (url: string) => boolean): LeanHead | null {
  const text = buf.toString('latin1', 0, end);
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) lineEnd = text.length;
  if (lineEnd < PREFIX.length + SUFFIX.length + 1 || !text.startsWith(PREFIX) || text.lastIndexOf(SUFFIX, lineEnd) !== lineEnd - SUFFIX.length) return null;
  const url = text.slice(PREFIX.length, lineEnd - SUFFIX.length);
  if (!isRoute(url)) return null;
  const headers: Record<string, string> = Object.create(null);
  let contentLength = -1;
  let close = false;
  let host = false;
  let pos = lineEnd + 2;
  let count = 0;
  while (pos < text.length) {
    if (++count > MAX_HEADERS) return null;
    let e = text.indexOf('\r\n', pos);
    if (e < 0) e = text.length;
    const colon = text.indexOf(':', pos);
    if (colon <= pos || colon > e) return null;
    const name = text.slice(pos, colon);
    const raw = text.slice(colon + 1, e);
    pos = e + 2;
    if (!TOKEN.test(name) || BAD_VALUE.test(raw)) return null;
    const key = name.toLowerCase();
    if (headers[key] !== undefined) return null;
    const value = raw.replace(OWS, '');
    switch (key) {
      case 'content-length':
        if (!DIGITS.test(value)) return null;
        contentLength = Number(value);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
      case 'connection':
        if (/upgrade/i.test(value)) return null;
        close = hasCloseToken(value);
        break;
      case 'host':
        host = true;
        break;
    }
    headers[key] = value;
  }
  // Node's server requires Host on HTTP/1.1 (its 400); a POST without Content-Length has an empty body there
  if (contentLength < 0 || !host) return null;
  return { url, headers, contentLength, close };
}
