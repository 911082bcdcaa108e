// Coze's v3 chat as a strict mock: Bearer personal access token (else HTTP 200 {code: 4100}, as Coze answers), bodies
// checked by Coze's rules (`bot_id` of a known bot, `user_id`, `additional_messages` of user / assistant turns with
// text content; no OpenAI field), a stream as Coze's named SSE events from the recorded fixtures, and a request that
// does not stream answered as Coze does: a chat still in progress, without its messages.
import { fixture, MockJsonVendor, type MockAnswer } from './mock-json-vendor.js';

const FIELDS = new Set([
  'bot_id',
  'user_id',
  'stream',
  'auto_save_history',
  'additional_messages',
  'custom_variables',
  'meta_data',
]);

/** Coze's refusal of a v3 chat body, or null. */
export function checkCozeChatBody(body: any, bots?: string[]): string | null {
  if (!body || typeof body !== 'object') return 'invalid request body';
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) return `invalid parameter ${k}`;
  if (typeof body.bot_id !== 'string' || !body.bot_id) return 'bot_id is required';
  if (bots && !bots.includes(body.bot_id)) return `bot ${body.bot_id} not found`;
  if (typeof body.user_id !== 'string' || !body.user_id) return 'user_id is required';
  if (!Array.isArray(body.additional_messages) || body.additional_messages.length === 0)
    return 'additional_messages is required';
  for (const m of body.additional_messages) {
    if (!['user', 'assistant'].includes(m?.role)) return `invalid role ${m?.role}`;
    if (typeof m.content !== 'string' || m.content_type !== 'text') return 'content must be text';
  }
  return null;
}

const refuse = (code: number, msg: string): MockAnswer => ({ status: 200, body: { code, msg } });

export function startCozeMock(token: string, bots: string[]) {
  return MockJsonVendor.start({
    auth: (r) => (r.headers.authorization === `Bearer ${token}` ? null : refuse(4100, 'authentication is invalid')),
    routes: {
      '/v3/chat': (r) => {
        const problem = checkCozeChatBody(r.body, bots);
        if (problem) return refuse(4000, problem);
        if (r.body.additional_messages.at(-1).content.includes('fail'))
          return refuse(4028, 'The bot has insufficient balance');
        if (!r.body.stream)
          return {
            status: 200,
            body: {
              code: 0,
              msg: '',
              data: { id: '7382', conversation_id: '7381', bot_id: r.body.bot_id, status: 'in_progress' },
            },
          };
        const last: string = r.body.additional_messages.at(-1).content;
        const file = last.includes('whole') ? 'answer.sse' : 'stream.sse';
        return { status: 200, body: fixture('coze', file), contentType: 'text/event-stream' };
      },
    },
  });
}
