// Security headers (issue 39 point 8): the console's HTML carries a Content-Security-Policy that names its inline boot
// script by hash, refuses framing by other sites and sets the referrer policy; every answer carries nosniff. The
// policy itself is checked in a browser by web/e2e/security-headers.e2e.ts.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { chatLinkSchemes, inlineScriptHashes } from '../../src/lib/security-headers.js';

const BOOT_SCRIPT = "\n      document.documentElement.dataset.theme = 'dark';\n    ";
const dist = mkdtempSync(join(tmpdir(), 'gw-web-csp-'));
mkdirSync(join(dist, 'assets'));
writeFileSync(
  join(dist, 'index.html'),
  `<!doctype html><html><head><title>console</title><script>${BOOT_SCRIPT}</script>` +
    `<script type="module" crossorigin src="/assets/index-abc.js"></script><style>body{margin:0}</style></head></html>`,
);
writeFileSync(join(dist, 'assets', 'index-abc.js'), 'console.log(1)');

const bootHash = `'sha256-${createHash('sha256').update(BOOT_SCRIPT).digest('base64')}'`;

/** The CSP header as a directive → sources map. */
function directives(csp: string | null): Record<string, string[]> {
  expect(csp, 'Content-Security-Policy header').toBeTruthy();
  const out: Record<string, string[]> = {};
  for (const part of csp!.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out[name] = sources;
  }
  return out;
}

describe('console security headers', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { WEB_DIST_DIR: dist } });
  });
  afterAll(async () => {
    await s.close();
  });

  it('sends the policy, framing and referrer headers with every console page, index.html included', async () => {
    for (const path of ['/', '/console/log', '/index.html']) {
      const res = await fetch(s.url + path, { headers: { 'accept-encoding': 'identity' } });
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<title>console</title>');
      const csp = directives(res.headers.get('content-security-policy'));
      expect(csp['default-src']).toEqual(["'self'"]);
      // the inline boot script by its hash; no 'unsafe-inline' or 'unsafe-eval' for scripts
      expect(csp['script-src']).toEqual([
        "'self'",
        bootHash,
        'https://challenges.cloudflare.com',
        'https://telegram.org',
      ]);
      // antd's CSS-in-JS <style> tags
      expect(csp['style-src']).toContain("'unsafe-inline'");
      expect(csp['img-src']).toEqual(["'self'", 'data:', 'blob:', 'https:', 'http:']);
      // the operator's chat links and home page URLs, Turnstile's and Telegram's frames
      expect(csp['frame-src']).toEqual(expect.arrayContaining(["'self'", 'https:', 'http:']));
      expect(csp['object-src']).toEqual(["'none'"]);
      expect(csp['base-uri']).toEqual(["'self'"]);
      expect(csp['frame-ancestors']).toEqual(["'self'"]);
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('sends the same headers with the precompressed copy of index.html', async () => {
    writeFileSync(join(dist, 'index.html.gz'), 'not really gzip, served as the copy');
    try {
      const res = await fetch(`${s.url}/index.html`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.headers.get('content-encoding')).toBe('gzip');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(directives(res.headers.get('content-security-policy'))['script-src']).toContain(bootHash);
    } finally {
      writeFileSync(join(dist, 'index.html.gz'), '');
    }
  });

  it('sends nosniff with assets and the API, and no page policy with them', async () => {
    for (const path of ['/assets/index-abc.js', '/api/status', '/api/nope']) {
      const res = await fetch(s.url + path);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('content-security-policy'), path).toBeNull();
    }
  });

  it("adds the chat links' app schemes to frame-src as the Chats option changes", async () => {
    const before = directives((await fetch(`${s.url}/chat/3`)).headers.get('content-security-policy'));
    // no chat links by default: no app scheme
    expect(before['frame-src']).toEqual(["'self'", 'https:', 'http:']);
    await s.ctx.options.set(
      'Chats',
      JSON.stringify([{ Web: 'https://chat.example.com/?key={key}' }, { App: 'myapp://join?key={key}' }]),
    );
    const after = directives((await fetch(`${s.url}/chat/1`)).headers.get('content-security-policy'));
    expect(after['frame-src']).toEqual(["'self'", 'https:', 'http:', 'myapp:']);
  });
});

describe('policy pieces', () => {
  it('hashes only inline scripts, as the browser hashes their text', () => {
    const html =
      '<script src="/a.js"></script><script>a()</script><script type="module">\n</script><SCRIPT>b()</SCRIPT>';
    const hash = (t: string) => `'sha256-${createHash('sha256').update(t).digest('base64')}'`;
    expect(inlineScriptHashes(html)).toEqual([hash('a()'), hash('b()')]);
    // the parser's line-ending normalisation comes before the hash
    expect(inlineScriptHashes('<script>a()\r\nb()\r</script>')).toEqual([hash('a()\nb()\n')]);
  });

  it('never lets a chat link open script-capable schemes in a frame', () => {
    const chats = JSON.stringify([
      { a: 'javascript:alert(1)' },
      { b: 'data:text/html,<script>x</script>' },
      { c: 'HTTPS://x.example' },
      { d: 'Cherry-Studio://add?key={key}' },
    ]);
    expect(chatLinkSchemes(chats)).toEqual(['cherry-studio:']);
    expect(chatLinkSchemes('not json')).toEqual([]);
    expect(chatLinkSchemes('{"a":"x:y"}')).toEqual([]);
  });
});
