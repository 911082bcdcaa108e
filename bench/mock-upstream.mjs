// Benchmark upstream: an OpenAI-compatible mock on 127.0.0.1 with a fixed JSON answer and a 20-chunk SSE stream
// (plus a usage chunk), which also answers POST /v1/messages like Anthropic's Messages API (the same text as a Claude
// message, or streamed as message_start, content_block_start, 20 text_delta events, content_block_stop,
// message_delta with the usage, message_stop) for the Claude modes of `npm run bench`. The response delay can be changed at run time with POST /__mock/config {"delayMs": N}.
// Prints "MOCK_PORT=<port>" once listening. With MOCK_TLS_CERT and MOCK_TLS_KEY (PEM files) it serves https instead
// (`BENCH_TLS=1 npm run bench`: real upstreams are https, so the relay's upstream calls then pay for TLS as they do there).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const cfg = { delayMs: Number(process.env.MOCK_DELAY_MS ?? 0), chunks: 20 };
const WORDS = ['Hello', ' from', ' the', ' bench', ' upstream', '.', ' A', ' fixed', ' streamed', ' answer'];
const text = Array.from({ length: 20 }, (_, i) => WORDS[i % WORDS.length]).join('');
let seq = 0;

function usage(promptChars, completion) {
  const prompt = Math.max(1, Math.ceil(promptChars / 4));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function send(res, status, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Base62 digits of n, left-padded with zeros to `width`: the body of Anthropic-style ids (msg_01…, req_01…). */
function base62(n, width) {
  const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let s = '';
  for (; n > 0; n = Math.floor(n / 62)) s = digits[n % 62] + s;
  return s.padStart(width, '0');
}

/** Characters of a Claude body's prompt: the system prompt (a string or text blocks) and every message's text. */
function claudePromptChars(body) {
  const text = (c) =>
    typeof c === 'string' ? c.length : Array.isArray(c) ? c.reduce((n, b) => n + String(b?.text ?? '').length, 0) : 0;
  return text(body.system) + (body.messages ?? []).reduce((n, m) => n + text(m?.content), 0);
}

/** An Anthropic error body; Anthropic answers every refusal in this shape, with its request id beside it. */
function claudeError(res, status, type, message, requestId) {
  send(res, status, { type: 'error', error: { type, message }, request_id: requestId }, { 'request-id': requestId });
}

/** POST /v1/messages, answered like Anthropic: the headers and fields it requires, then a message or its SSE events. */
function answerClaude(req, res, body, n) {
  const requestId = `req_01${base62(n, 22)}`;
  const key = req.headers['x-api-key'];
  if (typeof key !== 'string' || !key)
    return claudeError(res, 401, 'authentication_error', 'x-api-key header is required', requestId);
  if (!req.headers['anthropic-version'])
    return claudeError(res, 400, 'invalid_request_error', 'anthropic-version: header is required', requestId);
  if (typeof body.model !== 'string')
    return claudeError(res, 400, 'invalid_request_error', 'model: Field required', requestId);
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return claudeError(res, 400, 'invalid_request_error', 'max_tokens: Field required', requestId);
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return claudeError(res, 400, 'invalid_request_error', 'messages: Field required', requestId);
  const input = Math.max(1, Math.ceil(claudePromptChars(body) / 4));
  const message = {
    id: `msg_01${base62(n, 22)}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
  };
  if (!body.stream) {
    message.content = [{ type: 'text', text }];
    message.stop_reason = 'end_turn';
    message.usage.output_tokens = cfg.chunks;
    return send(res, 200, message, { 'request-id': requestId });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
  const cacheKey = `cl|${body.model}|${input}|${cfg.chunks}`;
  const cached = streamCache.get(cacheKey);
  if (cached) return res.end(cached);
  const event = (o) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
  let out = event({ type: 'message_start', message });
  out += event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  for (let i = 0; i < cfg.chunks; i++)
    out += event({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: WORDS[i % WORDS.length] },
    });
  out += event({ type: 'content_block_stop', index: 0 });
  out += event({
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: cfg.chunks },
  });
  out += event({ type: 'message_stop' });
  remember(cacheKey, out);
  res.end(out);
}

/** Streams made so far, by request shape (bounded: the bench sends a handful of shapes). */
const streamCache = new Map();
function remember(key, stream) {
  if (streamCache.size > 256) streamCache.clear();
  streamCache.set(key, stream);
}

const tls =
  process.env.MOCK_TLS_CERT && process.env.MOCK_TLS_KEY
    ? { cert: readFileSync(process.env.MOCK_TLS_CERT), key: readFileSync(process.env.MOCK_TLS_KEY) }
    : null;
const handler = (req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(parts).toString();
    if (req.url === '/__mock/config') {
      Object.assign(cfg, JSON.parse(raw || '{}'));
      return send(res, 200, { ok: true, cfg });
    }
    const claude = req.url === '/v1/messages';
    if (!claude && !req.url.endsWith('/chat/completions'))
      return send(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } });
    }
    if (claude) {
      const n = ++seq;
      if (cfg.delayMs > 0) setTimeout(() => answerClaude(req, res, body, n), cfg.delayMs);
      else answerClaude(req, res, body, n);
      return;
    }
    const promptChars = (body.messages ?? []).reduce((n, m) => n + String(m.content ?? '').length, 0);
    const id = 'chatcmpl-bench' + (++seq).toString(36);
    const created = Math.floor(Date.now() / 1000);
    const model = body.model;
    const respond = () => {
      if (!body.stream) {
        return send(res, 200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: usage(promptChars, 20),
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // the same stream for the same request shape is made once: "direct" then measures HTTP, not this mock's
      // JSON work, for OpenAI and Claude streams alike (their bodies differ in size and field count)
      const key = `oa|${model}|${promptChars}|${!!body.stream_options?.include_usage}|${cfg.chunks}`;
      const cached = streamCache.get(key);
      if (cached) return res.end(cached);
      const base = { id, object: 'chat.completion.chunk', created, model };
      const frame = (o) => `data: ${JSON.stringify(o)}\n\n`;
      let out = frame({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      });
      for (let i = 0; i < cfg.chunks; i++)
        out += frame({
          ...base,
          choices: [{ index: 0, delta: { content: WORDS[i % WORDS.length] }, finish_reason: null }],
        });
      out += frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      if (body.stream_options?.include_usage)
        out += frame({ ...base, choices: [], usage: usage(promptChars, cfg.chunks) });
      out += 'data: [DONE]\n\n';
      remember(key, out);
      res.end(out);
    };
    if (cfg.delayMs > 0) setTimeout(respond, cfg.delayMs);
    else respond();
  });
};
const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.MOCK_PORT ?? 0), '127.0.0.1', () => {
  console.log(`MOCK_PORT=${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
