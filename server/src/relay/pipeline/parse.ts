// Step 2, parse: the body, once (JSON, or a multipart form's fields), and the model it names.
import { MODEL_NAME_MAX } from '../../lib/input.js';
import { RelayError } from '../errors.js';
import { boundaryOf, formFields } from '../multipart.js';
import type { RelayState } from './state.js';

export function parse(s: RelayState): void {
  const { mode } = s;
  if (mode.multipart) s.body = multipartBody(s.raw, s.req.headers['content-type']);
  else {
    let body: unknown;
    try {
      body = JSON.parse(s.raw.toString('utf8'));
    } catch (e) {
      throw new RelayError(400, `无效的请求, ${(e as Error).message}`, 'new_api_error', 'invalid_request');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new RelayError(400, '无效的请求, body must be a JSON object', 'new_api_error', 'invalid_request');
    s.body = body as Record<string, any>;
  }
  const b = s.body;
  const model: string = typeof b.model === 'string' && b.model ? b.model : s.opts.pathModel || mode.defaultModel || '';
  // the model name is written to the consume log: PostgreSQL refuses a NUL in text, no database a name longer than
  // the column, and the row (with the rows inserted along with it) would be lost after the charge
  if (model.length > MODEL_NAME_MAX || model.includes('\0'))
    throw new RelayError(
      400,
      '无效的请求, model 名称含有非法字符或过长',
      'invalid_request_error',
      'invalid_request',
      true,
      'model',
    );
  s.model = model;
}

/** Fields of a multipart request (model, prompt, size…); the raw bytes stay what is forwarded. */
function multipartBody(raw: Buffer, contentType: string | undefined): Record<string, any> {
  const boundary = boundaryOf(contentType);
  if (!boundary)
    throw new RelayError(
      400,
      '无效的请求, Content-Type must be multipart/form-data',
      'new_api_error',
      'invalid_request',
    );
  return formFields(raw, boundary);
}
