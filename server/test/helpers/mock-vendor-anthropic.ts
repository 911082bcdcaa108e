// A strict mock of a vendor's Anthropic-compatible endpoint on 127.0.0.1 (DashScope's `/apps/anthropic/v1/messages`,
// MiniMax's `/anthropic/v1/messages`): only `POST {path}`, the key as a Bearer token (else 401 in Anthropic's error
// shape), an `anthropic-version` header, a body Anthropic's Messages API takes (mock-anthropic-rules.ts); the answer
// and the stream are the vendor's recorded ones (relay/providers/<vendor>/__fixtures__/claude-answer.json,
// claude-stream.sse). The model `fail-model` gets Anthropic's not_found error.
import { readFileSync } from 'node:fs';
import { RecordingServer, sendJson } from './mock-http.js';
import { checkAnthropicBody } from './mock-anthropic-rules.js';

const error = (type: string, message: string) => ({ type: 'error', error: { type, message } });

export function startVendorAnthropic(provider: string, path: string, key: string): Promise<RecordingServer> {
  const recorded = (file: string) =>
    readFileSync(new URL(`../../src/relay/providers/${provider}/__fixtures__/${file}`, import.meta.url), 'utf8');
  return RecordingServer.start(async (req, res) => {
    if (req.method !== 'POST' || req.path.split('?')[0] !== path)
      return sendJson(res, 404, error('not_found_error', `no route ${req.method} ${req.path}`));
    if (req.headers.authorization !== `Bearer ${key}`)
      return sendJson(res, 401, error('authentication_error', 'invalid api key'));
    if (typeof req.headers['anthropic-version'] !== 'string')
      return sendJson(res, 400, error('invalid_request_error', 'anthropic-version: header is required'));
    const problem = checkAnthropicBody(req.body, 'messages');
    if (problem) return sendJson(res, problem.status, error(problem.type, problem.message));
    if (req.body.model === 'fail-model')
      return sendJson(res, 404, error('not_found_error', `model: ${req.body.model} does not exist`));
    if (req.body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(recorded('claude-stream.sse'));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(recorded('claude-answer.json'));
  });
}
