// OpenAI's text to speech on MiniMax's `POST {base}/v1/t2a_v2`, converted both ways:
//   request  {model, input, voice, speed, response_format}
//         →  {model, text, stream: false, voice_setting: {voice_id, speed}, audio_setting: {format}}
//   answer   {data: {audio: "<hex>"}, extra_info: {audio_format, usage_characters}, base_resp}
//         →  the audio bytes, with their content type
import { splitBase } from '../openai/index.js';
import type { EndpointEntry } from '../types.js';

const FORMATS: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac', pcm: 'audio/pcm' };
/** OpenAI's voices have no MiniMax namesake: they get MiniMax's default voice */
const DEFAULT_VOICE = 'male-qn-qingse';
const OPENAI_VOICES = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer']);

export const minimaxSpeech: EndpointEntry = {
  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: `${prefix}/v1/t2a_v2` };
  },
  convertRequest(info, body) {
    const format =
      typeof body.response_format === 'string' && FORMATS[body.response_format] ? body.response_format : 'mp3';
    const voice = typeof body.voice === 'string' && !OPENAI_VOICES.has(body.voice) ? body.voice : DEFAULT_VOICE;
    const voiceSetting: Record<string, unknown> = { voice_id: voice };
    if (typeof body.speed === 'number') voiceSetting.speed = body.speed;
    const native = {
      model: info.upstreamModel,
      text: body.input,
      stream: false,
      voice_setting: voiceSetting,
      audio_setting: { format },
    };
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, native);
    return true;
  },
  convertResponse(_info, buf) {
    const j = JSON.parse(buf.toString('utf8'));
    const hex: unknown = j?.data?.audio;
    if (typeof hex !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(hex))
      throw new Error('invalid MiniMax t2a answer: no audio');
    const format = String(j?.extra_info?.audio_format ?? 'mp3');
    return { body: Buffer.from(hex, 'hex'), usage: null, contentType: FORMATS[format] ?? 'application/octet-stream' };
  },
};
