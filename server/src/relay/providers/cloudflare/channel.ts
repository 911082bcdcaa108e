// Channel facts of Cloudflare Workers AI: the key is an API token, `other` the account id the URL is built on. An
// empty or malformed account id would send every request to another path (or none), so it is refused on save. Models
// are listed per account (`/ai/models/search`, which model listing does not reach without `other`): the console offers
// a fixed list.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

export const CLOUDFLARE_MODELS: readonly string[] = [
  '@cf/meta/llama-3.1-8b-instruct',
  '@cf/meta/llama-3.3-70b-instruct-fp8-fast',
  '@cf/meta/llama-3-8b-instruct',
  '@cf/mistral/mistral-7b-instruct-v0.1',
  '@cf/qwen/qwen1.5-14b-chat-awq',
  '@cf/openai/gpt-oss-120b',
  '@cf/baai/bge-base-en-v1.5',
  '@cf/baai/bge-m3',
  // served by /ai/run (providers/cloudflare/run.ts)
  '@cf/black-forest-labs/flux-1-schnell',
  '@cf/stabilityai/stable-diffusion-xl-base-1.0',
  '@cf/openai/whisper',
  '@cf/openai/whisper-large-v3-turbo',
];

/** Cloudflare's account ids are 32 hexadecimal digits; letters, digits, `-` and `_` keep the path one segment. */
const ACCOUNT_ID = /^[A-Za-z0-9_-]+$/;

function accountProblem(other: string | undefined): FieldProblem | null {
  if (other === undefined) return null;
  const id = other.trim();
  if (!id) return { field: 'other', message: '请填写 Cloudflare 账户 ID（Account ID）' };
  if (!ACCOUNT_ID.test(id)) return { field: 'other', message: 'Cloudflare 账户 ID 只能包含字母、数字、- 和 _' };
  return null;
}

export const cloudflareChannelFacts = (): ChannelFacts =>
  plainFacts({
    other: { kind: 'account_id', hint: '023e105f4ecef8ad9ca31a8372d0c353' },
    check: ({ other }) => accountProblem(other),
    models: { fixed: CLOUDFLARE_MODELS },
  });
