// Baidu's access token: the key's `API Key|Secret Key` is exchanged at `{base}/oauth/2.0/token` (the client
// credentials grant) for a token of about 30 days, which every ERNIE v1 call carries as `?access_token=`. The token
// endpoint is on the channel's base URL (new-api hard-codes aip.baidubce.com, so a regional or proxied host, or a
// test's mock, never sees the exchange), and the exchange goes out as the chat calls do: through the channel's proxy,
// on the relay's client (settings.sendUpstream). When to exchange (reuse, one exchange for concurrent first calls,
// refresh before expiry, again after Baidu refuses the token) is the relay's credential cache's.
import type { ExchangedCredential, ExchangedToken, ProviderChannel, ProviderSettings } from '../types.js';
import { splitBase } from '../openai/index.js';
import { redactor } from '../../../lib/redact.js';
import { splitBaiduKey } from './channel.js';

export const BAIDU_DEFAULT_BASE = 'https://aip.baidubce.com';
/** the exchange's answer head, and each piece of its body, come within this: a request waiting for it waits as long */
const EXCHANGE_TIMEOUT_MS = 30_000;

/** The token URL of a channel: its base URL's origin and path prefix, then Baidu's OAuth path. */
export function baiduTokenUrl(baseUrl: string, apiKey: string, secretKey: string): string {
  const { origin, prefix } = splitBase(baseUrl || BAIDU_DEFAULT_BASE);
  const query = new URLSearchParams({ grant_type: 'client_credentials', client_id: apiKey, client_secret: secretKey });
  return `${origin}${prefix}/oauth/2.0/token?${query}`;
}

/**
 * Trades a key for an access token, sent as the relay's chat calls are (the channel's proxy, the relay's client:
 * settings.sendUpstream); the error's text never holds the key's parts.
 */
export async function exchangeBaiduKey(
  key: string,
  settings: ProviderSettings,
  channel?: ProviderChannel,
): Promise<ExchangedToken> {
  const parts = splitBaiduKey(key);
  if (!parts) throw new Error('Baidu key must be "API Key|Secret Key"');
  if (!settings.sendUpstream || !channel) throw new Error('Baidu token exchange needs the channel and the relay');
  const hide = redactor([parts.apiKey, parts.secretKey]);
  let status = 0;
  let text = '';
  try {
    const url = new URL(baiduTokenUrl(channel.baseUrl, parts.apiKey, parts.secretKey));
    const res = await settings.sendUpstream(channel, {
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'POST',
      headers: { accept: 'application/json' },
      body: null,
      headersTimeout: EXCHANGE_TIMEOUT_MS,
      bodyTimeout: EXCHANGE_TIMEOUT_MS,
    });
    status = res.status;
    text = res.body.toString('utf8');
  } catch (err) {
    throw new Error(`Baidu token request failed: ${hide((err as Error).message)}`);
  }
  let json: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
  try {
    json = JSON.parse(text);
  } catch {
    // described below with the status
  }
  if (typeof json.access_token !== 'string' || !json.access_token) {
    const reason = json.error_description ?? json.error ?? text.slice(0, 200);
    throw new Error(`Baidu token request refused (HTTP ${status}): ${hide(String(reason))}`);
  }
  const seconds = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 3600;
  return { token: json.access_token, lifetimeMs: seconds * 1000 };
}

export const baiduCredential: ExchangedCredential = {
  kind: 'exchanged',
  id: 'baidu',
  exchange: (key, settings, channel) => exchangeBaiduKey(key, settings, channel),
};
