// Dify's app API as a strict mock: Bearer app key (401 {code: "unauthorized"}), bodies checked by Dify's rules per app
// API (chat-messages: `query`, `inputs`, `user`, `response_mode` blocking | streaming, no OpenAI field; an agent app
// refuses blocking; completion-messages and workflows/run: `inputs` and `user`, no `query`), answers from the recorded
// fixtures (chat) or Dify's completion and workflow shapes, streams as Dify's SSE events.
import { fixture, MockJsonVendor, type MockAnswer } from './mock-json-vendor.js';

const CHAT_FIELDS = new Set([
  'query',
  'inputs',
  'user',
  'response_mode',
  'conversation_id',
  'files',
  'auto_generate_name',
]);

/** Dify's refusal of a chat-messages body, or null. */
export function checkDifyChatBody(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body must be JSON';
  for (const k of Object.keys(body)) if (!CHAT_FIELDS.has(k)) return `${k} is not a valid parameter`;
  if (typeof body.query !== 'string' || !body.query) return 'query is required';
  if (!body.inputs || typeof body.inputs !== 'object') return 'inputs is required';
  if (typeof body.user !== 'string' || !body.user) return 'user is required';
  if (!['blocking', 'streaming'].includes(body.response_mode)) return 'response_mode must be blocking or streaming';
  return null;
}

function checkInputsBody(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body must be JSON';
  if ('query' in body) return 'query is not a valid parameter';
  if (typeof body.inputs?.query !== 'string' || !body.inputs.query) return 'query in inputs is required';
  if (typeof body.user !== 'string' || !body.user) return 'user is required';
  if (!['blocking', 'streaming'].includes(body.response_mode)) return 'response_mode must be blocking or streaming';
  return null;
}

const bad = (message: string): MockAnswer => ({ status: 400, body: { code: 'invalid_param', message, status: 400 } });
const sse = (events: unknown[]) => ({
  status: 200,
  body: events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''),
  contentType: 'text/event-stream',
});

/** What the mock's app is (its key picks it: app-agent-…, app-completion-…, app-workflow-…, else a chat app). */
function appOf(authorization: string | undefined): string {
  return /^Bearer app-(agent|completion|workflow)-/.exec(authorization ?? '')?.[1] ?? 'chat';
}

export function startDifyMock(keys: string[]) {
  const usage = { prompt_tokens: 1033, completion_tokens: 9, total_tokens: 1042 };
  return MockJsonVendor.start({
    auth: (r) =>
      keys.some((k) => r.headers.authorization === `Bearer ${k}`)
        ? null
        : { status: 401, body: { code: 'unauthorized', message: 'Access token is invalid', status: 401 } },
    routes: {
      '/v1/chat-messages': (r) => {
        const app = appOf(r.headers.authorization);
        if (app !== 'chat' && app !== 'agent') return bad('App mode does not match the API route');
        const problem = checkDifyChatBody(r.body);
        if (problem) return bad(problem);
        if (r.body.query.includes('fail')) return { status: 400, body: fixture('dify', 'error.json') };
        if (app === 'agent') {
          if (r.body.response_mode !== 'streaming') return bad('Agent Chat App does not support blocking mode');
          const base = { task_id: 't-1', message_id: 'm-agent', conversation_id: 'c-1' };
          return sse([
            { event: 'agent_thought', ...base, thought: 'looking it up' },
            { event: 'agent_message', ...base, answer: '巴黎。' },
            { event: 'message_end', ...base, metadata: { usage } },
          ]);
        }
        if (r.body.response_mode === 'streaming')
          return { status: 200, body: fixture('dify', 'stream.sse'), contentType: 'text/event-stream' };
        return { status: 200, body: fixture('dify', 'answer.json') };
      },
      '/v1/completion-messages': (r) => {
        if (appOf(r.headers.authorization) !== 'completion') return bad('App mode does not match the API route');
        const problem = checkInputsBody(r.body);
        if (problem) return bad(problem);
        return {
          status: 200,
          body: { event: 'message', message_id: 'm-cmpl', mode: 'completion', answer: '巴黎。', metadata: { usage } },
        };
      },
      '/v1/workflows/run': (r) => {
        if (appOf(r.headers.authorization) !== 'workflow') return bad('App mode does not match the API route');
        const problem = checkInputsBody(r.body);
        if (problem) return bad(problem);
        const data = { id: 'run-1', status: 'succeeded', outputs: { text: '巴黎。' }, total_tokens: 40 };
        if (r.body.response_mode === 'streaming')
          return sse([
            { event: 'workflow_started', workflow_run_id: 'run-1', data: { id: 'run-1' } },
            { event: 'text_chunk', workflow_run_id: 'run-1', data: { text: '巴黎。' } },
            { event: 'workflow_finished', workflow_run_id: 'run-1', data },
          ]);
        return { status: 200, body: { workflow_run_id: 'run-1', task_id: 't-2', data } };
      },
    },
  });
}
