// Channel facts of Baidu Qianfan v2: the key is `token|appid` (the API key Qianfan issues, then the app's id), one
// channel per line. A key without both parts would send a request Qianfan refuses, so it is refused on save. The v2
// API's model list is not offered to a Bearer token of every key kind, so the console offers a fixed list.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

export const QIANFAN_MODELS: readonly string[] = [
  'ernie-4.5-turbo-128k',
  'ernie-4.0-8k-latest',
  'ernie-4.0-turbo-8k',
  'ernie-3.5-8k',
  'ernie-speed-128k',
  'ernie-lite-8k',
  'deepseek-v3',
  'deepseek-r1',
  'embedding-v1',
  'bge-large-zh',
  'bce-reranker-base',
  'irag-1.0',
];

/** The two parts of a Qianfan v2 key, split at its last `|` (a token holds none; `bce-v3/ALTAK-…/…` holds slashes). */
export function splitQianfanKey(key: string): { token: string; appid: string } {
  const at = key.lastIndexOf('|');
  return at < 0
    ? { token: key.trim(), appid: '' }
    : { token: key.slice(0, at).trim(), appid: key.slice(at + 1).trim() };
}

const KEY_FORMAT = '千帆 V2 的密钥格式应为 API Key|AppID（例如 bce-v3/ALTAK-xxx/xxx|app-xxx），两部分都不能为空';

function keyProblem(key: string): FieldProblem | null {
  if (!key) return null;
  const { token, appid } = splitQianfanKey(key);
  if (!key.includes('|') || !token || !appid || token.includes('|')) return { field: 'key', message: KEY_FORMAT };
  return null;
}

export const qianfanChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'API Key|AppID',
    check: ({ key }) => keyProblem(key),
    models: { fixed: QIANFAN_MODELS },
  });
