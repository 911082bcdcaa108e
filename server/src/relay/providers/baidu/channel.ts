// Channel facts of Baidu ERNIE v1 (Wenxin Workshop, channel type 15): the key is the application's `API Key|Secret
// Key` pair, which the relay exchanges for an access token (token.ts). A key without both parts could never be
// exchanged, so it is refused on save. The v1 API lists no models: the console offers the built-in list.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

export const BAIDU_MODELS: readonly string[] = [
  'ERNIE-4.0-8K',
  'ERNIE-3.5-8K',
  'ERNIE-Speed-8K',
  'ERNIE-Speed-128K',
  'ERNIE-Lite-8K',
  'ERNIE-Tiny-8K',
  'ERNIE-Character-8K',
  'ERNIE-Functions-8K',
  'Embedding-V1',
  'bge-large-zh',
  'bge-large-en',
  'tao-8k',
];

/** The two parts of a Baidu v1 key: `API Key|Secret Key`; null when it is not two non-empty parts. */
export function splitBaiduKey(key: string): { apiKey: string; secretKey: string } | null {
  const parts = key.trim().split('|');
  if (parts.length !== 2) return null;
  const [apiKey, secretKey] = parts.map((p) => p.trim());
  return apiKey && secretKey ? { apiKey, secretKey } : null;
}

const KEY_FORMAT = '百度文心 V1 的密钥格式应为 API Key|Secret Key，两部分都不能为空';

function keyProblem(key: string): FieldProblem | null {
  return !key || splitBaiduKey(key) ? null : { field: 'key', message: KEY_FORMAT };
}

export const baiduChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'API Key|Secret Key',
    check: ({ key }) => keyProblem(key),
    models: { fixed: BAIDU_MODELS },
  });
