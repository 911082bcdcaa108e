// What the dashboard tells a user to put in a client (issue 34): the relay base URL and a ready-to-run example call.
import { serverAddress } from '../chat/links.js';

export const EXAMPLE_KEY = 'sk-xxxxxxxx';
export const EXAMPLE_MODEL = 'gpt-4o-mini';

/** The OpenAI-compatible base URL: ServerAddress (else this page's origin) + /v1. */
export function apiBaseUrl(configured: string | undefined, origin = window.location.origin): string {
  return `${serverAddress(configured, origin)}/v1`;
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
