// The browser-facing security headers: `X-Content-Type-Options: nosniff` on every Fastify answer, and on the console's
// HTML (index.html, the SPA fallback) a Content-Security-Policy, X-Frame-Options and Referrer-Policy.
//
// What the policy must allow, and why (docs/new-api-compat.md §11.6):
// - scripts: the built bundle ('self'), index.html's inline boot script by its hash (computed from the served file, so
//   a rebuild cannot drift), Cloudflare Turnstile's and Telegram's login widget scripts (loaded only when those are on).
// - styles: antd's CSS-in-JS injects <style> tags at run time, hence 'unsafe-inline' (no hash may sit beside it: a
//   hash switches 'unsafe-inline' off); operator HTML (home page, about, footer) may link a stylesheet or font.
// - frames: the operator's chat links, home-page and about URLs are arbitrary sites, http or https; a chat link may be
//   an app's own scheme (ama://, opencat://), added from the `Chats` option; Turnstile and Telegram render in frames.
// - connections: the console's API ('self'), plus the root's OIDC "fetch config" (any well-known URL) and the
//   release check (api.github.com).
// - no form-action: the top-up page posts a form to the operator's pay gateway, wherever it is.
// The console itself may be framed only by itself (frame-ancestors, and X-Frame-Options for old browsers).
import { createHash } from 'node:crypto';

export const NOSNIFF_HEADER = 'X-Content-Type-Options';

const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';
// Telegram's widget eval()s a `data-onauth` callback, which this policy refuses: the console uses its `data-auth-url`
// mode (a navigation) instead. Its button is a frame from oauth.telegram.org (frame-src https:).
const TELEGRAM_SCRIPT_ORIGIN = 'https://telegram.org';

// strict-origin-when-cross-origin: other sites (chat links, OAuth providers, Turnstile, which checks the embedding
// site) see only the origin, never a path or query such as a password-reset token; no-referrer would break those
// origin checks for nothing more.
const REFERRER_POLICY = 'strict-origin-when-cross-origin';

const INLINE_SCRIPT = /<script(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script>/gi;

/** The CSP source of each inline <script> of `html` ('sha256-…'), as the browser hashes the text between the tags. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const m of html.matchAll(INLINE_SCRIPT)) {
    // the HTML parser turns CRLF and lone CR into LF before the browser hashes the text (a checkout with CRLF endings)
    const body = (m[1] ?? '').replace(/\r\n?/g, '\n');
    if (body.trim() === '') continue;
    hashes.push(`'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`);
  }
  return hashes;
}

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * The non-web schemes (`ama:`, `opencat:`) of the `Chats` option's link templates: the chat page frames those links,
 * so frame-src must name them. http, https and anything malformed add nothing.
 */
export function chatLinkSchemes(chatsOption: string): string[] {
  let list: unknown;
  try {
    list = JSON.parse(chatsOption);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  const schemes = new Set<string>();
  for (const entry of list) {
    if (!entry || typeof entry !== 'object') continue;
    for (const template of Object.values(entry as Record<string, unknown>)) {
      const scheme = typeof template === 'string' ? SCHEME.exec(template.trim())?.[1]?.toLowerCase() : undefined;
      // javascript:, data: and blob: frames would run or smuggle content under the console's name: never allowed
      if (scheme && !['http', 'https', 'javascript', 'data', 'blob', 'filesystem'].includes(scheme)) {
        schemes.add(`${scheme}:`);
      }
    }
  }
  return [...schemes].sort();
}

export interface ConsolePolicyInput {
  /** from inlineScriptHashes(index.html) */
  scriptHashes: readonly string[];
  /** from chatLinkSchemes(Chats) */
  frameSchemes: readonly string[];
}

export function consoleContentSecurityPolicy({ scriptHashes, frameSchemes }: ConsolePolicyInput): string {
  const directives: Array<[string, string[]]> = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'", ...scriptHashes, TURNSTILE_ORIGIN, TELEGRAM_SCRIPT_ORIGIN]],
    ['style-src', ["'self'", "'unsafe-inline'", 'https:']],
    ['img-src', ["'self'", 'data:', 'blob:', 'https:', 'http:']],
    ['font-src', ["'self'", 'data:', 'https:']],
    ['media-src', ["'self'", 'data:', 'blob:', 'https:', 'http:']],
    ['connect-src', ["'self'", 'https:', 'http:']],
    ['frame-src', ["'self'", 'https:', 'http:', ...frameSchemes]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'self'"]],
    ['frame-ancestors', ["'self'"]],
  ];
  return directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}

/** The headers of a console HTML answer. */
export function consoleHtmlHeaders(input: ConsolePolicyInput): Record<string, string> {
  return {
    'Content-Security-Policy': consoleContentSecurityPolicy(input),
    'X-Frame-Options': 'SAMEORIGIN',
    'Referrer-Policy': REFERRER_POLICY,
    [NOSNIFF_HEADER]: 'nosniff',
  };
}

/**
 * The console HTML headers for the current `Chats` value; the policy is rebuilt only when that value changes (an
 * index.html load then costs a string comparison).
 */
export function consoleHtmlHeaderSource(indexHtml: string, chatsOption: () => string): () => Record<string, string> {
  const scriptHashes = inlineScriptHashes(indexHtml);
  let lastChats: string | undefined;
  let headers: Record<string, string> = {};
  return () => {
    const chats = chatsOption();
    if (chats !== lastChats) {
      headers = consoleHtmlHeaders({ scriptHashes, frameSchemes: chatLinkSchemes(chats) });
      lastChats = chats;
    }
    return headers;
  };
}
