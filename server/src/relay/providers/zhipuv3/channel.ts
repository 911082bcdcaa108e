// Channel facts of Zhipu's v3 API (ChatGLM, channel type 16): the key is the `id.secret` API key Zhipu issues, from
// which the relay signs its JWTs (token.ts); a key without both parts could sign nothing Zhipu accepts, so it is
// refused on save. The v3 API lists no models: the console offers the built-in list.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

export const ZHIPU_V3_MODELS: readonly string[] = ['chatglm_turbo', 'chatglm_pro', 'chatglm_std', 'chatglm_lite'];

/** The two parts of a Zhipu API key `id.secret`, split at its first dot; null when either is empty. */
export function splitZhipuKey(key: string): { id: string; secret: string } | null {
  const text = key.trim();
  const dot = text.indexOf('.');
  if (dot <= 0 || dot === text.length - 1) return null;
  return { id: text.slice(0, dot), secret: text.slice(dot + 1) };
}

const KEY_FORMAT = '智谱 V3 的密钥格式应为 id.secret（智谱开放平台的 API Key），两部分都不能为空';

function keyProblem(key: string): FieldProblem | null {
  return !key || splitZhipuKey(key) ? null : { field: 'key', message: KEY_FORMAT };
}

export const zhipuV3ChannelFacts = (): ChannelFacts =>
  plainFacts({ keyHint: 'id.secret', check: ({ key }) => keyProblem(key), models: { fixed: ZHIPU_V3_MODELS } });
