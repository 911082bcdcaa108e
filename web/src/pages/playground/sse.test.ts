import { describe, expect, it } from 'vitest';
import { buildChatBody, readChunk, SseParser, streamChat, type ChatMessage } from './sse.js';

const chunk = (content: string) => JSON.stringify({ choices: [{ delta: { content } }] });

describe('SseParser', () => {
  it('emits data events and stops at [DONE]', () => {
    const p = new SseParser();
    const items = p.push(`data: ${chunk('Hel')}\n\ndata: ${chunk('lo')}\n\ndata: [DONE]\n\ndata: ${chunk('late')}\n\n`);
    expect(items).toEqual([
      { kind: 'data', data: chunk('Hel') },
      { kind: 'data', data: chunk('lo') },
      { kind: 'done' },
    ]);
    expect(p.done).toBe(true);
    expect(p.push(`data: ${chunk('x')}\n\n`)).toEqual([]);
  });

  it('reassembles events split at arbitrary byte positions and CRLF boundaries', () => {
    const text = `data: ${chunk('a')}\r\n\r\n: keep-alive\r\n\r\ndata: ${chunk('b')}\r\n\r\ndata: [DONE]\r\n\r\n`;
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      const items = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()];
      expect(items).toEqual([{ kind: 'data', data: chunk('a') }, { kind: 'data', data: chunk('b') }, { kind: 'done' }]);
    }
  });

  it('joins multi-line data and flushes an unterminated final event', () => {
    const p = new SseParser();
    expect(p.push('data: line1\ndata: line2\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ kind: 'data', data: 'line1\nline2' }]);
    expect(p.push('event: x\ndata:tail')).toEqual([]);
    expect(p.end()).toEqual([{ kind: 'data', data: 'tail' }]);
  });

  it('treats a [DONE] line without a blank separator as the end', () => {
    const p = new SseParser();
    expect(p.push(`data: ${chunk('z')}\ndata: [DONE]\n`)).toEqual([
      { kind: 'data', data: chunk('z') },
      { kind: 'done' },
    ]);
  });
});

describe('readChunk', () => {
  it('reads delta content, reasoning, and errors', () => {
    expect(readChunk(chunk('hi'))).toEqual({ content: 'hi', reasoning: '' });
    expect(readChunk(JSON.stringify({ choices: [{ delta: { reasoning_content: 'think' } }] }))).toEqual({
      content: '',
      reasoning: 'think',
    });
    expect(readChunk(JSON.stringify({ choices: [], usage: { total_tokens: 3 } }))).toEqual({
      content: '',
      reasoning: '',
    });
    expect(readChunk(JSON.stringify({ error: { message: 'quota exhausted' } })).error).toBe('quota exhausted');
    expect(readChunk('not json').error).toBe('not json');
  });
});

describe('buildChatBody', () => {
  const history: ChatMessage[] = [
    { id: '1', role: 'assistant', content: 'greeting', status: 'complete' },
    { id: '2', role: 'user', content: 'q1', status: 'complete' },
    { id: '3', role: 'assistant', content: 'boom', status: 'error' },
    { id: '4', role: 'user', content: 'q2', status: 'complete' },
  ];
  it('builds the playground payload with system prompt and without failed replies', () => {
    const body = buildChatBody({
      system: 'sys',
      history,
      model: 'gpt-4o-mini',
      group: 'vip',
      temperature: 0.3,
      maxTokens: 100.7,
    });
    expect(body).toEqual({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'assistant', content: 'greeting' },
        { role: 'user', content: 'q1' },
        { role: 'user', content: 'q2' },
      ],
      stream: true,
      model: 'gpt-4o-mini',
      group: 'vip',
      temperature: 0.3,
      max_tokens: 100,
    });
  });
  it('omits max_tokens when 0', () => {
    const body = buildChatBody({ system: '', history, model: 'm', group: '', temperature: 0, maxTokens: 0 });
    expect(body).not.toHaveProperty('max_tokens');
    expect((body.messages as unknown[]).length).toBe(3);
  });
});

describe('streamChat', () => {
  const streamOf = (parts: string[]) =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          const enc = new TextEncoder();
          for (const p of parts) c.enqueue(enc.encode(p));
          c.close();
        },
      }),
      { status: 200, headers: { 'Content-Type': 'text/event-stream' } },
    );

  it('collects streamed content across chunk splits', async () => {
    let out = '';
    await streamChat(
      streamOf([`data: ${chunk('Hel')}\n`, `\ndata: ${chunk('lo')}`, '\n\ndata: [DO', 'NE]\n\n']),
      (c) => {
        out += c;
      },
    );
    expect(out).toBe('Hello');
  });

  it('rejects with the upstream error message on HTTP errors and error events', async () => {
    const bad = new Response(JSON.stringify({ error: { message: 'no channel' } }), { status: 503 });
    await expect(streamChat(bad, () => undefined)).rejects.toThrow('no channel');
    await expect(
      streamChat(streamOf([`data: ${JSON.stringify({ error: { message: 'upstream fail' } })}\n\n`]), () => undefined),
    ).rejects.toThrow('upstream fail');
  });
});
