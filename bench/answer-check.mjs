// The bench's sanity check of answers, before anything is measured: an answer in OpenAI Chat Completions or Anthropic
// Messages form, JSON or SSE, is read whole and checked for the fields a client relies on. A gateway that answered
// fast but wrongly (an error, a truncated stream, the wrong format for its client) would otherwise win the benchmark.

/** A problem with an answer: thrown by checkAnswer with what was wrong and the start of the body. */
class AnswerProblem extends Error {}

function need(cond, what, raw) {
  if (!cond) throw new AnswerProblem(`${what}; the answer began ${JSON.stringify(raw.slice(0, 300))}`);
}

/** `data:` payloads of an SSE body, with their `event:` names (null where the event had none). */
function sseEvents(raw) {
  const events = [];
  for (const block of raw.split(/\r?\n\r?\n/)) {
    let name = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length) events.push({ name, data: data.join('\n') });
  }
  return events;
}

function openaiJson(raw) {
  const body = JSON.parse(raw);
  const content = body.choices?.[0]?.message?.content;
  need(body.object === 'chat.completion' && typeof content === 'string', 'no chat.completion with content', raw);
  need(Number.isFinite(body.usage?.prompt_tokens), 'no usage', raw);
  return { text: content, events: [] };
}

function openaiStream(raw) {
  const events = sseEvents(raw);
  need(events.at(-1)?.data === '[DONE]', 'the stream does not end with [DONE]', raw);
  let text = '';
  for (const e of events.slice(0, -1)) {
    const chunk = JSON.parse(e.data);
    need(chunk.object === 'chat.completion.chunk', 'a data event is not a chat.completion.chunk', raw);
    text += chunk.choices?.[0]?.delta?.content ?? '';
  }
  return { text, events: events.map(() => 'data') };
}

function claudeJson(raw) {
  const body = JSON.parse(raw);
  need(body.type === 'message' && body.role === 'assistant', 'not an assistant message', raw);
  need(typeof body.id === 'string' && body.id.startsWith('msg_'), 'no msg_ id', raw);
  need(body.stop_reason === 'end_turn', `stop_reason ${body.stop_reason}`, raw);
  need(
    Number.isFinite(body.usage?.input_tokens) && Number.isFinite(body.usage?.output_tokens),
    'no input/output usage',
    raw,
  );
  const blocks = Array.isArray(body.content) ? body.content : [];
  need(blocks.length > 0 && blocks.every((b) => b.type === 'text'), 'content is not text blocks', raw);
  return { text: blocks.map((b) => b.text).join(''), events: [] };
}

/**
 * Claude's event order: message_start, then for each block content_block_start, its deltas and content_block_stop,
 * then message_delta (stop reason, output usage) and message_stop; ping events may come anywhere.
 */
function claudeStream(raw) {
  const events = sseEvents(raw).map((e) => ({ name: e.name, data: JSON.parse(e.data) }));
  for (const e of events) need(e.name === e.data.type, `event ${e.name} carries a ${e.data.type}`, raw);
  const seq = events.filter((e) => e.name !== 'ping');
  const names = seq.map((e) => e.name);
  need(names[0] === 'message_start', 'the stream does not open with message_start', raw);
  const start = seq[0].data.message;
  need(
    start?.id?.startsWith('msg_') && Number.isFinite(start.usage?.input_tokens),
    'message_start without id/usage',
    raw,
  );
  need(names.at(-1) === 'message_stop' && names.at(-2) === 'message_delta', 'no message_delta, message_stop end', raw);
  const delta = seq.at(-2).data;
  need(delta.delta?.stop_reason === 'end_turn', `stop_reason ${delta.delta?.stop_reason}`, raw);
  need(Number.isFinite(delta.usage?.output_tokens), 'message_delta without output_tokens', raw);
  let open = false;
  let text = '';
  for (const e of seq.slice(1, -2)) {
    if (e.name === 'content_block_start') {
      need(!open && e.data.content_block?.type === 'text', 'a content_block_start out of place or not text', raw);
      open = true;
    } else if (e.name === 'content_block_delta') {
      need(open && e.data.delta?.type === 'text_delta', 'a content_block_delta outside a block or not text', raw);
      text += e.data.delta.text;
    } else {
      need(open && e.name === 'content_block_stop', `an unexpected ${e.name}`, raw);
      open = false;
    }
  }
  need(!open, 'a block was not stopped', raw);
  return { text, events: names };
}

/**
 * Checks a whole answer in `format` ('openai' | 'claude'); returns its text and its event names (streams) or throws
 * an Error that says what is wrong.
 */
export function checkAnswer(format, stream, status, raw) {
  need(status === 200, `status ${status}`, raw);
  try {
    if (format === 'claude') return stream ? claudeStream(raw) : claudeJson(raw);
    return stream ? openaiStream(raw) : openaiJson(raw);
  } catch (e) {
    if (e instanceof AnswerProblem) throw e;
    throw new AnswerProblem(`unreadable (${e.message}); the answer began ${JSON.stringify(raw.slice(0, 300))}`);
  }
}
