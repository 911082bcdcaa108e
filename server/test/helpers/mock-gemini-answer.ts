// The Gemini mock's answers: candidate parts derived deterministically from a generateContent request, the
// usageMetadata Google reports for them (one token per whitespace-separated word), and embeddings.
import { createHash } from 'node:crypto';
import { argumentsFor, countWords, firstWords } from './mock-http.js';
import { field, modelThinks } from './mock-gemini-rules.js';

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
}

export type GeminiFinishReason = 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'OTHER' | 'MALFORMED_FUNCTION_CALL';

export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  promptTokensDetails?: { modality: string; tokenCount: number }[];
  cacheTokensDetails?: { modality: string; tokenCount: number }[];
}

export interface GeminiAnswer {
  parts: GeminiPart[];
  finishReason: GeminiFinishReason;
}

const words = (s: string) => (s.match(/\S+/g) ?? []).length;

function partTexts(parts: any[]): string[] {
  const out: string[] = [];
  for (const p of parts ?? []) {
    if (typeof p?.text === 'string') out.push(p.text);
    const call = field(p, 'functionCall');
    if (call) out.push(call.name ?? '', JSON.stringify(call.args ?? {}));
    const response = field(p, 'functionResponse');
    if (response) out.push(response.name ?? '', JSON.stringify(response.response ?? {}));
  }
  return out;
}

/** Every word the prompt carries: system instruction, contents, function declarations. */
export function promptTokenCount(request: any): number {
  const texts = [...partTexts(field(request, 'systemInstruction')?.parts)];
  for (const c of field(request, 'contents') ?? []) texts.push(...partTexts(c.parts));
  for (const tool of request.tools ?? [])
    for (const f of field(tool, 'functionDeclarations') ?? []) texts.push(f.name ?? '', f.description ?? '');
  return countWords(...texts);
}

