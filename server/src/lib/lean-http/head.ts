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
const TAB_AFTER_START = /[^ \t][^\t]*\t/;
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
// a head longer than Node's limit goes to Node anyway; no need to look further
const MAX_HEAD_SCAN = 64 * 1024;

/**
 * Parses `buf[0, end)`, the head without its final CRLF CRLF. Returns null when the request is not the simple case
 * for a route `isRoute` accepts.
 */
export function parseHead(buf: Buffer, end: number, isRoute: (url: string) => boolean): LeanHead | null {
  return scanHead(buf.toString('latin1', 0, end), isRoute, false);
}

const TOKEN_CHARS = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]*$/;
const URL_CHARS = /^[\x21-\x7e]*$/;

/**
 * Whether the start of a head (`buf`, no CRLF CRLF in it yet) can still turn out to be one parseHead accepts. False
 * as soon as a byte shows it cannot (a bare CR or LF, a bad character in the request line, a header name or a value,
 * a header line parseHead refuses): the connection then goes to Node's parser at once, which answers a corrupted
 * head with its 400 there and then, instead of the front waiting for an end of head that may never come.
 */
export function headMayComplete(buf: Buffer, isRoute: (url: string) => boolean): boolean {
  const text = buf.toString('latin1', 0, Math.min(buf.length, MAX_HEAD_SCAN));
  // every CR is followed by LF (or is the last byte read) and every LF follows a CR
  for (let i = text.indexOf('\r'); i >= 0; i = text.indexOf('\r', i + 1))
    if (i + 1 < text.length && text.charCodeAt(i + 1) !== 10) return false;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1))
    if (i === 0 || text.charCodeAt(i - 1) !== 13) return false;
  const lastEnd = text.lastIndexOf('\r\n');
  const partial = text.slice(lastEnd < 0 ? 0 : lastEnd + 2).replace(/\r$/, '');
  if (lastEnd < 0) {
    // the request line so far: `POST `, a url, then a prefix of ` HTTP/1.1`
    if (partial.length <= PREFIX.length) return PREFIX.startsWith(partial);
    const rest = partial.slice(PREFIX.length);
    const space = rest.indexOf(' ');
    return (
      partial.startsWith(PREFIX) &&
      URL_CHARS.test(space < 0 ? rest : rest.slice(0, space)) &&
      (space < 0 || SUFFIX.startsWith(rest.slice(space)))
    );
  }
  if (!scanHead(text.slice(0, lastEnd), isRoute, true)) return false;
  const colon = partial.indexOf(':');
  return colon < 0
    ? TOKEN_CHARS.test(partial)
    : colon > 0 && TOKEN_CHARS.test(partial.slice(0, colon)) && !BAD_VALUE.test(partial.slice(colon + 1));
}

/** the lines of a head without its final CRLF CRLF; `partial`: more header lines are still to come */
function scanHead(text: string, isRoute: (url: string) => boolean, partial: boolean): LeanHead | null {
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) lineEnd = text.length;
  if (
    lineEnd < PREFIX.length + SUFFIX.length + 1 ||
    !text.startsWith(PREFIX) ||
    text.lastIndexOf(SUFFIX, lineEnd) !== lineEnd - SUFFIX.length
  )
    return null;
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
        // llhttp refuses a tab after the digits (a space is fine): Node's parser decides those
        if (!DIGITS.test(value) || TAB_AFTER_START.test(raw)) return null;
        contentLength = Number(value);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
      case 'connection':
        if (/upgrade/i.test(value) || TAB_AFTER_START.test(raw)) return null;
        close = hasCloseToken(value);
        break;
      case 'host':
        host = true;
        break;
    }
    headers[key] = value;
  }
  // Node's server requires Host on HTTP/1.1 (its 400); a POST without Content-Length has an empty body there
  if (!partial && (contentLength < 0 || !host)) return null;
  return { url, headers, contentLength, close };
}
