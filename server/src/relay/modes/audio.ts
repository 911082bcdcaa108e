// Audio modes (new-api-compat.md §4.8):
// - POST /v1/audio/speech: JSON in, audio bytes out (piped as received with the upstream content-type). Prompt tokens
//   are the characters of `input` for tts* models (the tokenizer count for others); billed as input tokens.
// - POST /v1/audio/transcriptions | translations: multipart in, forwarded byte for byte; model from the form, default
//   whisper-1. Billing choice: the response's token usage when it has one (gpt-4o-transcribe: input_tokens /
//   output_tokens, billed by the text formula); otherwise — whisper answers carry no usage, or a `{type:"duration"}`
//   one — the tokens of the returned text, billed as input tokens (quota = textTokens × modelRatio × groupRatio, as
//   new-api's audio helper charges them). srt/vtt answers are counted on their cue text only.
import { countTextTokens, countTtsInputTokens } from '../../services/tokenizer.js';
import type { RelayMode } from './mode.js';
import type { UpstreamUsage } from '../hub/usage.js';
import { normaliseUsage } from '../usage.js';

const NONE = { text: '', toolCalls: 0 };
const MAX_TTS_INPUT = 4096;

export const speechMode: RelayMode = {
  name: 'audio_speech',
  endpoint: 'audio_speech',
  canStream: false,
  inputOnly: true,
  defaultModel: 'tts-1',
  rawResponse: true,
  validate(body) {
    if (typeof body.input !== 'string' || body.input === '') return 'input is required';
    if ([...body.input].length > MAX_TTS_INPUT) return `input is too long (over ${MAX_TTS_INPUT} characters)`;
    return null;
  },
  promptTokens(body, model) {
    const input = String(body.input ?? '');
    return model.startsWith('tts') ? countTtsInputTokens(input) : countTextTokens(input, model);
  },
  responseText: () => NONE,
  chunkText: () => NONE,
};

/** Cue text of an SRT / WebVTT document (no header, indices or timing lines). */
function subtitleText(doc: string): string {
  const out: string[] = [];
  for (const line of doc.split(/\r?\n/)) {
    const t = line.trim();
    if (!t || t === 'WEBVTT' || /^\d+$/.test(t) || t.includes('-->')) continue;
    out.push(t);
  }
  return out.join('\n');
}

export function transcriptText(buf: Buffer, format: string): string {
  const s = buf.toString('utf8');
  if (format === 'text') return s;
  if (format === 'srt' || format === 'vtt') return subtitleText(s);
  try {
    const j = JSON.parse(s);
    return typeof j?.text === 'string' ? j.text : '';
  } catch {
    return s;
  }
}

function transcriptUsage(buf: Buffer, body: Record<string, any>, model: string): UpstreamUsage | null {
  const format = typeof body.response_format === 'string' ? body.response_format : 'json';
  if (format === 'json' || format === 'verbose_json') {
    try {
      const u = normaliseUsage(JSON.parse(buf.toString('utf8'))?.usage);
      if (u && u.prompt_tokens + u.completion_tokens > 0) return u;
    } catch {
      /* counted from the text below */
    }
  }
  return { prompt_tokens: countTextTokens(transcriptText(buf, format), model), completion_tokens: 0, cached_tokens: 0 };
}

function transcriptMode(name: string, task: 'transcriptions' | 'translations'): RelayMode {
  return {
    name,
    endpoint: task === 'transcriptions' ? 'audio_transcription' : 'audio_translation',
    canStream: false,
    inputOnly: true,
    defaultModel: 'whisper-1',
    multipart: true,
    validate(body) {
      if (!body.file || typeof body.file === 'string') return 'file is required';
      return null;
    },
    promptTokens: () => 0,
    responseUsage: transcriptUsage,
    responseText: () => NONE,
    chunkText: () => NONE,
  };
}

export const transcriptionsMode = transcriptMode('audio_transcription', 'transcriptions');
export const translationsMode = transcriptMode('audio_translation', 'translations');