export function partTokens(parts: GeminiPart[], thoughts: boolean): number {
  let n = 0;
  for (const p of parts) {
    if (Boolean(p.thought) !== thoughts) continue;
    if (p.text !== undefined) n += words(p.text);
    if (p.functionCall)
      n += words(`${p.functionCall.name} ${JSON.stringify(p.functionCall.args)}`.replace(/[{}":,]/g, ' '));
  }
  return n;
}

/**
 * usageMetadata as Google reports it: the prompt count includes cached tokens, thoughts are counted apart from
 * the candidates, and the total adds all three.
 */
export function usageMetadata(prompt: number, parts: GeminiPart[], hiddenThoughts: number, cached = 0): GeminiUsage {
  const candidates = partTokens(parts, false);
  const thoughts = partTokens(parts, true) + hiddenThoughts;
  const usage: GeminiUsage = {
    promptTokenCount: prompt,
    ...(candidates > 0 ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: prompt + candidates + thoughts,
  };
  usage.promptTokensDetails = [{ modality: 'TEXT', tokenCount: prompt }];
  if (thoughts > 0) usage.thoughtsTokenCount = thoughts;
  if (cached > 0) {
    usage.cachedContentTokenCount = cached;
    usage.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: cached }];
  }
  return usage;
}

function lastUserText(request: any): string {
  const contents: any[] = field(request, 'contents') ?? [];
  const last = [...contents].reverse().find((c) => c.role === undefined || c.role === 'user');
  return (last?.parts ?? [])
    .filter((p: any) => typeof p.text === 'string')
    .map((p: any) => p.text)
    .join(' ');
}

function lastFunctionResponse(request: any): any | undefined {
  const contents: any[] = field(request, 'contents') ?? [];
  const parts: any[] = contents[contents.length - 1]?.parts ?? [];
  return parts.map((p) => field(p, 'functionResponse')).find((r) => r !== undefined);
}

/** The function the answer calls, or null: ANY mode forces one, NONE forbids, otherwise "weather" triggers it. */
function functionToCall(request: any): any | null {
  const declarations: any[] = (request.tools ?? []).flatMap((t: any) => field(t, 'functionDeclarations') ?? []);
  const mode = field(field(request, 'toolConfig'), 'functionCallingConfig');
  if (declarations.length === 0 || mode?.mode === 'NONE' || lastFunctionResponse(request)) return null;
  if (mode?.mode === 'ANY') {
    const allowed: string[] | undefined = field(mode, 'allowedFunctionNames');
    return declarations.find((d) => !allowed || allowed.includes(d.name)) ?? null;
  }
  return /weather/i.test(lastUserText(request)) ? declarations[0] : null;
}

export interface ThinkingPlan {
  /** the model thinks (a thinking model whose budget is not 0) */
  thinks: boolean;
  /** thought summaries are returned as parts */
  includeThoughts: boolean;
}

export function thinkingPlan(request: any, model: string): ThinkingPlan {
  const config = field(field(request, 'generationConfig'), 'thinkingConfig');
  const thinks = modelThinks(model) && field(config, 'thinkingBudget') !== 0;
  return { thinks, includeThoughts: thinks && field(config, 'includeThoughts') === true };
}

/** An opaque thought signature that still tells which thought it belongs to. */
export function geminiThoughtSignature(thought: string): string {
  const digest = createHash('sha256').update(thought).digest('hex').slice(0, 32);
  return Buffer.from(`mock-gemini-thought:${digest}`).toString('base64');
}

/** The words the model "thinks" for a request: reported as thoughtsTokenCount even when the thoughts are hidden. */
export function thoughtText(request: any): string {
  return `Thinking about: ${firstWords(lastUserText(request), 6) || 'the request'}`;
}

/**
 * The default answer: thought parts when asked for, then a functionCall or the text "Hello from gemini: <first
 * words of the last user text>", cut at maxOutputTokens (MAX_TOKENS) or at a stop sequence. When the model thinks,
 * the first answer part carries the thought signature.
 */
export function defaultGeminiAnswer(request: any, model: string): GeminiAnswer {
  const plan = thinkingPlan(request, model);
  const parts: GeminiPart[] = [];
  const thought = thoughtText(request);
  if (plan.includeThoughts) parts.push({ text: thought, thought: true });
  const signature = plan.thinks ? { thoughtSignature: geminiThoughtSignature(thought) } : {};
  const fn = functionToCall(request);
  if (fn) {
    parts.push({
      functionCall: { name: fn.name, args: argumentsFor(fn.parameters ?? fn.parametersJsonSchema) },
      ...signature,
    });
    return { parts, finishReason: 'STOP' };
  }
  const response = lastFunctionResponse(request);
  let text = response
    ? `Hello from gemini: the function answered ${firstWords(JSON.stringify(response.response ?? {}).replace(/[{}":,]/g, ' '), 6)}`
    : `Hello from gemini: ${firstWords(lastUserText(request), 6)}`;
  let finishReason: GeminiFinishReason = 'STOP';
  const config = field(request, 'generationConfig');
  for (const seq of field(config, 'stopSequences') ?? []) {
    const at = text.indexOf(seq);
    if (seq && at >= 0) text = text.slice(0, at);
  }
  const max = field(config, 'maxOutputTokens');
  if (typeof max === 'number' && words(text) > max) {
    text = firstWords(text, Math.max(1, max));
    finishReason = 'MAX_TOKENS';
  }
  parts.push({ text, ...signature });
  return { parts, finishReason };
}

/** A deterministic unit-free vector for a text: the same text always embeds the same way. */
export function embeddingFor(text: string, dimensions: number): number[] {
  const values: number[] = [];
  let seed = createHash('sha256').update(text).digest();
  while (values.length < dimensions) {
    for (let i = 0; i + 1 < seed.length && values.length < dimensions; i += 2)
      values.push(Number((seed.readUInt16BE(i) / 65535 - 0.5).toFixed(6)));
    seed = createHash('sha256').update(seed).digest();
  }
  return values;
}
