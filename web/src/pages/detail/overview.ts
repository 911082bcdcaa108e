// What the dashboard tells a user to put in a client (issue 34): the relay base URL and a ready-to-run example call.
import { serverAddress } from '../chat/links.js';

export const EXAMPLE_KEY = 'sk-xxxxxxxx';
export const EXAMPLE_MODEL = 'gpt-4o-mini';

/** new-api's (and our) default ServerAddress: an install that never set it still holds this. */
export const DEFAULT_SERVER_ADDRESS = 'http://localhost:3000';

/**
 * Whether ServerAddress was never set for this site: empty, or still the default while the console is reached at
 * another address (then links built from it would point at the wrong host).
 */
export function serverAddressUnset(configured: string | undefined, origin = window.location.origin): boolean {
  const value = (configured ?? '').trim().replace(/\/+$/, '');
  return !value || (value === DEFAULT_SERVER_ADDRESS && origin.replace(/\/+$/, '') !== DEFAULT_SERVER_ADDRESS);
}

/** The OpenAI-compatible base URL: ServerAddress once it is set, else this page's origin; + /v1. */
export function apiBaseUrl(configured: string | undefined, origin = window.location.origin): string {
  return `${serverAddress(serverAddressUnset(configured, origin) ? '' : configured, origin)}/v1`;
}

export interface PricedModel {
  model_name: string;
  enable_groups: string[];
  /** the server's flag (absent from new-api's answer: then taken as priced) */
  priced?: boolean;
}

/** Names that are not chat models: a chat completion with them would fail. */
const NOT_CHAT = /embed|rerank|moderation|whisper|tts|dall-e|image|audio|^mj_|^suno_|^swap_face/i;

/**
 * A model the example call can really use: offered to the user (`userModels`), priced (an unpriced model is refused
 * unless the site is in self-use mode) and a chat model; the first of the user's list in that order, else the first
 * chat model offered, else the first model at all.
 */
export function exampleModel(
  userModels: readonly string[],
  pricing: readonly PricedModel[],
  group: string,
  selfUse: boolean,
): string | undefined {
  const callable = new Set(
    pricing.filter((p) => (selfUse || p.priced !== false) && p.enable_groups.includes(group)).map((p) => p.model_name),
  );
  const chat = userModels.filter((m) => !NOT_CHAT.test(m));
  return chat.find((m) => callable.has(m)) ?? chat[0] ?? userModels[0];
}

/** A curl chat completion against `baseUrl` with a placeholder key (the real keys stay on the tokens page). */
export function exampleCall(baseUrl: string, model = EXAMPLE_MODEL): string {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] });
  return [
    `curl ${baseUrl}/chat/completions \\`,
    `  -H "Authorization: Bearer ${EXAMPLE_KEY}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${body}'`,
  ].join('\n');
}
