// The hosts a finished video is read from, on 127.0.0.1 (video-content-platforms.test.ts): Veo's file download
// (`GET /v1beta/files/{f}:download?alt=media`, only with `x-goog-api-key` of the key given; a file set as
// `signed-{f}.mp4` is a 302 to its CDN address), MiniMax's file retrieve
// (`GET /v1/files/retrieve?file_id=`, only with `Authorization: Bearer <key>`, answering the download address on this
// host) and a CDN (`GET /cdn/{name}`, no credentials) that serves each name's bytes and honours `Range: bytes=a-b`;
// `/cdn/huge.mp4` announces a length beyond the gateway's limit. Every request is recorded with its credentials.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ContentCall {
  path: string;
  auth: string | undefined;
  googKey: string | undefined;
  range: string | undefined;
}

export interface ContentMock {
  url: string;
  port: number;
  calls: ContentCall[];
  /** the bytes of each /cdn/{name} and of each Veo file */
  files: Map<string, Buffer>;
  close(): Promise<void>;
}

function serve(res: http.ServerResponse, bytes: Buffer, range: string | undefined): void {
  const m = range ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
  if (!m) {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length), 'set-cookie': 'cdn=1' });
    return void res.end(bytes);
  }
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), bytes.length - 1) : bytes.length - 1;
  res.writeHead(206, {
    'content-type': 'video/mp4',
    'content-length': String(end - start + 1),
    'content-range': `bytes ${start}-${end}/${bytes.length}`,
  });
  res.end(bytes.subarray(start, end + 1));
}

export async function startContentMock(keys: { veo: string; hailuo: string }, limit: number): Promise<ContentMock> {
  const mock: ContentMock = { url: '', port: 0, calls: [], files: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://mock');
    const header = (name: string) =>
      typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined;
    mock.calls.push({
      path: u.pathname,
      auth: header('authorization'),
      googKey: header('x-goog-api-key'),
      range: header('range'),
    });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const veo = /^\/v1beta\/files\/([\w-]+):download$/.exec(u.pathname);
    if (veo) {
      if (req.headers['x-goog-api-key'] !== keys.veo)
        return json(403, { error: { code: 403, status: 'PERMISSION_DENIED' } });
      // a file of a signed address is sent there, as Google's download does
      if (mock.files.has(`signed-${veo[1]}.mp4`)) {
        res.writeHead(302, { location: `/cdn/signed-${veo[1]}.mp4` });
        return void res.end();
      }
      const bytes = mock.files.get(veo[1]);
      return bytes ? serve(res, bytes, header('range')) : json(404, { error: { code: 404 } });
    }
    if (u.pathname === '/v1/files/retrieve') {
      if (req.headers.authorization !== `Bearer ${keys.hailuo}`)
        return json(200, { base_resp: { status_code: 1004, status_msg: 'authorized error' } });
      const id = u.searchParams.get('file_id') ?? '';
      if (!mock.files.has(`file-${id}.mp4`))
        return json(200, { base_resp: { status_code: 1026, status_msg: 'no file' } });
      return json(200, {
        file: { file_id: Number(id), filename: 'output.mp4', download_url: `${mock.url}/cdn/file-${id}.mp4` },
        base_resp: { status_code: 0, status_msg: 'success' },
      });
    }
    const cdn = /^\/cdn\/([\w.-]+)$/.exec(u.pathname);
    if (cdn?.[1] === 'huge.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(limit + 1) });
      return void res.write(Buffer.alloc(1024));
    }
    if (cdn?.[1] === 'page.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<script>alert(1)</script>');
    }
    const bytes = cdn && mock.files.get(cdn[1]);
    if (bytes) return serve(res, bytes, header('range'));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.port = (server.address() as AddressInfo).port;
  mock.url = `http://127.0.0.1:${mock.port}`;
  mock.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return mock;
}
