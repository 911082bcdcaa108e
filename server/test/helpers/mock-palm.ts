// PaLM 2's v1beta2 generateMessage as a strict mock: `x-goog-api-key` (400 API_KEY_INVALID otherwise, as Google
// answers), only `models/chat-bison-001`, bodies checked by its rules (`prompt.messages` of authors "0"/"1" with text,
// alternating and starting with the user; only PaLM's fields), the recorded answer (no usage: PaLM reports none).
import { fixture, MockJsonVendor, type MockAnswer } from './mock-json-vendor.js';

const FIELDS = new Set(['prompt', 'temperature', 'candidate_count', 'top_p', 'top_k']);

/** PaLM's refusal of a generateMessage body, or null. */
export function checkPalmBody(body: any): string | null {
  if (!body || typeof body !== 'object') return 'Invalid JSON payload';
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) return `Invalid JSON payload received. Unknown name "${k}"`;
  const messages = body.prompt?.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'prompt.messages must not be empty';
  for (const [i, m] of messages.entries()) {
    if (typeof m?.content !== 'string') return 'message content must be text';
    if (m.author !== (i % 2 === 0 ? '0' : '1')) return 'messages must alternate between authors, starting with "0"';
  }
  if (body.prompt.context !== undefined && typeof body.prompt.context !== 'string') return 'context must be text';
  return null;
}

const invalid = (message: string): MockAnswer => ({
  status: 400,
  body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } },
});

export function startPalmMock(key: string) {
  return MockJsonVendor.start({
    auth: (r) => (r.headers['x-goog-api-key'] === key ? null : { status: 400, body: fixture('palm', 'error.json') }),
    routes: {
      '/v1beta2/models/chat-bison-001:generateMessage': (r) => {
        const problem = checkPalmBody(r.body);
        if (problem) return invalid(problem);
        if (r.body.prompt.messages.at(-1).content.includes('fail'))
          return invalid('Request contains an invalid argument.');
        return { status: 200, body: fixture('palm', 'answer.json') };
      },
    },
  });
}
