// The relay's minimal multipart reader: text fields, file fields by size, model rewrite, malformed bodies.
import { describe, expect, it } from 'vitest';
import { boundaryOf, formFields, replaceFormField } from '../../src/relay/multipart.js';
import { RelayError } from '../../src/relay/errors.js';

async function encode(form: FormData): Promise<{ raw: Buffer; type: string }> {
  const req = new Request('http://x/', { method: 'POST', body: form });
  return { raw: Buffer.from(await req.arrayBuffer()), type: req.headers.get('content-type')! };
}

describe('relay multipart reader', () => {
  it('reads the boundary, quoted or not, and only from multipart/form-data', () => {
    expect(boundaryOf('multipart/form-data; boundary=abc123')).toBe('abc123');
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b;c"')).toBe('a b;c');
    expect(boundaryOf('application/json')).toBeNull();
    expect(boundaryOf(undefined)).toBeNull();
  });

  it('returns text fields as strings and files as {filename, size}; the first of a repeated name wins', async () => {
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('prompt', 'naïve café — 你好\r\nsecond line');
    form.append('file', new Blob([Buffer.alloc(1234, 7)]), 'my "clip".wav');
    form.append('model', 'ignored');
    const { raw, type } = await encode(form);
    const f = formFields(raw, boundaryOf(type)!);
    expect(f.model).toBe('whisper-1');
    expect(f.prompt).toBe('naïve café — 你好\r\nsecond line');
    expect(f.file).toEqual({ filename: expect.stringContaining('clip'), size: 1234 });
  });

  it('replaces one text field and leaves every other byte alone', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('model')]), 'a.wav');
    form.append('model', 'short');
    const { raw, type } = await encode(form);
    const out = replaceFormField(raw, boundaryOf(type)!, 'model', 'a-much-longer-model-name');
    expect(out.toString('latin1')).toBe(
      raw.toString('latin1').replace('\r\n\r\nshort\r\n', '\r\n\r\na-much-longer-model-name\r\n'),
    );
    expect(replaceFormField(raw, boundaryOf(type)!, 'absent', 'x')).toBe(raw);
  });

  it('rejects a body that does not match its boundary with a 400', () => {
    const bad = () => formFields(Buffer.from('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nx'), 'b');
    expect(bad).toThrow(RelayError);
    try {
      bad();
    } catch (e) {
      expect((e as RelayError).status).toBe(400);
    }
    expect(() => formFields(Buffer.from('no boundary here'), 'b')).toThrow(RelayError);
  });
});
