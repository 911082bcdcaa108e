// Pieces the own-JSON vendors (Cohere, Dify, Coze, PaLM) share: their chat carries text turns only, so a request with
// images or tools is refused before anything is sent (a 400 in the client's shape, nothing charged) rather than sent
// without them; and their answers and streams become hub answers and chunks of one choice.
import { FormatError } from '../formats/codec.js';
import type {
  HubChunk,
  HubDelta,
  HubFinishReason,
  HubMessage,
  HubRequest,
  HubResponse,
  HubToolCall,
  HubUsage,
} from '../hub/types.js';

/** A text turn's text; refuses an image (the vendor takes text only). */
export function textOf(m: HubMessage, vendor: string): string {
  if (typeof m.content === 'string') return m.content;
  return (m.content ?? [])
    .map((p) => {
      if (p.type !== 'text') throw new FormatError(`${vendor} 不支持图片输入`);
      return p.text;
    })
    .join('');
}

/** Refuses what a text-only vendor cannot carry: tools, tool calls and their results. */
export function refuseTools(hub: HubRequest, vendor: string): void {
  const calls = hub.messages.some((m) => m.role === 'tool' || (m.tool_calls?.length ?? 0) > 0);
  if ((hub.tools?.length ?? 0) > 0 || calls) throw new FormatError(`${vendor} 不支持工具调用（tools）`);
}

/** Hub usage from prompt and completion token counts; null when the vendor reported none. */
export function hubUsage(prompt: unknown, completion: unknown): HubUsage | null {
  const p = Number(prompt) > 0 ? Math.floor(Number(prompt)) : 0;
  const c = Number(completion) > 0 ? Math.floor(Number(completion)) : 0;
  return p + c > 0 ? { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } : null;
}

/** A whole answer of one text choice. */
export function hubAnswer(a: {
  id: string;
  model: string;
  text: string;
  finish: HubFinishReason;
  usage: HubUsage | null;
  native?: string;
}): HubResponse {
  const answer: HubResponse = {
    id: a.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: a.model,
    choices: [{ index: 0, message: { role: 'assistant', content: a.text }, finish_reason: a.finish }],
  };
  if (a.usage) answer.usage = a.usage;
  if (a.native) answer.native_finish_reason = a.native;
  return answer;
}

/** Makes the chunks of one stream: the first carries the assistant role. */
export class ChunkMaker {
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;

  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {}

  text(text: string): HubChunk[] {
    return text ? [this.chunk({ content: text }, null)] : [];
  }

  /** whole tool calls, one delta entry each */
  calls(calls: HubToolCall[]): HubChunk[] {
    if (!calls.length) return [];
    return [this.chunk({ tool_calls: calls.map((c, index) => ({ index, ...c })) }, null)];
  }

  finish(finish: HubFinishReason, usage: HubUsage | null, native?: string): HubChunk {
    const c = this.chunk({}, finish);
    if (usage) c.usage = usage;
    if (native) c.native_finish_reason = native;
    return c;
  }

  private chunk(delta: HubDelta, finish: HubFinishReason | null): HubChunk {
    if (!this.started) {
      this.started = true;
      delta = { role: 'assistant', ...delta };
    }
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
  }
}
