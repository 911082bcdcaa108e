// Minimal multipart/form-data reading for the relay: the request is forwarded byte for byte, so all we need are the
// small text fields (model, prompt, size, response_format…) and which file fields exist. No copy of file contents.
import { RelayError } from './errors.js';

export interface FormFile {
  filename: string;
  size: number;
}

export type FormFields = Record<string, string | FormFile>;

interface Part {
  name: string;
  filename: string | null;
  /** the part's own Content-Type, null when it names none */
  type: string | null;
  /** byte range of the part's content in the raw body */
  start: number;
  end: number;
}

/** The boundary of a multipart/form-data content type, or null when the type is something else. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return null;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

function dispositionParam(headers: string, key: string): string | null {
  const line = headers.split(/\r\n/).find((l) => /^content-disposition:/i.test(l));
  if (!line) return null;
  const m =
    new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(line) ??
    new RegExp(`;\\s*${key}=([^;\\s]+)`, 'i').exec(line);
  return m ? m[1] : null;
}

function parts(raw: Buffer, boundary: string): Part[] {
  const delim = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  const out: Part[] = [];
  let pos = raw.indexOf(delim);
  if (pos < 0)
    throw new RelayError(400, '无效的请求, multipart body without boundary', 'new_api_error', 'invalid_request');
  pos += delim.length;
  for (;;) {
    if (raw[pos] === 0x2d && raw[pos + 1] === 0x2d) return out; // closing "--"
    if (raw[pos] === 0x0d && raw[pos + 1] === 0x0a) pos += 2;
    const headEnd = raw.indexOf('\r\n\r\n', pos);
    if (headEnd < 0) break;
    const headers = raw.toString('latin1', pos, headEnd);
    const start = headEnd + 4;
    const end = raw.indexOf(next, start);
    if (end < 0) break;
    const name = dispositionParam(headers, 'name');
    if (name !== null)
      out.push({
        name: Buffer.from(name, 'latin1').toString('utf8'),
        filename: dispositionParam(headers, 'filename'),
        type: /^content-type:[ \t]*([^\r\n;]+)/im.exec(headers)?.[1].trim() ?? null,
        start,
        end,
      });
    pos = end + next.length;
  }
  throw new RelayError(400, '无效的请求, malformed multipart body', 'new_api_error', 'invalid_request');
}

/** Text fields as strings, file fields as {filename, size}. The first occurrence of a name wins. */
export function formFields(raw: Buffer, boundary: string): FormFields {
  const fields: FormFields = {};
  for (const p of parts(raw, boundary)) {
    if (p.name in fields) continue;
    fields[p.name] =
      p.filename !== null ? { filename: p.filename, size: p.end - p.start } : raw.toString('utf8', p.start, p.end);
  }
  return fields;
}

/** The body with the value of the text field `name` replaced (model_mapping); the body itself when it has none. */
export function replaceFormField(raw: Buffer, boundary: string, name: string, value: string): Buffer {
  const p = parts(raw, boundary).find((x) => x.name === name && x.filename === null);
  if (!p) return raw;
  return Buffer.concat([raw.subarray(0, p.start), Buffer.from(value), raw.subarray(p.end)]);
}

/** The bytes and the declared type of the file field `name` (the first one), or null when the form has none. */
export function formFilePart(
  raw: Buffer,
  boundary: string,
  name: string,
): { bytes: Buffer; type: string | null } | null {
  const p = parts(raw, boundary).find((x) => x.name === name && x.filename !== null);
  return p ? { bytes: raw.subarray(p.start, p.end), type: p.type } : null;
}

/** The bytes of the file field `name` (the first one), or null when the form has none. */
export function formFile(raw: Buffer, boundary: string, name: string): Buffer | null {
  const p = parts(raw, boundary).find((x) => x.name === name && x.filename !== null);
  return p ? raw.subarray(p.start, p.end) : null;
}
