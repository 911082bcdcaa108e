// The OpenAI codec's stream encoder on the translated lane: the usage chunk an OpenAI client asked for carries the
// answer's final usage, once, after the finish reason and before [DONE], even when the decoder attached a partial
// usage to an early chunk (Claude's message_start reports one output token).
import { describe, expect, it } from 'vitest';
import { openaiCodec } from '../../src/relay/formats/openai/index.js';
import type { HubChunk, HubUsage } from '../../src/relay/hub/types.js';

const chunk = (
  delta: HubChunk['choices'][0]['delta'],
  finish: HubChunk['choices'][0]['finish_reason'],
  usage?: HubUsage,
) =>
  ({
    id: 'chatcmpl-x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'claude-3-5-sonnet-20241022',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  }) satisfies HubChunk;

const early: HubUsage = { prompt_tokens: 130, completion_tokens: 1, total_tokens: 131 };
const final: HubUsage = {
  prompt_tokens: 130,
  completion_tokens: 7,
  total_tokens: 137,
  prompt_tokens_details: { cached_tokens: 100 },
};

function events(text: string): any[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''))
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}

describe('openai stream encoder usage', () => {
  it('sends the last usage once, after the finish chunk, when the client asked for it', () => {
    const enc = openaiCodec.streamFromHub({ id: 'r1', model: 'claude-3-5-sonnet-20241022', includeUsage: true });
    let out = enc.push(chunk({ role: 'assistant', content: '' }, null, early));
    out += enc.push(chunk({ content: 'Hello' }, null));
    out += enc.push(chunk({}, 'stop', final));
    out += enc.end(final);
    const ev = events(out);
    expect(ev.at(-1)).toBe('[DONE]');
    const usages = ev.filter((e) => e !== '[DONE]' && e.usage);
    expect(usages).toHaveLength(1);
    expect(usages[0]).toMatchObject({
      choices: [],
      usage: { completion_tokens: 7, prompt_tokens_details: { cached_tokens: 100 } },
    });
    expect(ev.indexOf(usages[0])).toBe(ev.length - 2);
  });

  it('falls back to the usage the chunks carried when end() gets none', () => {
    const enc = openaiCodec.streamFromHub({ id: 'r2', model: 'm', includeUsage: true });
    const out = enc.push(chunk({ content: 'Hi' }, null, early)) + enc.push(chunk({}, 'stop', final)) + enc.end(null);
    expect(events(out).filter((e) => e !== '[DONE]' && e.usage)[0].usage.completion_tokens).toBe(7);
  });

  it('sends no usage chunk when the client did not ask for it', () => {
    const enc = openaiCodec.streamFromHub({ id: 'r3', model: 'm' });
    const out = enc.push(chunk({ content: 'Hi' }, 'stop', final)) + enc.end(final);
    expect(events(out).some((e) => e !== '[DONE]' && e.usage)).toBe(false);
  });
});
