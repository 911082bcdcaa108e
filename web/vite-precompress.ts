// Vite build plugin: after the bundle is written, stores a brotli (.br, maximum quality) and a gzip (.gz, level 9) copy
// next to every text file in the output directory. The server picks the copy the browser accepts
// (server/src/lib/console-files.ts), so the console's first load costs about a third of its raw size with no
// compression work per request. A copy that would not be smaller is not written (the plain file is served).
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { Plugin, ResolvedConfig } from 'vite';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Files worth compressing: text formats (images and fonts are compressed already). */
export const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|xml|map|webmanifest|wasm)$/;

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

export async function precompressDir(dir: string): Promise<{ files: number; raw: number; br: number; gz: number }> {
  const files = (await listFiles(dir)).filter((f) => COMPRESSIBLE.test(f));
  const totals = { files: files.length, raw: 0, br: 0, gz: 0 };
  await Promise.all(
    files.map(async (file) => {
      const input = await readFile(file);
      const [br, gz] = await Promise.all([
        brotliAsync(input, {
          params: {
            [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
            [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
            [zlib.BROTLI_PARAM_SIZE_HINT]: input.length,
          },
        }),
        gzipAsync(input, { level: 9 }),
      ]);
      totals.raw += input.length;
      if (br.length < input.length) await writeFile(`${file}.br`, br);
      if (gz.length < input.length) await writeFile(`${file}.gz`, gz);
      totals.br += Math.min(br.length, input.length);
      totals.gz += Math.min(gz.length, input.length);
    }),
  );
  return totals;
}

export function precompress(): Plugin {
  let config: ResolvedConfig;
  return {
    name: 'gateway:precompress',
    apply: 'build',
    configResolved(resolved) {
      config = resolved;
    },
    async closeBundle() {
      const dir = join(config.root, config.build.outDir);
      if (!(await stat(dir).catch(() => null))?.isDirectory()) return;
      const t = await precompressDir(dir);
      const kb = (n: number) => `${(n / 1024).toFixed(0)} kB`;
      config.logger.info(`precompressed ${t.files} files: ${kb(t.raw)} → br ${kb(t.br)}, gzip ${kb(t.gz)}`);
    },
  };
}
