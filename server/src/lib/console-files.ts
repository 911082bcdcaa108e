// The built console (web/dist) as static files. The web build writes a brotli (.br) and a gzip (.gz) copy next to
// each text file (web/build/precompress.ts); @fastify/static picks one by Accept-Encoding, answers with the original
// file's content type, `Content-Encoding` and `Vary: Accept-Encoding`, and falls back to the plain file. Nothing is
// compressed while serving.
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

const COMPRESSED_SUFFIX = /\.(br|gz)$/;

/**
 * index.html must be revalidated on every load (it names the current build's assets); Vite's hashed files under
 * /assets/ never change under the same name; other files (logo.svg, …) keep a week's cache.
 */
export function consoleCacheControl(filePath: string): string {
  const path = filePath.replace(COMPRESSED_SUFFIX, '').replaceAll('\\', '/');
  if (path.endsWith('/index.html') || path === 'index.html') return 'no-cache';
  if (path.includes('/assets/')) return 'public, max-age=31536000, immutable';
  return 'max-age=604800';
}

/** Whether a served file is the console's HTML page (its .br/.gz copies included). */
export function isConsoleHtml(filePath: string): boolean {
  return filePath.replace(COMPRESSED_SUFFIX, '').endsWith('.html');
}

/** `htmlHeaders`: the security headers of the console's HTML (lib/security-headers.ts), asked at each HTML answer. */
export async function registerConsoleFiles(
  app: FastifyInstance,
  dist: string,
  htmlHeaders: () => Record<string, string>,
): Promise<void> {
  await app.register(fastifyStatic, {
    root: dist,
    prefix: '/',
    wildcard: false,
    index: false,
    preCompressed: true,
    // the .br/.gz copies are reached through their original's URL, not by their own
    globIgnore: ['**/*.br', '**/*.gz'],
    setHeaders: (res, path) => {
      res.header('Cache-Control', consoleCacheControl(path));
      if (isConsoleHtml(path)) for (const [name, value] of Object.entries(htmlHeaders())) res.header(name, value);
    },
  });
}
